/**
 * What storage gives back: plain records in the domain's words, never Prisma types, so callers (activities,
 * CLI, tests) do not depend on the ORM.
 */
import type { Action, AutomationProfile, AutomationProfileInput, Project, Stored } from '../domain/catalog';
import type { ApplyStatistics } from '../domain/changeset';
import type { DecisionDraft, DecisionFields } from '../domain/decision';
import type { DecisionTree, DecisionTreeOptions } from '../domain/decision-tree';
import type { AutomationLevel, Phase, ProcessingState } from '../domain/lifecycle';
import type { PlanError, PlanEventType, PlanFields, PlanSpec } from '../domain/plan';
import type { GateView, PauseView } from '../domain/gates';
import type { PlanRefCandidate } from '../domain/plan-ref';
import type { RefusableCommand } from '../domain/refusals';

/** A decision with the sequence number the workflow allocated for it. */
export interface DecisionWrite {
  seq: number;
  draft: DecisionDraft;
}

export interface PlanCreatedWrite {
  spec: PlanSpec;
  eventSeq: number;
}

/** One change of a plan's state: its event, the plan row's new fields, and the decisions taken with it. */
export interface PlanStateWrite {
  planId: string;
  /** Unique per plan; a retried write carries the same number, so it never writes a second event. */
  eventSeq: number;
  at: string;
  event: PlanEventType;
  phase: Phase;
  state: ProcessingState;
  /** Who caused the change: `workflow` or a person's name (not an actor: actors make decisions). */
  recordedBy: string;
  message: string | null;
  /** Written to the plan's error fields; null clears them (e.g. on retry or completion). */
  error: PlanError | null;
  decisions: DecisionWrite[];
  /**
   * Decisions this change supersedes (a phase run again after a correction or an amendment): each still current
   * gets `superseded_by` = the decision at `bySeq`, which is in this change's decisions or already recorded.
   */
  supersede?: { decisionIds: string[]; bySeq: number };
  /**
   * The gate, the pause and the automation level as of this change (ADR 0019), following the newest event like
   * the state does. Left out (writes from before gates had them): the row keeps what it has.
   */
  gate?: GateView | null;
  paused?: PauseView | null;
  automationLevel?: AutomationLevel;
}

/**
 * A command the plan refused (ADR 0021): recorded as a COMMAND_REFUSED event, which changes nothing else (not the
 * plan row, not its updatedAt). The texts are made safe by the caller (domain/refusals.ts).
 */
export interface RefusalWrite {
  planId: string;
  /**
   * The number the workflow allocated (a retried write finds its row and changes nothing); null once the workflow
   * has ended: the next free number is taken, since nothing else writes the plan any more.
   */
  eventSeq: number | null;
  at: string;
  by: string;
  command: RefusableCommand;
  reason: string;
  /** The plan's phase and state as the refusing workflow saw them; left out, the plan row's. */
  phase?: Phase;
  state?: ProcessingState;
}

export interface PlanStateWritten {
  /** Decision ids by sequence number, for every decision in the input (existing rows on a retried write). */
  decisionIds: Record<number, string>;
}

/**
 * The plan row: the durable fields of a plan, and what only the record knows. Apply's statistics are written by
 * the apply activity and never travel through the workflow (its live snapshot does not have them): null until
 * Apply has written the changeset.
 */
export type PlanRecord = PlanFields & {
  applyStatistics: ApplyStatistics | null;
  /** The open gate as its newest event left it (ADR 0019); null when no gate is open. */
  gate: GateView | null;
  /** Who holds the plan before its next phase; null: nobody. */
  paused: PauseView | null;
};

export interface PlanEventRecord {
  planId: string;
  seq: number;
  type: PlanEventType;
  phase: Phase;
  state: ProcessingState;
  /** Who caused the event: `workflow` or a person's name. */
  recordedBy: string;
  message: string | null;
  at: string;
}

/** A stored decision: exactly the decision fields of seed 004 (domain/decision.ts). */
export type DecisionRecord = DecisionFields;

export interface PlanFilter {
  phase?: Phase;
  state?: ProcessingState;
  actionName?: string;
  projectName?: string;
  /** The children of this plan (subplans it spawned). */
  parentPlanId?: string;
  limit?: number;
}

/** What `findPlanRefs` looks for; each part left out or null is not searched. */
export interface PlanRefLookup {
  /** A whole plan id. */
  id?: string | null;
  /** The start of a plan id: Crockford base32, upper case (domain/plan-ref.ts classifyPlanRef checked it). */
  idPrefix?: string | null;
  /** A plan name, compared exactly. */
  name?: string | null;
  /** At most this many plans per part (the caller asks one more than it lists, to know there are more). */
  limit: number;
}

export interface PlanStore {
  /** Inserts the plan row and its PLAN_CREATED event; a second call with the same input changes nothing. */
  recordPlanCreated(input: PlanCreatedWrite): Promise<void>;
  /**
   * In one transaction: the event (planId, eventSeq), the plan row's phase/state/error/updatedAt, and the
   * decisions (planId, seq). A retried write of the same input writes nothing new and returns the same decision ids.
   */
  recordPlanState(input: PlanStateWrite): Promise<PlanStateWritten>;
  /** Appends a COMMAND_REFUSED event and returns its sequence number; an unknown plan is PlanNotFoundError. */
  recordRefusal(input: RefusalWrite): Promise<number>;
  getPlan(planId: string): Promise<PlanRecord | null>;
  /** The spec the plan was created with (fixed for its life), or null for an unknown plan. */
  getSpec(planId: string): Promise<PlanSpec | null>;
  /** Newest first. */
  listPlans(filter?: PlanFilter): Promise<PlanRecord[]>;
  /**
   * The plans a reference typed by a person may mean (ADR 0020): the one with the id, those whose id starts with
   * the prefix (a range of the primary key) and those with the name (an indexed equality), each part limited, no
   * plan twice. Which of them is meant is domain/plan-ref.ts's rule, not the store's.
   */
  findPlanRefs(lookup: PlanRefLookup): Promise<PlanRefCandidate[]>;
  /** The highest sequence number of the plan's events, refusals included; -1 for none (or no such plan). */
  lastEventSeq(planId: string): Promise<number>;
  /** By sequence number; only those after `afterSeq` when given (a follower reads what is new). */
  listEvents(planId: string, afterSeq?: number): Promise<PlanEventRecord[]>;
  /**
   * The newest event that moved the plan (highest sequence number, STATE_NEUTRAL_EVENT_TYPES left out), or null:
   * one row, for views polled while a plan runs.
   */
  lastStateEvent(planId: string): Promise<PlanEventRecord | null>;
  /** By sequence number. */
  listDecisions(planId: string, afterSeq?: number): Promise<DecisionRecord[]>;
  /**
   * Sets seed 000's execution fields. Each call states the whole value, so a retried activity writes the same
   * thing again; a field left undefined is not touched.
   */
  recordExecution(
    planId: string,
    fields: {
      changesetId?: string | null;
      sandboxRefs?: string[];
      validationSummary?: string | null;
      applyStatistics?: ApplyStatistics | null;
    },
  ): Promise<void>;
  /**
   * Removes a plan whose workflow never started (the client wrote its row and context first, then the start
   * failed): its row, PLAN_CREATED event and context files. Refuses (false) once anything else was recorded.
   */
  discardUnstarted(planId: string): Promise<boolean>;
}

export interface RecordDecisionsInput {
  planId: string;
  /** The decisions' createdAt (the caller's time, so a retried write stores the same value). */
  at: string;
  decisions: DecisionWrite[];
}

export interface CorrectDecisionInput {
  planId: string;
  /** The decision to correct: in this plan, not the root, not already superseded. */
  decisionId: string;
  /** Sequence numbers allocated by the workflow: the user_intervention first, then the correcting decision. */
  interventionSeq: number;
  correctionSeq: number;
  /** When given, the same transaction appends this plan event (phase and state are the plan's, unchanged). */
  event?: { seq: number; type: PlanEventType; message?: string | null };
  /** The person correcting. */
  by: string;
  /** The option chosen instead of the original's. */
  chosenOption: string;
  /** Why; stored as correction_reason and as both new decisions' rationale. */
  reason: string | null;
  at: string;
}

export interface StoredCorrection {
  intervention: DecisionRecord;
  correction: DecisionRecord;
  /** The corrected decision, now with `supersededBy` = correction.decisionId. */
  original: DecisionRecord;
}

/**
 * Seed 004's decision service over storage. Reads take one query for the plan's decisions (getTree builds the
 * tree in memory); writes are keyed by workflow-allocated sequence numbers and idempotent. Unknown plans throw
 * PlanNotFoundError, unknown decisions DecisionNotFoundError; rule violations DecisionRuleError with nothing written.
 */
export interface DecisionStore {
  /**
   * Writes decisions without a plan event (recordPlanState writes them with one). Idempotent by (plan id, seq): a
   * retried write of the same batch returns the stored ids; a sequence number used by a different decision is refused.
   */
  record(input: RecordDecisionsInput): Promise<PlanStateWritten>;
  /** By sequence number. */
  listDecisions(planId: string): Promise<DecisionRecord[]>;
  getDecision(decisionId: string): Promise<DecisionRecord>;
  /** The stored context (canonical JSON text) for a `hotContextRef`; null for an unknown or malformed ref. */
  getContext(ref: string): Promise<string | null>;
  /**
   * Stores contexts before the decisions that keep them are recorded (the activity that produced them does, so
   * only their references travel to the workflow and back); returns each one's `sha256:` reference, in order.
   * Content-addressed, so storing one twice is harmless. DecisionRuleError for a value JSON cannot represent.
   */
  storeContexts(planId: string, contents: readonly unknown[]): Promise<string[]>;
  /** Breadth-first from the root; see domain/decision-tree.ts for superseded decisions and the depth limit. */
  getTree(planId: string, options?: DecisionTreeOptions): Promise<DecisionTree<DecisionRecord>>;
  /** `[decision, parent, …, root]`. */
  getPathToRoot(decisionId: string): Promise<DecisionRecord[]>;
  /**
   * In one transaction: a user_intervention decision and the correcting decision (is_correction, same type and
   * question, new option), both under the original's parent, and the original's superseded_by. A retried write
   * with the same sequence numbers returns the stored result. Refuses the root and superseded decisions.
   */
  correct(input: CorrectDecisionInput): Promise<StoredCorrection>;
}

/**
 * Actions, projects and automation profiles, keyed by their namespaced name. `put` validates nothing itself:
 * callers pass objects already parsed by the domain schemas. Names are unique per kind.
 */
export interface CatalogStore {
  /** Inserts or replaces (by name). Returns true when the name was new. */
  putAction(action: Action, options?: { builtIn?: boolean }): Promise<boolean>;
  getAction(name: string): Promise<Stored<Action> | null>;
  listActions(): Promise<Stored<Action>[]>;
  /** False when there was nothing to remove. */
  removeAction(name: string): Promise<boolean>;

  putProject(project: Project): Promise<boolean>;
  getProject(name: string): Promise<Stored<Project> | null>;
  listProjects(): Promise<Stored<Project>[]>;
  removeProject(name: string): Promise<boolean>;

  /** Validated (and its defaults filled) on the way in. */
  putProfile(profile: AutomationProfileInput): Promise<boolean>;
  getProfile(name: string): Promise<Stored<AutomationProfile> | null>;
  listProfiles(): Promise<Stored<AutomationProfile>[]>;
  removeProfile(name: string): Promise<boolean>;
}
