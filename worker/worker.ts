import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { PlanActivities } from '../activities';
import type { ActorRegistry } from '../actors/registry';
import type { ChangesetStore } from '../storage/changesets';
import type { InvariantStore } from '../storage/invariants';
import { TASK_QUEUE } from '../workflows/definitions';
import type { CatalogStore, DecisionStore, PlanStore } from '../storage/types';

export interface PlanWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  plans: PlanStore;
  decisions: DecisionStore;
  catalog: CatalogStore;
  changesets: ChangesetStore;
  invariants: InvariantStore;
  actors: ActorRegistry;
  /** Where Execute makes its sandbox copies. */
  sandboxDir: string;
  taskQueue?: string;
  /** Tests replace single activities; production passes nothing. */
  activityOverrides?: Partial<PlanActivities>;
  /** A prebuilt bundle (tests reuse one); otherwise the workflows are bundled from source. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

export async function createPlanWorker(options: PlanWorkerOptions): Promise<Worker> {
  const activities = {
    ...createActivities({
      plans: options.plans,
      decisions: options.decisions,
      catalog: options.catalog,
      changesets: options.changesets,
      invariants: options.invariants,
      actors: options.actors,
      sandboxDir: options.sandboxDir,
    }),
    ...options.activityOverrides,
  };
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? TASK_QUEUE,
    activities,
    // Heartbeats carry the current step to `plan watch` and the Web UI; the default throttle (80% of the
    // heartbeat timeout) would show a step up to 48 s late. One small server call every 2 s per running phase.
    maxHeartbeatThrottleInterval: '2 seconds',
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH }),
  });
}
