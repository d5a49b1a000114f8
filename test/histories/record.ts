/**
 * Records the workflow histories that test/workflows/replay.test.ts replays, from real runs on a private dev
 * server (test/helpers/harness.ts). `npm run histories:record -- <name>...` records the named scenarios; with no
 * name it lists them. Record a scenario again only when a workflow change is meant to be incompatible with running
 * plans, and say so in the commit: the checked-in histories are what proves every other change replays.
 *
 * `runphase-*.json` were recorded before actors (issue 6) and are never recorded again: plans started then must
 * still replay, and this code can no longer produce them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { AutomationLevel } from '../../domain/lifecycle';
import { ensureTemporalCli } from '../../scripts/temporal-cli';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

const OUT_DIR = __dirname;

interface Scenario {
  level: AutomationLevel;
  /** Drives the plan from its creation to its end; the worker runs meanwhile. */
  drive(h: Harness, planId: string): Promise<void>;
  /** Activities to replace on the worker that runs this scenario. */
  overrides?(h: Harness): Parameters<Harness['withWorker']>[1];
}

/** Approves every gate until the plan finishes. */
async function approveToTheEnd(h: Harness, planId: string): Promise<void> {
  for (;;) {
    const view = await h.client.waitForInput(planId);
    if (view.phase === 'APPLIED' || view.state === 'CANCELLED') return;
    if (!view.awaitingApproval) throw new Error(`plan ${planId} needs a person: ${view.phase} ${view.state}`);
    await h.client.advance(planId, {
      by: 'recorder',
      reason: `approve ${view.phase}`,
      expectedPhase: view.phase,
    });
  }
}

async function cli(h: Harness, ...argv: string[]): Promise<string> {
  const out = await h.cli(...argv);
  if (out.code !== 0) throw new Error(`agents ${argv.join(' ')} failed (${out.code}): ${out.stderr}`);
  return out.stdout;
}

const SCENARIOS: Record<string, Scenario> = {
  'actors-manual-applied': { level: 'MANUAL', drive: approveToTheEnd },

  'actors-review-cancelled': {
    level: 'REVIEW_BEFORE_APPLY',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      await h.client.cancel(planId);
    },
  },

  'actors-full-errored-retried': {
    level: 'FULL_AUTOMATION',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      await h.client.retry(planId, { by: 'recorder', reason: 'try again' });
      await h.client.waitForInput(planId);
    },
    overrides: (h) => ({
      execute: async (input) => {
        if (input.attempt === 1)
          throw ApplicationFailure.nonRetryable('simulated execute failure', 'PhaseFailed');
        return h.activities.execute(input);
      },
    }),
  },

  /** A person corrects the strategy at the first gate; the plan then goes on to APPLIED. */
  'actors-manual-corrected': {
    level: 'MANUAL',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const choice = (await h.plans.listDecisions(planId)).find((d) => d.type === 'strategy_choice');
      if (choice === undefined) throw new Error(`plan ${planId} recorded no strategy_choice to correct`);
      await h.client.correct(planId, {
        by: 'recorder',
        decisionId: choice.decisionId,
        chosenOption: 'Write the greeting by hand',
        reason: 'recorded correction',
      });
      await approveToTheEnd(h, planId);
    },
  },

  /**
   * An invariant added at the gate before APPLY stops the approved transition; a retry with it still there stops
   * again, and once it is removed a retry takes the approved transition.
   */
  'actors-review-invariant-retried': {
    level: 'REVIEW_BEFORE_APPLY',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const { id } = JSON.parse(
        await cli(
          h,
          'invariant',
          'add',
          '--format',
          'json',
          'Leave the greeting alone',
          '--plan',
          planId,
          '--rule',
          '{protected_paths: ["GREETING.md"]}',
        ),
      ) as { id: string };
      const stopped = await h.client.advance(planId, {
        by: 'recorder',
        reason: 'apply it',
        expectedPhase: 'EXECUTE',
      });
      if (stopped.state !== 'ERRORED') throw new Error(`the invariant did not stop plan ${planId}`);
      await h.client.retry(planId, { by: 'recorder', reason: 'try anyway' });
      const again = await h.client.waitForInput(planId);
      if (again.state !== 'ERRORED') throw new Error(`the retry of plan ${planId} was not stopped again`);
      await cli(h, 'invariant', 'remove', id);
      await h.client.retry(planId, { by: 'recorder', reason: 'invariant removed' });
      await approveToTheEnd(h, planId);
    },
  },
};

async function record(h: Harness, name: string, scenario: Scenario): Promise<void> {
  const run = async () => {
    const created = await h.client.create({
      actionName: 'local/example',
      projects: ['local/demo'],
      automationLevel: scenario.level,
      arguments: { greeting: 'hello' },
      createdBy: 'recorder',
    });
    await scenario.drive(h, created.planId);
    const handle = h.env.client.workflow.getHandle(created.workflowId);
    await handle.result().catch(() => undefined);
    return handle.fetchHistory();
  };
  const history = await h.withWorker(run, scenario.overrides?.(h));
  // The canonical JSON form (as `temporal workflow show --output json` prints it), readable by historyFromJSON.
  const file = path.join(OUT_DIR, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
  console.log(`recorded ${path.relative(process.cwd(), file)} (${history.events?.length ?? 0} events)`);
}

async function main(names: string[]): Promise<number> {
  const unknown = names.filter((n) => !(n in SCENARIOS));
  if (names.length === 0 || unknown.length > 0) {
    if (unknown.length > 0) console.error(`unknown scenario(s): ${unknown.join(', ')}`);
    console.error(
      `usage: npm run histories:record -- <scenario>...\nscenarios: ${Object.keys(SCENARIOS).join(', ')}`,
    );
    return 2;
  }
  process.env.TEMPORAL_CLI_PATH = await ensureTemporalCli();
  const h = await createHarness();
  try {
    for (const name of names) {
      const scenario = SCENARIOS[name];
      if (scenario !== undefined) await record(h, name, scenario);
    }
  } finally {
    await h.teardown();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
