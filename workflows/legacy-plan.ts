/**
 * The path of plans started before actors existed (no `phase-actors` marker in their history): each phase is one
 * `runPhase` activity, the invariants are recorded at the start but not checked, transitions have no guard.
 * Frozen: it must go on producing the commands those plans' histories hold (test/histories/runphase-*.json prove
 * it). Do not change it; ADR 0008 says when it can be deleted.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { PlanActivities } from '../activities';
import { invariantEnforcedDrafts, promptDefinitionDraft } from '../domain/decision';
import { NON_RETRYABLE_ERROR_TYPES } from '../domain/errors';
import { WORKFLOW_ACTOR } from '../domain/plan';
import type { PlanWorkflowInput, PlanWorkflowResult } from './definitions';
import { PlanRun, ROOT_SEQ, WORK_PHASES } from './plan-run';

/** Phase work retries a few times on its own; after that the phase is ERRORED and a person decides. */
const { runPhase } = proxyActivities<PlanActivities>({
  startToCloseTimeout: '10 minutes',
  retry: {
    initialInterval: '1 second',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

const noGuard = async (): Promise<void> => undefined;

export async function legacyPlanWorkflow(input: PlanWorkflowInput): Promise<PlanWorkflowResult> {
  const run = new PlanRun(input, { lean: false });
  run.installHandlers();
  return run.run(async () => {
    await run.recordRoot(
      [
        promptDefinitionDraft(run.spec),
        ...invariantEnforcedDrafts(run.spec.invariants, ROOT_SEQ, WORKFLOW_ACTOR),
      ],
      null,
    );
    for (const phase of WORK_PHASES) {
      if (phase !== 'STRATEGIZE') await run.transition(phase, noGuard);
      await run.runPhaseToCompletion(
        phase,
        async (work) => {
          const result = await runPhase({ spec: run.spec, phase, ...work });
          return { ok: true, summary: result.summary, decisions: result.decisions };
        },
        { startRecorded: phase === 'STRATEGIZE' },
      );
    }
    await run.transition('APPLIED', noGuard);
  });
}
