/**
 * The step runner: carries out one step of domain/steps.ts in a workspace's sandbox. Every actor that runs steps
 * goes through here, so the safety rules live in one place: work only under the sandbox (never the project root),
 * refuse paths that leave it by text (`..`, absolute) or by symbolic link (a literal path is checked component by
 * component, a glob never descends into a linked directory, and `replace` never reads or rewrites through a link),
 * refuse read-only projects, substitute a value into a command only where its shell quoting holds (see
 * domain/shell.ts), and give commands a minimal environment (see commandEnv): never the worker's secrets.
 */
import { spawn } from 'node:child_process';
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import picomatch from 'picomatch';
import { checkRelativePath } from '../domain/changeset';
import type { PlanSpec } from '../domain/plan';
import type { Step, TemplateValue } from '../domain/steps';
import {
  DEFAULT_RUN_TIMEOUT_SECONDS,
  describeStep,
  renderTemplate,
  shellQuote,
  stepProject,
  templateValues,
  TemplateError,
} from '../domain/steps';
import { argumentVariableName, commandTemplateProblem } from '../domain/shell';
import type { Workspace } from '../domain/project-link';
import type { ValidationOutcome } from './types';

/** What a step may use: templates read the plan, paths resolve in the workspaces, commands stop on the signal. */
export interface StepEnv {
  plan: PlanSpec;
  workspaces: Workspace[];
  signal: AbortSignal;
  /** Called while a long command runs, so the activity keeps heartbeating. */
  progress(message: string): void;
}

export interface CommandResult {
  /** The command as it ran, after template substitution. */
  command: string;
  /** null when the command was killed (timeout) rather than exiting. */
  exitCode: number | null;
  timedOut: boolean;
  /** The last OUTPUT_TAIL_CHARS characters of stdout and stderr, interleaved as they arrived. */
  output: string;
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

/**
 * A step that cannot be carried out as written: a refused path, a template naming an unknown argument, a failing
 * command. Retrying may help only for commands; cancellation is never a StepError (it is rethrown as is).
 */
export class StepError extends Error {
  override name = 'StepError';

  constructor(
    message: string,
    /** Longer evidence for the failure (a command's output tail); null when the message says it all. */
    readonly details: string | null = null,
  ) {
    super(message);
  }
}

/** Enough of a failing command's output to diagnose it without flooding the decision tree. */
export const OUTPUT_TAIL_CHARS = 4000;
const PROGRESS_INTERVAL_MS = 5000;

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
 * argument) is an outcome to report, not an error: only cancellation, or a plan with nowhere to run, throws.
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
  const result = await runCommand(rendered, sandbox, DEFAULT_RUN_TIMEOUT_SECONDS, env);
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

function isInside(base: string, candidate: string): boolean {
  return candidate === base || candidate.startsWith(base + path.sep);
}

/**
 * The absolute path of `rel` in the sandbox, refused when its text leaves the sandbox or when a directory on the
 * way is a symbolic link resolving outside it (a project may ship such links; writing through one would change
 * files Apply never sees). With `followFinal`, the last component is checked too: writing a file follows a link
 * there, while moving or deleting acts on the link itself. Every component is lstat'ed, and the real path of the
 * nearest existing parent must be inside the sandbox.
 */
async function sandboxPath(
  sandbox: string,
  rel: string,
  what: string,
  followFinal: boolean,
): Promise<string> {
  const problem = checkRelativePath(rel);
  if (problem !== undefined) throw new StepError(`${what}: ${problem}`);
  const parts = rel.split('/');
  let current = sandbox;
  for (const [i, part] of parts.entries()) {
    current = path.join(current, part);
    if (i === parts.length - 1 && !followFinal) break;
    const stat = await lstatOrNull(current);
    if (stat === null) break;
    if (!stat.isSymbolicLink()) continue;
    const real = await fs.realpath(current).catch(() => null);
    if (real === null || !isInside(sandbox, real)) {
      const shown = parts.slice(0, i + 1).join('/');
      throw new StepError(`${what}: "${shown}" is a symbolic link leading outside the sandbox (or nowhere)`);
    }
    current = real;
  }
  const target = path.join(sandbox, ...parts);
  await checkRealParent(sandbox, target, what);
  return target;
}

/**
 * The absolute path of `rel` for reading and rewriting in place (`replace`): stricter than sandboxPath, no
 * component may be a symbolic link at all, not even one staying in the sandbox, since a glob never descends into a
 * linked directory and a link is never edited as the file it points to.
 */
async function linkFreePath(sandbox: string, rel: string, what: string): Promise<string> {
  const problem = checkRelativePath(rel);
  if (problem !== undefined) throw new StepError(`${what}: ${problem}`);
  const parts = rel.split('/');
  let current = sandbox;
  for (const [i, part] of parts.entries()) {
    current = path.join(current, part);
    const stat = await lstatOrNull(current);
    if (stat === null) break;
    if (!stat.isSymbolicLink()) continue;
    const shown = parts.slice(0, i + 1).join('/');
    const real = await fs.realpath(current).catch(() => null);
    if (real === null || !isInside(sandbox, real)) {
      throw new StepError(`${what}: "${shown}" is a symbolic link leading outside the sandbox (or nowhere)`);
    }
    throw new StepError(
      `${what}: "${shown}" is a symbolic link; replace never reads or rewrites through a link`,
    );
  }
  await checkRealParent(sandbox, current, what);
  return current;
}

/** The real path of the nearest existing directory above `target` must be inside the sandbox. */
async function checkRealParent(sandbox: string, target: string, what: string): Promise<void> {
  let dir = path.dirname(target);
  while (isInside(sandbox, dir) && dir !== sandbox && (await lstatOrNull(dir)) === null)
    dir = path.dirname(dir);
  const real = await fs.realpath(dir).catch(() => null);
  if (real === null || !isInside(sandbox, real)) {
    const shown = path.relative(sandbox, dir).split(path.sep).join('/') || '.';
    throw new StepError(`${what}: "${shown}" resolves outside the sandbox`);
  }
}

async function lstatOrNull(file: string): Promise<Awaited<ReturnType<typeof fs.lstat>> | null> {
  try {
    return await fs.lstat(file);
  } catch (error) {
    if (isErrno(error) && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) return null;
    throw error;
  }
}

/** Globs are matched against files listed inside the sandbox, but one naming `..` or `/` is a mistake worth naming. */
function checkGlob(glob: string, what: string): void {
  if (glob.startsWith('/') || /^[A-Za-z]:/.test(glob)) throw new StepError(`${what}: "${glob}" is absolute`);
  if (glob.split('/').includes('..')) throw new StepError(`${what}: "${glob}" has a ".." component`);
}

interface ListedFile {
  /** POSIX, relative to the listed root. */
  path: string;
  symlink: boolean;
}

/**
 * Files under `root` for glob matching: regular files and symbolic links (never followed), `.git` skipped. Only the
 * glob's literal base directory is walked, so `src/**` does not read all of node_modules.
 */
export async function listFiles(root: string, glob: string): Promise<ListedFile[]> {
  const base = picomatch.scan(glob).base;
  let start = '';
  if (base !== '' && checkRelativePath(base) === undefined) {
    let dir = root;
    for (const part of base.split('/')) {
      dir = path.join(dir, part);
      const stat = await lstatOrNull(dir);
      if (stat === null || !stat.isDirectory())
        return picomatch.scan(glob).isGlob ? [] : listSingle(root, base);
    }
    start = base;
  }
  const found: ListedFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(rel === '' ? root : path.join(root, rel), { withFileTypes: true });
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== '.git') await walk(child);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        found.push({ path: child, symlink: entry.isSymbolicLink() });
      }
    }
  };
  await walk(start);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * A literal (non-glob) path whose last component is a file or link: scan() reports it as its own base. Like the
 * walk, it never goes through a linked directory: a path with a symbolic link (or a file) on the way lists nothing.
 */
async function listSingle(root: string, rel: string): Promise<ListedFile[]> {
  const parts = rel.split('/');
  let current = root;
  for (const [i, part] of parts.entries()) {
    current = path.join(current, part);
    const stat = await lstatOrNull(current);
    if (stat === null) return [];
    if (i === parts.length - 1) {
      return stat.isFile() || stat.isSymbolicLink() ? [{ path: rel, symlink: stat.isSymbolicLink() }] : [];
    }
    if (!stat.isDirectory()) return [];
  }
  return [];
}

export function globMatcher(glob: string): (file: string) => boolean {
  return picomatch(glob, { dot: false });
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
      const target = await sandboxPath(sandbox, rel, `create ${rel}`, true);
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
      const replacement = render(step.replacement, values, 'the replacement');
      let regex: RegExp;
      try {
        regex = new RegExp(step.pattern, 'g' + step.flags);
      } catch (error) {
        throw new StepError(
          `replace /${step.pattern}/: invalid regular expression (${(error as Error).message})`,
        );
      }
      // A literal path is checked up front, so a link on the way is refused by name rather than matching nothing.
      if (!picomatch.scan(glob).isGlob) await linkFreePath(sandbox, glob, `replace in ${glob}`);
      const matches = globMatcher(glob);
      const files = (await listFiles(sandbox, glob)).filter((f) => !f.symlink && matches(f.path));
      if (files.length === 0 && step.requireMatch) {
        throw new StepError(`replace in ${glob}: no file matches the glob`);
      }
      const touched: string[] = [];
      let matched = 0;
      for (const file of files) {
        const absolute = await linkFreePath(sandbox, file.path, `replace in ${file.path}`);
        // O_NOFOLLOW: should the file have become a link since it was listed, neither read nor write follows it.
        const bytes = await fs.readFile(absolute, { flag: fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW });
        // A regular expression over a binary file would corrupt it; binaries are never edited as text.
        if (bytes.includes(0)) continue;
        const before = bytes.toString('utf8');
        if (before.search(regex) === -1) continue;
        matched++;
        const after = before.replace(regex, replacement);
        if (after !== before) {
          await fs.writeFile(absolute, after, {
            flag: fsConstants.O_WRONLY | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW,
          });
          touched.push(file.path);
        }
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
      const source = await sandboxPath(sandbox, from, what, false);
      const target = await sandboxPath(sandbox, to, what, false);
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
        for (const file of found) await fs.rm(await sandboxPath(sandbox, file.path, what, false));
        return { filesTouched: found.map((f) => f.path), command: null };
      }
      const target = await sandboxPath(sandbox, files, what, false);
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
      const result = await runCommand(command, sandbox, step.timeoutSeconds, env);
      if (result.timedOut || result.exitCode !== 0) {
        const how = result.timedOut
          ? `timed out after ${step.timeoutSeconds}s`
          : result.exitCode === null
            ? 'was killed'
            : `exited with code ${result.exitCode}`;
        throw new StepError(
          `\`${command}\` ${how}` + (result.output === '' ? ' (no output)' : `; output:\n${result.output}`),
          result.output,
        );
      }
      return { filesTouched: [], command: result };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

/** The worker's variables a command still sees: what tools need to run, nothing the worker holds (keys, URLs). */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TERM', 'CI'] as const;

/**
 * A command's whole environment: a few of the worker's variables (INHERITED_ENV, those set), the plan id, and the
 * plan's arguments, so a script can read them without any quoting at all. Never the rest of process.env: a command
 * may be a model's proposal, and the worker's environment holds secrets (the model API key, DATABASE_URL).
 */
export function commandEnv(plan: PlanSpec): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env['CLEVERAGENTS_PLAN_ID'] = plan.planId;
  for (const [name, value] of Object.entries(plan.arguments)) {
    if (value === null) continue;
    env[argumentVariableName(name)] = String(value);
  }
  return env;
}

/**
 * Runs `/bin/sh -c command` in its own process group, so a timeout or a cancellation kills everything it started
 * (a test runner's workers included), and whatever it left running in the background once it exits: nothing a
 * step starts may outlive the step. Resolves for any exit; rejects with the signal's reason when cancelled.
 */
function runCommand(
  command: string,
  cwd: string,
  timeoutSeconds: number,
  env: StepEnv,
): Promise<CommandResult> {
  env.signal.throwIfAborted();
  return new Promise<CommandResult>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd,
      env: commandEnv(env.plan),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    let exitCode: number | null = null;
    const started = Date.now();
    const append = (text: string): void => {
      output += text;
      if (output.length > 2 * OUTPUT_TAIL_CHARS) output = output.slice(-OUTPUT_TAIL_CHARS);
    };
    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => append(decoder.write(chunk)));
      stream.on('end', () => append(decoder.end()));
    }
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = (): void => killGroup();
    env.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutSeconds * 1000);
    const ticker = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      env.progress(`running \`${command}\` (${seconds}s)`);
    }, PROGRESS_INTERVAL_MS);
    const finish = (): void => {
      clearTimeout(timer);
      clearInterval(ticker);
      env.signal.removeEventListener('abort', onAbort);
    };
    child.on('exit', (code) => {
      exitCode = code;
      killGroup();
    });
    child.on('error', (error) => {
      finish();
      reject(new StepError(`\`${command}\` could not be started: ${error.message}`));
    });
    child.on('close', () => {
      finish();
      if (env.signal.aborted) {
        reject(env.signal.reason);
        return;
      }
      resolve({ command, exitCode, timedOut, output: output.slice(-OUTPUT_TAIL_CHARS) });
    });
  });
}

/** Duck-typed: errors from Node's fs are not always `instanceof Error` of the caller's realm (jest's VM, for one). */
function isErrno(error: unknown): error is NodeJS.ErrnoException {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).message === 'string'
  );
}
