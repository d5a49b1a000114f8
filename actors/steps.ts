/**
 * The step runner: carries out one step of domain/steps.ts in a workspace's sandbox. Every actor that runs steps
 * goes through here, so the safety rules live in one place: work only under the sandbox (never the project root),
 * refuse paths that leave it by text (`..`, absolute) or by symbolic link (a literal path is checked component by
 * component, a glob never descends into a linked directory, and `replace` never reads or rewrites through a link),
 * refuse read-only projects, substitute a value into a command only where its shell quoting holds (see
 * checkCommandTemplate), and give commands a minimal environment (see commandEnv): never the worker's secrets.
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
  TemplateError,
} from '../domain/steps';
import type { ValidationOutcome, Workspace } from './types';

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
    return { description, project: workspace.project, ...outcome };
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
  if (project === null) {
    // Chosen by the link alone (not by whether a sandbox exists yet), so Strategize and Execute agree on it.
    const writable = workspaces.find((w) => !w.readOnly);
    if (writable === undefined) {
      throw new StepError('the plan has no writable project: every linked project is read-only');
    }
    return writable;
  }
  const workspace = workspaces.find((w) => w.project === project || w.alias === project);
  if (workspace === undefined) {
    const known = workspaces.map((w) => (w.alias === null ? w.project : `${w.project} (${w.alias})`));
    throw new StepError(
      `the step targets project "${project}", which is not linked to this plan` +
        (known.length > 0 ? ` (linked: ${known.join(', ')})` : ''),
    );
  }
  if (workspace.readOnly) {
    throw new StepError(`the step targets project ${workspace.project}, which is linked read-only`);
  }
  return workspace;
}

/** Null arguments (from plans created before arguments were typed) have no value to substitute, so they are left out. */
export function templateValues(plan: PlanSpec, workspace: Workspace): Record<string, TemplateValue> {
  const values: Record<string, TemplateValue> = {};
  for (const [name, value] of Object.entries(plan.arguments)) {
    if (value !== null) values[name] = value;
  }
  values['plan.id'] = plan.planId;
  values['plan.name'] = plan.name;
  values['project.name'] = workspace.project;
  values['project.alias'] = workspace.alias ?? workspace.project;
  return values;
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
  const misplaced = checkCommandTemplate(template);
  if (misplaced !== null) {
    const { placeholder, name, context } = misplaced;
    const variable = argumentVariable(plan, name);
    const instead =
      context === 'quotes'
        ? 'write it bare (it is quoted for you)' + (variable === null ? '' : ` or use $${variable}`)
        : variable === null
          ? 'write it bare, as a word of its own'
          : `write it bare, as a word of its own, or use $${variable}`;
    throw new StepError(`${what}: ${placeholder} ${MISPLACED[context]}; ${instead}`);
  }
  return render(template, values, what, shellQuote);
}

/** Where a placeholder may stand in a command without its single quotes being defeated. */
export type PlaceholderContext =
  'quotes' | 'backticks' | 'comment' | 'here-document' | 'backslash' | 'dollar';

const MISPLACED: Record<PlaceholderContext, string> = {
  quotes: 'is inside quotes in the command',
  backticks: 'is inside `...` in the command, where the quoting added to it does not hold',
  comment: 'is inside a comment in the command, which a line break in the value would end',
  'here-document': 'is inside a here-document in the command, where it is not quoted',
  backslash: 'follows a backslash in the command, which would unquote it',
  dollar: 'follows a `$` in the command, which would change how it is quoted',
};

const COMMAND_PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
/** Characters after which a `#` starts a comment (a word begins there). */
const WORD_BREAK = /[\s;&|()<>]/;

/**
 * The first placeholder of a command template that stands where shellQuote cannot keep its value one literal word,
 * scanning the template as /bin/sh parses it: inside '...' or "..." (`echo "{{msg}}"` with msg `$(id)` would run
 * id), inside `...` (re-parsed, so a backquote in the value ends it), in a comment (a line break in the value
 * starts a command), in a here-document body or delimiter (not quoted at all), or right after a backslash or a `$`
 * (which turn the opening quote into a literal or into $'...'). Null when every placeholder is a bare word (or
 * part of one: `--name={{x}}`, `'prefix '{{x}}`). Conservative: a placeholder in `"$(...)"` is refused too.
 */
export function checkCommandTemplate(
  template: string,
): { placeholder: string; name: string; context: PlaceholderContext } | null {
  const spans = new Map<number, RegExpExecArray>();
  for (const match of template.matchAll(COMMAND_PLACEHOLDER)) spans.set(match.index, match);
  const at = (index: number, context: PlaceholderContext) => {
    const span = spans.get(index);
    return span === undefined ? null : { placeholder: span[0], name: (span[1] ?? '').trim(), context };
  };
  /** The first placeholder starting in [from, to), as `context`. */
  const within = (from: number, to: number, context: PlaceholderContext) => {
    for (let k = from; k < to; k++) if (spans.has(k)) return at(k, context);
    return null;
  };
  let state: 'plain' | 'single' | 'double' | 'backtick' | 'comment' = 'plain';
  let wordStart = true;
  const heredocs: { delimiter: string; stripTabs: boolean }[] = [];
  let i = 0;
  while (i < template.length) {
    const span = spans.get(i);
    if (span !== undefined) {
      if (state === 'single' || state === 'double') return at(i, 'quotes');
      if (state === 'backtick') return at(i, 'backticks');
      if (state === 'comment') return at(i, 'comment');
      if (template[i - 1] === '$') return at(i, 'dollar');
      i += span[0].length;
      wordStart = false;
      continue;
    }
    const c = template[i] ?? '';
    if (c === '\\' && state !== 'single' && state !== 'comment') {
      const escaped = at(
        i + 1,
        state === 'double' ? 'quotes' : state === 'backtick' ? 'backticks' : 'backslash',
      );
      if (escaped !== null) return escaped;
      i += 2;
      wordStart = false;
      continue;
    }
    if (state === 'single') {
      if (c === "'") state = 'plain';
    } else if (state === 'double') {
      if (c === '"') state = 'plain';
    } else if (state === 'backtick') {
      if (c === '`') state = 'plain';
    } else if (c === '\n') {
      // A line break ends a comment, and the here-documents opened on the line start after it.
      state = 'plain';
      i++;
      for (const { delimiter, stripTabs } of heredocs.splice(0)) {
        while (i < template.length) {
          const end = template.indexOf('\n', i) === -1 ? template.length : template.indexOf('\n', i);
          const line = template.slice(i, end);
          const inBody = within(i, end, 'here-document');
          i = end + 1;
          if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
          if (inBody !== null) return inBody;
        }
      }
      wordStart = true;
      continue;
    } else if (state === 'comment') {
      // Nothing but a line break ends a comment.
    } else if (c === "'") {
      state = 'single';
    } else if (c === '"') {
      state = 'double';
    } else if (c === '`') {
      state = 'backtick';
    } else if (c === '#' && wordStart) {
      state = 'comment';
    } else if (template.startsWith('<<<', i)) {
      i += 3; // A here-string: the word after it is an ordinary word.
      wordStart = true;
      continue;
    } else if (template.startsWith('<<', i)) {
      let j = i + 2;
      const stripTabs = template[j] === '-';
      if (stripTabs) j++;
      while (template[j] === ' ' || template[j] === '\t') j++;
      const from = j;
      let delimiter = '';
      let quote: string | null = null;
      for (; j < template.length; j++) {
        const d = template[j] ?? '';
        if (quote !== null) {
          if (d === quote) quote = null;
          else delimiter += d;
        } else if (d === "'" || d === '"') {
          quote = d;
        } else if (d === '\\') {
          delimiter += template[++j] ?? '';
        } else if (WORD_BREAK.test(d)) {
          break;
        } else {
          delimiter += d;
        }
      }
      const inDelimiter = within(from, j, 'here-document');
      if (inDelimiter !== null) return inDelimiter;
      heredocs.push({ delimiter, stripTabs });
      i = j;
      wordStart = true;
      continue;
    }
    wordStart = state === 'plain' && WORD_BREAK.test(c);
    i++;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Paths

/** The sandbox's real path: every containment check compares real paths, so a symlinked temp dir still works. */
async function sandboxRoot(workspace: Workspace): Promise<string> {
  if (workspace.sandbox === null) throw new StepError(`project ${workspace.project} has no sandbox`);
  try {
    return await fs.realpath(workspace.sandbox);
  } catch {
    throw new StepError(`the sandbox of ${workspace.project} (${workspace.sandbox}) does not exist`);
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

/** The environment variable holding a template name's value in a command, or null when there is none. */
function argumentVariable(plan: PlanSpec, name: string): string | null {
  if (name === 'plan.id') return 'CLEVERAGENTS_PLAN_ID';
  const reserved = ['plan.name', 'project.name', 'project.alias'];
  const value = Object.prototype.hasOwnProperty.call(plan.arguments, name) ? plan.arguments[name] : undefined;
  return reserved.includes(name) || value === undefined || value === null ? null : argumentVariableName(name);
}

function argumentVariableName(name: string): string {
  return `CLEVERAGENTS_ARG_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

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
