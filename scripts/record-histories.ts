/**
 * Records the workflow histories that test/workflows/replay.test.ts replays. Run it (npm run histories:record)
 * only when a workflow change is meant to be incompatible with running plans, and say so in the commit: the
 * checked-in histories are what proves every other change replays.
 *
 * `runphase-*.json` were recorded before actors (issue 6) and stay: plans started then must still replay. This
 * script records the `actors-*.json` ones, from plans that run the example action's real step.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { AutomationLevel } from '../domain/lifecycle';
import { createHarness } from '../test/helpers/harness';
import type { Harness } from '../test/helpers/harness';
import { ensureTemporalCli } from './temporal-cli';

const OUT_DIR = path.join(__dirname, '..', 'test', 'histories');

async function record(
  h: Harness,
  file: string,
  run: (planId: string) => Promise<void>,
  level: AutomationLevel,
) {
  const created = await h.client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel: level,
    arguments: { greeting: 'hello' },
    createdBy: 'recorder',
  });
  await run(created.planId);
  const handle = h.env.client.workflow.getHandle(created.workflowId);
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  // The canonical JSON form (as `temporal workflow show --output json` prints it), readable by historyFromJSON.
  writeFileSync(path.join(OUT_DIR, file), `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
  console.log(`recorded ${file} (${history.events?.length ?? 0} events)`);
}

async function main(): Promise<void> {
  process.env.TEMPORAL_CLI_PATH = await ensureTemporalCli();
  const h = await createHarness();
  try {
    await h.withWorker(async () => {
      await record(
        h,
        'actors-manual-applied.json',
        async (planId) => {
          for (const phase of ['STRATEGIZE', 'EXECUTE', 'APPLY'] as const) {
            await h.client.waitForInput(planId);
            await h.client.advance(planId, {
              by: 'recorder',
              reason: `approve ${phase}`,
              expectedPhase: phase,
            });
          }
        },
        'MANUAL',
      );
      await record(
        h,
        'actors-review-cancelled.json',
        async (planId) => {
          await h.client.waitForInput(planId);
          await h.client.cancel(planId);
        },
        'REVIEW_BEFORE_APPLY',
      );
    });
    await h.withWorker(
      () =>
        record(
          h,
          'actors-full-errored-retried.json',
          async (planId) => {
            await h.client.waitForInput(planId);
            await h.client.retry(planId, { by: 'recorder', reason: 'try again' });
          },
          'FULL_AUTOMATION',
        ),
      {
        execute: async (input) => {
          if (input.attempt === 1) {
            throw ApplicationFailure.nonRetryable('simulated execute failure', 'PhaseFailed');
          }
          return h.activities.execute(input);
        },
      },
    );
  } finally {
    await h.teardown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
