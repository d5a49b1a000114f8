/**
 * The world the Temporal parts (P1, P2, P5, P6) run in: the tests' harness (a private dev server on free ports
 * with the engine's search attributes, a migrated SQLite file, built-in actions, projects local/demo and
 * local/docs), plus the bench's own action and invariants, and a bare worker on a task queue of its own.
 * Everything lives in temp dirs and dies with teardown(), which withWorld runs whatever happens.
 */
import { parseActionFile } from '../../domain/action-file';
import type { AutomationLevel } from '../../domain/lifecycle';
import { createHarness } from '../../test/helpers/harness';
import type { Harness } from '../../test/helpers/harness';
import { ensureTemporalCli } from '../temporal-cli';

export const BENCH_ACTION = 'local/bench';

/**
 * A short real task: three steps touching two small files, two free-text invariants from the action and one
 * stored rule invariant (below), so a FULL_AUTOMATION plan records about ten decisions. The files sit under the
 * plan's own id: concurrent plans applying to one project then never touch the same path.
 */
export const BENCH_ACTION_YAML = `
name: ${BENCH_ACTION}
description: The bench's plan, a few small files like a short real task.
arguments:
  - name: note
    type: string
    default: bench
default_automation_level: full
invariants:
  - Keep the bench's files small.
  - Touch nothing outside bench/.
steps:
  - create: "bench/{{plan.id}}/a.md"
    content: "# {{note}}\\n\\nWritten by plan {{plan.name}}.\\n"
    description: write the first note
  - create: "bench/{{plan.id}}/b.md"
    content: "second note of {{plan.id}}\\n"
    description: write the second note
  - replace: "bench/{{plan.id}}/a.md"
    pattern: "Written"
    with: "Rewritten"
    description: edit the first note
`;

export interface WorldOptions {
  /** How long the client waits for the workflow to act on an update (P6 sends hundreds at once). */
  commandTimeoutMs?: number;
}

async function createWorld(options: WorldOptions): Promise<Harness> {
  // The tests' harness reads the CLI path from here; an explicit one wins over the cache and a download.
  process.env.TEMPORAL_CLI_PATH ||= await ensureTemporalCli();
  const h = await createHarness({ commandTimeoutMs: options.commandTimeoutMs ?? 60_000 });
  try {
    const parsed = parseActionFile(BENCH_ACTION_YAML, 'bench-action.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    await h.catalog.putAction(parsed.action);
    await h.invariants.add({
      text: 'The bench changes at most ten files and no secrets',
      scope: 'ACTION',
      target: BENCH_ACTION,
      rule: { max_changed_files: 10, protected_paths: ['secrets/**'] },
      author: 'bench',
      at: new Date().toISOString(),
    });
    return h;
  } catch (err) {
    await h.teardown();
    throw err;
  }
}

export async function withWorld<T>(fn: (h: Harness) => Promise<T>, options: WorldOptions = {}): Promise<T> {
  const h = await createWorld(options);
  try {
    return await fn(h);
  } finally {
    await h.teardown();
  }
}

/** A plan from the bench action on local/demo, started the way the CLI's `plan use` starts one. */
export async function createBenchPlan(h: Harness, level: AutomationLevel): Promise<string> {
  const created = await h.client.create({
    actionName: BENCH_ACTION,
    projects: ['local/demo'],
    automationLevel: level,
    arguments: {},
    createdBy: 'bench',
  });
  return created.planId;
}
