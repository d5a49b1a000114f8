/**
 * Every activity the plan workflow calls, built from its dependencies. All of them pass through one failure
 * mapping (activities/failures.ts), so none can throw an error the workflow's retry policies misjudge.
 */
import type { ActorRegistry } from '../actors/registry';
import type { Isolation } from '../sandbox/isolation';
import type { Stores } from '../storage';
import type { RunPhaseInput, RunPhaseResult } from './contracts';
import { guardActivities } from './failures';
import { createInvariantActivities } from './invariants';
import { runBuiltinPhase } from './phases';
import { createRecordingActivities } from './recording';
import { createWorkActivities } from './work';

export interface ActivityDependencies extends Stores {
  actors: ActorRegistry;
  /** Where Execute makes its sandbox copies (one directory per plan and run). */
  sandboxDir: string;
  /** How the plans' commands run on this worker: detectIsolation's answer at its start. */
  isolation: Isolation;
}

export function createActivities(deps: ActivityDependencies) {
  const invariants = createInvariantActivities(deps);
  return guardActivities({
    ...createRecordingActivities(deps),
    ...invariants,
    ...createWorkActivities({ ...deps, checkInvariants: invariants.checkInvariants }),

    /** Plans started before actors existed replay against this; new plans call strategize/execute/apply. */
    async runPhase(input: RunPhaseInput): Promise<RunPhaseResult> {
      return runBuiltinPhase(input);
    },
  });
}

export type PlanActivities = ReturnType<typeof createActivities>;
