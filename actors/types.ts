/**
 * Actors (seed 000's four roles): who decides how a plan is carried out. The worker holds a registry of actors by
 * name; each plan names one per role (null: the registry's default, `builtin`). The activities call the role's
 * interface and nothing else, so the workflow does not know or care which actor ran.
 *
 * Every actor records its choices in the DecisionLog it is given (they become the plan's decision tree) and
 * returns its products: a strategy (the steps), an execution outcome (the sandbox holds the changes), an estimate,
 * invariant verdicts.
 */
import type { ModelUsage } from '../domain/decision';
import type { DecisionLog } from '../domain/decision-log';
import type { WorkPhase } from '../domain/lifecycle';
import type { PlanInvariant, PlanSpec } from '../domain/plan';
import type { Workspace } from '../domain/project-link';
import type { StrategyRevision } from '../domain/correction';
import type { ActionDefinition, Strategy } from '../domain/steps';
import type { Isolation } from '../sandbox/isolation';

export const ACTOR_ROLES = ['strategy', 'execution', 'estimation', 'invariant'] as const;
export type ActorRole = (typeof ACTOR_ROLES)[number];

/** The name every role falls back to when a plan names no actor. */
export const DEFAULT_ACTOR = 'builtin';

/** A file a person added to the plan's context (`agents plan context add`), as stored. */
export interface ContextFile {
  /** The path as it was added (absolute, on the machine that added it). */
  path: string;
  sha256: string;
  size: number;
  /** UTF-8 text; null for a binary file (its hash and size still count). */
  content: string | null;
}

/** Passed to every actor call. */
export interface ActorCall {
  plan: PlanSpec;
  workspaces: Workspace[];
  contextFiles: ContextFile[];
  log: DecisionLog;
  /** Aborted when the activity is cancelled (the plan was cancelled) or times out. */
  signal: AbortSignal;
  /** Reports what the actor is doing now; shown by `agents plan watch` and the Web UI (activity heartbeat). */
  progress(message: string): void;
  /** How this worker runs the plan's commands (sandbox/isolation.ts); the step runner refuses them when unavailable. */
  isolation: Isolation;
}

/**
 * A strategy as an actor proposes it: the steps, and for each step the sequence number (as DecisionLog.record
 * returned it) of the decision it came from, so a person's correction of that decision replaces the step.
 */
export type StrategyProposal = Strategy & { stepDecisions?: number[] };

export interface StrategyActor {
  readonly name: string;
  strategize(call: ActorCall & { action: ActionDefinition }): Promise<StrategyProposal>;
  /**
   * Asks again for the steps after a step a person corrected, with the correction as a constraint, and returns
   * only those (the kept steps run first). An actor without it runs the steps as written: nothing after a
   * corrected step depends on it, so nothing is re-asked.
   */
  revise?(
    call: ActorCall & { action: ActionDefinition; revision: StrategyRevision },
  ): Promise<StrategyProposal>;
}

export interface ValidationOutcome {
  command: string;
  passed: boolean;
  exitCode: number | null;
  /** The last lines of the command's combined output. */
  output: string;
}

export interface ExecutionFailure {
  message: string;
  /** Index of the failing step in the strategy; null when the failure is not a step's. */
  step: number | null;
  /** How many times the step was tried (1 + automatic retries). */
  attempts: number;
  details: string | null;
}

export type ExecutionOutcome =
  | { ok: true; summary: string; validation: ValidationOutcome | null }
  | { ok: false; error: ExecutionFailure; validation: ValidationOutcome | null };

export interface ExecutionActor {
  readonly name: string;
  /**
   * Runs the strategy in the writable workspaces' sandboxes. A failing step may be retried up to
   * `maxAutoRetries` times (auto-debug), each attempt recorded as an `error_recovery` decision; a failure is
   * returned (not thrown) so the decisions made up to it are still recorded.
   */
  execute(call: ActorCall & { strategy: Strategy; maxAutoRetries: number }): Promise<ExecutionOutcome>;
}

export interface Estimate {
  summary: string;
  /** How many files the plan will likely touch; null when the actor cannot tell. */
  filesLikelyChanged: number | null;
  risk: 'low' | 'medium' | 'high';
}

export interface EstimationActor {
  readonly name: string;
  estimate(call: ActorCall & { strategy: Strategy }): Promise<Estimate>;
}

/** A changeset as an invariant actor sees it: operations and paths, no contents. */
export interface ChangeSummary {
  project: string;
  operation: 'CREATE' | 'MODIFY' | 'DELETE' | 'MOVE';
  path: string;
  fromPath: string | null;
}

export interface InvariantVerdict {
  invariant: PlanInvariant;
  /** `acknowledged`: text the actor cannot check, recorded as such rather than dropped. */
  status: 'held' | 'violated' | 'acknowledged';
  evidence: string;
  /** The model that judged it and what that cost, when a model did; its invariant_enforced decision keeps it. */
  model?: ModelUsage;
}

export interface InvariantActor {
  readonly name: string;
  check(
    call: ActorCall & { phase: WorkPhase; invariants: PlanInvariant[]; changes: ChangeSummary[] | null },
  ): Promise<InvariantVerdict[]>;
}

export interface ActorSet {
  strategy?: StrategyActor;
  execution?: ExecutionActor;
  estimation?: EstimationActor;
  invariant?: InvariantActor;
}

export class UnknownActorError extends Error {
  override name = 'UnknownActorError';
}

/**
 * An actor could not do its part. `retryable` says whether asking again later may succeed (an endpoint that is
 * down) or cannot (a model that keeps answering out of shape, a request refused as invalid): the activities turn
 * the second kind into a non-retryable ActorFailed instead of spending the retry policy on it.
 */
export class ActorFailedError extends Error {
  override name = 'ActorFailedError';

  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
