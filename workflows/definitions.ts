/**
 * Every message the plan workflow understands, its task queue, its search attributes and its error types.
 * The client, the CLI, the worker and the tests import these same objects, so names cannot drift apart.
 */
// @temporalio/common is the workflow SDK's own deterministic base; the workflow package does not re-export
// defineSearchAttributeKey, so this one import comes from there.
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Phase } from '../domain/lifecycle';
import type { PlanSnapshot, PlanSpec } from '../domain/plan';

export const TASK_QUEUE = 'cleveragents-plans';

export type PlanWorkflowInput = PlanSpec;

export interface PlanWorkflowResult {
  planId: string;
  phase: Phase;
  decisionCount: number;
}

export interface AdvancePlanRequest {
  /** Who approves the transition; recorded as a `user_intervention` decision and in the plan's events. */
  by: string;
  reason?: string;
  /** The phase the caller believes the plan is in; a mismatch is refused rather than skipping a gate. */
  expectedPhase?: Phase;
  /**
   * Into APPLY: the changeset the sender showed and had confirmed, or null when it showed none (refused when there
   * is one to write). Left out, no claim is made (`--yes`, API callers). See checkReviewedChangeset.
   */
  reviewedChangesetId?: string | null;
}

export interface RetryPhaseRequest {
  by: string;
  reason?: string;
}

export interface CorrectDecisionRequest {
  by: string;
  decisionId: string;
  /** The option chosen instead of the decision's. */
  chosenOption: string;
  reason?: string;
}

export interface CorrectDecisionResult {
  interventionDecisionId: string;
  correctionDecisionId: string;
  supersededDecisionId: string;
}

export const advancePlanUpdate = defineUpdate<PlanSnapshot, [AdvancePlanRequest]>('advancePlan');
export const retryPhaseUpdate = defineUpdate<PlanSnapshot, [RetryPhaseRequest]>('retryPhase');
export const correctDecisionUpdate = defineUpdate<CorrectDecisionResult, [CorrectDecisionRequest]>(
  'correctDecision',
);
export const getPlanQuery = defineQuery<PlanSnapshot>('getPlan');

/** Search attributes: the Web UI and `temporal workflow list --query` filter plans by these. */
export const PlanPhaseKey = defineSearchAttributeKey('PlanPhase', 'KEYWORD');
export const PlanStateKey = defineSearchAttributeKey('PlanState', 'KEYWORD');
export const PlanActionKey = defineSearchAttributeKey('PlanAction', 'KEYWORD');
export const PlanAutomationKey = defineSearchAttributeKey('PlanAutomation', 'KEYWORD');
export const PlanAwaitingInputKey = defineSearchAttributeKey('PlanAwaitingInput', 'BOOL');

/** `--search-attribute` arguments for `temporal server start-dev`, derived from the keys above. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; type: 'Keyword' | 'Bool' }> = [
  { name: PlanPhaseKey.name, type: 'Keyword' },
  { name: PlanStateKey.name, type: 'Keyword' },
  { name: PlanActionKey.name, type: 'Keyword' },
  { name: PlanAutomationKey.name, type: 'Keyword' },
  { name: PlanAwaitingInputKey.name, type: 'Bool' },
];

/** The memo key holding the plan's human name, shown in the Web UI. */
export const PLAN_NAME_MEMO = 'planName';

/**
 * One union of failure types. Every ApplicationFailure the engine raises uses one of these; the non-retryable
 * ones are bad input or rule violations that a retry cannot fix.
 */
export const ERROR_TYPES = {
  InvalidInput: 'InvalidInput',
  IllegalTransition: 'IllegalTransition',
  DecisionRuleViolated: 'DecisionRuleViolated',
  PlanNotFound: 'PlanNotFound',
  DecisionNotFound: 'DecisionNotFound',
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
} as const;
export type ErrorType = (typeof ERROR_TYPES)[keyof typeof ERROR_TYPES];

export const NON_RETRYABLE_ERROR_TYPES: ErrorType[] = [
  ERROR_TYPES.InvalidInput,
  ERROR_TYPES.IllegalTransition,
  ERROR_TYPES.DecisionRuleViolated,
  ERROR_TYPES.PlanNotFound,
  ERROR_TYPES.DecisionNotFound,
  ERROR_TYPES.ChangesetRefused,
  ERROR_TYPES.ActorUnavailable,
  ERROR_TYPES.ActorFailed,
];
