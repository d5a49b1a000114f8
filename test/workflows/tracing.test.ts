/**
 * One plan is one trace (ADR 0013): `plan use` is the root span, the workflow's run and every phase's activities
 * hang under it through Temporal's OpenTelemetry interceptors (client, workflow, activities), a gate's approval
 * joins it, and `plan show` names it. A real dev server and worker, the in-process CLI, and one in-memory exporter
 * behind the CLI's tracer and the worker's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { runCli } from '../../client/cli/main';
import { PlanClient } from '../../client/plans';
import { tracingClientOptions } from '../../client/tracing';
import { planWorkflowId } from '../../domain/ids';
import { startTracing } from '../../lib/tracing';
import { tracingWorkerOptions } from '../../worker/tracing';
import { createHarness, tracedWorkflowBundle, workflowBundle } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';

const exporter = new InMemorySpanExporter();
const cliTracing = startTracing({ serviceName: 'cleveragents-cli', exporter });
const workerTracing = startTracing({ serviceName: 'cleveragents-worker', exporter });

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ tracing: { worker: workerTracing, cli: cliTracing } });
});

afterAll(async () => {
  await h?.teardown();
  await cliTracing.shutdown();
  await workerTracing.shutdown();
});

beforeEach(() => exporter.reset());

async function cliOk(...argv: string[]): Promise<string> {
  const out = await h.cli(...argv);
  if (out.code !== 0) throw new Error(`agents ${argv.join(' ')} failed (${out.code}): ${out.stderr}`);
  return out.stdout;
}

async function usePlan(automation: 'full' | 'review'): Promise<string> {
  const used = await cliOk(
    'plan',
    'use',
    'local/example',
    '--project',
    'local/demo',
    '--automation',
    automation,
    '--arg',
    'greeting=hello',
    '--format',
    'json',
  );
  return (JSON.parse(used) as { plan_id: string }).plan_id;
}

/** Every span exported so far, once the workflow's own spans (which end with it) have come out of the sandbox. */
async function spansOfFinishedPlan(planId: string): Promise<ReadableSpan[]> {
  await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
  return waitUntil('the RunWorkflow span', async () => {
    await workerTracing.flush();
    await cliTracing.flush();
    const spans = exporter.getFinishedSpans();
    return spans.some((s) => s.name === 'RunWorkflow:planWorkflow') && spans;
  });
}

function byName(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

function one(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = byName(spans, name);
  if (found.length !== 1) {
    throw new Error(
      `expected one ${name} span, found ${found.length} among ${spans.map((s) => s.name).join(', ')}`,
    );
  }
  return found[0] as ReadableSpan;
}

/** The names from `span` up to its root, following parent span ids within `spans`. */
function ancestry(spans: readonly ReadableSpan[], span: ReadableSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const names = [span.name];
  for (let current = span; current.parentSpanId !== undefined;) {
    const parent = byId.get(current.parentSpanId);
    if (parent === undefined) return [...names, `<missing ${current.parentSpanId}>`];
    names.push(parent.name);
    current = parent;
  }
  return names;
}

function serviceOf(span: ReadableSpan): unknown {
  return span.resource.attributes['service.name'];
}

it('traces a FULL_AUTOMATION plan from `plan use` to APPLIED as one trace, and `plan show` names it', async () => {
  const planId = await h.withWorker(async () => {
    const id = await usePlan('full');
    const view = await h.client.waitForInput(id);
    expect(view).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
    return id;
  });
  const spans = await spansOfFinishedPlan(planId);

  // One root, `plan.use`, in the CLI; one trace.
  const root = one(spans, 'plan.use');
  expect(root.parentSpanId).toBeUndefined();
  expect(root.attributes).toMatchObject({ 'plan.id': planId, 'plan.action': 'local/example' });
  const traceId = root.spanContext().traceId;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));

  // Every other span's parent is in the trace: no link is broken between processes or the sandbox.
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const orphans = spans.filter(
    (s) => s !== root && (s.parentSpanId === undefined || !ids.has(s.parentSpanId)),
  );
  expect(orphans.map((s) => s.name)).toEqual([]);

  // The client starts the workflow under the root; the workflow's run is the start's child, across the server.
  expect(ancestry(spans, one(spans, 'RunWorkflow:planWorkflow'))).toEqual([
    'RunWorkflow:planWorkflow',
    'StartWorkflow:planWorkflow',
    'plan.use',
  ]);
  // Each phase's activity is scheduled by the workflow and run by the worker, under the run.
  for (const activity of ['strategize', 'execute', 'apply']) {
    expect(ancestry(spans, one(spans, `RunActivity:${activity}`))).toEqual([
      `RunActivity:${activity}`,
      `StartActivity:${activity}`,
      'RunWorkflow:planWorkflow',
      'StartWorkflow:planWorkflow',
      'plan.use',
    ]);
  }
  // The recordings run as local activities in the workflow's task (ADR 0011): traced the same way.
  const recordings = byName(spans, 'RunActivity:recordPlanState');
  expect(recordings.length).toBeGreaterThan(0);
  for (const recording of recordings) {
    expect(ancestry(spans, recording).slice(1, 3)).toEqual([
      'StartActivity:recordPlanState',
      'RunWorkflow:planWorkflow',
    ]);
  }
  // Each process names itself.
  expect(serviceOf(root)).toBe('cleveragents-cli');
  expect(serviceOf(one(spans, 'StartWorkflow:planWorkflow'))).toBe('cleveragents-cli');
  expect(serviceOf(one(spans, 'RunWorkflow:planWorkflow'))).toBe('cleveragents-worker');
  expect(serviceOf(one(spans, 'RunActivity:apply'))).toBe('cleveragents-worker');

  // `plan show` names the trace, in every format, from the workflow's memo.
  exporter.reset();
  const shown = JSON.parse(await cliOk('plan', 'show', planId, '--format', 'json')) as Record<
    string,
    unknown
  >;
  expect(shown.trace_id).toBe(traceId);
  expect(Object.keys(shown).indexOf('trace_id')).toBe(Object.keys(shown).indexOf('decision_root_id') + 1);
  expect(await cliOk('plan', 'show', planId, '--format', 'plain')).toContain(`trace_id: ${traceId}\n`);
  // Reading a plan is not traced: `plan show` and `plan wait` would otherwise each leave traces of their own.
  await cliTracing.flush();
  expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual([]);
});

it("joins a gate's approval to the plan's trace", async () => {
  const planId = await h.withWorker(async () => {
    const id = await usePlan('review');
    expect(await h.client.waitForInput(id)).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
    await cliOk('plan', 'advance', id, '--yes');
    expect(await h.client.waitForInput(id)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
    return id;
  });
  const spans = await spansOfFinishedPlan(planId);
  const traceId = one(spans, 'plan.use').spanContext().traceId;
  // The advance is a second CLI process in life; here a second command, hung under the plan's root by its memo.
  expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
  expect(ancestry(spans, one(spans, 'HandleUpdate:advancePlan'))).toEqual([
    'HandleUpdate:advancePlan',
    'StartWorkflowUpdate:advancePlan',
    'plan.advance',
    'plan.use',
  ]);
  // Apply, after the gate, still runs under the workflow's run.
  expect(ancestry(spans, one(spans, 'RunActivity:apply')).slice(0, 3)).toEqual([
    'RunActivity:apply',
    'StartActivity:apply',
    'RunWorkflow:planWorkflow',
  ]);

  // A traced plan's history (trace headers, the update's instrumentation recorded as an SDK flag) replays on a
  // worker without tracing as on one with it: a fleet may turn tracing on or off while plans wait at gates.
  const history = await h.env.client.workflow.getHandle(planWorkflowId(planId)).fetchHistory();
  await expect(
    Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history),
  ).resolves.toBeUndefined();
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: await tracedWorkflowBundle(), ...tracingWorkerOptions(workerTracing) },
      history,
    ),
  ).resolves.toBeUndefined();
});

it('keeps a plan that continues as new at its gates in one trace, and its trace id in the memo', async () => {
  // A limit of one history event makes every gate continue as new: the plan crosses four runs.
  const tracer = cliTracing.tracer;
  const temporal = new Client({
    connection: h.env.connection,
    namespace: h.env.namespace ?? 'default',
    ...tracingClientOptions(tracer),
  });
  const client = new PlanClient(temporal, h.plans, h.catalog, h.invariants, {
    taskQueue: h.taskQueue,
    historyEventLimit: 1,
    tracer,
  });
  const created = await client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel: 'MANUAL',
    arguments: { greeting: 'hello' },
    createdBy: 'tester',
  });
  await h.withWorker(async () => {
    for (;;) {
      const view = await client.waitForInput(created.planId);
      if (view.phase === 'APPLIED') break;
      await client.advance(created.planId, { by: 'tester', expectedPhase: view.phase });
    }
  });
  const spans = await spansOfFinishedPlan(created.planId);
  const traceId = one(spans, 'plan.use').spanContext().traceId;
  expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
  // Each run after the first is the child of the run before's ContinueAsNew.
  const runs = byName(spans, 'RunWorkflow:planWorkflow');
  expect(runs).toHaveLength(4);
  expect(
    runs.map((run) => ancestry(spans, run).filter((name) => name.startsWith('RunWorkflow')).length).sort(),
  ).toEqual([1, 2, 3, 4]);
  // The last run's memo still has the trace: `plan show` names it after the plan crossed its runs.
  const shown = JSON.parse(await cliOk('plan', 'show', created.planId, '--format', 'json')) as Record<
    string,
    unknown
  >;
  expect(shown.trace_id).toBe(traceId);
});

it('shows no trace id for a plan started untraced', async () => {
  // h.client has no tracer: the plan's memo has no trace, whatever the worker does.
  const created = await h.client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel: 'MANUAL',
    arguments: { greeting: 'hello' },
    createdBy: 'tester',
  });
  const memo = (await h.env.client.workflow.getHandle(created.workflowId).describe()).memo;
  expect(memo).toEqual({ planName: 'example on local/demo' });
  const shown = JSON.parse(await cliOk('plan', 'show', created.planId, '--format', 'json')) as object;
  expect(shown).not.toHaveProperty('trace_id');
  await h.env.client.workflow.getHandle(created.workflowId).terminate('test over');
});

it('exports over OTLP/HTTP where OTEL_EXPORTER_OTLP_ENDPOINT says, before the CLI returns', async () => {
  // A collector stand-in: what the CLI posts to <endpoint>/v1/traces.
  const posts: Array<{ url: string | undefined; contentType: string | undefined; body: string }> = [];
  const collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      posts.push({ url: req.url, contentType: req.headers['content-type'], body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  try {
    let stdout = '';
    const code = await runCli(
      ['plan', 'use', 'local/example', '--project', 'local/demo', '--arg', 'greeting=hi', '--format', 'json'],
      {
        stdout: (text) => (stdout += text),
        stderr: () => undefined,
        env: {
          TEMPORAL_ADDRESS: h.env.address,
          TEMPORAL_NAMESPACE: h.env.namespace ?? 'default',
          DATABASE_URL: `file:${h.databaseFile}`,
          TEMPORAL_TASK_QUEUE: h.taskQueue,
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
        },
        isTty: false,
      },
    );
    expect(code).toBe(0);
    const planId = (JSON.parse(stdout) as { plan_id: string }).plan_id;
    // Sent by the time the command returned (a CLI process exits right after), not left in a batch.
    expect(posts.map((p) => [p.url, p.contentType])).toEqual([['/v1/traces', 'application/json']]);
    const traceId = (await h.env.client.workflow.getHandle(planWorkflowId(planId)).describe()).memo?.traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const body = posts[0]?.body ?? '';
    expect(body).toContain(`"traceId":"${String(traceId)}"`);
    expect(body).toContain('"name":"plan.use"');
    expect(body).toContain('"name":"StartWorkflow:planWorkflow"');
    expect(body).toContain('"stringValue":"cleveragents-cli"');
    await h.env.client.workflow.getHandle(planWorkflowId(planId)).terminate('test over');
  } finally {
    await new Promise((resolve) => collector.close(resolve));
  }
});
