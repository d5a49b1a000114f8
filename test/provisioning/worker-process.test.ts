/**
 * A worker process started as `npm run worker` starts it, as an orchestrator sees it: health endpoints ready while
 * it polls and gone once SIGTERM has drained it, and a phase running at SIGTERM allowed to finish, so a rolling
 * restart does not make another worker do it again.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { planWorkflowId } from '../../domain/ids';
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

it('answers /healthz and /readyz while it polls, and stops cleanly on SIGTERM', async () => {
  const worker = await startWorkerProcess(h, { WORKER_HEALTH_PORT: '0', WORKER_HEALTH_HOST: '127.0.0.1' });
  try {
    const bound = /worker: health on http:\/\/127\.0\.0\.1:(\d+) /.exec(worker.output());
    if (bound === null)
      throw new Error(`the worker did not say where its health endpoints are:\n${worker.output()}`);
    const base = `http://127.0.0.1:${bound[1]}`;
    const healthz = await fetch(`${base}/healthz`);
    expect(healthz.status).toBe(200);
    // Ready once its run has begun, a moment after the polling line at most.
    const ready = await waitUntil('the worker to be ready', async () => {
      const readyz = await fetch(`${base}/readyz`);
      return readyz.status === 200 ? (await readyz.text()).trim() : undefined;
    });
    expect(ready).toBe('RUNNING');
    expect((await fetch(`${base}/metrics-or-anything`)).status).toBe(404);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(405);

    await worker.stop();
    expect(worker.exit()).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain('worker: stopped');
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  } finally {
    await worker.stop();
  }
});

it('lets a phase running at SIGTERM finish and report, so it is not run again elsewhere', async () => {
  const file = path.join(h.sandboxDir, '..', 'slow-action.yaml');
  writeFileSync(
    file,
    ['name: local/slow', 'steps:', '  - run: "sleep 4 && echo done > SLOW.md"', ''].join('\n'),
  );
  expect((await h.cli('action', 'add', '-f', file)).code).toBe(0);
  const worker = await startWorkerProcess(h);
  let planId: string;
  try {
    ({ planId } = await h.client.create({
      actionName: 'local/slow',
      projects: ['local/demo'],
      automationLevel: 'FULL_AUTOMATION',
      arguments: {},
      createdBy: 'tester',
    }));
    await waitUntil('Execute to be running', async () => {
      const plan = await h.plans.getPlan(planId);
      return plan?.phase === 'EXECUTE' && plan.state === 'PROCESSING' ? true : undefined;
    });
    await worker.stop();
    expect(worker.exit()).toEqual({ code: 0, signal: null });
  } finally {
    await worker.stop();
  }
  const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));
  await h.withWorker(() => handle.result());
  const events = (await handle.fetchHistory()).events ?? [];
  const executeScheduled = events.filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'execute',
  );
  expect(executeScheduled).toHaveLength(1);
  // Its one attempt completed: the draining worker finished it rather than leaving it to a retry.
  const started = events.filter(
    (e) =>
      e.activityTaskStartedEventAttributes !== undefined &&
      e.activityTaskStartedEventAttributes !== null &&
      String(e.activityTaskStartedEventAttributes.scheduledEventId) === String(executeScheduled[0]?.eventId),
  );
  expect(started.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual([1]);
  expect((await h.plans.getPlan(planId))?.phase).toBe('APPLIED');
});
