/**
 * The step runner: carries out one step of domain/steps.ts in a workspace's sandbox. Every actor that runs steps
 * goes through here, so the safety rules hold for all of them: work only under the sandbox (never the project
 * root), refuse paths that leave it by text (`..`, absolute) or by symbolic link (resolved by sandbox/paths.ts: a
 * literal path is checked component by component, a glob never descends into a linked directory (./files.ts), and
 * `replace` never reads or rewrites through a link), refuse read-only projects, substitute a value into a command
 * only where its shell quoting holds (see domain/shell.ts), run commands in the worker's box (see ./command.ts
 * and sandbox/isolation.ts): never seeing the worker's secrets nor writing outside their sandbox, and refused
 * outright where the box cannot be made; and run a `replace` pattern in a thread of its own with a time limit
 * (./regex.ts), so a pattern that backtracks for hours fails its step instead of stalling the worker.
 */
import { constants as fsConstants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { PlanSpec } from '../../domain/plan';
import type { Step, TemplateValue } from '../../domain/steps';
import {
  DEFAULT_REPLACE_TIME_LIMIT_SECONDS,
  DEFAULT_RUN_TIMEOUT_SECONDS,
  describeStep,
  regexReplacementLiteral,
  renderTemplate,
  shellQuote,
  stepProject,
  templateValues,
  TemplateError,
} from '../../domain/steps';
import { commandTemplateProblem } from '../../domain/shell';
import type { Workspace } from '../../domain/project-link';
import type { Isolation } from '../../sandbox/isolation';
import { IsolationUnavailableError } from '../../sandbox/isolation';
import type { PathRefusal, ResolveOptions } from '../../sandbox/paths';
import { isErrno, lstatOrNull, READ_NO_FOLLOW, resolveInside } from '../../sandbox/paths';
import type { ValidationOutcome } from '../types';
import type { CommandResult } from './command';
import { commandVariables, runCommand } from './command';
import { StepError } from './errors';
import { globMatcher, listFiles } from './files';
import { RegexThread } from './regex';

/** What a step may use: templates read the plan, paths resolve in the workspaces, commands stop on the signal. */
export interface StepEnv {
  plan: PlanSpec;
  workspaces: Workspace[];
  signal: AbortSignal;
  /** Called while a long command runs, so the activity keeps heartbeating. */
  progress(message: string): void;
  /** How long one `replace` step's regular expression may run; DEFAULT_REPLACE_TIME_LIMIT_SECONDS if unset. */
  replaceTimeLimitSeconds?: number;
  /** How commands run on this worker: boxed, unisolated on purpose, or refused (sandbox/isolation.ts). */
  isolation: Isolation;
}

export interface StepReport {
  /** describeStep of the step as written (before templates). */
  description: string;
  /** The namespaced name of the project the step ran in. */
  project: string;
  /** Paths relative to the sandbox (POSIX), in the order touched; empty for `run`, whose effects are unknown. */
  filesTouched: string[];
  command: CommandResult | null;
}

export async function runStep(step: Step, env: StepEnv): Promise<StepReport> {
  env.signal.throwIfAborted();
  const workspace = targetWorkspace(step.project, env.workspaces);
  const values = templateValues(env.plan, workspace);
  const description = describeStep(step);
  try {
    const sandbox = await sandboxRoot(workspace);
    const outcome = await perform(step, sandbox, values, env);
    return { description, project: workspace.projectName, ...outcome };
  } catch (error) {
    if (env.signal.aborted) throw env.signal.reason;
    if (error instanceof StepError) throw error;
    // Filesystem refusals (permissions, a directory where a file was expected) are the step's failure, not a bug.
    if (isErrno(error)) throw new StepError(`${description}: ${error.message}`);
    throw error;
  }
}

/**
 * Runs a validation command in the first writable sandbox. A failing command (or one naming an unknown template
 * argument) is an outcome to report, not an error: only cancellation, a plan with nowhere to run, or a command
 * that could not be run at all (refused for want of isolation, no shell) throws.
 */
export async function runValidation(command: string, env: StepEnv): Promise<ValidationOutcome> {
  env.signal.throwIfAborted();
  const workspace = targetWorkspace(null, env.workspaces);
  const sandbox = await sandboxRoot(workspace);
  let rendered: string;
  try {
    rendered = renderCommand(
      command,
      templateValues(env.plan, workspace),
      env.plan,
      'the validation command',
    );
  } catch (error) {
    if (error instanceof StepError) return { command, passed: false, exitCode: null, output: error.message };
    throw error;
  }
  const result = await runInSandbox(rendered, sandbox, DEFAULT_RUN_TIMEOUT_SECONDS, env);
  return {
    command: rendered,
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    output: result.output,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Workspaces and templates

/** The workspace a step runs in: the named project (by name or alias), else the first writable one. */
export function targetWorkspace(project: string | null, workspaces: readonly Workspace[]): Workspace {
  const found = stepProject(project, workspaces);
  if (!found.ok) throw new StepError(found.reason);
  return found.link;
}

function render(
  template: string,
  values: Readonly<Record<string, TemplateValue>>,
  what: string,
  quote?: (value: string) => string,
): string {
  try {
    return renderTemplate(template, values, quote);
  } catch (error) {
    if (error instanceof TemplateError) throw new StepError(`${what}: ${error.message}`);
    throw error;
  }
}

/** A `run` or validation command: every placeholder must stand where its shell quoting holds, then it is filled. */
function renderCommand(
  template: string,
  values: Readonly<Record<string, TemplateValue>>,
  plan: PlanSpec,
  what: string,
): string {
  const problem = commandTemplateProblem(template, plan);
  if (problem !== null) throw new StepError(`${what}: ${problem}`);
  return render(template, values, what, shellQuote);
}

// ---------------------------------------------------------------------------------------------------------------
// Paths

/** The sandbox's real path: every containment check compares real paths, so a symlinked temp dir still works. */
async function sandboxRoot(workspace: Workspace): Promise<string> {
  if (workspace.sandbox === null) throw new StepError(`project ${workspace.projectName} has no sandbox`);
  try {
    return await fs.realpath(workspace.sandbox);
  } catch {
    throw new StepError(`the sandbox of ${workspace.projectName} (${workspace.sandbox}) does not exist`);
  }
}

/**
 * The absolute path of `rel` in the sandbox by the rules of sandbox/paths.ts, or the step's failure naming what was
 * refused: a project may ship links leading out of it, and writing through one would change files Apply never sees.
 */
async function sandboxPath(
  sandbox: string,
  rel: string,
  what: string,
  options: ResolveOptions,
): Promise<string> {
  const located = await resolveInside(sandbox, rel, options);
  if ('refusal' in located) throw new StepError(`${what}: ${refusalMessage(located.refusal)}`);
  return located.path;
}

/** Where a file is written: a link on the way, or in the last component, is followed only if it stays inside. */
const WRITE: ResolveOptions = { follow: 'inside', final: true };
/** Where a file is moved or deleted: the last component is acted on itself, even when it is a link. */
const NAME: ResolveOptions = { follow: 'inside', final: false };
/**
 * Where `replace` reads and rewrites in place: no link at all, not even one staying in the sandbox, since a glob
 * never descends into a linked directory and a link is never edited as the file it points to.
 */
const NO_LINKS: ResolveOptions = { follow: 'none', final: true };

function refusalMessage(refusal: PathRefusal): string {
  switch (refusal.kind) {
    case 'text':
      return refusal.reason;
    case 'link-nowhere':
    case 'link-outside':
      return `"${refusal.at}" is a symbolic link leading outside the sandbox (or nowhere)`;
    case 'link':
      return `"${refusal.at}" is a symbolic link; replace never reads or rewrites through a link`;
    case 'not-directory':
      return `"${refusal.at}" is not a directory`;
    case 'outside':
      return `"${refusal.at}" resolves outside the sandbox`;
  }
}

/** Globs are matched against files listed inside the sandbox, but one naming `..` or `/` is a mistake worth naming. */
function checkGlob(glob: string, what: string): void {
  if (glob.startsWith('/') || /^[A-Za-z]:/.test(glob)) throw new StepError(`${what}: "${glob}" is absolute`);
  if (glob.split('/').includes('..')) throw new StepError(`${what}: "${glob}" has a ".." component`);
}

// ---------------------------------------------------------------------------------------------------------------
// The five kinds

async function perform(
  step: Step,
  sandbox: string,
  values: Readonly<Record<string, TemplateValue>>,
  env: StepEnv,
): Promise<Pick<StepReport, 'filesTouched' | 'command'>> {
  switch (step.kind) {
    case 'create': {
      const rel = render(step.path, values, 'the path to create');
      const content = render(step.content, values, `the content of ${rel}`);
      const target = await sandboxPath(sandbox, rel, `create ${rel}`, WRITE);
      if (!step.overwrite && (await lstatOrNull(target)) !== null) {
        throw new StepError(`create ${rel}: the file already exists (set overwrite: true to replace it)`);
      }
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, content, { flag: step.overwrite ? 'w' : 'wx' });
      return { filesTouched: [rel], command: null };
    }
    case 'replace': {
      const glob = render(step.files, values, 'the files to replace in');
      checkGlob(glob, `replace in ${glob}`);
      // A value (a plan argument) reaches the file as written; only the template's own `$1`, `$&` are expanded.
      const replacement = render(step.replacement, values, 'the replacement', regexReplacementLiteral);
      const flags = 'g' + step.flags;
      try {
        // Compiled here only to name a syntax error at once; the matching itself runs in a RegexThread.
        new RegExp(step.pattern, flags);
      } catch (error) {
        throw new StepError(
          `replace /${step.pattern}/: invalid regular expression (${(error as Error).message})`,
        );
      }
      // A literal path is checked up front, so a link on the way is refused by name rather than matching nothing.
      if (!picomatch.scan(glob).isGlob) await sandboxPath(sandbox, glob, `replace in ${glob}`, NO_LINKS);
      const matches = globMatcher(glob);
      const files = (await listFiles(sandbox, glob)).filter((f) => !f.symlink && matches(f.path));
      if (files.length === 0 && step.requireMatch) {
        throw new StepError(`replace in ${glob}: no file matches the glob`);
      }
      const touched: string[] = [];
      let matched = 0;
      let thread: RegexThread | null = null;
      try {
        for (const file of files) {
          const absolute = await sandboxPath(sandbox, file.path, `replace in ${file.path}`, NO_LINKS);
          // O_NOFOLLOW: should the file have become a link since it was listed, neither read nor write follows it.
          const bytes = await fs.readFile(absolute, { flag: READ_NO_FOLLOW });
          // A regular expression over a binary file would corrupt it; binaries are never edited as text.
          if (bytes.includes(0)) continue;
          const before = bytes.toString('utf8');
          thread ??= new RegexThread({
            what: `replace /${step.pattern}/ in ${glob}`,
            pattern: step.pattern,
            flags,
            replacement,
            timeLimitSeconds: env.replaceTimeLimitSeconds ?? DEFAULT_REPLACE_TIME_LIMIT_SECONDS,
            signal: env.signal,
          });
          const after = await thread.replace(file.path, before);
          if (after === null) continue;
          matched++;
          if (after !== before) {
            await fs.writeFile(absolute, after, {
              flag: fsConstants.O_WRONLY | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW,
            });
            touched.push(file.path);
          }
        }
      } finally {
        await thread?.close();
      }
      if (matched === 0 && files.length > 0 && step.requireMatch) {
        throw new StepError(
          `replace /${step.pattern}/ in ${glob}: the pattern matches in none of the ${files.length} matching file(s)`,
        );
      }
      return { filesTouched: touched, command: null };
    }
    case 'move': {
      const from = render(step.from, values, 'the path to move');
      const to = render(step.to, values, 'the destination');
      const what = `move ${from} to ${to}`;
      const source = await sandboxPath(sandbox, from, what, NAME);
      const target = await sandboxPath(sandbox, to, what, NAME);
      if ((await lstatOrNull(source)) === null) throw new StepError(`${what}: ${from} does not exist`);
      if ((await lstatOrNull(target)) !== null) throw new StepError(`${what}: ${to} already exists`);
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(source, target);
      return { filesTouched: [from, to], command: null };
    }
    case 'delete': {
      const files = render(step.files, values, 'the files to delete');
      const what = `delete ${files}`;
      if (picomatch.scan(files).isGlob) {
        checkGlob(files, what);
        const matches = globMatcher(files);
        const found = (await listFiles(sandbox, files)).filter((f) => matches(f.path));
        if (found.length === 0 && step.requireMatch) throw new StepError(`${what}: no file matches the glob`);
        // fs.rm removes a link itself; sandboxPath re-checks the directories on the way.
        for (const file of found) await fs.rm(await sandboxPath(sandbox, file.path, what, NAME));
        return { filesTouched: found.map((f) => f.path), command: null };
      }
      const target = await sandboxPath(sandbox, files, what, NAME);
      const stat = await lstatOrNull(target);
      if (stat === null) {
        if (step.requireMatch) throw new StepError(`${what}: ${files} does not exist`);
        return { filesTouched: [], command: null };
      }
      const touched = stat.isDirectory()
        ? (await listFiles(sandbox, `${files}/**`)).map((f) => f.path)
        : [files];
      await fs.rm(target, { recursive: true });
      return { filesTouched: touched, command: null };
    }
    case 'run': {
      const command = renderCommand(step.command, values, env.plan, 'the command');
      const result = await runInSandbox(command, sandbox, step.timeoutSeconds, env);
      if (result.timedOut || result.exitCode !== 0) {
        const how = result.timedOut
          ? `timed out after ${step.timeoutSeconds}s`
          : result.exitCode === null
            ? 'was killed'
            : `exited with code ${result.exitCode}${cpuLimitNote(result.exitCode, env.isolation)}`;
        throw new StepError(
          `\`${command}\` ${how}` + (result.output === '' ? ' (no output)' : `; output:\n${result.output}`),
          result.output,
        );
      }
      return { filesTouched: [], command: result };
    }
    case 'subplan':
    case 'parallel':
      // The workflow spawns child plans before Execute's activity runs and hands it only the file steps; a subplan
      // step reaching a sandbox means a caller skipped that split, and running nothing would hide it.
      throw new StepError(
        `${describeStep(step)}: a subplan step is run by the plan's workflow, not in a sandbox`,
        null,
        {
          retryable: false,
        },
      );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

/**
 * A command in the sandbox, for a step or a validation: a /bin/sh (or bwrap) that cannot be started is the step's
 * failure, and so is a worker that cannot isolate commands, for good (no retry helps until the worker changes).
 */
async function runInSandbox(
  command: string,
  sandbox: string,
  timeoutSeconds: number,
  env: StepEnv,
): Promise<CommandResult> {
  try {
    return await runCommand(command, {
      sandbox,
      timeoutSeconds,
      isolation: env.isolation,
      network: env.plan.execution.network,
      variables: commandVariables(env.plan, sandbox),
      signal: env.signal,
      progress: (message) => env.progress(message),
    });
  } catch (error) {
    if (env.signal.aborted) throw env.signal.reason;
    if (error instanceof IsolationUnavailableError) {
      throw new StepError(`\`${command}\` was not run: ${error.message}`, null, { retryable: false });
    }
    if (isErrno(error)) throw new StepError(`\`${command}\` could not be started: ${error.message}`);
    throw error;
  }
}

/** bwrap reports a command killed by a signal as 128 + the signal; SIGXCPU is the CPU limit's. */
const KILLED_BY_SIGXCPU = 128 + os.constants.signals.SIGXCPU;

function cpuLimitNote(exitCode: number, isolation: Isolation): string {
  if (isolation.mode !== 'bwrap' || exitCode !== KILLED_BY_SIGXCPU) return '';
  return ` (SIGXCPU: a process reached the CPU time limit of ${isolation.cpuSeconds}s)`;
}
