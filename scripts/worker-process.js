/**
 * How a worker's Node process is started: by `npm run worker` and `npm start` (both through bootstrap.js), and by
 * bench P6, which measures that very process. Plain CommonJS on Node built-ins only, like bootstrap.js.
 *
 * A worker with plans parked at gates is mostly idle memory, yet V8 and glibc both keep what bursts of work needed
 * (issue 13, P6, 1,000 plans parked, 250 of them cached: 743 MB with Node's defaults, 637 MB with
 * MALLOC_ARENA_MAX=2, 405 MB with the V8 flags too).
 * - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates (Temporal's Rust core and Node run dozens) a
 *   malloc arena of its own, and freed memory stays in them. A value already in the environment is kept.
 * - --max-old-space-size=1536 (MB, per isolate: the worker's and its workflow thread's): a ceiling, not a
 *   reservation. With Node's default (a quarter of the machine's memory, up to 4 GB) V8 let a parked worker's heap
 *   grow to 290 MB of mostly garbage, so P6 was measured with 384; but one plan at the changeset limits
 *   (domain/limits.ts, 100 MiB) needs far more: reading such a changeset back through Prisma for Apply holds
 *   1,120 MB of live heap (--trace-gc; saving it, 330 MB), and 384 and 768 both stopped the worker with "heap out
 *   of memory" (test/workflows/large-changeset.test.ts; then the invariant checks read it in full too, they now
 *   read it without the bytes). 1536 is the smallest tried that survives it, with about 400 MB to spare. It does
 *   not cover two such plans at once: Apply reading one file's bytes at a time would.
 * - --max-semi-space-size=4 (MB): V8's young generation, per isolate; the default lets each grow to 16 MB per
 *   semi-space. Costs CPU: more, smaller collections.
 * The workflow cache (WORKER_MAX_CACHED_WORKFLOWS, config/worker-memory.ts) is derived from the heap limit.
 */
'use strict';

/** V8 flags of the worker's process. */
const WORKER_NODE_FLAGS = ['--max-old-space-size=1536', '--max-semi-space-size=4'];

/** The environment of the worker's process: `env`, plus the defaults above that it does not set. */
function workerEnv(env) {
  return { MALLOC_ARENA_MAX: '2', ...env };
}

module.exports = { WORKER_NODE_FLAGS, workerEnv };
