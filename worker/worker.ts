import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { PlanActivities } from '../activities';
import { TASK_QUEUE } from '../workflows/definitions';
import type { DecisionStore, PlanStore } from '../storage/types';

export interface PlanWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  plans: PlanStore;
  decisions: DecisionStore;
  taskQueue?: string;
  /** Tests replace single activities; production passes nothing. */
  activityOverrides?: Partial<PlanActivities>;
  /** A prebuilt bundle (tests reuse one); otherwise the workflows are bundled from source. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

export async function createPlanWorker(options: PlanWorkerOptions): Promise<Worker> {
  const activities = {
    ...createActivities({ plans: options.plans, decisions: options.decisions }),
    ...options.activityOverrides,
  };
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? TASK_QUEUE,
    activities,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH }),
  });
}
