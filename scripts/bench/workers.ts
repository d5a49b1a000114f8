/**
 * The two workers the Temporal parts compare: the engine's (the harness's createPlanWorker) and a bare one on its
 * own queue, given the engine worker's tunables so that only the workflow code and its activities differ.
 */
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { WorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { ulid } from 'ulid';
import type { Harness } from '../../test/helpers/harness';
import { quietLogger } from '../../test/helpers/harness';
import * as bareActivities from './bare-activities';

let bareBundle: WorkflowBundleWithSourceMap | undefined;

async function bareWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bareBundle ??= await bundleWorkflowCode({
    workflowsPath: require.resolve('./bare-workflows'),
    logger: quietLogger,
  });
  return bareBundle;
}

type SlotSupplier = { type: string; numSlots?: number };

function fixedSlots(supplier: SlotSupplier): number | undefined {
  return supplier.type === 'fixed-size' ? supplier.numSlots : undefined;
}

/**
 * The engine worker's options that shape throughput, read back from its compiled options: whatever the engine
 * sets (today only the heartbeat throttle) and whatever the SDK defaults to, so a tuning of either is mirrored.
 */
export function mirroredOptions(engine: Worker): Partial<WorkerOptions> {
  const o = engine.options;
  const tuner = o.tuner as unknown as Record<string, SlotSupplier>;
  const slots = (name: string) => (tuner[name] === undefined ? undefined : fixedSlots(tuner[name]));
  const mirrored: Partial<WorkerOptions> = {
    maxCachedWorkflows: o.maxCachedWorkflows,
    maxHeartbeatThrottleInterval: o.maxHeartbeatThrottleIntervalMs,
    defaultHeartbeatThrottleInterval: o.defaultHeartbeatThrottleIntervalMs,
    stickyQueueScheduleToStartTimeout: o.stickyQueueScheduleToStartTimeoutMs,
    workflowTaskPollerBehavior: o.workflowTaskPollerBehavior,
    activityTaskPollerBehavior: o.activityTaskPollerBehavior,
    nonStickyToStickyPollRatio: o.nonStickyToStickyPollRatio,
    reuseV8Context: o.reuseV8Context,
  };
  const workflowSlots = slots('workflowTaskSlotSupplier');
  const activitySlots = slots('activityTaskSlotSupplier');
  const localSlots = slots('localActivityTaskSlotSupplier');
  if (workflowSlots !== undefined) mirrored.maxConcurrentWorkflowTaskExecutions = workflowSlots;
  if (activitySlots !== undefined) mirrored.maxConcurrentActivityTaskExecutions = activitySlots;
  if (localSlots !== undefined) mirrored.maxConcurrentLocalActivityExecutions = localSlots;
  return mirrored;
}

export interface BareWorker {
  worker: Worker;
  taskQueue: string;
}

export async function createBareWorker(h: Harness, engine: Worker): Promise<BareWorker> {
  const taskQueue = `bench-bare-${ulid()}`;
  const worker = await Worker.create({
    ...mirroredOptions(engine),
    connection: h.env.nativeConnection,
    namespace: h.env.namespace ?? 'default',
    taskQueue,
    activities: bareActivities,
    workflowBundle: await bareWorkflowBundle(),
  });
  return { worker, taskQueue };
}

/** Runs the engine worker and a bare worker (mirroring it) while fn runs, then drains both. */
export async function withWorkers<T>(
  h: Harness,
  fn: (workers: { engine: Worker; bare: BareWorker }) => Promise<T>,
): Promise<T> {
  const engine = await h.createWorker();
  const bare = await createBareWorker(h, engine);
  return engine.runUntil(bare.worker.runUntil(fn({ engine, bare })));
}
