/**
 * The largest changeset the limits allow (domain/limits.ts: 10 MiB a file, 100 MiB in all, old content counted
 * too) must not exhaust the heap of a worker started as in production (scripts/worker-process.js's V8 flags,
 * through bootstrap.js): a plan that did would stop the worker, and every plan on it, again on every retry.
 * FULL_AUTOMATION, so one plan goes through all that reads the contents in the worker: Execute (computeChanges,
 * the changeset's save), the invariant checks after Execute and Apply (which read the changeset back), and
 * Apply. The worker's resident set is sampled throughout and reported (2.6 GB at its peak when measured: about
 * 1.1 GB of heap plus the contents' buffers). About 100 to 180 s in all.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseActionFile } from '../../domain/action-file';
import type { PlanView } from '../../client/plans';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { rssMb, startWorkerProcess } from '../helpers/worker-process';
import type { WorkerProcess } from '../helpers/worker-process';
import { sha256 } from '../../lib/sha256';

const MIB = 1024 * 1024;
/** Each plan moves 100 MiB through the worker several times; on two loaded cores that takes a while. */
const PLAN_TIMEOUT_MS = 4 * 60_000;

jest.setTimeout(12 * 60_000);

let h: Harness;
let demo: string;
let worker: WorkerProcess;
let peakRssMb = 0;
let sampler: NodeJS.Timeout | undefined;

beforeAll(async () => {
  h = await createHarness();
  demo = path.join(h.projectDir, 'demo');
  worker = await startWorkerProcess(h);
  sampler = setInterval(() => {
    // Ended (or a zombie, without a resident set): the test reports how it ended.
    try {
      peakRssMb = Math.max(peakRssMb, rssMb(worker.pid));
    } catch {
      // No sample.
    }
  }, 100);
});

afterAll(async () => {
  if (sampler !== undefined) clearInterval(sampler);
  console.log(`the worker's peak resident set: ${peakRssMb.toFixed(0)} MB`);
  await worker?.stop();
  await h?.teardown();
});

function resetDemo(files: Record<string, Buffer>): void {
  rmSync(demo, { recursive: true, force: true });
  mkdirSync(path.join(demo, 'big'), { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(demo, file), content);
}

async function addAction(yaml: string): Promise<string> {
  const parsed = parseActionFile(yaml, 'action.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  await h.catalog.putAction(parsed.action);
  return parsed.action.name;
}

/** Null while the worker's process runs; else how it ended, with the end of what it printed. */
function workerDeath(): string | null {
  const exit = worker.exit();
  if (exit === null) return null;
  return (
    `the worker exited (code ${exit.code}, signal ${exit.signal}) during the plan; it printed:\n` +
    worker.output().slice(-4_000)
  );
}

/** Runs a FULL_AUTOMATION plan of `action` to its end, failing as soon as the worker's process dies. */
async function runToEnd(action: string): Promise<PlanView> {
  const { planId } = await h.client.create({
    actionName: action,
    projects: ['local/demo'],
    automationLevel: 'FULL_AUTOMATION',
    arguments: {},
    createdBy: 'tester',
  });
  const deadline = Date.now() + PLAN_TIMEOUT_MS;
  for (;;) {
    const death = workerDeath();
    if (death !== null) throw new Error(death);
    const view = await h.client.get(planId).catch(() => undefined);
    if (view !== undefined && (view.state === 'ERRORED' || view.workflowStatus !== 'RUNNING')) return view;
    if (Date.now() > deadline) {
      throw new Error(`plan ${planId} is still ${view?.phase} ${view?.state} after ${PLAN_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function hashOf(file: string): string {
  return sha256(readFileSync(path.join(demo, file)));
}

it('applies ten new files of 10 MiB (the 100 MiB limit) with the worker still running', async () => {
  resetDemo({});
  const name = await addAction(`
name: local/big-create
steps:
  - run: "for i in 0 1 2 3 4 5 6 7 8 9; do head -c ${10 * MIB} /dev/urandom > big/f$i.bin; done"
`);
  const view = await runToEnd(name);
  expect(workerDeath()).toBeNull();
  expect(view).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE', error: null });
  const changeset = await h.changesets.latestForPlan(view.planId);
  expect(changeset?.changes).toHaveLength(10);
  for (const change of changeset?.changes ?? []) {
    expect(change).toMatchObject({ operation: 'CREATE', beforeHash: null });
    expect(change.afterContent?.byteLength).toBe(10 * MIB);
    expect(hashOf(change.path)).toBe(change.afterHash);
  }
});

it('applies five rewritten files of 10 MiB (old and new content: the 100 MiB limit) with the worker still running', async () => {
  const old = Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [`big/g${i}.bin`, randomBytes(10 * MIB)]),
  );
  resetDemo(old);
  const name = await addAction(`
name: local/big-rewrite
steps:
  - run: "for i in 0 1 2 3 4; do head -c ${10 * MIB} /dev/urandom > big/g$i.bin; done"
`);
  const view = await runToEnd(name);
  expect(workerDeath()).toBeNull();
  expect(view).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE', error: null });
  const changeset = await h.changesets.latestForPlan(view.planId);
  expect(changeset?.changes).toHaveLength(5);
  for (const change of changeset?.changes ?? []) {
    expect(change).toMatchObject({ operation: 'MODIFY', beforeHash: sha256(old[change.path]!) });
    expect(change.beforeContent?.byteLength).toBe(10 * MIB);
    expect(change.afterContent?.byteLength).toBe(10 * MIB);
    expect(hashOf(change.path)).toBe(change.afterHash);
  }
});
