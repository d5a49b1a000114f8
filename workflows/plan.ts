/**
 * The plan workflow: Strategize → Execute → Apply → Applied, each phase's work done by the plan's actors through
 * activities, invariants enforced at the start and before every transition, people's approvals at the gates the
 * automation level asks for. The lifecycle rules are domain/lifecycle.ts; the recording and the handlers are
 * PlanRun's; this file is the order things happen in.
 */
import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { PlanActivities } from '../activities';
import type {
  ByPlanRef,
  CheckInvariantsInput,
  CheckInvariantsResult,
  PlanEventType,
} from '../activities/contracts';
import { promptDefinitionDraft } from '../domain/decision';
import { ERROR_TYPES, NON_RETRYABLE_ERROR_TYPES } from '../domain/errors';
import { PHASES, nextPhase } from '../domain/lifecycle';
import type { Phase, WorkPhase } from '../domain/lifecycle';
import type { PlanError } from '../domain/plan';
import { unreviewedCommands } from '../domain/command-review';
import type { PendingRevision, PlanWorkflowInput, PlanWorkflowResult } from './definitions';
import { legacyPlanWorkflow } from './legacy-plan';
import { countInvariantViolations } from './metrics';
import { PlanRun, ROOT_SEQ, WORK_PHASES, describeFailure, isPhaseFailure, now } from './plan-run';
import type { PhaseOutcome, PhaseWork } from './plan-run';
import { runSubplans } from './subplans';

/**
 * No limit on attempts: an unreachable database (StorageUnavailable) is retried until it answers, every 30 seconds at
 * most, so an outage only delays plans. The activities themselves give up on any other failure after their third
 * attempt (activities/failures.ts PHASE_ATTEMPTS). Only the retry policy changed from the earlier `maximumAttempts:
 * 3`; a policy is not part of what replay compares, so histories from before replay unchanged.
 */
const PHASE_RETRY = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
};

/**
 * The actors' phase work. Heartbeats carry the current step (`agents plan watch`, the Web UI) and let Temporal
 * notice a dead worker within a minute; the 6-hour start-to-close timeout is only a backstop. Failures of the work
 * itself come back as results (so their decisions are recorded); what is thrown is infrastructure, retried a few
 * times.
 */
const PHASE_ACTIVITY_OPTIONS = {
  // Generous: a step may run for an hour and be retried (auto-debug); the heartbeat, not this, finds dead workers.
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  retry: PHASE_RETRY,
} as const;
const phaseActivities = proxyActivities<PlanActivities>(PHASE_ACTIVITY_OPTIONS);
/**
 * Each phase's activity says what it does in the Web UI's event history (its user metadata summary, not part of
 * what replay compares).
 */
const { strategize } = proxyActivities<PlanActivities>({
  ...PHASE_ACTIVITY_OPTIONS,
  summary: 'Strategize: the strategy actor chooses the steps',
});
const { execute } = proxyActivities<PlanActivities>({
  ...PHASE_ACTIVITY_OPTIONS,
  summary: 'Execute: the steps run in a sandbox; the changes become a changeset',
});
const { apply } = proxyActivities<PlanActivities>({
  ...PHASE_ACTIVITY_OPTIONS,
  summary: 'Apply: the reviewed changeset is written to the projects',
});

/**
 * The invariant checks that no phase's work runs beside (the first, and those after a person acted at a gate or
 * retried), as local activities: a marker in history instead of a task of their own. A check reads the plan's
 * invariants and changeset and may run a rule's command or ask a model, so it gets minutes, not seconds; the
 * worker keeps the workflow task alive meanwhile.
 */
const { checkInvariants: checkLocally } = proxyLocalActivities<PlanActivities>({
  startToCloseTimeout: '10 minutes',
  retry: PHASE_RETRY,
});

/**
 * Marks plans whose phases are run by actors. A plan started before the marker existed takes the legacy path to
 * its end (ADR 0008 says when the marker can be deprecated and the legacy path removed).
 */
export const PHASE_ACTORS_PATCH = 'phase-actors';

/**
 * Marks plans with a lean history (ADR 0011): recordings and checks as local activities, the check before a
 * transition done by the phase activity before it. A plan started before the marker keeps scheduling them as
 * activities of their own, as its history says it did.
 */
export const LEAN_HISTORY_PATCH = 'lean-history';

export async function planWorkflow(input: PlanWorkflowInput): Promise<PlanWorkflowResult> {
  // Decided once, before the first command: replaying an older plan must produce the same commands it did.
  if (!patched(PHASE_ACTORS_PATCH)) return legacyPlanWorkflow(input);

  const run = new PlanRun(input, { lean: patched(LEAN_HISTORY_PATCH) });
  run.installHandlers();
  const checks = new InvariantChecks(run);
  // A correction or an amendment at a gate runs the plan's phase again, as the loop below runs it (ADR 0016).
  run.setRerunner(async (phase, { firstAttempt, revision, reason }) => {
    await run.runPhaseToCompletion(
      phase,
      (work) => phaseWork(run, checks, phase, work, revision === null ? null : { ...revision, reason }),
      { startRecorded: true, firstAttempt, ...(revision === null ? {} : { keptSteps: revision.keptSteps }) },
    );
    return phase === 'STRATEGIZE' ? commandsForReview(run) : [];
  });
  // A run continued as new starts at the gate its predecessor waited at: what comes before it ran in earlier runs.
  const gate = run.resumedGate;
  const reached = (phase: Phase) => gate === null || PHASES.indexOf(phase) >= PHASES.indexOf(gate);
  const enter = (phase: Phase): Promise<void> =>
    phase === gate
      ? run.passGate(phase, checks.enforce)
      : run.transition(phase, checks.enforce, phase === 'EXECUTE' ? commandsForReview(run) : []);
  return run.run(async () => {
    if (gate === null) {
      await startPlan(run, checks);
      await run.runPhaseToCompletion('STRATEGIZE', (work) => phaseWork(run, checks, 'STRATEGIZE', work), {
        startRecorded: true,
      });
    }
    for (const phase of WORK_PHASES.slice(1)) {
      if (!reached(phase)) continue;
      await enter(phase);
      await run.runPhaseToCompletion(phase, (work) => phaseWork(run, checks, phase, work), {
        startRecorded: false,
      });
    }
    await enter('APPLIED');
  });
}

/**
 * Where a plan's invariant checks run. On a lean plan the check before a transition is made by the phase
 * activity that completes the phase (it has the plan and the changeset in hand, and no task of its own is
 * scheduled); every other check is a local activity. Older plans schedule each check as an activity.
 */
class InvariantChecks {
  /** The phase activity's check, kept for the transition's first guard, which then need not check again. */
  private folded: CheckInvariantsResult | null = null;

  constructor(private readonly run: PlanRun) {}

  /** The transition the phase activity checks before returning; null: the workflow checks it itself. */
  after(phase: WorkPhase): Phase | null {
    return this.run.lean ? (nextPhase(phase) ?? null) : null;
  }

  keep(result: CheckInvariantsResult | null): void {
    this.folded = result;
  }

  check(input: ByPlanRef<CheckInvariantsInput>): Promise<CheckInvariantsResult> {
    return this.run.lean ? checkLocally(input) : phaseActivities.checkInvariants(input);
  }

  /** The transition guard: the kept check is used once, by the first guard after its phase completed. */
  readonly enforce = (entering: Phase): Promise<void> => {
    const first = this.folded;
    this.folded = null;
    return this.enforceFrom(entering, first);
  };

  /**
   * Seed 004's enforcement: a violated invariant blocks the plan where it is (state ERRORED, an INVARIANT_VIOLATED
   * event with the invariant, the evidence and the phase) until a person retries (after changing the plan's
   * invariants or the project) or cancels; each retry checks again. A check that cannot run (an actor missing, a
   * model refusing) blocks the same way, as PHASE_FAILED with its error.
   */
  async enforceFrom(entering: Phase | null, first: CheckInvariantsResult | null): Promise<void> {
    const { run } = this;
    const { plan } = run;
    const where = entering === null ? `at the start of ${plan.phase}` : `before ${entering}`;
    const resumeState = plan.state;
    let pendingResult = first;
    for (;;) {
      let error: PlanError;
      let event: PlanEventType;
      try {
        const result =
          pendingResult ??
          (await this.check({
            ...run.planRef,
            phase: plan.phase,
            entering,
            changesetId: plan.changesetId,
            record: null,
          }));
        pendingResult = null;
        if (result.violations.length === 0) return;
        countInvariantViolations({ action: plan.actionName, phase: plan.phase }, result.violations.length);
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
        if (!isPhaseFailure(err)) throw err;
        const failure = describeFailure(err, now());
        error = { ...failure, message: `the invariant check ${where} failed: ${failure.message}` };
        event = 'PHASE_FAILED';
      }
      await run.waitForRetry({
        event,
        error,
        resume: resumeState,
        question: `The invariants did not pass ${where}: check again?`,
        chosenOption: 'Check the invariants again',
      });
    }
  }
}

/**
 * The plan's first steps: the invariants it runs under are checked and recorded with the root of its decision
 * tree (under it: their numbers come right after the root's, and nothing can take numbers meanwhile, since a
 * correction needs a recorded decision), then enforced before Strategize's work starts.
 */
async function startPlan(run: PlanRun, checks: InvariantChecks): Promise<void> {
  let startCheck: CheckInvariantsResult | null = null;
  try {
    startCheck = await checks.check({
      ...run.planRef,
      phase: 'STRATEGIZE',
      entering: null,
      changesetId: null,
      record: { firstDecisionSeq: run.state.decisionSeq + 1, parentDecisionSeq: ROOT_SEQ },
    });
  } catch (err) {
    if (!isPhaseFailure(err)) throw err;
    // The root is still recorded; enforceFrom runs the check again and blocks on its failure.
  }
  await run.recordRoot(
    [promptDefinitionDraft(run.spec), ...(startCheck?.decisions ?? [])],
    startCheck?.summary ?? null,
  );
  await checks.enforceFrom(null, startCheck);
}

/**
 * Marks plans that stop before Execute when their strategy proposes commands the action does not contain. Asked
 * only when there are such commands, so histories without any (every builtin strategy) carry no marker.
 */
export const COMMAND_REVIEW_PATCH = 'review-proposed-commands';

/**
 * The commands a person must see before Execute runs them: those the strategy actor proposed and the action's
 * author did not write, unless the action allows unattended commands (`execution.unattended_commands`).
 */
function commandsForReview(run: PlanRun): string[] {
  const { spec, state } = run;
  if (state.strategy === null || spec.execution.unattendedCommands) return [];
  const commands = unreviewedCommands(state.strategy, { steps: spec.steps, validation: spec.validation });
  // A plan that reached this point on an engine without the review replays without it.
  return commands.length > 0 && patched(COMMAND_REVIEW_PATCH) ? commands : [];
}

/** One run of a phase's work; which actor does it is the activity's business. */
async function phaseWork(
  run: PlanRun,
  checks: InvariantChecks,
  phase: WorkPhase,
  work: PhaseWork,
  revision: (PendingRevision & { reason: string | null }) | null = null,
): Promise<PhaseOutcome> {
  const { state, planRef } = run;
  const checkBefore = checks.after(phase);
  switch (phase) {
    case 'STRATEGIZE': {
      const amendments = state.tracking?.amendments ?? [];
      const kept = revision === null ? null : (state.strategy?.steps ?? []).slice(0, revision.keptSteps);
      const result = await strategize({
        ...planRef,
        ...work,
        checkBefore,
        ...(amendments.length > 0 ? { amendments } : {}),
        ...(revision === null || kept === null
          ? {}
          : {
              revision: {
                keptSteps: kept,
                correctedStep: revision.correctedStep,
                replacement: revision.replacement,
                reason: revision.reason,
              },
            }),
      });
      state.strategy = result.strategy;
      checks.keep(result.invariants ?? null);
      return {
        ok: true,
        summary: result.summary,
        decisions: result.decisions,
        ...(result.stepDecisions === undefined ? {} : { stepDecisions: result.stepDecisions }),
        ...(result.reasksLaterSteps === undefined ? {} : { reasksLaterSteps: result.reasksLaterSteps }),
      };
    }
    case 'EXECUTE': {
      // Strategize completed before Execute could start, and its result is in the state (kept, or rebuilt by
      // replay): a missing strategy is a bug in this workflow, which fails the workflow task, not the plan.
      if (state.strategy === null)
        throw new Error('Execute started without the strategy Strategize produced');
      // Child plans first, so the sandbox copies the projects as the children left them.
      const children = await runSubplans(run, work);
      if (!children.ok) return children;
      const result = await execute({
        ...planRef,
        ...work,
        // The children's decisions come first; the activity's follow them.
        firstDecisionSeq: work.firstDecisionSeq + children.decisions.length,
        strategy: state.strategy,
        checkBefore,
      });
      checks.keep(result.invariants ?? null);
      state.plan.sandboxRefs = result.sandboxRefs;
      state.plan.changesetId = result.changesetId;
      state.plan.validationSummary = result.validationSummary;
      const decisions = [...children.decisions, ...result.decisions];
      return result.failure === null
        ? {
            ok: true,
            summary: children.summary === null ? result.summary : `${children.summary}; ${result.summary}`,
            decisions,
          }
        : { ok: false, failure: result.failure, decisions };
    }
    case 'APPLY': {
      // Only a completed Execute leads here, and it always stores a changeset (an empty one when nothing changed).
      if (state.plan.changesetId === null)
        throw new Error('Apply started without the changeset Execute produced');
      const result = await apply({
        ...planRef,
        ...work,
        changesetId: state.plan.changesetId,
        // Execute's line: nothing changes the plan's summary between a completed Execute and Apply.
        validationSummary: state.plan.validationSummary,
        at: now(),
        checkBefore,
      });
      checks.keep(result.invariants ?? null);
      state.plan.validationSummary = result.validationSummary;
      return { ok: true, summary: result.summary, decisions: result.decisions };
    }
  }
}
