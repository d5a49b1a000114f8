/**
 * Every message the plan workflow understands, its task queue, its search attributes and its error types.
 * The client, the CLI, the worker and the tests import these same objects, so names cannot drift apart.
 */
// @temporalio/common is the workflow SDK's own deterministic base; the workflow package does not re-export
// defineSearchAttributeKey, so this one import comes from there.
import { defineSearchAttributeKey } from '@temporalio/common';
import type { SearchAttributePair, SearchAttributeUpdatePair } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { approvalsLeft, pendingApprovers, waitingFor, waitingKind, waitingSince } from '../domain/gates';
import type { LowConfidenceDecision } from '../domain/gates';
import type { AutomationLevel, Phase, ProcessingState } from '../domain/lifecycle';
import type { CorrectionSituation, RerunPhase, RerunTracking } from '../domain/correction';
import type { CorrectionIds } from '../domain/decision';
import { TASK_QUEUE } from '../domain/ids';
import type { PlanSnapshot, PlanSpec } from '../domain/plan';
import type { RefusableCommand } from '../domain/refusals';
import type { Step, Strategy } from '../domain/steps';

export { TASK_QUEUE };

/**
 * The plan workflow's one parameter: the validated spec, and for a run continued as new (a long plan, at a gate)
 * the state the run before handed over.
 */
export type PlanWorkflowInput = PlanSpec & {
  continuation?: PlanContinuation;
  /**
   * History events after which a run waiting at a gate continues as new (Temporal's own suggestion counts too).
   * Left out: DEFAULT_HISTORY_EVENT_LIMIT. Tests set a tiny one to make every gate continue.
   */
  historyEventLimit?: number;
};

/** Far below Temporal's limits (50,000 events): replaying a parked plan on a new worker stays cheap. */
export const DEFAULT_HISTORY_EVENT_LIMIT = 2_000;

/**
 * Everything a running plan holds, in one serialisable object: the plan as shown, the sequence counters, the
 * products handed from phase to phase, and the people's requests awaiting their turn. Continuing as new is one
 * call that carries it.
 */
export interface PlanWorkflowState {
  spec: PlanSpec;
  plan: PlanSnapshot;
  /**
   * Sequence numbers are allocated here, in deterministic workflow code, and handed to activities: a retried
   * activity carries the same numbers and storage ignores a row it already has.
   */
  eventSeq: number;
  decisionSeq: number;
  /** Strategize's steps, for Execute; rebuilt by replay, and carried over when the run continues as new. */
  strategy: Strategy | null;
  /** The state of the last record written; plan.state may run ahead of it while a person's command is awaited. */
  recordedState: ProcessingState;
  approval: AdvancePlanRequest | null;
  retry: RetryPhaseRequest | null;
  /** Where the next phase's decisions hang: the last decision of the phase before. */
  parentDecisionSeq: number;
  /**
   * What a correction or an amendment needs to know to run a phase again (domain/correction.ts). Absent in a run
   * continued from a plan started before re-runs existed: its corrections are recorded only.
   */
  tracking?: RerunTracking;
  /** A correction or an amendment being acted on at a gate; absent or null: none. */
  rerun?: PendingRerun | null;
  /**
   * The child plans Execute spawned, in the order it spawned them (a replacement after the one it replaces).
   * Absent in state carried over from an engine without subplans.
   */
  children?: ChildPlanRun[];
  /**
   * The least confident decision of the phase that completed last, when below the profile's minimum: the next
   * transition then waits for a person even under review or full automation. Absent: none (or an older engine).
   */
  lowConfidence?: LowConfidenceDecision | null;
}

/**
 * A person's command that changes what runs, from the moment its handler starts (advances are refused meanwhile)
 * until the phase it re-runs has started (or, for a replaced step alone, until it is recorded).
 */
export interface PendingRerun {
  /** The phase that runs again; null: none (a replaced step at the gate after Strategize changes only the strategy). */
  phase: RerunPhase | null;
  /** Set once the correction is recorded: the gate then closes and the phase runs again. */
  ready: boolean;
  by: string;
  reason: string | null;
  /** An amendment's instructions: its user_intervention is recorded with the re-run's start. */
  amendment: string | null;
  /** The correcting decision, which supersedes the phase's earlier decisions; null: the amendment's intervention. */
  supersededBySeq: number | null;
  /** What the re-run supersedes; absent: the phase's last run (and, for Strategize, every step's decision). */
  supersede?: string[];
  /** Strategize re-asks only the steps after a corrected one, hanging them under the correction. */
  revision?: PendingRevision | null;
}

/** A re-ask of the steps after a corrected one (domain/correction.ts StrategyRevision), as the workflow keeps it. */
export interface PendingRevision {
  /** The corrected step's position, 1-based. */
  correctedStep: number;
  replacement: Step | null;
  /** How many of the strategy's first steps stay: those before the corrected one and its replacement. */
  keptSteps: number;
  /** The correction, under which the re-asked steps hang. */
  parentSeq: number;
}

/** One child plan a subplan step spawned, and how it ended. */
export interface ChildPlanRun {
  stepIndex: number;
  childIndex: number;
  /** 0 for the child Strategize named; n for the n-th replacement of a child that failed. */
  generation: number;
  planId: string;
  actionName: string;
  outcome: 'running' | 'applied' | 'failed';
  /** Why it failed; null otherwise. */
  message: string | null;
}

/** What a run hands to the run it continues as: its state (the spec is the input's) and the gate it waits at. */
export interface PlanContinuation {
  state: Omit<PlanWorkflowState, 'spec'>;
  /** The phase the plan waits to enter; the gate is open and recorded. */
  gate: Phase;
}

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

export type { CorrectionIds as CorrectDecisionResult } from '../domain/decision';

/** `plan amend`: more instructions for a plan waiting after Strategize, which then runs Strategize again. */
export interface AmendPlanRequest {
  by: string;
  /** Appended to the plan's prompt (its description) for Strategize; recorded as a user_intervention. */
  instructions: string;
  reason?: string;
}

/** Longer instructions belong in a context file (`plan context add`). */
export const MAX_AMENDMENT_CHARS = 20_000;

/** `plan pause`, `plan resume`: a person holds the plan before its next phase, and lets it go on. */
export interface HoldPlanRequest {
  by: string;
  reason?: string;
}

/** `plan set-automation`: the level the plan's next gates follow. */
export interface SetAutomationRequest {
  by: string;
  automationLevel: AutomationLevel;
  reason?: string;
}

/**
 * The Web UI's "Send signal" (name `approve`, input `{"by": "alice", "reason": "…"}`): the same approval as
 * `plan advance`, judged by the same rules. A signal cannot be refused to its sender, so a refusal is logged as the
 * plan's COMMAND_REFUSED event and never fails the workflow.
 */
export interface ApprovePlanSignal {
  by: string;
  reason?: string;
}

/**
 * A command the plan refused, sent by the client that was refused (ADR 0021): Temporal keeps no trace of an update
 * its validator rejected, so the client reports it and the workflow records it as COMMAND_REFUSED under a number
 * it allocates. Not trusted: the workflow checks and cuts it (domain/refusals.ts refusalOf) before recording.
 */
export interface RecordRefusalSignal {
  by: string;
  command: RefusableCommand;
  /** The validator's reason, as the refused client received it. */
  reason: string;
}

export const advancePlanUpdate = defineUpdate<PlanSnapshot, [AdvancePlanRequest]>('advancePlan');
export const pausePlanUpdate = defineUpdate<PlanSnapshot, [HoldPlanRequest]>('pausePlan');
export const resumePlanUpdate = defineUpdate<PlanSnapshot, [HoldPlanRequest]>('resumePlan');
export const setAutomationUpdate = defineUpdate<PlanSnapshot, [SetAutomationRequest]>('setAutomation');
export const approveSignal = defineSignal<[ApprovePlanSignal]>('approve');
export const recordRefusalSignal = defineSignal<[RecordRefusalSignal]>('recordRefusal');
export const retryPhaseUpdate = defineUpdate<PlanSnapshot, [RetryPhaseRequest]>('retryPhase');
export const correctDecisionUpdate = defineUpdate<CorrectionIds, [CorrectDecisionRequest]>('correctDecision');
export const amendPlanUpdate = defineUpdate<PlanSnapshot, [AmendPlanRequest]>('amendPlan');
export const getPlanQuery = defineQuery<PlanSnapshot>('getPlan');
/** What a correction would be judged against now (`plan correct --dry-run`); reading it changes nothing. */
export const correctionSituationQuery = defineQuery<CorrectionSituation>('correctionSituation');

/** Search attributes: the Web UI and `temporal workflow list --query` filter plans by these. */
export const PlanPhaseKey = defineSearchAttributeKey('PlanPhase', 'KEYWORD');
export const PlanStateKey = defineSearchAttributeKey('PlanState', 'KEYWORD');
export const PlanActionKey = defineSearchAttributeKey('PlanAction', 'KEYWORD');
export const PlanAutomationKey = defineSearchAttributeKey('PlanAutomation', 'KEYWORD');
export const PlanAwaitingInputKey = defineSearchAttributeKey('PlanAwaitingInput', 'BOOL');
/** The root plan's id, the same for a plan and all its subplans: `PlanRoot = "<id>"` finds a whole family. */
export const PlanRootKey = defineSearchAttributeKey('PlanRoot', 'KEYWORD');
/** Since when the plan waits for a person (a gate, ERRORED, paused); absent while it waits for nobody. */
export const PlanWaitingSinceKey = defineSearchAttributeKey('PlanWaitingSince', 'DATETIME');
/** Who may still approve the open gate under an approval policy; absent: anyone (or no gate). */
export const PlanApproversKey = defineSearchAttributeKey('PlanApprovers', 'KEYWORD_LIST');
/** What the plan needs from a person, in words (domain/gates.ts waitingFor); absent while it needs nothing. */
export const PlanNeedsKey = defineSearchAttributeKey('PlanNeeds', 'TEXT');
/** What the plan waits for a person to do: APPROVAL, RETRY or RESUME (domain/gates.ts waitingKind); absent: nothing. */
export const PlanWaitingForKey = defineSearchAttributeKey('PlanWaitingFor', 'KEYWORD');
/** Who has approved the open gate so far: the inbox leaves it out of theirs (`--as`); absent: nobody (or no gate). */
export const PlanApprovedByKey = defineSearchAttributeKey('PlanApprovedBy', 'KEYWORD_LIST');
/** How many more approvals the open gate needs; absent while no gate is open. */
export const PlanApprovalsLeftKey = defineSearchAttributeKey('PlanApprovalsLeft', 'INT');
/** How many reminders the open gate's timeout has recorded (`--on-timeout remind`); absent while no gate is open. */
export const PlanRemindersKey = defineSearchAttributeKey('PlanReminders', 'INT');

/**
 * The search attributes a plan shows in this state; null removes one (a plan that stopped waiting). The one list
 * both the start (the plan as queued) and every later upsert use, so a new attribute cannot be set at start and
 * forgotten afterwards.
 */
export function planSearchAttributes(
  plan: Pick<
    PlanSnapshot,
    | 'planId'
    | 'rootPlanId'
    | 'phase'
    | 'state'
    | 'actionName'
    | 'automationLevel'
    | 'awaitingApproval'
    | 'error'
    | 'updatedAt'
    | 'gate'
    | 'paused'
  >,
): SearchAttributeUpdatePair[] {
  const since = waitingSince(plan);
  const needs = waitingFor(plan);
  const gate = plan.awaitingApproval ? (plan.gate ?? null) : null;
  const approvers = gate === null ? [] : pendingApprovers(gate);
  const approvedBy = gate === null ? [] : gate.approvals.map((a) => a.by);
  return [
    { key: PlanPhaseKey, value: plan.phase },
    { key: PlanStateKey, value: plan.state },
    { key: PlanActionKey, value: plan.actionName },
    { key: PlanAutomationKey, value: plan.automationLevel },
    { key: PlanAwaitingInputKey, value: plan.awaitingApproval },
    { key: PlanRootKey, value: plan.rootPlanId ?? plan.planId },
    { key: PlanWaitingSinceKey, value: since === null ? null : new Date(since) },
    { key: PlanApproversKey, value: approvers.length === 0 ? null : approvers },
    { key: PlanNeedsKey, value: needs },
    { key: PlanWaitingForKey, value: waitingKind(plan) },
    { key: PlanApprovedByKey, value: approvedBy.length === 0 ? null : approvedBy },
    { key: PlanApprovalsLeftKey, value: gate === null ? null : approvalsLeft(gate) },
    { key: PlanRemindersKey, value: gate === null ? null : gate.reminders },
  ];
}

/** The attributes a plan starts with: those it has (a start cannot remove one). */
export function startSearchAttributes(
  plan: Parameters<typeof planSearchAttributes>[0],
): SearchAttributePair[] {
  return planSearchAttributes(plan).filter((pair): pair is SearchAttributePair => pair.value !== null);
}

/** `--search-attribute` arguments for `temporal server start-dev`, derived from the keys above. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{
  name: string;
  type: 'Keyword' | 'Bool' | 'Datetime' | 'KeywordList' | 'Text' | 'Int';
}> = [
  { name: PlanPhaseKey.name, type: 'Keyword' },
  { name: PlanStateKey.name, type: 'Keyword' },
  { name: PlanActionKey.name, type: 'Keyword' },
  { name: PlanAutomationKey.name, type: 'Keyword' },
  { name: PlanAwaitingInputKey.name, type: 'Bool' },
  { name: PlanRootKey.name, type: 'Keyword' },
  { name: PlanWaitingSinceKey.name, type: 'Datetime' },
  { name: PlanApproversKey.name, type: 'KeywordList' },
  { name: PlanNeedsKey.name, type: 'Text' },
  { name: PlanWaitingForKey.name, type: 'Keyword' },
  { name: PlanApprovedByKey.name, type: 'KeywordList' },
  { name: PlanApprovalsLeftKey.name, type: 'Int' },
  { name: PlanRemindersKey.name, type: 'Int' },
];

/** The memo key holding the plan's human name, shown in the Web UI. */
export const PLAN_NAME_MEMO = 'planName';

/**
 * The memo keys holding the plan's trace (ADR 0013), set at start when the client traces: the OpenTelemetry trace id
 * (`plan show` reads it from the workflow's description, so it needs no column in the database) and the id of its
 * root span, `plan.use`, under which later commands on the plan join the same trace.
 */
export const PLAN_TRACE_ID_MEMO = 'traceId';
export const PLAN_TRACE_SPAN_MEMO = 'traceSpanId';
