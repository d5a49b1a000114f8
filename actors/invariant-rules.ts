/**
 * Enforcement of an invariant's machine-checkable rule (domain/invariant-rule.ts). Free text needs an actor's
 * judgement; a rule does not, so it is checked here, the same way whichever actor the plan uses, and its verdict
 * can be trusted before Apply.
 *
 * A rule is checked as far as the plan's progress allows: the path keys need Execute's changeset, the command
 * needs a sandbox. Saying "held" for a key that could not be checked yet would be a false assurance, so such keys
 * are named as waiting (or the whole rule acknowledged) instead.
 */
import picomatch from 'picomatch';
import type { InvariantRule } from '../domain/invariant-rule';
import type { PlanSpec } from '../domain/plan';
import type { Isolation } from '../sandbox/isolation';
import { runValidation, StepError } from './steps';
import type { Workspace } from '../domain/project-link';
import type { ChangeSummary, ValidationOutcome } from './types';

export interface RuleCheckInput {
  /** null before Execute has produced a changeset. */
  changes: ChangeSummary[] | null;
  /** Writable workspaces with a `sandbox` where the command rule runs; read-only ones are skipped. */
  workspaces: Workspace[];
  /** Templates and environment variables of the command come from the plan, as for a validation command. */
  plan: PlanSpec;
  signal: AbortSignal;
  progress(message: string): void;
  /** How the command runs, as every command of the plan (sandbox/isolation.ts). */
  isolation: Isolation;
}

export interface RuleVerdict {
  status: 'held' | 'violated' | 'acknowledged';
  evidence: string;
}

/** Evidence must stay one readable line even for a changeset of thousands of files. */
export const MAX_LISTED = 5;
/** Enough of a failing command's output to see why, without burying the other violations. */
export const OUTPUT_TAIL_LINES = 20;

/** What an uncheckable key waits for, phrased for "checked once …" and for "… waits for …". */
interface Wait {
  once: string;
  waitsFor: string;
}
const WAITS_FOR_CHANGES: Wait = { once: 'Execute has produced a changeset', waitsFor: "Execute's changeset" };
const WAITS_FOR_SANDBOX: Wait = { once: 'a writable project has a sandbox', waitsFor: 'a sandbox' };

type KeyResult =
  | { state: 'held'; text: string }
  | { state: 'violated'; text: string }
  | { state: 'waiting'; key: string; wait: Wait };

/**
 * Checks every key the rule gives. Cancellation is rethrown as is: a plan being cancelled says nothing about
 * whether its rule holds.
 */
export async function checkInvariantRule(rule: InvariantRule, input: RuleCheckInput): Promise<RuleVerdict> {
  input.signal.throwIfAborted();
  const results: KeyResult[] = [];
  const { changes } = input;
  if (rule.protected_paths !== undefined) {
    results.push(
      changes === null
        ? { state: 'waiting', key: 'protected_paths', wait: WAITS_FOR_CHANGES }
        : checkProtected(rule.protected_paths, changes),
    );
  }
  if (rule.max_changed_files !== undefined) {
    results.push(
      changes === null
        ? { state: 'waiting', key: 'max_changed_files', wait: WAITS_FOR_CHANGES }
        : checkMaxChanged(rule.max_changed_files, changes),
    );
  }
  if (rule.undeletable_paths !== undefined) {
    results.push(
      changes === null
        ? { state: 'waiting', key: 'undeletable_paths', wait: WAITS_FOR_CHANGES }
        : checkUndeletable(rule.undeletable_paths, changes),
    );
  }
  if (rule.command !== undefined) results.push(await checkCommand(rule.command, input));
  return verdictOf(results);
}

function verdictOf(results: readonly KeyResult[]): RuleVerdict {
  const violated: string[] = [];
  const held: string[] = [];
  const waiting = new Map<Wait, string[]>();
  for (const result of results) {
    if (result.state === 'violated') violated.push(result.text);
    else if (result.state === 'held') held.push(result.text);
    else waiting.set(result.wait, [...(waiting.get(result.wait) ?? []), result.key]);
  }
  if (violated.length > 0) return { status: 'violated', evidence: violated.join('; ') };
  if (held.length === 0) {
    return {
      status: 'acknowledged',
      evidence: `checked once ${[...waiting.keys()].map((w) => w.once).join(' and ')}`,
    };
  }
  const waits = [...waiting].map(
    ([wait, keys]) => `${joinAnd(keys)} ${keys.length === 1 ? 'waits' : 'wait'} for ${wait.waitsFor}`,
  );
  return { status: 'held', evidence: [...held, ...waits].join('; ') };
}

function joinAnd(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Path keys

/**
 * Unlike the step runner's globMatcher, `**` here also matches dotfiles: a rule protecting `config/**` must
 * catch a change to `config/.env`, where a step's glob skipping dotfiles is the safer default.
 */
function ruleMatcher(globs: readonly string[]): (file: string) => string | undefined {
  const matchers = globs.map((glob) => ({ glob, matches: picomatch(glob, { dot: true }) }));
  return (file) => matchers.find((m) => m.matches(file))?.glob;
}

function describeChange(change: ChangeSummary): string {
  const what =
    change.operation === 'MOVE' && change.fromPath !== null
      ? `${change.fromPath} -> ${change.path}`
      : change.path;
  return `${change.operation} ${what} (${change.project})`;
}

function listAtMost(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown} and ${items.length - MAX_LISTED} more` : shown;
}

function checkProtected(globs: readonly string[], changes: readonly ChangeSummary[]): KeyResult {
  const match = ruleMatcher(globs);
  const offenders: string[] = [];
  for (const change of changes) {
    // A move both removes its source and creates its destination, so either end touches a protected path.
    const glob = match(change.path) ?? (change.fromPath === null ? undefined : match(change.fromPath));
    if (glob !== undefined) offenders.push(`${describeChange(change)} matches protected "${glob}"`);
  }
  if (offenders.length > 0) return { state: 'violated', text: listAtMost(offenders) };
  return { state: 'held', text: `no change touches ${globs.join(', ')}` };
}

function filesText(count: number): string {
  return `${count} ${count === 1 ? 'file' : 'files'} changed`;
}

function checkMaxChanged(max: number, changes: readonly ChangeSummary[]): KeyResult {
  if (changes.length > max) {
    return { state: 'violated', text: `${filesText(changes.length)}; at most ${max} allowed` };
  }
  return { state: 'held', text: `${filesText(changes.length)} (at most ${max})` };
}

function checkUndeletable(globs: readonly string[], changes: readonly ChangeSummary[]): KeyResult {
  const match = ruleMatcher(globs);
  const offenders: string[] = [];
  for (const change of changes) {
    // Moving a file away removes it from where the rule keeps it, just as deleting it would.
    const gone =
      change.operation === 'DELETE' ? change.path : change.operation === 'MOVE' ? change.fromPath : null;
    const glob = gone === null ? undefined : match(gone);
    if (glob !== undefined) offenders.push(`${describeChange(change)} matches undeletable "${glob}"`);
  }
  if (offenders.length > 0) return { state: 'violated', text: listAtMost(offenders) };
  return { state: 'held', text: `no change deletes or moves away ${globs.join(', ')}` };
}

// ---------------------------------------------------------------------------------------------------------------
// Command

/**
 * Every writable sandbox, not only the first one a validation command uses: a rule must hold in each project the
 * plan may change.
 */
async function checkCommand(command: string, input: RuleCheckInput): Promise<KeyResult> {
  const targets = input.workspaces.filter((w) => !w.readOnly && w.sandbox !== null);
  if (targets.length === 0) return { state: 'waiting', key: 'the command', wait: WAITS_FOR_SANDBOX };
  const failures: string[] = [];
  for (const workspace of targets) {
    input.progress(`invariant rule: running \`${command}\` in ${workspace.projectName}`);
    let outcome: ValidationOutcome;
    try {
      // One workspace at a time, so runValidation's "first writable sandbox" is exactly this one.
      outcome = await runValidation(command, {
        plan: input.plan,
        workspaces: [workspace],
        signal: input.signal,
        progress: input.progress,
        isolation: input.isolation,
      });
    } catch (error) {
      if (input.signal.aborted) throw input.signal.reason;
      // A sandbox that vanished, a shell that cannot start or a worker that cannot isolate commands leaves the rule
      // unproven, and Apply must not proceed.
      if (error instanceof StepError) {
        failures.push(`\`${command}\` could not run in ${workspace.projectName}: ${error.message}`);
        continue;
      }
      throw error;
    }
    if (!outcome.passed) failures.push(describeFailure(outcome, workspace.projectName));
  }
  if (failures.length > 0) return { state: 'violated', text: failures.join('; ') };
  return { state: 'held', text: `\`${command}\` passed in ${targets.map((w) => w.projectName).join(', ')}` };
}

function describeFailure(outcome: ValidationOutcome, project: string): string {
  const how = outcome.exitCode === null ? 'did not exit normally' : `exited with code ${outcome.exitCode}`;
  const tail = outcome.output.trimEnd().split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
  return (
    `\`${outcome.command}\` ${how} in ${project}` +
    (tail.trim() === '' ? ' (no output)' : `; output:\n${tail}`)
  );
}
