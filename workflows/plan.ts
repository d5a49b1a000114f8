import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PlanActivities } from '../activities';
import type {
  CheckInvariantsResult,
  PlanEventType,
  PhaseFailure,
  RecordPlanStateInput,
} from '../activities/contracts';
import type { Strategy } from '../domain/steps';
import type { DecisionDraft } from '../domain/decision';
import { invariantEnforcedDrafts, promptDefinitionDraft, userInterventionDraft } from '../domain/decision';
import type { Phase, ProcessingState, WorkPhase } from '../domain/lifecycle';
import {
  canAdvance,
  canRetry,
  canTransition,
  checkReviewedChangeset,
  isFinished,
  requiresApproval,
} from '../domain/lifecycle';
import type { PlanError, PlanSnapshot } from '../domain/plan';
import { initialSnapshot, withInputDefaults } from '../domain/plan';
import {
  ERROR_TYPES,
  NON_RETRYABLE_ERROR_TYPES,
  PlanActionKey,
  PlanAutomationKey,
  PlanAwaitingInputKey,
  PlanPhaseKey,
  PlanStateKey,
  advancePlanUpdate,
  correctDecisionUpdate,
  getPlanQuery,
  retryPhaseUpdate,
} from './definitions';
import type {
  AdvancePlanRequest,
  PlanWorkflowInput,
  PlanWorkflowResult,
  RetryPhaseRequest,
} from './definitions';

/** Recording must eventually succeed: storage hiccups retry without limit, rule violations do not retry. */
const { recordPlanCreated, recordPlanState, checkCorrection, correctDecision } =
  proxyActivities<PlanActivities>({
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '500 milliseconds',
      maximumInterval: '30 seconds',
      nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
    },
  });

/** Phase work retries a few times on its own; after that the phase is ERRORED and a person decides. */
const { runPhase } = proxyActivities<PlanActivities>({
  startToCloseTimeout: '10 minutes',
  retry: {
    initialInterval: '1 second',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

/**
 * The actors' phase work. Heartbeats carry the current step (`agents plan watch`, the Web UI) and let Temporal
 * notice a dead worker within a minute instead of at the 30-minute timeout. Failures of the work itself come back
 * as results (so their decisions are recorded); what is thrown is infrastructure, retried a few times.
 */
const { strategize, execute, apply, checkInvariants } = proxyActivities<PlanActivities>({
  // Generous: a step may run for an hour and be retried (auto-debug); the heartbeat, not this, finds dead workers.
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

/** Marks plans whose phases are run by actors (strategize/execute/apply); older histories ran `runPhase`. */
const PHASE_ACTORS_PATCH = 'phase-actors';

const WORK_PHASES: readonly WorkPhase[] = ['STRATEGIZE', 'EXECUTE', 'APPLY'];
const WORKFLOW_ACTOR = 'workflow';
/** The prompt_definition is the first decision a plan records; people's interventions hang under it. */
const ROOT_SEQ = 0;

/** Workflow time is replayed from history, so this is deterministic. */
function now(): string {
  return new Date().toISOString();
}

type PhaseOutcome =
  | { ok: true; summary: string; decisions: DecisionDraft[] }
  | { ok: false; failure: PhaseFailure; decisions: DecisionDraft[] };

export async function planWorkflow(input: PlanWorkflowInput): Promise<PlanWorkflowResult> {
  // Decided once, before the first command: a plan started by an older engine keeps its old path to the end
  // (replaying it must produce the same commands), every new plan takes the actors' path.
  const useActors = patched(PHASE_ACTORS_PATCH);
  const spec = withInputDefaults(input);
  const plan: PlanSnapshot = initialSnapshot(spec, workflowInfo().workflowId);

  // Sequence numbers are allocated here, in deterministic workflow code, and handed to activities: a retried
  // activity carries the same numbers and storage ignores a row it already has.
  let eventSeq = 0;
  let decisionSeq = 0;
  const allocateDecisions = (count: number): number => {
    const first = decisionSeq;
    decisionSeq += count;
    return first;
  };

  // Products handed from one phase to the next; rebuilt by replay, so they need no storage of their own.
  let strategy: Strategy | null = null;
  let validationLine: string | null = null;

  /** The state of the last record written; plan.state may run ahead of it while a person's command is awaited. */
  let recordedState: ProcessingState = plan.state;
  let approval: AdvancePlanRequest | null = null;
  let retry: RetryPhaseRequest | null = null;
  /** Where the next phase's decisions hang: the last decision of the phase before. */
  let parentDecisionSeq = 0;

  // Results are serialised as soon as a handler returns, so a shallow copy cannot be mutated afterwards.
  const snapshot = (): PlanSnapshot => ({ ...plan });
  // A request stays pending until its change is recorded and visible, so while it is being written a second
  // request is refused as "under way" instead of being applied to a state that is about to change.
  const pending = <T>(request: T | null): T => {
    if (request === null) throw new Error('no pending request');
    return request;
  };

  setHandler(getPlanQuery, snapshot);

  setHandler(
    advancePlanUpdate,
    async (request) => {
      const from = plan.phase;
      approval = request;
      // An invariant checked after the approval may stop the transition: the update then returns the ERRORED plan,
      // once that is recorded (the state opens to a retry a moment before its record is written).
      await condition(() => plan.phase !== from || plan.state === 'CANCELLED' || recordedState === 'ERRORED');
      return snapshot();
    },
    {
      validator: (request) => {
        requireActor(request.by);
        // An approval already accepted but not yet acted on would otherwise let a second advance skip a gate.
        const verdict =
          approval === null ? canAdvance(plan, request.expectedPhase) : pendingAdvance(plan.phase);
        if (!verdict.ok) throw new Error(verdict.reason);
        const reviewed = checkReviewedChangeset(plan, request.reviewedChangesetId);
        if (!reviewed.ok) throw new Error(reviewed.reason);
      },
    },
  );

  setHandler(
    correctDecisionUpdate,
    async (request) => {
      // Checked before any number is spent, so a refused correction leaves no gap in the sequence.
      const { correctedSeq } = await checkCorrection({ planId: plan.planId, decisionId: request.decisionId });
      const interventionSeq = allocateDecisions(2);
      const result = await correctDecision({
        planId: plan.planId,
        decisionId: request.decisionId,
        interventionSeq,
        correctionSeq: interventionSeq + 1,
        eventSeq: eventSeq++,
        by: request.by,
        chosenOption: request.chosenOption,
        reason: request.reason ?? null,
        at: now(),
      });
      plan.decisionCount = decisionSeq;
      // What comes next builds on the correction, not on the choice it replaced.
      if (parentDecisionSeq === correctedSeq) parentDecisionSeq = interventionSeq + 1;
      return result;
    },
    {
      validator: (request) => {
        requireActor(request.by);
        if (typeof request.chosenOption !== 'string' || request.chosenOption.trim() === '') {
          throw new Error('a correction needs the option chosen instead (--option)');
        }
        if (isFinished(plan)) {
          throw new Error(
            `the plan has finished (${plan.phase}, ${plan.state}); its decisions can no longer change`,
          );
        }
      },
    },
  );

  setHandler(
    retryPhaseUpdate,
    async (request) => {
      retry = request;
      await condition(() => plan.state !== 'ERRORED');
      return snapshot();
    },
    {
      validator: (request) => {
        requireActor(request.by);
        const verdict =
          retry === null ? canRetry(plan) : { ok: false as const, reason: 'a retry is already under way' };
        if (!verdict.ok) throw new Error(verdict.reason);
      },
    },
  );

  const publish = (): void => {
    upsertSearchAttributes([
      { key: PlanPhaseKey, value: plan.phase },
      { key: PlanStateKey, value: plan.state },
      { key: PlanActionKey, value: plan.actionName },
      { key: PlanAutomationKey, value: plan.automationLevel },
      { key: PlanAwaitingInputKey, value: plan.awaitingApproval },
    ]);
  };

  /**
   * Every state change goes through here. It is written first and shown second: once a query, an update's
   * result or a search attribute shows a state, the database already records it. The two exceptions (a gate
   * opening, a phase failing) are states that wait for a person, opened to their command just before the write.
   */
  const change = async (
    event: PlanEventType,
    update: { phase?: Phase; state?: ProcessingState; error?: PlanError | null; awaitingApproval?: boolean },
    options: { actor?: string; message?: string | null; decisions?: DecisionDraft[] } = {},
  ): Promise<Record<number, string>> => {
    const next = {
      phase: update.phase ?? plan.phase,
      state: update.state ?? plan.state,
      error: update.error === undefined ? plan.error : update.error,
      awaitingApproval: update.awaitingApproval ?? plan.awaitingApproval,
      updatedAt: now(),
    };
    const drafts = options.decisions ?? [];
    const first = allocateDecisions(drafts.length);
    const input: RecordPlanStateInput = {
      planId: plan.planId,
      eventSeq: eventSeq++,
      at: next.updatedAt,
      event,
      phase: next.phase,
      state: next.state,
      recordedBy: options.actor ?? WORKFLOW_ACTOR,
      message: options.message ?? null,
      error: next.error,
      decisions: drafts.map((draft, i) => ({ seq: first + i, draft })),
    };
    const { decisionIds } = await recordPlanState(input);
    recordedState = next.state;
    Object.assign(plan, next, { decisionCount: decisionSeq });
    publish();
    return decisionIds;
  };

  /**
   * Parks the plan ERRORED until a person retries (or cancels), then records the retry and resumes in `resume`.
   * Like a gate, ERRORED is open to a retry before its record is written: a person who sees ERRORED in the
   * database can retry at once, and a retry accepted meanwhile is acted on only after the record. A gate that was
   * open closes: its approval stands, and a retry that passes goes on without asking again.
   */
  const waitForRetry = async (block: {
    event: PlanEventType;
    error: PlanError;
    decisions?: DecisionDraft[];
    resume: ProcessingState;
    question: string;
    chosenOption: string;
  }): Promise<void> => {
    plan.state = 'ERRORED';
    plan.error = block.error;
    plan.awaitingApproval = false;
    await change(
      block.event,
      { state: 'ERRORED', error: block.error, awaitingApproval: false },
      { message: block.error.message, decisions: block.decisions ?? [] },
    );
    await condition(() => retry !== null);
    const request = pending(retry);
    await change(
      'PHASE_RETRIED',
      { state: block.resume, error: null },
      {
        actor: request.by,
        message: request.reason ?? null,
        decisions: [
          userInterventionDraft({
            by: request.by,
            question: block.question,
            chosenOption: block.chosenOption,
            alternatives: ['Cancel the plan'],
            reason: request.reason,
            phase: plan.phase,
            parentSeq: ROOT_SEQ,
          }),
        ],
      },
    );
    retry = null;
  };

  /**
   * Seed 004's enforcement: a violated invariant blocks the plan where it is (state ERRORED, an
   * INVARIANT_VIOLATED event with the invariant, the evidence and the phase) until a person retries (after changing
   * the plan's invariants or the project) or cancels; each retry checks again. A check that cannot run (an actor
   * missing, a model refusing) blocks the same way, as PHASE_FAILED with its error.
   */
  const enforceInvariants = async (
    entering: Phase | null,
    first: CheckInvariantsResult | null,
  ): Promise<void> => {
    const where = entering === null ? `at the start of ${plan.phase}` : `before ${entering}`;
    const resumeState = plan.state;
    let pendingResult = first;
    for (;;) {
      let error: PlanError;
      let event: PlanEventType;
      try {
        const result =
          pendingResult ??
          (await checkInvariants({
            spec,
            phase: plan.phase,
            entering,
            changesetId: plan.changesetId,
            record: null,
          }));
        pendingResult = null;
        if (result.violations.length === 0) return;
        const lines = result.violations.map(
          (v) =>
            `"${v.invariant.text}" (${v.invariant.scope}` +
            `${v.invariant.sourceName === null ? '' : ` from ${v.invariant.sourceName}`}): ${v.evidence}`,
        );
        error = {
          type: ERROR_TYPES.InvariantViolated,
          message: `invariant violated ${where}: ${lines.join('; ')}`,
          details: JSON.stringify({ phase: plan.phase, entering, violations: result.violations }),
          at: now(),
        };
        event = 'INVARIANT_VIOLATED';
      } catch (err) {
        if (isCancellation(err)) throw err;
        error = describeFailure(err, now());
        error = { ...error, message: `the invariant check ${where} failed: ${error.message}` };
        event = 'PHASE_FAILED';
      }
      await waitForRetry({
        event,
        error,
        resume: resumeState,
        question: `The invariants did not pass ${where}: check again?`,
        chosenOption: 'Check the invariants again',
      });
    }
  };

  /** One run of a phase's work; which actor does it is the activity's business. */
  const doPhaseWork = async (
    phase: WorkPhase,
    work: { attempt: number; firstDecisionSeq: number; parentDecisionSeq: number },
  ): Promise<PhaseOutcome> => {
    if (!useActors) {
      const result = await runPhase({ spec, phase, ...work });
      return { ok: true, summary: result.summary, decisions: result.decisions };
    }
    switch (phase) {
      case 'STRATEGIZE': {
        const result = await strategize({ spec, ...work });
        strategy = result.strategy;
        return { ok: true, summary: result.summary, decisions: result.decisions };
      }
      case 'EXECUTE': {
        const result = await execute({
          spec,
          ...work,
          strategy: strategy ?? { steps: [], validation: null, summary: 'no strategy' },
        });
        plan.sandboxRefs = result.sandboxRefs;
        plan.changesetId = result.changesetId;
        plan.validationSummary = result.validationSummary;
        validationLine = result.validationSummary;
        return result.failure === null
          ? { ok: true, summary: result.summary, decisions: result.decisions }
          : { ok: false, failure: result.failure, decisions: result.decisions };
      }
      case 'APPLY': {
        if (plan.changesetId === null) {
          throw ApplicationFailure.nonRetryable(
            'Execute produced no changeset to apply',
            ERROR_TYPES.InvalidInput,
          );
        }
        const result = await apply({
          spec,
          ...work,
          changesetId: plan.changesetId,
          validationSummary: validationLine,
          at: now(),
        });
        plan.validationSummary = result.validationSummary;
        return { ok: true, summary: result.summary, decisions: result.decisions };
      }
    }
  };

  /** Whether the invariants passed at the start of Strategize (checked until they do, across retries). */
  let startChecked = false;

  /** Runs one phase until it is COMPLETE; a failure parks it ERRORED until a person retries it. */
  const runPhaseToCompletion = async (phase: WorkPhase): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      // The root is recorded once, with the first start of Strategize (decisionRootId is null until then).
      const needsRoot = phase === 'STRATEGIZE' && plan.decisionRootId === null;
      let startCheck: CheckInvariantsResult | null = null;
      if (needsRoot && useActors) {
        // The invariants the plan runs under are checked and recorded with the root, under it. Their numbers come
        // after the root's, and nothing can take numbers meanwhile: a correction needs a recorded decision.
        try {
          startCheck = await checkInvariants({
            spec,
            phase: 'STRATEGIZE',
            entering: null,
            changesetId: null,
            record: { firstDecisionSeq: decisionSeq + 1, parentDecisionSeq: ROOT_SEQ },
          });
        } catch (err) {
          if (isCancellation(err)) throw err;
          // The root is still recorded; enforceInvariants runs the check again and blocks on its failure.
          startCheck = null;
        }
      }
      const root = !needsRoot
        ? []
        : [
            promptDefinitionDraft(spec),
            ...(useActors
              ? (startCheck?.decisions ?? [])
              : invariantEnforcedDrafts(spec.invariants, ROOT_SEQ, WORKFLOW_ACTOR)),
          ];
      const ids = await change(
        'PHASE_STARTED',
        { state: 'PROCESSING' },
        { decisions: root, message: startCheck?.summary ?? null },
      );
      if (needsRoot) {
        plan.decisionRootId = ids[ROOT_SEQ] ?? null;
      }
      if (phase === 'STRATEGIZE' && useActors && !startChecked) {
        await enforceInvariants(null, startCheck);
        startChecked = true;
      }
      let failed: { error: PlanError; decisions: DecisionDraft[] };
      try {
        const assumedFirst = decisionSeq;
        const outcome = await doPhaseWork(phase, {
          attempt,
          firstDecisionSeq: assumedFirst,
          parentDecisionSeq,
        });
        // A correction may have taken sequence numbers while the phase ran: the batch then starts later, and links
        // inside it move along. change() allocates from decisionSeq before its first await, so this is exact.
        const shift = decisionSeq - assumedFirst;
        const decisions = outcome.decisions.map((d) =>
          d.parentSeq !== null && d.parentSeq >= assumedFirst ? { ...d, parentSeq: d.parentSeq + shift } : d,
        );
        if (outcome.ok) {
          if (decisions.length > 0) {
            parentDecisionSeq = decisionSeq + decisions.length - 1;
          }
          await change(
            'PHASE_COMPLETED',
            { state: 'COMPLETE', error: null },
            { message: outcome.summary, decisions },
          );
          return;
        }
        failed = { error: { ...outcome.failure, at: now() }, decisions };
      } catch (err) {
        if (isCancellation(err)) throw err;
        failed = { error: describeFailure(err, now()), decisions: [] };
      }
      {
        const { error } = failed;
        log.warn('phase failed', { planId: plan.planId, phase, attempt, error: error.message });
        await waitForRetry({
          event: 'PHASE_FAILED',
          error,
          decisions: failed.decisions,
          resume: 'QUEUED',
          question: `${phase} failed: retry it?`,
          chosenOption: `Retry ${phase}`,
        });
      }
    }
  };

  /** Moves the plan one phase forward, through a person's approval when the automation level asks for one. */
  const transition = async (to: Phase): Promise<void> => {
    const verdict = canTransition(plan, to);
    if (!verdict.ok) {
      throw ApplicationFailure.nonRetryable(verdict.reason, ERROR_TYPES.IllegalTransition);
    }
    // Checked before a gate opens, so nobody is asked to approve a transition an invariant forbids.
    if (useActors) await enforceInvariants(to, null);
    const from = plan.phase;
    if (!requiresApproval(plan.automationLevel, to)) {
      await change('PHASE_ADVANCED', { phase: to, state: to === 'APPLIED' ? 'COMPLETE' : 'QUEUED' });
      return;
    }
    // The gate opens before its record is written (the one exception to "write first, show second"): a person who
    // sees AWAITING_APPROVAL in the database can then always advance at once. An advance accepted meanwhile is
    // applied only after the record, so the events stay in order.
    plan.awaitingApproval = true;
    await change(
      'AWAITING_APPROVAL',
      { awaitingApproval: true },
      { message: `waiting for approval to enter ${to}` },
    );
    await condition(() => approval !== null);
    const request = pending(approval);
    // Checked again once approved: a PLAN invariant added while the gate was open must still stop the transition.
    if (useActors) await enforceInvariants(to, null);
    await change(
      'PHASE_ADVANCED',
      { phase: to, state: to === 'APPLIED' ? 'COMPLETE' : 'QUEUED', awaitingApproval: false },
      {
        actor: request.by,
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
    approval = null;
  };

  try {
    publish();
    await recordPlanCreated({ spec, eventSeq: eventSeq++ });
    for (const phase of WORK_PHASES) {
      if (phase !== 'STRATEGIZE') await transition(phase);
      await runPhaseToCompletion(phase);
    }
    await transition('APPLIED');
    await change('PLAN_APPLIED', {}, { message: 'the plan reached APPLIED' });
    // Let a caller's update finish with the final snapshot before the run closes.
    await condition(allHandlersFinished);
    return { planId: plan.planId, phase: plan.phase, decisionCount: decisionSeq };
  } catch (err) {
    if (isCancellation(err)) {
      // Cancellation interrupts whatever was waiting; the record of it must still be written.
      await CancellationScope.nonCancellable(() =>
        change(
          'PLAN_CANCELLED',
          { state: 'CANCELLED', awaitingApproval: false },
          { message: 'the plan was cancelled' },
        ),
      );
    }
    throw err;
  }
}

function requireActor(by: string): void {
  if (typeof by !== 'string' || by.trim() === '') {
    throw new Error('the request must say who makes it (by)');
  }
}

function pendingAdvance(phase: Phase): { ok: false; reason: string } {
  return { ok: false, reason: `an advance out of ${phase} was already accepted and is under way` };
}

/** Error metadata for a failed phase, taken from the innermost ApplicationFailure when there is one. */
function describeFailure(err: unknown, at: string): PlanError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details && cause.details.length > 0 ? JSON.stringify(cause.details) : null;
    return { type: cause.type ?? ERROR_TYPES.PhaseFailed, message: cause.message, details, at };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { type: ERROR_TYPES.PhaseFailed, message, details: null, at };
}
