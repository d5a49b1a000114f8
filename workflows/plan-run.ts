/**
 * What every plan workflow shares, whichever path runs its phases: the state it keeps (one PlanWorkflowState), the
 * handlers people reach it through, and the one way a state change is recorded and shown. workflows/plan.ts (the
 * actors' path) and workflows/legacy-plan.ts (plans started before actors) drive a PlanRun; the checked-in
 * histories of both paths replay against it.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PlanActivities } from '../activities';
import type { PhaseFailure, PlanEventType, PlanRef, RecordPlanStateInput } from '../activities/contracts';
import { canAmend, correctionEffect, emptyTracking, rerunSupersedes } from '../domain/correction';
import type { CorrectionSituation, RerunPhase } from '../domain/correction';
import type { DecisionDraft } from '../domain/decision';
import type { Step } from '../domain/steps';
import { userInterventionDraft } from '../domain/decision';
import { ERROR_TYPES, NON_RETRYABLE_ERROR_TYPES } from '../domain/errors';
import type { AutomationLevel, Phase, ProcessingState, Verdict, WorkPhase } from '../domain/lifecycle';
import {
  canAdvance,
  canRetry,
  canTransition,
  checkReviewedChangeset,
  gateMessage,
  isAutomationLevel,
} from '../domain/lifecycle';
import {
  APPROVAL_EXPIRED,
  approvalsLeft,
  canApprove,
  canPause,
  canResume,
  canSetAutomation,
  currentDetails,
  expiryOf,
  gateNeeds,
  gatePolicy,
  gateReason,
  lowestConfidence,
  waitingFor,
} from '../domain/gates';
import type { ConfidenceCandidate, GatePolicy, GateView, PauseView } from '../domain/gates';
import { WORKFLOW_ACTOR, initialSnapshot, withInputDefaults } from '../domain/plan';
import type { PlanError, PlanSnapshot, PlanSpec } from '../domain/plan';
import {
  MAX_REFUSALS_PER_RUN,
  MAX_REFUSAL_REASON_CHARS,
  approvalSignalRequest,
  refusalOf,
  safeText,
} from '../domain/refusals';
import type { CommandRefusal } from '../domain/refusals';
import {
  DEFAULT_HISTORY_EVENT_LIMIT,
  MAX_AMENDMENT_CHARS,
  advancePlanUpdate,
  amendPlanUpdate,
  approveSignal,
  correctDecisionUpdate,
  correctionSituationQuery,
  getPlanQuery,
  pausePlanUpdate,
  planSearchAttributes,
  recordRefusalSignal,
  resumePlanUpdate,
  retryPhaseUpdate,
  setAutomationUpdate,
} from './definitions';
import type {
  AdvancePlanRequest,
  PendingRevision,
  PlanWorkflowInput,
  PlanWorkflowResult,
  PlanWorkflowState,
} from './definitions';
import { countPlanFinished, countPlanStarted, recordGateWait, recordPhaseDuration } from './metrics';

/**
 * Recording must eventually succeed: storage hiccups retry without limit. What a retry cannot fix (a rule
 * violation, a conflicting write, an unknown plan) is non-retryable and fails the plan with its message.
 */
const RECORDING_RETRY = {
  initialInterval: '500 milliseconds',
  maximumInterval: '30 seconds',
  nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
};

/** The recordings as plans without the `lean-history` marker schedule them, each a task of its own. */
const scheduledRecordings = proxyActivities<PlanActivities>({
  startToCloseTimeout: '30 seconds',
  retry: RECORDING_RETRY,
});

/**
 * The recordings as local activities: run by the worker that runs the workflow task, inside that task, and kept
 * in history as one marker each instead of three events and a workflow task. A write is one short transaction, so
 * nothing is gained by letting another worker pick it up; a worker lost mid-write repeats it, which the sequence
 * numbers make harmless.
 */
const localRecordings = proxyLocalActivities<PlanActivities>({
  startToCloseTimeout: '30 seconds',
  retry: RECORDING_RETRY,
});

/** The activities PlanRun records through, the same calls whichever way they are scheduled. */
type Recordings = Pick<
  PlanActivities,
  'recordPlanCreated' | 'recordPlanState' | 'recordRefusal' | 'checkCorrection' | 'correctDecision'
>;

/** The phases with work, in the only order a plan moves through them. */
export const WORK_PHASES: readonly WorkPhase[] = ['STRATEGIZE', 'EXECUTE', 'APPLY'];

/** The prompt_definition is the first decision a plan records; people's interventions hang under it. */
export const ROOT_SEQ = 0;

/**
 * Marks plans whose corrections change what runs (a replaced strategy step, Execute run again; ADR 0016). Asked
 * only when a correction would, which no plan recorded before could (their phases did not say which decision a
 * step came from), so their histories carry no marker and replay to corrections that only record.
 */
export const CORRECTION_RERUN_PATCH = 'correction-reruns';

/**
 * Marks plans whose gates expire (ADR 0019): asked only at a gate whose profile sets an approval timeout, so a plan
 * recorded before expiry existed replays waiting without a timer, as it did.
 */
export const GATE_EXPIRY_PATCH = 'gate-expiry';

/**
 * Marks plans stopped at a gate only because a decision was below their profile's minimum confidence: asked only
 * then, so plans that moved on unattended before confidence was enforced replay moving on.
 */
export const CONFIDENCE_GATE_PATCH = 'confidence-gates';

/**
 * Marks plans that act on people's signals: the Web UI's `approve` and a client's `recordRefusal` (ADR 0021). Asked
 * by each handler before it does anything, so a plan whose older worker received such a signal and ignored it (no
 * handler then) replays ignoring it, and histories without these signals carry no marker at all.
 */
export const PEOPLE_SIGNALS_PATCH = 'people-signals';

/**
 * Thrown when the plan ends at a gate that expired: its cancellation is recorded, and PlanRun.run turns this into
 * the workflow's result (a plan cancelled by its own rules is not a failed workflow).
 */
class PlanExpired extends Error {}

/** Runs a phase again at a gate (workflows/plan.ts) and says which commands the reopened gate shows for review. */
export type Rerunner = (
  phase: RerunPhase,
  options: { firstAttempt: number; revision: PendingRevision | null; reason: string | null },
) => Promise<readonly string[]>;

/** Workflow time is replayed from history, so this is deterministic. */
export function now(): string {
  return new Date().toISOString();
}

export type PhaseOutcome =
  | {
      ok: true;
      summary: string;
      decisions: DecisionDraft[];
      /** Strategize: the index in `decisions` of the decision each step of the strategy came from. */
      stepDecisions?: number[];
      /** Strategize: its actor re-asks the steps after a corrected one. */
      reasksLaterSteps?: boolean;
    }
  | { ok: false; failure: PhaseFailure; decisions: DecisionDraft[] };

/** What a phase's work is told: which run of the phase this is, and where its decisions go. */
export interface PhaseWork {
  attempt: number;
  firstDecisionSeq: number;
  parentDecisionSeq: number;
}

/** The fields a state change sets; the others keep their values. */
interface Change {
  phase?: Phase;
  state?: ProcessingState;
  error?: PlanError | null;
  awaitingApproval?: boolean;
  gate?: GateView | null;
  paused?: PauseView | null;
  automationLevel?: AutomationLevel;
}

/** What the change's event records besides the new state: who caused it, why, and the decisions taken with it. */
interface ChangeRecord {
  recordedBy?: string;
  message?: string | null;
  decisions?: DecisionDraft[];
  supersede?: RecordPlanStateInput['supersede'];
}

export class PlanRun {
  readonly state: PlanWorkflowState;
  /**
   * Whether the plan's history has the `lean-history` marker (workflows/plan.ts): its recordings are then local
   * activities. Fixed for the plan's whole life by its history.
   */
  readonly lean: boolean;
  private readonly recordings: Recordings;

  /**
   * The gate a run continued as new resumes at (PlanContinuation): the phases before it ran in earlier runs. Null
   * for a plan's first run.
   */
  readonly resumedGate: Phase | null;
  private readonly historyEventLimit: number;
  /** Null: this path runs nothing again (the legacy path), so its corrections are recorded only. */
  private rerunner: Rerunner | null = null;
  /** What the plan's frozen profile says about its gates: who approves, how many, expiry, minimum confidence. */
  readonly policy: GatePolicy;
  /** A resume accepted and being recorded: a second one is refused meanwhile. */
  private resuming = false;
  /** Refusals recorded by this run, up to MAX_REFUSALS_PER_RUN. */
  private refusalsRecorded = 0;

  constructor(input: PlanWorkflowInput, options: { lean: boolean }) {
    this.lean = options.lean;
    this.recordings = options.lean ? localRecordings : scheduledRecordings;
    const { continuation, historyEventLimit, ...given } = input;
    const spec = withInputDefaults(given);
    this.historyEventLimit = historyEventLimit ?? DEFAULT_HISTORY_EVENT_LIMIT;
    this.resumedGate = continuation?.gate ?? null;
    this.policy = gatePolicy(spec.effectiveProfileSnapshot);
    if (continuation !== undefined) {
      this.state = { spec, ...continuation.state };
      return;
    }
    const plan = initialSnapshot(spec, workflowInfo().workflowId);
    this.state = {
      spec,
      plan,
      eventSeq: 0,
      decisionSeq: 0,
      strategy: null,
      recordedState: plan.state,
      approval: null,
      retry: null,
      parentDecisionSeq: 0,
      tracking: emptyTracking(),
      rerun: null,
    };
  }

  /** Lets corrections and amendments run phases again (workflows/plan.ts). */
  setRerunner(rerunner: Rerunner): void {
    this.rerunner = rerunner;
  }

  /** A person's command accepted and not yet acted on, in words; null: none. */
  private underWay(): string | null {
    const { state } = this;
    if (state.approval !== null)
      return `an advance out of ${state.plan.phase} was already accepted and is under way`;
    if (state.rerun !== undefined && state.rerun !== null) {
      return state.rerun.amendment === null
        ? 'a correction that changes what runs is under way'
        : `an amendment is under way: ${state.rerun.phase ?? 'STRATEGIZE'} runs again`;
    }
    return null;
  }

  /** What corrections and amendments are judged against (domain/correction.ts). */
  situation(): CorrectionSituation {
    const { plan, tracking } = this.state;
    return {
      phase: plan.phase,
      state: plan.state,
      awaitingApproval: plan.awaitingApproval,
      underWay: this.underWay(),
      tracking: this.rerunner === null ? null : (tracking ?? null),
    };
  }

  get plan(): PlanSnapshot {
    return this.state.plan;
  }

  get spec(): PlanSpec {
    return this.state.spec;
  }

  /**
   * How this plan's activities are told which plan they work for: a lean plan by id (its spec travels once, in
   * the workflow's input), an older one with the spec, as its history holds.
   */
  get planRef(): PlanRef {
    return this.lean ? { planId: this.state.spec.planId } : { spec: this.state.spec };
  }

  allocateDecisions(count: number): number {
    const first = this.state.decisionSeq;
    this.state.decisionSeq += count;
    return first;
  }

  /** Results are serialised as soon as a handler returns, so a shallow copy cannot be mutated afterwards. */
  snapshot(): PlanSnapshot {
    return { ...this.state.plan };
  }

  /**
   * The queries, the updates and the two signals. A request stays pending until its change is recorded and
   * visible, so while it is being written a second request is refused as "under way" instead of being applied to a
   * state that is about to change.
   */
  installHandlers(): void {
    const { state } = this;
    setHandler(getPlanQuery, () => this.snapshot());
    setHandler(correctionSituationQuery, () => this.situation());
    // Signals cannot be refused to their sender: neither handler throws, whatever it is sent.
    setHandler(recordRefusalSignal, (raw: unknown) => this.onRefusalSignal(raw));
    setHandler(approveSignal, (raw: unknown) => this.onApproveSignal(raw));

    setHandler(
      advancePlanUpdate,
      async (request) => {
        const from = state.plan.phase;
        // One of several approvals a policy asks for returns once it is recorded; the gate stays open.
        if (!(await this.approve(request))) return this.snapshot();
        // An invariant checked after the approval may stop the transition: the update then returns the ERRORED
        // plan, once that is recorded (the state opens to a retry a moment before its record is written).
        await condition(
          () =>
            state.plan.phase !== from ||
            state.plan.state === 'CANCELLED' ||
            state.recordedState === 'ERRORED',
        );
        return this.snapshot();
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          const verdict = this.approvalVerdict(request);
          if (!verdict.ok) throw new Error(verdict.reason);
        },
      },
    );

    setHandler(
      pausePlanUpdate,
      async (request) => {
        // Held at once, before the record: a phase about to start must not slip past a pause already accepted.
        const paused: PauseView = { by: request.by, reason: request.reason ?? null, at: now() };
        state.plan.paused = paused;
        await this.change(
          'PLAN_PAUSED',
          { paused },
          {
            recordedBy: request.by,
            message: `paused by ${request.by}${request.reason === undefined ? '' : `: ${request.reason}`}`,
            decisions: [
              userInterventionDraft({
                by: request.by,
                question: 'Hold the plan before its next phase?',
                chosenOption: 'Pause the plan',
                alternatives: ['Let it go on'],
                reason: request.reason,
                phase: state.plan.phase,
                parentSeq: ROOT_SEQ,
              }),
            ],
          },
        );
        return this.snapshot();
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          const verdict = canPause(state.plan);
          if (!verdict.ok) throw new Error(verdict.reason);
        },
      },
    );

    setHandler(
      resumePlanUpdate,
      async (request) => {
        // Let go only once the resume is recorded (write first, show second); a second resume is refused meanwhile.
        this.resuming = true;
        try {
          await this.change(
            'PLAN_RESUMED',
            { paused: null },
            {
              recordedBy: request.by,
              message: `resumed by ${request.by}${request.reason === undefined ? '' : `: ${request.reason}`}`,
              decisions: [
                userInterventionDraft({
                  by: request.by,
                  question: 'Let the paused plan go on?',
                  chosenOption: 'Resume the plan',
                  alternatives: ['Keep it paused', 'Cancel the plan'],
                  reason: request.reason,
                  phase: state.plan.phase,
                  parentSeq: ROOT_SEQ,
                }),
              ],
            },
          );
        } finally {
          this.resuming = false;
        }
        return this.snapshot();
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          const verdict = this.resuming
            ? { ok: false as const, reason: 'a resume is already under way' }
            : canResume(state.plan);
          if (!verdict.ok) throw new Error(verdict.reason);
        },
      },
    );

    setHandler(
      setAutomationUpdate,
      async (request) => {
        const before = state.plan.automationLevel;
        await this.change(
          'AUTOMATION_CHANGED',
          { automationLevel: request.automationLevel },
          {
            recordedBy: request.by,
            message:
              `automation ${before} → ${request.automationLevel} by ${request.by}` +
              `${request.reason === undefined ? '' : `: ${request.reason}`}`,
            decisions: [
              userInterventionDraft({
                by: request.by,
                question: 'Which automation level should the plan follow from now on?',
                chosenOption: request.automationLevel,
                alternatives: [before],
                reason: request.reason,
                phase: state.plan.phase,
                parentSeq: ROOT_SEQ,
              }),
            ],
          },
        );
        return this.snapshot();
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          if (!isAutomationLevel(request.automationLevel)) {
            throw new Error(`unknown automation level ${String(request.automationLevel)}`);
          }
          const verdict = canSetAutomation(state.plan, request.automationLevel, request.by, this.policy);
          if (!verdict.ok) throw new Error(verdict.reason);
        },
      },
    );

    setHandler(
      correctDecisionUpdate,
      async (request) => {
        const effect = correctionEffect(this.situation(), request.decisionId);
        if (effect.kind === 'refused') {
          throw ApplicationFailure.nonRetryable(effect.reason, ERROR_TYPES.IllegalTransition);
        }
        // Asked only of a correction that changes what runs: see CORRECTION_RERUN_PATCH.
        const changes = effect.kind !== 'record' && patched(CORRECTION_RERUN_PATCH);
        const by = request.by;
        const reason = request.reason ?? null;
        // Under way before the first await: an advance arriving meanwhile is refused rather than moving the plan on
        // with a strategy about to change.
        if (changes) {
          state.rerun = { phase: null, ready: false, by, reason, amendment: null, supersededBySeq: null };
        }
        try {
          // Checked (and a step option parsed) before any number is spent, so a refused correction leaves no gap
          // in the sequence and nothing in the record.
          const checked = await this.recordings.checkCorrection({
            planId: state.plan.planId,
            decisionId: request.decisionId,
            ...(changes && effect.kind === 'step' ? { stepOption: request.chosenOption } : {}),
          });
          const interventionSeq = this.allocateDecisions(2);
          const correctionSeq = interventionSeq + 1;
          const result = await this.recordings.correctDecision({
            planId: state.plan.planId,
            decisionId: request.decisionId,
            interventionSeq,
            correctionSeq,
            eventSeq: state.eventSeq++,
            by,
            chosenOption: request.chosenOption,
            reason,
            at: now(),
          });
          state.plan.decisionCount = state.decisionSeq;
          // What comes next builds on the correction, not on the choice it replaced.
          if (state.parentDecisionSeq === checked.correctedSeq) state.parentDecisionSeq = correctionSeq;
          const { tracking } = state;
          if (tracking !== undefined) {
            for (const phase of ['STRATEGIZE', 'EXECUTE'] as const) {
              if (tracking.phaseParentSeqs[phase] === checked.correctedSeq) {
                tracking.phaseParentSeqs[phase] = correctionSeq;
              }
            }
          }
          if (!changes) return result;
          // Named before the step is replaced: the decisions of the steps after it, or Execute's.
          const supersede = tracking === undefined ? [] : rerunSupersedes(tracking, effect);
          let revision: PendingRevision | null = null;
          if (effect.kind === 'step') {
            this.replaceStep(effect.index, checked.step, result.correctionDecisionId);
            if (effect.rerun === 'STRATEGIZE') {
              const replacement = checked.step ?? null;
              revision = {
                correctedStep: effect.index + 1,
                replacement,
                keptSteps: effect.index + (replacement === null ? 0 : 1),
                parentSeq: correctionSeq,
              };
            }
          }
          if (effect.rerun === null) {
            state.rerun = null;
            return result;
          }
          // The gate closes and the phase runs again (passGate); the correction returns once that is recorded.
          state.rerun = {
            phase: effect.rerun,
            ready: true,
            by,
            reason,
            amendment: null,
            supersededBySeq: correctionSeq,
            supersede,
            revision,
          };
          await condition(() => state.rerun === null);
          return result;
        } catch (err) {
          if (changes && state.rerun?.ready === false) state.rerun = null;
          throw err;
        }
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          if (typeof request.chosenOption !== 'string' || request.chosenOption.trim() === '') {
            throw new Error('a correction needs the option chosen instead (--option)');
          }
          const effect = correctionEffect(this.situation(), request.decisionId);
          if (effect.kind === 'refused') throw new Error(effect.reason);
        },
      },
    );

    setHandler(
      amendPlanUpdate,
      async (request) => {
        state.rerun = {
          phase: 'STRATEGIZE',
          ready: true,
          by: request.by,
          reason: request.reason ?? null,
          amendment: request.instructions.trim(),
          supersededBySeq: null,
        };
        // Returns once Strategize has started again with the instructions (its start records them).
        await condition(() => state.rerun === null);
        return this.snapshot();
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          if (typeof request.instructions !== 'string' || request.instructions.trim() === '') {
            throw new Error('an amendment needs the instructions to add');
          }
          if (request.instructions.length > MAX_AMENDMENT_CHARS) {
            throw new Error(
              `the instructions are longer than ${MAX_AMENDMENT_CHARS} characters; add a context file instead`,
            );
          }
          const verdict = canAmend(this.situation());
          if (!verdict.ok) throw new Error(verdict.reason);
        },
      },
    );

    setHandler(
      retryPhaseUpdate,
      async (request) => {
        state.retry = request;
        await condition(() => state.plan.state !== 'ERRORED');
        return this.snapshot();
      },
      {
        validator: (request) => {
          requireRequester(request.by);
          const verdict =
            state.retry === null
              ? canRetry(state.plan)
              : { ok: false as const, reason: 'a retry is already under way' };
          if (!verdict.ok) throw new Error(verdict.reason);
        },
      },
    );
  }

  /** A client was refused a command (its update's validator said no) and reports it, to be logged. */
  private async onRefusalSignal(raw: unknown): Promise<void> {
    if (!patched(PEOPLE_SIGNALS_PATCH)) return;
    const refusal = refusalOf(raw);
    if (refusal === null) {
      log.warn('ignored a recordRefusal signal that names no command', { planId: this.state.plan.planId });
      return;
    }
    await this.recordRefusal(refusal);
  }

  /**
   * The Web UI's "Send signal" `approve`: what `plan advance` does at a gate, judged by the same approvalVerdict and
   * counted the same way under an approval policy. A refusal is logged as COMMAND_REFUSED, never thrown: a signal
   * handler that throws would fail the workflow task (or the plan).
   */
  private async onApproveSignal(raw: unknown): Promise<void> {
    if (!patched(PEOPLE_SIGNALS_PATCH)) return;
    const asked = approvalSignalRequest(raw);
    if (!asked.ok) {
      await this.recordRefusal({ by: asked.by, command: 'approve', reason: asked.reason });
      return;
    }
    const request: AdvancePlanRequest = {
      by: asked.by,
      ...(asked.reason === undefined ? {} : { reason: asked.reason }),
    };
    const verdict = this.approvalVerdict(request);
    if (!verdict.ok) {
      const reason = safeText(verdict.reason, MAX_REFUSAL_REASON_CHARS);
      await this.recordRefusal({ by: asked.by, command: 'approve', reason });
      return;
    }
    try {
      await this.approve(request);
    } catch (err) {
      // A recording that cannot succeed (a bug, a conflicting row): the update would fail its caller; a signal has
      // no caller, so it is logged for the operator.
      log.error('an approval by signal could not be recorded', {
        planId: this.state.plan.planId,
        by: request.by,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /**
   * Records a refused command as the plan's COMMAND_REFUSED event: one local activity (a marker) under the next
   * event number. It moves nothing: the plan's state, its gate and its updatedAt stay as they are. Never throws.
   */
  private async recordRefusal(refusal: CommandRefusal): Promise<void> {
    const { state } = this;
    if (this.refusalsRecorded >= MAX_REFUSALS_PER_RUN) {
      log.warn('refusal not recorded: this run has recorded as many as it keeps', {
        planId: state.plan.planId,
        limit: MAX_REFUSALS_PER_RUN,
      });
      return;
    }
    this.refusalsRecorded += 1;
    const input = {
      planId: state.plan.planId,
      eventSeq: state.eventSeq++,
      at: now(),
      ...refusal,
      phase: state.plan.phase,
      state: state.plan.state,
    };
    try {
      // Written even while the plan is being cancelled: the refusal happened, and the number is spent.
      await CancellationScope.nonCancellable(() => this.recordings.recordRefusal(input));
    } catch (err) {
      log.error('a refusal could not be recorded', {
        planId: state.plan.planId,
        eventSeq: input.eventSeq,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /**
   * Whether `request` may approve the open gate now: the lifecycle's rules (domain/lifecycle.ts canAdvance), the
   * changeset its sender reviewed, a pause, and the gate's approval policy (domain/gates.ts canApprove). The update's
   * validator and the Web UI's approve signal judge by this one function.
   */
  approvalVerdict(request: AdvancePlanRequest): Verdict {
    const { plan } = this.state;
    // An approval already accepted but not yet acted on would otherwise let a second advance skip a gate.
    const underWay = this.underWay();
    if (underWay !== null) return { ok: false, reason: underWay };
    const advance = canAdvance(plan, request.expectedPhase);
    if (!advance.ok) return advance;
    if (plan.paused !== undefined && plan.paused !== null) {
      return { ok: false, reason: `the plan is paused by ${plan.paused.by}; resume it first (plan resume)` };
    }
    const reviewed = checkReviewedChangeset(plan, request.reviewedChangesetId);
    if (!reviewed.ok) return reviewed;
    const gate = plan.gate ?? null;
    return gate === null ? { ok: true } : canApprove(gate, request.by);
  }

  /**
   * Takes an approval the verdict accepted. Under a policy of several approvals, each but the last is recorded
   * (APPROVAL_RECORDED, a user_intervention with who and why) and the gate stays open: false. The last one is the
   * gate's approval, which passGate records with the transition: true.
   */
  private async approve(request: AdvancePlanRequest): Promise<boolean> {
    const { state } = this;
    const gate = state.plan.gate ?? null;
    if (gate !== null) {
      // Counted at once, so the next approver's validator already sees it (and a repeat is refused).
      gate.approvals.push({ by: request.by, reason: request.reason ?? null, at: now() });
      if (approvalsLeft(gate) > 0) {
        await this.change(
          'APPROVAL_RECORDED',
          { gate },
          {
            recordedBy: request.by,
            message:
              `${request.by} approved entering ${gate.to} (${gate.approvals.length} of ${gate.required}); ` +
              `waiting for ${gateNeeds(gate)}`,
            decisions: [
              userInterventionDraft({
                by: request.by,
                question: `Approve entering ${gate.to}? (${gate.required} approvals needed)`,
                chosenOption: `Approve entering ${gate.to} (${gate.approvals.length} of ${gate.required})`,
                alternatives: [`Stay in ${state.plan.phase}`, 'Cancel the plan'],
                reason: request.reason,
                phase: state.plan.phase,
                parentSeq: ROOT_SEQ,
              }),
            ],
          },
        );
        return false;
      }
    }
    state.approval = request;
    return true;
  }

  /**
   * A corrected step in the strategy Execute will run: replaced by the correction's step, or dropped (`skip`, null).
   * The correction is then the decision the step comes from.
   */
  private replaceStep(index: number, step: Step | null | undefined, correctionId: string): void {
    const { state } = this;
    const { tracking, strategy } = state;
    // The effect named a step of this strategy, and the check parsed the option: anything else is a bug here.
    if (tracking === undefined || strategy === null || step === undefined || index >= strategy.steps.length) {
      throw new Error(`no step ${index} to replace in the strategy`);
    }
    const steps = [...strategy.steps];
    const ids = [...tracking.stepDecisionIds];
    if (step === null) {
      steps.splice(index, 1);
      ids.splice(index, 1);
    } else {
      steps[index] = step;
      ids[index] = correctionId;
    }
    state.strategy = { ...strategy, steps };
    tracking.stepDecisionIds = ids;
  }

  /**
   * Shows the plan's state where people look without opening its input: the search attributes (the inbox, `temporal
   * workflow list`, the Web UI's filters) and the Web UI's current details. Neither is a command: replay is unaffected.
   */
  publish(): void {
    upsertSearchAttributes(planSearchAttributes(this.state.plan));
    setCurrentDetails(currentDetails(this.state.plan));
  }

  /**
   * Every state change goes through here. It is written first and shown second: once a query, an update's
   * result or a search attribute shows a state, the database already records it. The two exceptions (a gate
   * opening, a phase failing) are states that wait for a person, opened to their command just before the write.
   */
  async change(
    event: PlanEventType,
    update: Change,
    record: ChangeRecord = {},
  ): Promise<Record<number, string>> {
    const { state } = this;
    const { plan } = state;
    const next = {
      phase: update.phase ?? plan.phase,
      state: update.state ?? plan.state,
      error: update.error === undefined ? plan.error : update.error,
      awaitingApproval: update.awaitingApproval ?? plan.awaitingApproval,
      gate: update.gate === undefined ? (plan.gate ?? null) : update.gate,
      paused: update.paused === undefined ? (plan.paused ?? null) : update.paused,
      automationLevel: update.automationLevel ?? plan.automationLevel,
      updatedAt: now(),
    };
    const drafts = record.decisions ?? [];
    const first = this.allocateDecisions(drafts.length);
    const input: RecordPlanStateInput = {
      planId: plan.planId,
      eventSeq: state.eventSeq++,
      at: next.updatedAt,
      event,
      phase: next.phase,
      state: next.state,
      recordedBy: record.recordedBy ?? WORKFLOW_ACTOR,
      message: record.message ?? null,
      error: next.error,
      decisions: drafts.map((draft, i) => ({ seq: first + i, draft })),
      ...(record.supersede === undefined ? {} : { supersede: record.supersede }),
      gate: next.gate,
      paused: next.paused,
      automationLevel: next.automationLevel,
    };
    const { decisionIds } = await this.recordings.recordPlanState(input);
    state.recordedState = next.state;
    Object.assign(plan, next, { decisionCount: state.decisionSeq });
    this.publish();
    return decisionIds;
  }

  /**
   * Records the plan's first PHASE_STARTED with the root of its decision tree (the prompt_definition at ROOT_SEQ)
   * and the decisions that hang under it from the start.
   */
  async recordRoot(decisions: DecisionDraft[], message: string | null): Promise<void> {
    const ids = await this.change('PHASE_STARTED', { state: 'PROCESSING' }, { decisions, message });
    const rootId = ids[ROOT_SEQ];
    if (rootId === undefined)
      throw new Error(`the root decision was recorded without an id (got ${Object.keys(ids)})`);
    this.state.plan.decisionRootId = rootId;
  }

  /**
   * Parks the plan ERRORED until a person retries (or cancels), then records the retry. Like a gate, ERRORED is
   * open to a retry before its record is written: a person who sees ERRORED in the database can retry at once, and
   * a retry accepted meanwhile is acted on only after the record. A gate that was open closes: its approval
   * stands, and a retry that passes goes on without asking again.
   */
  async waitForRetry(block: {
    event: PlanEventType;
    error: PlanError;
    decisions?: DecisionDraft[];
    resume: ProcessingState;
    question: string;
    chosenOption: string;
  }): Promise<string[]> {
    const { state } = this;
    state.plan.state = 'ERRORED';
    state.plan.error = block.error;
    state.plan.awaitingApproval = false;
    const recorded = await this.change(
      block.event,
      { state: 'ERRORED', error: block.error, awaitingApproval: false },
      { message: block.error.message, decisions: block.decisions ?? [] },
    );
    await condition(() => state.retry !== null);
    const request = pending(state.retry);
    await this.change(
      'PHASE_RETRIED',
      { state: block.resume, error: null },
      {
        recordedBy: request.by,
        message: request.reason ?? null,
        decisions: [
          userInterventionDraft({
            by: request.by,
            question: block.question,
            chosenOption: block.chosenOption,
            alternatives: ['Cancel the plan'],
            reason: request.reason,
            phase: state.plan.phase,
            parentSeq: ROOT_SEQ,
          }),
        ],
      },
    );
    state.retry = null;
    return inOrder(recorded);
  }

  /**
   * Runs one phase until it is COMPLETE; a failure parks it ERRORED until a person retries it. `startRecorded`:
   * the first run's PHASE_STARTED is already written (the plan's first, with its root).
   */
  async runPhaseToCompletion(
    phase: WorkPhase,
    work: (run: PhaseWork) => Promise<PhaseOutcome>,
    options: {
      startRecorded: boolean;
      firstAttempt?: number;
      /** A re-ask of Strategize's later steps: its first `keptSteps` steps and their decisions stay. */
      keptSteps?: number;
    },
  ): Promise<void> {
    const { state } = this;
    const firstAttempt = options.firstAttempt ?? 1;
    const kept = options.keptSteps;
    // What a correction re-runs needs to know of this run: where it hangs, its number, the decisions it made. A
    // re-ask adds to the phase's run rather than replacing it.
    const tracking = phase === 'APPLY' ? undefined : state.tracking;
    if (tracking !== undefined && phase !== 'APPLY' && kept === undefined) {
      tracking.phaseDecisionIds[phase] = [];
      tracking.phaseParentSeqs[phase] = state.parentDecisionSeq;
    }
    for (let attempt = firstAttempt; ; attempt++) {
      if (attempt > firstAttempt || !options.startRecorded)
        await this.change('PHASE_STARTED', { state: 'PROCESSING' });
      if (tracking !== undefined && phase !== 'APPLY') tracking.attempts[phase] = attempt;
      let failed: { error: PlanError; decisions: DecisionDraft[] };
      try {
        const assumedFirst = state.decisionSeq;
        const startedMs = Date.now();
        const outcome = await work({
          attempt,
          firstDecisionSeq: assumedFirst,
          parentDecisionSeq: state.parentDecisionSeq,
        }).catch((err: unknown) => {
          if (isPhaseFailure(err)) recordPhaseDuration({ phase, outcome: 'failed' }, startedMs);
          throw err;
        });
        recordPhaseDuration({ phase, outcome: outcome.ok ? 'completed' : 'failed' }, startedMs);
        // A correction may have taken sequence numbers while the phase ran: the batch then starts later, and links
        // inside it move along. change() allocates from decisionSeq before its first await, so this is exact.
        const shift = state.decisionSeq - assumedFirst;
        const decisions = outcome.decisions.map((d) =>
          d.parentSeq !== null && d.parentSeq >= assumedFirst ? { ...d, parentSeq: d.parentSeq + shift } : d,
        );
        if (outcome.ok) {
          if (decisions.length > 0) state.parentDecisionSeq = state.decisionSeq + decisions.length - 1;
          const firstSeq = state.decisionSeq;
          const bySeq = await this.change(
            'PHASE_COMPLETED',
            { state: 'COMPLETE', error: null },
            { message: outcome.summary, decisions },
          );
          const recorded = inOrder(bySeq);
          // Only what Strategize and Execute decided can stop the next transition: Apply has written its files.
          if (phase !== 'APPLY') {
            state.lowConfidence = lowestConfidence(
              phase,
              confidenceCandidates(decisions, firstSeq, bySeq),
              this.policy.minConfidence,
            );
          }
          if (tracking !== undefined && phase !== 'APPLY') {
            tracking.phaseDecisionIds[phase].push(...recorded);
            if (phase === 'STRATEGIZE') {
              // Without the actor's word on which decision gave which step, no step can be corrected into place.
              const ids = (outcome.stepDecisions ?? []).map((i) => recorded[i]);
              const found = ids.every((id) => id !== undefined) ? (ids as string[]) : [];
              tracking.stepDecisionIds =
                kept === undefined ? found : [...tracking.stepDecisionIds.slice(0, kept), ...found];
              tracking.reasksLaterSteps = outcome.reasksLaterSteps === true;
            }
          }
          return;
        }
        failed = { error: { ...outcome.failure, at: now() }, decisions };
      } catch (err) {
        if (!isPhaseFailure(err)) throw err;
        failed = { error: describeFailure(err, now()), decisions: [] };
      }
      log.warn('phase failed', { planId: state.plan.planId, phase, attempt, error: failed.error.message });
      const recorded = await this.waitForRetry({
        event: 'PHASE_FAILED',
        error: failed.error,
        decisions: failed.decisions,
        resume: 'QUEUED',
        question: `${phase} failed: retry it?`,
        chosenOption: `Retry ${phase}`,
      });
      if (tracking !== undefined && phase !== 'APPLY') tracking.phaseDecisionIds[phase].push(...recorded);
    }
  }

  /**
   * Moves the plan one phase forward, through a person's approval when the automation level asks for one.
   * `guard` runs before the gate opens (nobody is asked to approve what it forbids) and again once approved (a
   * rule added while the gate was open must still stop the transition).
   */
  async transition(
    to: Phase,
    guard: (to: Phase) => Promise<void>,
    commandsForReview: readonly string[] = [],
  ): Promise<void> {
    const { state } = this;
    const verdict = canTransition(state.plan, to);
    // The loop only asks for the next phase once the current one is COMPLETE: a refusal here is a bug in this
    // workflow, which fails the workflow task (and waits for a fixed worker) rather than the plan.
    if (!verdict.ok) throw new Error(`illegal transition to ${to}: ${verdict.reason}`);
    // A pause holds the plan here, before anything of the next phase: its gate does not open meanwhile either.
    const released = () => state.plan.paused === undefined || state.plan.paused === null;
    if (!released()) await condition(released);
    await guard(to);
    const lowConfidence = state.lowConfidence ?? null;
    const reason = gateReason(state.plan.automationLevel, to, commandsForReview, lowConfidence);
    // Asked only when a decision's confidence alone stops the plan: see CONFIDENCE_GATE_PATCH.
    if (reason === null || (reason === 'confidence' && !patched(CONFIDENCE_GATE_PATCH))) {
      state.lowConfidence = null;
      await this.change('PHASE_ADVANCED', { phase: to, state: enteredState(to) });
      return;
    }
    await this.openGate(to, commandsForReview);
    await this.passGate(to, guard);
  }

  /** Opens the gate into `to` and records it; a long history then continues as new there. */
  private async openGate(to: Phase, commandsForReview: readonly string[]): Promise<void> {
    const { state } = this;
    // The gate opens before its record is written (the one exception to "write first, show second"): a person who
    // sees AWAITING_APPROVAL in the database can then always advance at once. An advance accepted meanwhile is
    // applied only after the record, so the events stay in order.
    state.plan.awaitingApproval = true;
    state.plan.commandsForReview = [...commandsForReview];
    const openedAt = now();
    const { policy } = this;
    const lowConfidence = state.lowConfidence ?? null;
    state.plan.gate = {
      to,
      openedAt,
      approvals: [],
      required: policy.requiredApprovals,
      approvers: [...policy.approvers],
      lowConfidence,
      expiresAt: expiryOf(openedAt, policy.timeoutSeconds),
      reminders: 0,
    };
    const unsure =
      lowConfidence === null
        ? ''
        : `; decision #${lowConfidence.sequenceNumber} ("${lowConfidence.question}") has confidence ` +
          `${lowConfidence.confidence}, below the profile's ${lowConfidence.minimum}`;
    await this.change(
      'AWAITING_APPROVAL',
      { awaitingApproval: true },
      { message: `${gateMessage(to, commandsForReview)}${unsure}` },
    );
    await this.continueAsNewIfLong(to);
  }

  /**
   * Waits for a person's approval at an open gate, checks again, and records the transition. A continued run
   * starts here, at the gate its predecessor opened and recorded.
   */
  async passGate(to: Phase, guard: (to: Phase) => Promise<void>): Promise<void> {
    const { state } = this;
    const from = state.plan.phase;
    // Nothing records a change between a gate opening and its approval but a correction: updatedAt is when it
    // opened (or reopened after a re-run), in this run or (continued as new) the one before.
    let openedAt = state.plan.updatedAt;
    for (;;) {
      if (!(await this.waitAtGate())) {
        await this.gateExpired(to);
        continue;
      }
      if (state.approval !== null) break;
      await this.rerunAtGate(to, guard);
      openedAt = state.plan.updatedAt;
    }
    recordGateWait({ gate: to }, openedAt);
    const request = pending(state.approval);
    await guard(to);
    state.lowConfidence = null;
    await this.change(
      'PHASE_ADVANCED',
      { phase: to, state: enteredState(to), awaitingApproval: false, gate: null },
      {
        recordedBy: request.by,
        message: request.reason ?? null,
        decisions: [
          userInterventionDraft({
            by: request.by,
            question: `Advance from ${from} to ${to}?`,
            chosenOption: `Advance to ${to}`,
            alternatives: [`Stay in ${from}`, 'Cancel the plan'],
            reason: request.reason,
            phase: from,
            parentSeq: ROOT_SEQ,
          }),
        ],
      },
    );
    state.approval = null;
    state.plan.commandsForReview = [];
  }

  /**
   * Waits at an open gate for a person's command: true when one came (an approval, or a correction or amendment to
   * act on), false when the gate's approval timeout ran out first.
   */
  private async waitAtGate(): Promise<boolean> {
    const { state } = this;
    const commanded = () => state.approval !== null || state.rerun?.ready === true;
    const expiresAt = state.plan.gate?.expiresAt ?? null;
    // Asked only of a gate that can expire: see GATE_EXPIRY_PATCH.
    if (expiresAt === null || !patched(GATE_EXPIRY_PATCH)) {
      await condition(commanded);
      return true;
    }
    // Time left, not the whole timeout: a run continued as new at this gate keeps the expiry it was opened with.
    const left = Math.max(1, Date.parse(expiresAt) - Date.now());
    return condition(commanded, left);
  }

  /**
   * A gate's approval timeout ran out. With `--on-timeout remind` the plan records a reminder (APPROVAL_REMINDER)
   * and waits one more timeout; otherwise it is cancelled with the reason approval_expired, recorded as its error.
   */
  private async gateExpired(to: Phase): Promise<void> {
    const { state, policy } = this;
    const gate = pending(state.plan.gate ?? null);
    const waited = `${policy.timeoutSeconds ?? 0} s`;
    if (policy.onTimeout === 'remind') {
      gate.reminders += 1;
      gate.expiresAt = expiryOf(now(), policy.timeoutSeconds);
      await this.change(
        'APPROVAL_REMINDER',
        { gate },
        {
          message:
            `reminder ${gate.reminders}: ${waitingFor(state.plan) ?? `waiting to enter ${to}`} ` +
            `(open since ${gate.openedAt}, reminding every ${waited})`,
        },
      );
      return;
    }
    const error: PlanError = {
      type: ERROR_TYPES.ApprovalExpired,
      message: `${APPROVAL_EXPIRED}: nobody approved entering ${to} within ${waited}`,
      details: JSON.stringify({ gate: to, openedAt: gate.openedAt, approvals: gate.approvals }),
      at: now(),
    };
    await this.change(
      'PLAN_CANCELLED',
      { state: 'CANCELLED', awaitingApproval: false, gate: null, error },
      { message: error.message },
    );
    throw new PlanExpired(error.message);
  }

  /**
   * A correction or an amendment accepted at the gate into `to`: the gate closes, the plan's phase runs again (the
   * phase, not the plan, goes back: the plan stays where it is), and the gate reopens for a person to review what
   * the re-run produced. The earlier run's decisions are superseded by the decision that caused the re-run, in the
   * same write as the re-run's start.
   */
  private async rerunAtGate(to: Phase, guard: (to: Phase) => Promise<void>): Promise<void> {
    const { state } = this;
    const rerun = pending(state.rerun ?? null);
    const { tracking } = state;
    const phase = rerun.phase;
    // Only accepted when situation() offered a tracked re-run on a path with a rerunner.
    if (phase === null || tracking === undefined || this.rerunner === null) {
      throw new Error('a re-run was requested that this plan cannot make');
    }
    const decisions =
      rerun.amendment === null
        ? []
        : [
            userInterventionDraft({
              by: rerun.by,
              question: `Amend the plan: what should ${phase} also take into account?`,
              chosenOption: rerun.amendment,
              alternatives: ['Keep the strategy as it is'],
              reason: rerun.reason ?? undefined,
              phase: state.plan.phase,
              parentSeq: ROOT_SEQ,
            }),
          ];
    // An amendment's intervention takes the next number, in the same write.
    const bySeq = rerun.supersededBySeq ?? state.decisionSeq;
    // A new strategy replaces every step, corrected ones included.
    const superseded = rerun.supersede ?? [
      ...tracking.phaseDecisionIds[phase],
      ...(phase === 'STRATEGIZE' ? tracking.stepDecisionIds : []),
    ];
    const revision = rerun.revision ?? null;
    await this.change(
      'PHASE_STARTED',
      { state: 'PROCESSING', awaitingApproval: false, gate: null },
      {
        recordedBy: rerun.by,
        message:
          rerun.amendment === null
            ? `${phase} runs again after a correction${rerun.reason === null ? '' : `: ${rerun.reason}`}`
            : `${phase} runs again with added instructions: ${rerun.amendment}`,
        decisions,
        supersede: { decisionIds: superseded, bySeq },
      },
    );
    if (rerun.amendment !== null) tracking.amendments.push(rerun.amendment);
    state.plan.commandsForReview = [];
    state.rerun = null;
    // The re-run hangs where the run it replaces did (moved to a correction of that decision, if any); re-asked
    // steps hang under the correction they follow from.
    state.parentDecisionSeq = revision?.parentSeq ?? tracking.phaseParentSeqs[phase];
    const commands = await this.rerunner(phase, {
      firstAttempt: tracking.attempts[phase] + 1,
      revision,
      reason: rerun.reason,
    });
    await guard(to);
    await this.openGate(to, commands);
  }

  /**
   * A plan can wait at gates for days and be corrected and retried many times: at a gate, once its history is
   * long (past the limit, or Temporal suggests it), the run hands its whole state to a new run of the same
   * workflow and the gate stays open there. Only lean plans do: an older plan's history was written without
   * this, and its replay must produce the same commands.
   */
  private async continueAsNewIfLong(gate: Phase): Promise<void> {
    const { state } = this;
    const info = workflowInfo();
    if (!this.lean || (info.historyLength < this.historyEventLimit && !info.continueAsNewSuggested)) return;
    // A correction being recorded finishes first. An approval accepted meanwhile wins: its update waits for the
    // transition, which this run then makes, rather than being cut off by the hand-over.
    // A correction that re-runs a phase is taken here too: its handler waits for the re-run, not for this.
    await condition(() => state.approval !== null || state.rerun?.ready === true || allHandlersFinished());
    if (state.approval !== null || state.rerun?.ready === true) return;
    const { spec, ...carried } = state;
    log.info('continuing as new at a gate', { planId: state.plan.planId, gate, events: info.historyLength });
    await continueAsNew<(input: PlanWorkflowInput) => Promise<PlanWorkflowResult>>({
      ...spec,
      continuation: { state: carried, gate },
      historyEventLimit: this.historyEventLimit,
    });
  }

  /**
   * The frame of every plan: creation recorded, `body` run (the phases and their transitions), APPLIED recorded,
   * and a cancellation recorded whatever it interrupted.
   */
  async run(body: () => Promise<void>): Promise<PlanWorkflowResult> {
    const { state } = this;
    try {
      this.publish();
      // A continued run's plan was created by the first run.
      if (this.resumedGate === null) {
        await this.recordings.recordPlanCreated({ spec: state.spec, eventSeq: state.eventSeq++ });
        countPlanStarted({ action: state.plan.actionName });
      }
      await body();
      await this.change('PLAN_APPLIED', {}, { message: 'the plan reached APPLIED' });
      countPlanFinished({ action: state.plan.actionName, phase: state.plan.phase, state: state.plan.state });
      // Let a caller's update finish with the final snapshot before the run closes.
      await condition(allHandlersFinished);
      return { planId: state.plan.planId, phase: state.plan.phase, decisionCount: state.decisionSeq };
    } catch (err) {
      if (err instanceof PlanExpired) {
        // Cancelled by its own gate, and recorded so: the workflow completes (no one asked Temporal to cancel it).
        countPlanFinished({
          action: state.plan.actionName,
          phase: state.plan.phase,
          state: state.plan.state,
        });
        await condition(allHandlersFinished);
        return { planId: state.plan.planId, phase: state.plan.phase, decisionCount: state.decisionSeq };
      }
      if (isCancellation(err)) {
        // Cancellation interrupts whatever was waiting; the record of it must still be written.
        await CancellationScope.nonCancellable(() =>
          this.change(
            'PLAN_CANCELLED',
            { state: 'CANCELLED', awaitingApproval: false },
            { message: 'the plan was cancelled' },
          ),
        );
        countPlanFinished({
          action: state.plan.actionName,
          phase: state.plan.phase,
          state: state.plan.state,
        });
      }
      throw err;
    }
  }
}

/** A work phase is entered QUEUED (its work is still to start); APPLIED is entered done. */
function enteredState(to: Phase): ProcessingState {
  return to === 'APPLIED' ? 'COMPLETE' : 'QUEUED';
}

/**
 * The actors' decisions of a phase as the confidence check reads them: people's interventions and decisions without
 * a confidence are nobody's doubt.
 */
function confidenceCandidates(
  drafts: readonly DecisionDraft[],
  firstSeq: number,
  ids: Record<number, string>,
): ConfidenceCandidate[] {
  return drafts.flatMap((draft, i) => {
    const id = ids[firstSeq + i];
    if (draft.type === 'user_intervention' || draft.confidence === null || id === undefined) return [];
    return [
      {
        decisionId: id,
        sequenceNumber: firstSeq + i,
        question: draft.question,
        chosenOption: draft.chosenOption,
        confidence: draft.confidence,
      },
    ];
  });
}

/** A recording's decision ids in the order of its drafts (by sequence number). */
function inOrder(ids: Record<number, string>): string[] {
  return Object.keys(ids)
    .map(Number)
    .sort((a, b) => a - b)
    .map((seq) => ids[seq] as string);
}

function requireRequester(by: string): void {
  if (typeof by !== 'string' || by.trim() === '') {
    throw new Error('the request must say who makes it (by)');
  }
}

function pending<T>(request: T | null): T {
  // Only called once a condition saw the request: null here is a bug in this workflow, not in the request.
  if (request === null) throw new Error('no pending request');
  return request;
}

/**
 * Whether an error thrown by a phase's work is the phase's failure (an activity that failed after its retries), to
 * be recorded and parked for a person. Anything else (a cancellation, a bug in this workflow) is rethrown: a bug
 * then fails the workflow task, which Temporal retries until a fixed worker replays past it, rather than failing
 * the plan with an error nobody can act on.
 */
export function isPhaseFailure(err: unknown): err is ActivityFailure {
  return err instanceof ActivityFailure && !isCancellation(err);
}

/** Error metadata for a failed phase, taken from the innermost ApplicationFailure when there is one. */
export function describeFailure(err: unknown, at: string): PlanError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details && cause.details.length > 0 ? JSON.stringify(cause.details) : null;
    return { type: cause.type ?? ERROR_TYPES.PhaseFailed, message: cause.message, details, at };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { type: ERROR_TYPES.PhaseFailed, message, details: null, at };
}
