/**
 * The worker's memory: how many workflows it keeps cached by default (issue 13, P6).
 *
 * Temporal keeps every workflow the worker has run in its sticky cache until the cache is full, so that the
 * next task of a plan (a person's advance) runs against the plan's live state instead of replaying its history.
 * A plan parked at a gate costs about CACHED_WORKFLOW_MB of resident memory there. The SDK's own default is
 * derived from the heap limit alone (2,310 workflows on a 4 GB heap): plans park for days, so on a busy worker
 * nothing was ever evicted and its memory grew with every parked plan (918 MB with 1,000 parked).
 *
 * A plan evicted from the cache costs nothing until it is advanced; that task then replays the plan's history
 * (50 to 130 events today) before it runs, a few milliseconds of CPU.
 */
import v8 from 'node:v8';

/** Resident memory of one parked plan's cached workflow, measured with bench P6 (scripts/bench/p6-parked.ts). */
export const CACHED_WORKFLOW_MB = 0.6;

/** The default's ceiling: about 150 MB of cached plans on top of an idle worker's 250 to 300 MB. */
export const MAX_DEFAULT_CACHED_WORKFLOWS = 250;

/**
 * Never fewer: the SDK refuses to run more workflow tasks at once than it can cache, and runs 40 by default.
 */
export const MIN_DEFAULT_CACHED_WORKFLOWS = 40;

/** Of the heap, what the worker needs besides the cache: its code, the workflow bundle, Prisma, gRPC buffers. */
const HEAP_RESERVED_MB = 200;

/**
 * WORKER_MAX_CACHED_WORKFLOWS when it is not set: MAX_DEFAULT_CACHED_WORKFLOWS, or fewer where the heap (the
 * machine's memory, or --max-old-space-size) cannot hold that many beside everything else.
 */
export function defaultMaxCachedWorkflows(
  heapLimitMb: number = v8.getHeapStatistics().heap_size_limit / 2 ** 20,
): number {
  const fits = Math.floor(Math.max(heapLimitMb - HEAP_RESERVED_MB, 0) / CACHED_WORKFLOW_MB);
  return Math.max(MIN_DEFAULT_CACHED_WORKFLOWS, Math.min(MAX_DEFAULT_CACHED_WORKFLOWS, fits));
}
