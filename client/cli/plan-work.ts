/**
 * The commands around a plan's work (issue 6): its context files, the changeset Execute produced, and following a
 * running plan live. Reads go to the database; only `watch` asks Temporal what the running step is.
 */
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { isFinished } from '../../domain/lifecycle';
import type { Changeset } from '../../domain/changeset';
import type { ContextFileInput } from '../../storage/context-files';
import type { PlanStore } from '../../storage/types';
import { sha256 } from '../../lib/sha256';
import { PlanClientError } from '../errors';
import { needsPersonOrEnded, parsePlanId } from '../plans';
import { changesetJson, diffStat, renderUnifiedDiff } from '../render/diff';
import type { OutputFormat } from '../render/format';
import type { CliRuntime } from './runtime';
import { byOption, formatOption, parsePositiveInt } from './runtime';

const PLAN_ID = '<plan-id>';
const PLAN_ID_HELP = 'plan id (ULID or plan-<ULID>)';

/** A context file is text handed to an actor; anything bigger is almost certainly not meant as context. */
export const MAX_CONTEXT_FILE_BYTES = 1024 * 1024;
/** Directories a recursive add never descends into: VCS metadata and installed dependencies. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

export function registerPlanWorkCommands(plan: Command, cli: CliRuntime): void {
  const context = plan.command('context').description("manage the files handed to a plan's actors");

  context
    .command('add')
    .description('add files (or, with --recursive, directories) to the context of a plan')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .argument('<paths...>', 'files or directories')
    .option('-R, --recursive', 'add every file under a directory (skips .git and node_modules)', false)
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, paths: string[], opts) => {
      const planId = parsePlanId(id);
      // Everything is read and checked before anything is stored: one bad path adds nothing.
      const files = await collectContextFiles(paths, opts.recursive as boolean);
      const added = await cli.withStores(async ({ plans, contextFiles }) => {
        await requireOpenPlan(plans, planId, id);
        await contextFiles.add(planId, files, opts.by as string, new Date().toISOString());
        return contextFiles.list(planId);
      });
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
      const planId = parsePlanId(id);
      const files = await cli.withStores(({ contextFiles }) => contextFiles.list(planId));
      cli.showRows(files.map(contextRow), CONTEXT_COLUMNS, opts.format as OutputFormat);
    });

  context
    .command('clear')
    .description('remove every context file from a plan')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const planId = parsePlanId(id);
      const removed = await cli.withStores(async ({ plans, contextFiles }) => {
        await requireOpenPlan(plans, planId, id);
        return contextFiles.clear(planId);
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
      const changeset = await cli.withStores(({ plans, changesets }) =>
        loadChangeset(id, plans.getPlan.bind(plans), changesets.get.bind(changesets)),
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

/** A plan's context may change until the plan has finished. */
async function requireOpenPlan(plans: PlanStore, planId: string, typed: string): Promise<void> {
  const record = await plans.getPlan(planId);
  if (record === null) throw new PlanClientError('notFound', `no plan with id ${typed}`);
  if (isFinished(record)) {
    throw new PlanClientError(
      'refused',
      `plan ${planId} has finished (${record.phase}, ${record.state}); its context can no longer change`,
    );
  }
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

/** Reads every named file (and, recursively, directory) or fails naming the first path it cannot take. */
export async function collectContextFiles(paths: string[], recursive: boolean): Promise<ContextFileInput[]> {
  const found = new Map<string, ContextFileInput>();
  const addFile = async (file: string): Promise<void> => {
    const real = await realpath(file);
    if (found.has(real)) return;
    // The size is checked before reading, so a huge file is refused without being loaded.
    const { size } = await lstat(real);
    if (size > MAX_CONTEXT_FILE_BYTES) {
      throw new PlanClientError(
        'usage',
        `${file} is ${size} bytes; context files are limited to ${MAX_CONTEXT_FILE_BYTES} bytes`,
      );
    }
    const content = await readFile(real).catch((err: NodeJS.ErrnoException) => {
      throw new PlanClientError('usage', `${file}: cannot be read (${err.code ?? err.message})`);
    });
    found.set(real, {
      path: real,
      sha256: sha256(content),
      content: new Uint8Array(content),
    });
  };
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) await walk(full);
      else if (entry.isFile()) await addFile(full);
    }
  };
  for (const raw of paths) {
    const file = path.resolve(raw);
    const stat = await lstat(file).catch(() => null);
    if (stat === null) throw new PlanClientError('usage', `${raw}: no such file or directory`);
    const target = stat.isSymbolicLink() ? await lstat(await realpath(file)).catch(() => null) : stat;
    if (target === null) throw new PlanClientError('usage', `${raw}: a symbolic link to nothing`);
    if (target.isDirectory()) {
      if (!recursive) {
        throw new PlanClientError(
          'usage',
          `${raw} is a directory; add --recursive to add the files under it`,
        );
      }
      await walk(await realpath(file));
    } else if (target.isFile()) {
      await addFile(file);
    } else {
      throw new PlanClientError('usage', `${raw} is not a regular file or directory`);
    }
  }
  if (found.size === 0) throw new PlanClientError('usage', 'no files to add');
  return [...found.values()];
}

/** The plan's current changeset, or a clear error saying why there is none. */
export async function loadChangeset(
  id: string,
  getPlan: (planId: string) => Promise<{ changesetId: string | null; phase: string; state: string } | null>,
  getChangeset: (changesetId: string) => Promise<Changeset | null>,
): Promise<Changeset> {
  const planId = parsePlanId(id);
  const record = await getPlan(planId);
  if (record === null) throw new PlanClientError('notFound', `no plan with id ${id}`);
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
  const planId = parsePlanId(id);
  const deadline = Date.now() + timeoutMs;
  await cli.withPlans(async (client) => {
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
