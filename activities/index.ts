/**
 * Every activity the plan workflow calls, built from its dependencies. All of them pass through one failure
 * mapping (activities/failures.ts), so none can throw an error the workflow's retry policies misjudge.
 */
import type { ActorRegistry } from '../actors/registry';
import type { Isolation } from '../sandbox/isolation';
import type { Stores } from '../storage';
import type { DecisionDraft } from '../domain/decision';
import type { PlanSpec } from '../domain/plan';
import type { ByPlanRef, RunPhaseInput, RunPhaseResult } from './contracts';
import { contextsByReference } from './contexts';
import { guardActivities, withAttemptLimit } from './failures';
import { createInvariantActivities } from './invariants';
import { runBuiltinPhase } from './phases';
import { createRecordingActivities } from './recording';
import { createSpecSource } from './specs';
import { createSubplanActivities } from './subplans';
import { createWorkActivities } from './work';

export interface ActivityDependencies extends Stores {
  actors: ActorRegistry;
  /** Where Execute makes its sandbox copies (one directory per plan and run). */
  sandboxDir: string;
  /** How the plans' commands run on this worker: detectIsolation's answer at its start. */
  isolation: Isolation;
}

export function createActivities(deps: ActivityDependencies) {
  const { checkInvariants } = createInvariantActivities(deps);
  const { strategize, execute, apply } = createWorkActivities({ ...deps, checkInvariants });
  const specOf = createSpecSource(deps.plans);
  /**
   * The activity as the workflow calls it: the plan named by a PlanRef and its spec found before the work starts;
   * the decisions' contexts stored before they are returned, so only their references travel.
   */
  const phaseActivity = <I extends { spec: PlanSpec }, R extends { decisions: DecisionDraft[] }>(
    activity: (input: I) => Promise<R>,
  ) =>
    withAttemptLimit(async (input: ByPlanRef<I>): Promise<R> => {
      const spec = await specOf(input);
      const result = await activity({ ...input, spec } as I);
      return {
        ...result,
        decisions: await contextsByReference(deps.decisions, spec.planId, result.decisions),
      };
    });
  return guardActivities({
    ...createRecordingActivities(deps),
    checkInvariants: phaseActivity(checkInvariants),
    strategize: phaseActivity(strategize),
    execute: phaseActivity(execute),
    apply: phaseActivity(apply),
    ...createSubplanActivities({ ...deps, specOf }),

    /** Plans started before actors existed replay against this; new plans call strategize/execute/apply. */
    async runPhase(input: RunPhaseInput): Promise<RunPhaseResult> {
      return runBuiltinPhase(input);
    },
  });
}

export type PlanActivities = ReturnType<typeof createActivities>;
