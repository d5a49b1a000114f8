import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS } from './config';
import type { ActivityDependencies, PlanActivities } from '../activities';
import { defaultMaxCachedWorkflows } from '../config/worker-memory';
import { TASK_QUEUE } from '../domain/ids';
import type { Tracing } from '../lib/tracing';
import type * as WorkerTracing from './tracing';

export interface PlanWorkerOptions extends ActivityDependencies {
  connection: NativeConnection;
  namespace: string;
  taskQueue?: string;
  /** Tests replace single activities; production passes nothing. */
  activityOverrides?: Partial<PlanActivities>;
  /**
   * Workflows kept in memory between their tasks (Temporal's sticky cache); 0: none. Default: derived from the
   * heap (config/worker-memory.ts), never the SDK's own default, which keeps every parked plan cached.
   */
  maxCachedWorkflows?: number;
  /**
   * After SIGTERM, how long the phases running on this worker may go on before they are cancelled. Default:
   * DEFAULT_SHUTDOWN_GRACE_SECONDS.
   */
  shutdownGraceSeconds?: number;
  /** A prebuilt bundle (tests reuse one); otherwise the workflows are bundled from source. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Tracing on (ADR 0013): OpenTelemetry interceptors on activities and workflows, and workflow spans exported
   * through a sink. A prebuilt `workflowBundle` must then include TRACING_WORKFLOW_MODULES (worker/tracing.ts).
   * Absent: no interceptor at all.
   */
  tracing?: Tracing;
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

export async function createPlanWorker(options: PlanWorkerOptions): Promise<Worker> {
  const {
    connection,
    namespace,
    taskQueue,
    activityOverrides,
    workflowBundle,
    maxCachedWorkflows,
    shutdownGraceSeconds,
    tracing,
    ...dependencies
  } = options;
  return Worker.create({
    connection,
    namespace,
    taskQueue: taskQueue ?? TASK_QUEUE,
    activities: { ...createActivities(dependencies), ...activityOverrides },
    // Heartbeats carry the current step to `plan watch` and the Web UI; the default throttle (80% of the
    // heartbeat timeout) would show a step up to 48 s late. One small server call every 2 s per running phase.
    maxHeartbeatThrottleInterval: '2 seconds',
    maxCachedWorkflows: maxCachedWorkflows ?? defaultMaxCachedWorkflows(),
    shutdownGraceTime: `${shutdownGraceSeconds ?? DEFAULT_SHUTDOWN_GRACE_SECONDS} seconds`,
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on
    ...(tracing ? (require('./tracing') as typeof WorkerTracing).tracingWorkerOptions(tracing) : {}),
  });
}
