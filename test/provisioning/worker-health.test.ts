/**
 * The worker's health endpoints, on a worker process started as `npm run worker` starts it: ready while it polls,
 * 404 for anything else, and gone once SIGTERM has drained it and it stopped cleanly.
 */
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
