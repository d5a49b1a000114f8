/**
 * `agents plan events <id> [--follow] [--timeout <s>]`: the plan's event log from the database, refused commands
 * included (ADR 0021). Without --follow it reads only the database; --follow also asks Temporal whether the
 * workflow still runs, and prints new events until it has ended.
 */
import type { Command } from 'commander';
import { PlanClientError } from '../errors';
import { resolvePlan } from '../plan-ref';
import { EVENT_COLUMNS, eventRow, eventsToPrint, followLine, isHumanFormat } from '../render/event-view';
import type { OutputFormat } from '../render/format';
import type { CliRuntime } from './runtime';
import { formatOption, parsePositiveInt, PLAN_ID, PLAN_ID_HELP } from './runtime';

/** How often --follow looks for new events: as often as `plan watch`. */
const FOLLOW_INTERVAL_MS = 500;

export function registerPlanEventsCommand(plan: Command, cli: CliRuntime): void {
  plan
    .command('events')
    .description(
      'show the event log of a plan (seq, time, type, phase, state, actor, message), refused commands included',
    )
    .argument(PLAN_ID, PLAN_ID_HELP)
    .option('--follow', 'keep printing new events until the plan has finished', false)
    .option('--timeout <seconds>', 'with --follow: stop after this many seconds', parsePositiveInt, 3600)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const { planId } = await cli.withStores(({ plans }) => resolvePlan(plans, id));
      const format = opts.format as OutputFormat;
      if (opts.follow === true) {
        await followEvents(cli, planId, format, (opts.timeout as number) * 1000);
        return;
      }
      const events = await cli.withStores(({ plans }) => plans.listEvents(planId));
      const human = isHumanFormat(format);
      cli.showRows(
        events.map((event) => eventRow(event, { human })),
        EVENT_COLUMNS,
        format,
      );
    });
}

/**
 * Prints each event as it is stored, one line (or YAML document) at a time, until the plan's workflow has ended
 * and its last events are printed. Past the timeout it stops, like `plan watch`, with exit 5.
 */
async function followEvents(
  cli: CliRuntime,
  planId: string,
  format: OutputFormat,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await cli.withPlans(async (client) => {
    let cursor = -1;
    for (;;) {
      // Asked before reading: events stored up to an end seen here are all in the read that follows.
      const status = await client.workflowStatus(planId).catch((err: unknown) => {
        // The server out of reach for a moment: keep following, as before it; the deadline still ends the wait.
        if (err instanceof PlanClientError && err.kind === 'unavailable') return 'RUNNING';
        throw err;
      });
      const ended = status !== 'RUNNING';
      const stored = await cli.withStores(({ plans }) => plans.listEvents(planId, cursor));
      const next = eventsToPrint(stored, cursor, ended);
      for (const event of next.print) cli.print(followLine(event, format, { color: cli.color }));
      cursor = next.cursor;
      if (ended) return;
      if (Date.now() > deadline) {
        throw new PlanClientError(
          'unavailable',
          `plan ${planId} is still running after ${Math.round(timeoutMs / 1000)} s; stopped following it`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS));
    }
  });
}
