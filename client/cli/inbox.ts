/**
 * `agents inbox [--as <user>]` (issue 16 item 5, ADR 0022): what waits for a person, from Temporal's visibility.
 */
import type { Command } from 'commander';
import { INBOX_COLUMNS, inboxColumns, inboxQuery, inboxRows } from '../../domain/inbox';
import type { InboxRow } from '../../domain/inbox';
import { PlanClientError } from '../errors';
import type * as Inbox from '../inbox';
import { escapeControls } from '../render/diff';
import type { OutputFormat } from '../render/format';
import type { CliRuntime } from './runtime';
import { formatOption, parsePositiveInt } from './runtime';

export function registerInboxCommand(program: Command, cli: CliRuntime): void {
  program
    .command('inbox')
    .description(
      'list the plans waiting for a person (at a gate, ERRORED, paused), longest waiting first; read from ' +
        "Temporal's visibility, so it needs no database",
    )
    .option(
      '--as <user>',
      'only the plans this person can act on: gates they may approve, ERRORED and paused plans',
    )
    .option(
      '--print-query',
      "print the visibility query (for the Web UI's filter or temporal workflow list --query)",
    )
    .option('--limit <n>', 'at most this many plans', parsePositiveInt, 200)
    .addOption(formatOption())
    .action(async (opts) => {
      const user = opts.as as string | undefined;
      const built = inboxQuery(user === undefined ? {} : { as: user });
      if (!built.ok) throw new PlanClientError('usage', built.error);
      if (opts.printQuery === true) {
        cli.print(built.query);
        return;
      }
      // Loaded here: the Temporal client comes with it, and --help or --print-query need neither.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS project loads lazily by require
      const { listInbox } = require('../inbox') as typeof Inbox;
      const listing = await cli.withPlans((client) =>
        listInbox(client.temporal, built.query, { limit: opts.limit as number }),
      );
      const rows = inboxRows(listing.rows, user);
      show(cli, rows, opts.format as OutputFormat, user);
      if (listing.truncated) {
        cli.io.stderr(`more than ${String(opts.limit)} plans wait; showing ${rows.length} (raise --limit)\n`);
      }
    });
}

function show(
  cli: CliRuntime,
  rows: readonly InboxRow[],
  format: OutputFormat,
  user: string | undefined,
): void {
  if (format === 'json' || format === 'yaml') {
    cli.showDocument(rows, format);
    return;
  }
  if (rows.length === 0) {
    cli.print(user === undefined ? 'no plan waits for a person' : `no plan waits for ${user}`);
    return;
  }
  // The short id, as `plan list` shows it: every command takes it (json and yaml have the whole id for scripts).
  cli.showRows(
    rows.map((row) => escaped(inboxColumns(row))),
    INBOX_COLUMNS,
    format,
  );
}

/** Names and errors come from people and commands: their control characters are shown, never sent to the terminal. */
function escaped(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [
      key,
      typeof value === 'string' ? escapeControls(value) : value,
    ]),
  );
}
