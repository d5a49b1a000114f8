/**
 * What a worker process shows an operator about the plans it runs (issue 14): Prometheus metrics on one endpoint,
 * the SDK's beside the engine's, and logs as one JSON object per line that name the plan they concern. Each test
 * drives real plans through a worker started as `npm run worker` starts it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { planWorkflowId } from '../../domain/ids';
import type { AutomationLevel } from '../../domain/lifecycle';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';
import { startWorkerProcess } from '../helpers/worker-process';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h?.teardown();
});

async function startPlan(project: string, automationLevel: AutomationLevel): Promise<string> {
  const { planId } = await h.client.create({
    actionName: 'local/example',
    projects: [project],
    automationLevel,
    arguments: {},
    createdBy: 'tester',
  });
  return planId;
}

async function planIs(planId: string, phase: string, state: string): Promise<void> {
  await waitUntil(`plan ${planId} to be ${phase} ${state}`, async () => {
    const plan = await h.plans.getPlan(planId);
    return plan?.phase === phase && plan.state === state;
  });
}

/** The sum of the samples of `name` whose labels include `labels` (Prometheus text format). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = new Map<string, string>();
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found.set(pair[1]!, pair[2]!);
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) {
      sum += Number(match[3]);
      seen = true;
    }
  }
  return seen ? sum : Number.NaN;
}

it('serves the SDK core metrics and the engine metrics on one Prometheus endpoint', async () => {
  // A third project, guarded by an invariant its plan's changeset breaks.
  const guarded = path.join(h.projectDir, 'guarded');
  mkdirSync(guarded, { recursive: true });
  await h.catalog.putProject({ name: 'local/guarded', path: guarded, description: '' });
  const added = await h.cli(
    'invariant',
    'add',
    'Leave the greeting alone',
    '--project',
    'local/guarded',
    '--rule',
    '{protected_paths: ["GREETING.md"]}',
  );
  expect(added.code).toBe(0);

  const worker = await startWorkerProcess(h, { WORKER_METRICS_PORT: '0', WORKER_METRICS_HOST: '127.0.0.1' });
  try {
    const output = worker.output();
    const bound = /worker: metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(output);
    if (bound === null) throw new Error(`the worker did not say where its metrics are:\n${output}`);
    expect(output.indexOf('worker: metrics on')).toBeLessThan(output.indexOf('worker: polling'));
    const url = bound[1]!;

    // Applied without a person: started, every phase timed, finished APPLIED.
    const applied = await startPlan('local/demo', 'FULL_AUTOMATION');
    await h.env.client.workflow.getHandle(planWorkflowId(applied)).result();

    // Waits at the gate into Apply, then finds its file changed since Execute: Apply refuses; cancelled.
    const refused = await startPlan('local/docs', 'REVIEW_BEFORE_APPLY');
    const view = await h.client.waitForInput(refused);
    expect(view.awaitingApproval).toBe(true);
    writeFileSync(path.join(h.projectDir, 'docs', 'GREETING.md'), 'written by someone else\n');
    await h.client.advance(refused, { by: 'tester', expectedPhase: 'EXECUTE' });
    await planIs(refused, 'APPLY', 'ERRORED');
    await h.client.cancel(refused);

    // Stopped by its project's invariant before Apply.
    const violated = await startPlan('local/guarded', 'FULL_AUTOMATION');
    await planIs(violated, 'EXECUTE', 'ERRORED');

    const scrape = async () => {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      return response.text();
    };
    // Emitted by the workflow and activity tasks just done; the values reach the runtime as those tasks end.
    const text = await waitUntil('the cancelled plan to be counted', async () => {
      const body = await scrape();
      return sample(body, 'agents_plans_finished', { state: 'CANCELLED' }) >= 1 ? body : undefined;
    });
    const action = { action: 'local/example' };
    // The SDK core's own series.
    expect(sample(text, 'temporal_workflow_completed', { namespace: 'default' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'temporal_activity_execution_latency_count')).toBeGreaterThanOrEqual(1);
    // The engine's, through the same meter: the workflow's...
    expect(sample(text, 'agents_plans_started', action)).toBe(3);
    expect(sample(text, 'agents_plans_finished', { ...action, phase: 'APPLIED', state: 'COMPLETE' })).toBe(1);
    expect(sample(text, 'agents_plans_finished', { ...action, phase: 'APPLY', state: 'CANCELLED' })).toBe(1);
    for (const phase of ['STRATEGIZE', 'EXECUTE', 'APPLY']) {
      expect(sample(text, 'agents_phase_duration_seconds_count', { phase, outcome: 'completed' })).toBe(
        phase === 'APPLY' ? 1 : 3,
      );
    }
    expect(sample(text, 'agents_phase_duration_seconds_count', { phase: 'APPLY', outcome: 'failed' })).toBe(
      1,
    );
    // Seconds, in the buckets given for it (the SDK's default ones end at 10,000).
    expect(text).toMatch(/agents_phase_duration_seconds_bucket\{[^}]*le="21600"/);
    expect(sample(text, 'agents_gate_wait_seconds_count', { gate: 'APPLY' })).toBe(1);
    expect(sample(text, 'agents_invariant_violations', { ...action, phase: 'EXECUTE' })).toBe(1);
    // ...and the activity's.
    expect(sample(text, 'agents_apply_refusals', action)).toBe(1);
    await h.client.cancel(violated);
  } finally {
    await worker.stop();
  }
  expect(worker.exit()).toEqual({ code: 0, signal: null });
});

it('prints one JSON object per line with LOG_FORMAT=json, naming the plan on every line about one', async () => {
  const dir = path.join(h.projectDir, 'logged');
  mkdirSync(dir, { recursive: true });
  await h.catalog.putProject({ name: 'local/logged', path: dir, description: '' });
  const worker = await startWorkerProcess(h, { LOG_FORMAT: 'json', LOG_LEVEL: 'debug' });
  let applied: string;
  let refused: string;
  try {
    applied = await startPlan('local/demo', 'FULL_AUTOMATION');
    await h.env.client.workflow.getHandle(planWorkflowId(applied)).result();
    // A plan whose Apply is refused logs from its workflow (the phase failed) and its activity (the refusal).
    refused = await startPlan('local/logged', 'REVIEW_BEFORE_APPLY');
    await h.client.waitForInput(refused);
    writeFileSync(path.join(dir, 'GREETING.md'), 'written by someone else\n');
    await h.client.advance(refused, { by: 'tester', expectedPhase: 'EXECUTE' });
    await planIs(refused, 'APPLY', 'ERRORED');
    await h.client.cancel(refused);
  } finally {
    await worker.stop();
  }
  expect(worker.exit()).toEqual({ code: 0, signal: null });
  // Everything on stdout; stderr has nothing to say (output() is both).
  expect(worker.output().length).toBe(worker.stdout().length);
  const records = worker
    .stdout()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
  for (const record of records) {
    expect(record).toEqual(expect.objectContaining({ level: expect.any(String), msg: expect.any(String) }));
    // Either id on a line brings the other.
    if (record.workflowId !== undefined || record.planId !== undefined) {
      expect(record.workflowId).toBe(planWorkflowId(String(record.planId)));
    }
  }
  const messages = records.map((r) => String(r.msg));
  expect(messages.some((m) => m.startsWith('worker: polling task queue'))).toBe(true);
  expect(messages).toContain('worker: stopped');
  // The SDK's own lines about each plan (at debug: its workflow started and completed, its activities).
  const completed = records.find((r) => r.msg === 'Workflow completed' && r.planId === applied);
  expect(completed).toMatchObject({ workflowId: planWorkflowId(applied), sdkComponent: 'worker' });
  // The workflow's logger, the activity context's logger and the SDK's failure, each with both ids.
  const ids = { planId: refused, workflowId: planWorkflowId(refused) };
  expect(records).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ ...ids, sdkComponent: 'workflow', msg: 'phase failed', phase: 'APPLY' }),
      expect.objectContaining({
        ...ids,
        sdkComponent: 'activity',
        activityType: 'apply',
        msg: 'Apply refused the changeset; nothing was written',
        problems: [expect.stringContaining('GREETING.md')],
      }),
      expect.objectContaining({
        ...ids,
        level: 'warn',
        msg: 'Activity failed',
        error: expect.objectContaining({ message: expect.stringContaining('Nothing was written') }),
      }),
    ]),
  );
});
