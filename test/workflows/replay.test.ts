/**
 * Plans run for days; a worker deployed meanwhile must replay their histories exactly. These histories were
 * recorded with test/histories/record.ts from real runs and are checked in.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startTracing } from '../../lib/tracing';
import { tracingWorkerOptions } from '../../worker/tracing';
import { quietLogger, tracedWorkflowBundle, workflowBundle } from '../helpers/harness';

const HISTORY_DIR = path.join(__dirname, '..', 'histories');
const histories = readdirSync(HISTORY_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

function* historyIterable() {
  for (const file of histories) {
    yield {
      workflowId: file,
      history: historyFromJSON(JSON.parse(readFileSync(path.join(HISTORY_DIR, file), 'utf8'))),
    };
  }
}

it('has the recorded histories to replay', () => {
  // runphase-*: plans started before actors (they take the legacy path); actors-*: plans started with actors,
  // before lean histories (their recordings and checks are activities of their own); lean-*: plans started since,
  // one of them across runs continued as new (its first run and its last). lean-manual-corrected: a correction
  // recorded only (before ADR 0016); -corrected-step, -corrected-rerun and -amended: corrections and an amendment
  // that change what runs; -two-of-three and -approved-by-signal: a 2-of-3 gate with refusals logged through the
  // recordRefusal signal and approvals by update and by the Web UI's approve signal (ADR 0021); -expired and
  // -reminded: a gate's approval timer cancelling the plan, and reminding twice before a person approves (ADR 0019).
  expect(histories).toEqual([
    'actors-full-command-review.json',
    'actors-full-errored-retried.json',
    'actors-manual-applied.json',
    'actors-manual-corrected.json',
    'actors-review-cancelled.json',
    'actors-review-invariant-retried.json',
    'lean-full-command-review.json',
    'lean-full-errored-retried.json',
    'lean-full-subplans.json',
    'lean-manual-amended.json',
    'lean-manual-applied.json',
    'lean-manual-continued-first.json',
    'lean-manual-continued-last.json',
    'lean-manual-corrected-step.json',
    'lean-manual-corrected.json',
    'lean-manual-expired.json',
    'lean-manual-reminded.json',
    'lean-review-approved-by-signal.json',
    'lean-review-cancelled.json',
    'lean-review-corrected-rerun.json',
    'lean-review-invariant-retried.json',
    'lean-review-two-of-three.json',
    'runphase-full-errored-retried.json',
    'runphase-manual-applied.json',
    'runphase-review-cancelled.json',
  ]);
});

it('replays every checked-in history with the current workflow code', async () => {
  const results: Array<{ workflowId: string; error: unknown }> = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: await workflowBundle() },
    historyIterable(),
  )) {
    results.push({ workflowId: result.workflowId, error: result.error });
  }
  expect(results).toEqual(histories.map((workflowId) => ({ workflowId, error: undefined })));
});

it('replays every checked-in history on a worker with tracing on, exporting nothing', async () => {
  // The histories were recorded without interceptors, as every plan started while tracing was off is. A worker
  // with tracing on must replay them to the same commands: the interceptors add spans, never commands, and the
  // SDK flags gate the instrumentation a history did not see (ADR 0013).
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({ serviceName: 'replay', exporter });
  const results: Array<{ workflowId: string; error: unknown }> = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: await tracedWorkflowBundle(), ...tracingWorkerOptions(tracing) },
    historyIterable(),
  )) {
    results.push({ workflowId: result.workflowId, error: result.error });
  }
  expect(results).toEqual(histories.map((workflowId) => ({ workflowId, error: undefined })));
  // Spans are exported when the work happens, never again when a history is replayed.
  await tracing.shutdown();
  expect(exporter.getFinishedSpans()).toEqual([]);
});

it('fails to replay them with a deliberately altered workflow', async () => {
  const altered = await bundleWorkflowCode({
    workflowsPath: require.resolve('../histories/altered'),
    logger: quietLogger,
  });
  const results: Array<{ workflowId: string; error: unknown }> = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: altered }, historyIterable())) {
    results.push({ workflowId: result.workflowId, error: result.error });
  }
  expect(results).toHaveLength(histories.length);
  for (const result of results) {
    expect(result.error).toBeInstanceOf(DeterminismViolationError);
  }
});
