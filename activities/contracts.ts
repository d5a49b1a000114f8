/**
 * Activity inputs and results. Plain data only (no Prisma types): this file is the contract between the workflow,
 * which allocates every sequence number, and the activities, which write idempotently keyed by them.
 */
import type { Step, Strategy, SubplanStep } from '../domain/steps';
import type { ApplyResult, ChangeCounts } from '../domain/changeset';
import type { StrategyRevision } from '../domain/correction';
import type { DecisionDraft } from '../domain/decision';
import type { Phase, WorkPhase } from '../domain/lifecycle';
import type { PlanInvariant, PlanSpec } from '../domain/plan';
import type { RefusalWrite } from '../storage/types';

/**
 * The plan's own writes keep their storage names: the workflow hands them to recordPlanCreated/recordPlanState
 * as they are, and storage defines them because the record must not depend on the work that fills it.
 */
export type {
  DecisionWrite,
  PlanCreatedWrite as RecordPlanCreatedInput,
  PlanStateWrite as RecordPlanStateInput,
  PlanStateWritten as RecordPlanStateResult,
} from '../storage/types';

/** A refusal the workflow records (its `approve` or `recordRefusal` signal): always under a number it allocated. */
export type RecordRefusalInput = Omit<RefusalWrite, 'eventSeq'> & { eventSeq: number };
export type { PlanEventType } from '../domain/plan';

/**
 * How an activity's input names its plan: a lean plan's workflow by id (activities/specs.ts reads the spec, fixed
 * for the plan's life, from its row), plans started before lean histories with the whole spec, as their
 * histories and their already scheduled activities hold it.
 */
export type PlanRef = { planId: string } | { spec: PlanSpec };

/** An activity's input as the workflow sends it: the spec replaced by a PlanRef. */
export type ByPlanRef<T extends { spec: PlanSpec }> = Omit<T, 'spec'> & PlanRef;

export interface RunPhaseInput {
  spec: PlanSpec;
  phase: WorkPhase;
  /** 1 for the first run of the phase, 2 after the first `retry`, and so on. */
  attempt: number;
  /** Sequence number the first returned decision will get; drafts follow in order. */
  firstDecisionSeq: number;
  /** The decision the phase's first decision hangs under. */
  parentDecisionSeq: number;
}

export interface RunPhaseResult {
  summary: string;
  /** In order; decision i gets sequence number firstDecisionSeq + i. */
  decisions: DecisionDraft[];
}

/** What every phase activity is given: the plan, the run of the phase, and where its decisions go. */
export interface PhaseWorkInput {
  spec: PlanSpec;
  /** 1 for the first run of the phase, 2 after the first `retry`, and so on. */
  attempt: number;
  /** Sequence number the first returned decision will get; drafts follow in order. */
  firstDecisionSeq: number;
  /** The decision the phase's first decision hangs under. */
  parentDecisionSeq: number;
  /**
   * The phase the plan enters next, whose invariant check the activity makes once its work succeeded (lean plans);
   * absent or null: the workflow checks it itself.
   */
  checkBefore?: Phase | null;
  /** Strategize: instructions people added with `plan amend`, read after the plan's description. */
  amendments?: string[];
  /**
   * Strategize: ask only for the steps after a corrected one (ADR 0016). The strategy returned is the kept steps
   * followed by the new ones; `stepDecisions` then covers the new ones only.
   */
  revision?: StrategyRevision;
}

/** What every phase activity returns besides its own result. */
interface PhaseWorkResult {
  /**
   * The check `checkBefore` asked for; null when none was asked, the work failed, or the check itself could not
   * run (the workflow then checks again and reports why).
   */
  invariants?: CheckInvariantsResult | null;
}

export interface StrategizeResult extends PhaseWorkResult {
  summary: string;
  decisions: DecisionDraft[];
  /** Handed to Execute by the workflow; the strategy actor decided it. */
  strategy: Strategy;
  /**
   * For each step of the strategy, the index in `decisions` of the decision it came from: a correction of that
   * decision replaces the step. Absent from results recorded before corrections replaced steps.
   */
  stepDecisions?: number[];
  /** The strategy actor re-asks the steps after a corrected one (it can take a `revision`). */
  reasksLaterSteps?: boolean;
}

export interface ExecuteInput extends PhaseWorkInput {
  strategy: Strategy;
}

/** The failure of a phase that was carried out but did not succeed (a step failed after its retries). */
export interface PhaseFailure {
  type: string;
  message: string;
  details: string | null;
}

export interface ExecuteResult extends PhaseWorkResult {
  summary: string;
  /** Recorded whether or not Execute succeeded: the error_recovery decisions explain a failure. */
  decisions: DecisionDraft[];
  failure: PhaseFailure | null;
  /** Null when Execute failed before a changeset could be computed. */
  changesetId: string | null;
  sandboxRefs: string[];
  counts: ChangeCounts | null;
  /** One line on the validation command's outcome; null when the action has none. */
  validationSummary: string | null;
}

export interface ApplyInput extends PhaseWorkInput {
  changesetId: string;
  /** Execute's validation line, completed by Apply's counts into the plan's validation_summary. */
  validationSummary: string | null;
  at: string;
}

export interface ApplyActivityResult extends PhaseWorkResult {
  summary: string;
  decisions: DecisionDraft[];
  result: ApplyResult;
  validationSummary: string;
}

export interface CheckInvariantsInput {
  spec: PlanSpec;
  /** The phase the plan is in. */
  phase: Phase;
  /** The phase the plan is about to enter; null for the check at the start of Strategize. */
  entering: Phase | null;
  /** The plan's changeset, once Execute produced one: its changes and sandboxes are what the rules check. */
  changesetId: string | null;
  /** Where `invariant_enforced` decisions go; null records none (the checks at transitions). */
  record: { firstDecisionSeq: number; parentDecisionSeq: number } | null;
}

export interface InvariantViolation {
  invariant: PlanInvariant;
  evidence: string;
}

export interface CheckInvariantsResult {
  /** In precedence order; empty when every invariant held or was acknowledged. */
  violations: InvariantViolation[];
  decisions: DecisionDraft[];
  /** One line: how many invariants were checked and how they came out. */
  summary: string;
}

export interface CheckCorrectionInput {
  planId: string;
  decisionId: string;
  /**
   * The option, when it replaces a strategy step (domain/correction.ts): parsed and checked as a step
   * (domain/step-option.ts), refused as InvalidInput when it is not a valid one.
   */
  stepOption?: string;
}

export interface CheckCorrectionResult {
  /** The corrected decision's sequence number: later decisions that would hang under it hang under the correction. */
  correctedSeq: number;
  /** The parsed `stepOption`: the step, or null for `skip`; absent when none was asked for. */
  step?: Step | null;
}

export interface CorrectDecisionActivityInput {
  planId: string;
  decisionId: string;
  interventionSeq: number;
  correctionSeq: number;
  eventSeq: number;
  by: string;
  chosenOption: string;
  reason: string | null;
  at: string;
}

export type { CorrectionIds as CorrectDecisionActivityResult } from '../domain/decision';

/** The children of one subplan step to prepare: which of the step's children, and which generation of each. */
export interface PrepareSubplansInput {
  planId: string;
  stepIndex: number;
  step: SubplanStep;
  children: Array<{ childIndex: number; generation: number }>;
  /** When the children are created: the workflow's time, so a retried call resolves the same spec. */
  at: string;
}

export interface PrepareSubplansResult {
  /** In the order of `children`; each child's row is written. */
  specs: PlanSpec[];
}
