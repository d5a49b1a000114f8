/**
 * The commands around a plan's work (issue 6): its context files, the changeset Execute produced, and following a
 * running plan live. Reads go to the database; only `watch` asks Temporal what the running step is.
 */
import type { Stats } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { isFinished } from '../../domain/lifecycle';
import type { Changeset } from '../../domain/changeset';
import type { ContextFileInput } from '../../storage/context-files';
import type { PlanStore } from '../../storage/types';
import { ContextTooLargeError } from '../../storage/errors';
import { sha256 } from '../../lib/sha256';
import { isInside, READ_NO_FOLLOW } from '../../sandbox/paths';
import { PlanClientError } from '../errors';
import { needsPersonOrEnded } from '../plan-status';
import { planNotFound, resolvePlan, resolvePlanId } from '../plan-ref';
import { changesetJson, diffStat, renderUnifiedDiff } from '../render/diff';
import type { OutputFormat } from '../render/format';
import type { CliRuntime } from './runtime';
import { byOption, collect, formatOption, parsePositiveInt, PLAN_ID, PLAN_ID_HELP } from './runtime';

/** A context file is text handed to an actor; anything bigger is almost certainly not meant as context. */
export const MAX_CONTEXT_FILE_BYTES = 1024 * 1024;
/**
 * What one `context add` may read, and what a plan's whole context may hold (what is stored counts, a re-added
 * path at its new size): a model sees only a budget of it anyway, and a stray `-R` on a big tree should fail
 * rather than copy it into the database.
 */
export const MAX_CONTEXT_TOTAL_BYTES = 5 * 1024 * 1024;
/** Directories a recursive add never descends into: VCS metadata and installed dependencies. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);
/**
 * Kernel and device filesystems: their "files" are generated on read (`/proc/self/environ` holds secrets, a
 * device never ends), never a person's notes. Refused by real path, whatever link led there.
 */
const SYSTEM_DIRECTORIES = ['/proc', '/sys', '/dev'];

export function registerPlanWorkCommands(plan: Command, cli: CliRuntime): void {
  const context = plan.command('context').description("manage the files handed to a plan's actors");

  context
    .command('add')
    .description('add files (or, with --recursive, directories) to the context of a plan')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .argument('<paths...>', 'files or directories')
    .option(
      '-R, --recursive',
      'add every regular file under a directory (skips hidden entries, .git and node_modules)',
      false,
    )
    .option('--include-hidden', 'with --recursive, add hidden files and directories too (.env, .ssh/)', false)
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, paths: string[], opts) => {
      // Everything is read and checked before anything is stored: one bad path adds nothing.
      const { files, skipped } = await collectContextFiles(paths, {
        recursive: opts.recursive as boolean,
        includeHidden: opts.includeHidden as boolean,
      });
      const added = await cli.withStores(async ({ plans, contextFiles }) => {
        const planId = await requireOpenPlan(plans, id);
        await contextFiles
          .add(planId, files, opts.by as string, new Date().toISOString(), {
            maxTotalBytes: MAX_CONTEXT_TOTAL_BYTES,
          })
          .catch((err: unknown) => {
            if (err instanceof ContextTooLargeError) {
              throw new PlanClientError(
                'usage',
                `${err.message}; nothing was added (plan context clear empties it)`,
              );
            }
            throw err;
          });
        return contextFiles.list(planId);
      });
      // After storing, so a refused add prints its one error line and nothing else.
      for (const note of skipped) cli.io.stderr(`${note}\n`);
      const wanted = new Set(files.map((f) => f.path));
      cli.showRows(
        added.filter((f) => wanted.has(f.path)).map(contextRow),
        CONTEXT_COLUMNS,
        opts.format as OutputFormat,
      );
    });

  context
    .command('list')
    .description('list the context files of a plan')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const files = await cli.withStores(async ({ plans, contextFiles }) =>
        contextFiles.list(await resolvePlanId(plans, id)),
      );
      cli.showRows(files.map(contextRow), CONTEXT_COLUMNS, opts.format as OutputFormat);
    });

  context
    .command('clear')
    .description('remove every context file from a plan')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const { planId, removed } = await cli.withStores(async ({ plans, contextFiles }) => {
        const open = await requireOpenPlan(plans, id);
        return { planId: open, removed: await contextFiles.clear(open) };
      });
      cli.show({ plan_id: planId, removed }, opts.format as OutputFormat);
    });

  plan
    .command('diff')
    .description('show the changeset Execute produced, as a unified diff')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .option('--stat', 'list the changed files and the totals only', false)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const changeset = await cli.withStores(async ({ plans, changesets }) =>
        loadChangeset(
          await resolvePlanId(plans, id),
          plans.getPlan.bind(plans),
          changesets.get.bind(changesets),
        ),
      );
      const format = opts.format as OutputFormat;
      if (format === 'json' || format === 'yaml') {
        cli.showDocument(changesetJson(changeset), format);
        return;
      }
      const color = format === 'rich' && cli.color;
      cli.print(
        opts.stat
          ? diffStat(changeset.changes)
          : `${renderUnifiedDiff(changeset.changes, { color })}${diffStat(changeset.changes)}`,
      );
    });

  plan
    .command('watch')
    .description('follow a plan live (phase, state, current step, new decisions) until it waits or ends')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .option('--timeout <seconds>', 'stop watching after this many seconds', parsePositiveInt, 3600)
    .action(async (id: string, opts) => {
      await watchPlan(cli, id, (opts.timeout as number) * 1000);
    });
}

/**
 * `--context <path>` (repeatable), `--recursive` and `--include-hidden` on the commands that create a plan: the files
 * are stored before its workflow starts, so Strategize sees them (ADR 0017).
 */
export function addContextOptions(command: Command): Command {
  return command
    .option(
      '--context <path>',
      'a file (or, with --recursive, directory) handed to the actors before Strategize; repeatable',
      collect,
      [],
    )
    .option(
      '-R, --recursive',
      'with --context, add every regular file under a directory (skips hidden entries, .git and node_modules)',
      false,
    )
    .option('--include-hidden', 'with --context --recursive, add hidden files and directories too', false);
}

/**
 * Reads and checks every `--context` path, before anything is created: one bad path refuses the whole command.
 * Returns no files when none were named. The notes about skipped entries are for stderr once the plan exists.
 */
export async function readContextOptions(opts: Record<string, unknown>): Promise<CollectedContextFiles> {
  const paths = opts.context as string[];
  if (paths.length === 0) {
    const stray = (opts.recursive as boolean)
      ? '--recursive'
      : (opts.includeHidden as boolean)
        ? '--include-hidden'
        : null;
    if (stray !== null)
      throw new PlanClientError('usage', `${stray} applies to --context paths, and none was given`);
    return { files: [], skipped: [] };
  }
  return collectContextFiles(paths, {
    recursive: opts.recursive as boolean,
    includeHidden: opts.includeHidden as boolean,
  });
}

/** The id of the plan `ref` means, whose context may still change: it has not finished. */
async function requireOpenPlan(plans: PlanStore, ref: string): Promise<string> {
  const record = await resolvePlan(plans, ref);
  if (isFinished(record)) {
    throw new PlanClientError(
      'refused',
      `plan ${record.planId} has finished (${record.phase}, ${record.state}); its context can no longer change`,
    );
  }
  return record.planId;
}

const CONTEXT_COLUMNS = ['path', 'size', 'sha256', 'binary', 'added_by', 'added_at'] as const;

function contextRow(file: {
  path: string;
  size: number;
  sha256: string;
  binary: boolean;
  addedBy: string;
  addedAt: string;
}) {
  return {
    path: file.path,
    size: file.size,
    sha256: file.sha256,
    binary: file.binary,
    added_by: file.addedBy,
    added_at: file.addedAt,
  };
}

export interface CollectedContextFiles {
  files: ContextFileInput[];
  /** One line for each kind of entry a recursive walk left out, saying how many: for the person, on stderr. */
  skipped: string[];
}

/**
 * Reads every named file (and, recursively, directory) or fails naming the first path it cannot take. Only regular
 * files are read, none under /proc, /sys or /dev, within MAX_CONTEXT_FILE_BYTES each and MAX_CONTEXT_TOTAL_BYTES
 * together. A walk skips hidden entries unless `includeHidden`: `-R .` should not hand `.env` or `.ssh/` to a
 * model. A hidden path named on the command line is taken: the person asked for it.
 */
export async function collectContextFiles(
  paths: string[],
  options: { recursive: boolean; includeHidden?: boolean },
): Promise<CollectedContextFiles> {
  const found = new Map<string, ContextFileInput>();
  let totalBytes = 0;
  let skippedHidden = 0;
  let skippedOther = 0;
  const addFile = async (file: string, shown: string): Promise<void> => {
    const real = await realpath(file);
    refuseSystemPath(real, shown);
    if (found.has(real)) return;
    const content = await readContextFile(real, shown, MAX_CONTEXT_TOTAL_BYTES - totalBytes);
    totalBytes += content.byteLength;
    found.set(real, { path: real, sha256: sha256(content), content });
  };
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      throw new PlanClientError('usage', `${dir}: cannot be read (${err.code ?? err.message})`);
    });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) continue;
      if (entry.name.startsWith('.') && options.includeHidden !== true) skippedHidden++;
      else if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) await addFile(full, full);
      else skippedOther++;
    }
  };
  for (const raw of paths) {
    const file = path.resolve(raw);
    const stat = await lstat(file).catch(() => null);
    if (stat === null) throw new PlanClientError('usage', `${raw}: no such file or directory`);
    const real = await realpath(file).catch(() => null);
    if (real === null) throw new PlanClientError('usage', `${raw}: a symbolic link to nothing`);
    refuseSystemPath(real, raw);
    const target = stat.isSymbolicLink() ? await lstat(real) : stat;
    if (target.isDirectory()) {
      if (!options.recursive) {
        throw new PlanClientError(
          'usage',
          `${raw} is a directory; add --recursive to add the files under it`,
        );
      }
      await walk(real);
    } else if (target.isFile()) {
      await addFile(file, raw);
    } else {
      throw notRegular(raw, target);
    }
  }
  const skipped: string[] = [];
  if (skippedHidden > 0) {
    skipped.push(
      `skipped ${skippedHidden} hidden ${skippedHidden === 1 ? 'entry' : 'entries'} (names starting with "."); ` +
        'name them or pass --include-hidden to add them',
    );
  }
  if (skippedOther > 0) {
    skipped.push(
      `skipped ${skippedOther} ${skippedOther === 1 ? 'entry that is' : 'entries that are'} neither a regular ` +
        'file nor a directory (symbolic links, FIFOs, sockets, devices)',
    );
  }
  if (found.size === 0) throw new PlanClientError('usage', ['no files to add', ...skipped].join('; '));
  return { files: [...found.values()], skipped };
}

function refuseSystemPath(real: string, shown: string): void {
  const system = SYSTEM_DIRECTORIES.find((dir) => isInside(dir, real));
  if (system !== undefined) {
    throw new PlanClientError(
      'usage',
      `${shown} is under ${system}${real === shown ? '' : ` (it resolves to ${real})`}; ` +
        'only regular files can be context',
    );
  }
}

function notRegular(shown: string, stat: Stats): PlanClientError {
  const kind = stat.isFIFO()
    ? 'a FIFO'
    : stat.isSocket()
      ? 'a socket'
      : stat.isCharacterDevice() || stat.isBlockDevice()
        ? 'a device'
        : stat.isSymbolicLink()
          ? 'a symbolic link'
          : 'not a regular file';
  return new PlanClientError(
    'usage',
    `${shown} is ${kind}; only regular files and directories can be context`,
  );
}

/**
 * The bytes of a regular file, at most `budget` of them (what is left of MAX_CONTEXT_TOTAL_BYTES). The kind and
 * size come from the opened descriptor, so a file swapped for a FIFO or a device after it was listed is refused
 * instead of read (opening does not block: O_NONBLOCK; nor follow a link put in its place: O_NOFOLLOW). A file
 * that does not hold exactly the size it reports is refused too: that is how a kernel file (procfs says 0 bytes,
 * sysfs 4096) shows up when its filesystem is mounted somewhere other than /proc or /sys, and a file being
 * written meanwhile would be stored torn.
 */
export async function readContextFile(real: string, shown: string, budget: number): Promise<Uint8Array> {
  const cannotRead = (err: NodeJS.ErrnoException): never => {
    throw new PlanClientError('usage', `${shown}: cannot be read (${err.code ?? err.message})`);
  };
  const handle = await open(real, READ_NO_FOLLOW).catch(cannotRead);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw notRegular(shown, stat);
    // Checked before reading, so a huge file is refused without being loaded.
    if (stat.size > MAX_CONTEXT_FILE_BYTES) {
      throw new PlanClientError(
        'usage',
        `${shown} is ${stat.size} bytes; context files are limited to ${MAX_CONTEXT_FILE_BYTES} bytes`,
      );
    }
    if (stat.size > budget) {
      throw new PlanClientError(
        'usage',
        `${shown} (${stat.size} bytes) would take this add over ${MAX_CONTEXT_TOTAL_BYTES} bytes, ` +
          "the limit for one add and for a plan's whole context",
      );
    }
    // One byte more than reported: reading it proves the file holds more than it says.
    const buffer = new Uint8Array(stat.size + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle
        .read(buffer, filled, buffer.length - filled, filled)
        .catch(cannotRead);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled !== stat.size) {
      throw new PlanClientError(
        'usage',
        `${shown} reports ${stat.size} bytes but ${filled > stat.size ? 'holds more' : `holds ${filled}`}; ` +
          'it is not a plain file (a kernel file?) or it changed while being read',
      );
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** The plan's current changeset, or a clear error saying why there is none. */
export async function loadChangeset(
  planId: string,
  getPlan: (planId: string) => Promise<{ changesetId: string | null; phase: string; state: string } | null>,
  getChangeset: (changesetId: string) => Promise<Changeset | null>,
): Promise<Changeset> {
  const record = await getPlan(planId);
  if (record === null) throw planNotFound(planId);
  if (record.changesetId === null) {
    throw new PlanClientError(
      'notFound',
      `plan ${planId} has no changeset yet (it is ${record.phase}, ${record.state}); Execute produces it`,
    );
  }
  const changeset = await getChangeset(record.changesetId);
  if (changeset === null) {
    throw new PlanClientError('notFound', `changeset ${record.changesetId} of plan ${planId} is missing`);
  }
  return changeset;
}

async function watchPlan(cli: CliRuntime, id: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await cli.withPlans(async (client) => {
    const planId = await client.planIdOf(id);
    // A spinner only on a terminal; a pipe or a log file gets one plain line per change.
    const spinner = cli.io.isTty ? await cli.spinner() : null;
    const line = (text: string): void => {
      if (spinner === null) {
        cli.print(text);
      } else {
        spinner.clear();
        cli.io.stdout(`${text}\n`);
        spinner.render();
      }
    };
    let lastEventSeq = -1;
    let lastDecisionSeq = -1;
    let lastStatus = '';
    try {
      for (;;) {
        const view = await client.get(planId);
        // Only what is new since the last look: a long plan's history is not read again every half second.
        const { events, decisions } = await cli.withStores(async (stores) => ({
          events: await stores.plans.listEvents(planId, lastEventSeq),
          decisions: await stores.plans.listDecisions(planId, lastDecisionSeq),
        }));
        for (const event of events) {
          line(
            `${event.at}  ${event.phase} ${event.state}  ${event.type}` +
              (event.message === null ? '' : `: ${event.message}`),
          );
        }
        lastEventSeq = events.at(-1)?.seq ?? lastEventSeq;
        for (const decision of decisions) {
          line(`  decision #${decision.seq} ${decision.type}: ${decision.chosenOption}`);
        }
        lastDecisionSeq = decisions.at(-1)?.seq ?? lastDecisionSeq;
        if (needsPersonOrEnded(view)) {
          const status = view.awaitingApproval
            ? `waiting for approval (agents plan advance ${planId})`
            : view.state === 'ERRORED'
              ? `ERRORED: ${view.error?.message ?? 'unknown error'} (agents plan retry ${planId})`
              : `${view.phase} ${view.state}`;
          spinner?.stop();
          cli.print(`${view.phase} ${view.state}: ${status}`);
          return;
        }
        const status = `${view.phase} ${view.state}${view.progress === null ? '' : ` - ${view.progress}`}`;
        if (spinner !== null) spinner.text = status;
        else if (status !== lastStatus) line(status);
        lastStatus = status;
        if (Date.now() > deadline) {
          spinner?.stop();
          throw new PlanClientError(
            'unavailable',
            `plan ${planId} is still ${view.phase} ${view.state} after ${Math.round(timeoutMs / 1000)} s`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      spinner?.stop();
    }
  });
}
