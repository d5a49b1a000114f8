/**
 * The engine's failure types: every ApplicationFailure it raises, and every error a plan records, carries one of
 * these. Pure data, below the workflow and the activities alike: both classify failures by it, and neither should
 * have to import the other to do so.
 */
export const ERROR_TYPES = {
  InvalidInput: 'InvalidInput',
  IllegalTransition: 'IllegalTransition',
  DecisionRuleViolated: 'DecisionRuleViolated',
  PlanNotFound: 'PlanNotFound',
  DecisionNotFound: 'DecisionNotFound',
  /** A write disagrees with what the plan's record already holds under the same key: a retry writes it again. */
  PlanConflict: 'PlanConflict',
  PhaseFailed: 'PhaseFailed',
  /** A step of Execute (or its validation) failed after its automatic retries. */
  ExecutionFailed: 'ExecutionFailed',
  /** Apply found a change it must not write (unsafe path, read-only link, project changed since Execute). */
  ChangesetRefused: 'ChangesetRefused',
  /** An invariant did not hold at a phase transition: the plan waits, ERRORED, for a retry or a cancel. */
  InvariantViolated: 'InvariantViolated',
  /** The plan names an actor this worker does not have. */
  ActorUnavailable: 'ActorUnavailable',
  /** An actor could not do its part (e.g. a model answering out of shape); a retry will not help. */
  ActorFailed: 'ActorFailed',
  StorageUnavailable: 'StorageUnavailable',
  /** A child plan ended without reaching APPLIED and its step says `on_child_failure: fail`. */
  SubplanFailed: 'SubplanFailed',
  /** Nobody approved a gate within its profile's approval timeout, and the profile says to cancel (ADR 0019). */
  ApprovalExpired: 'ApprovalExpired',
} as const;
export type ErrorType = (typeof ERROR_TYPES)[keyof typeof ERROR_TYPES];

/** Bad input or a rule violation: what a retry cannot fix, so activity retry policies stop at once. */
export const NON_RETRYABLE_ERROR_TYPES: ErrorType[] = [
  ERROR_TYPES.InvalidInput,
  ERROR_TYPES.IllegalTransition,
  ERROR_TYPES.DecisionRuleViolated,
  ERROR_TYPES.PlanNotFound,
  ERROR_TYPES.DecisionNotFound,
  ERROR_TYPES.PlanConflict,
  ERROR_TYPES.ChangesetRefused,
  ERROR_TYPES.ActorUnavailable,
  ERROR_TYPES.ActorFailed,
];
