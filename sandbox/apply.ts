/**
 * Apply: writes a changeset into the real projects. This is the one place the engine changes a user's files, so it
 * refuses rather than guesses: the whole changeset is checked before the first byte is written, nothing is written
 * outside a project root, through a symbolic link (even one staying inside the project) or into git's own directory,
 * and a file that moved on since Execute is never overwritten.
 * A retried Apply (after a crash half-way) recognises what it already wrote and finishes the rest.
 */
import { randomBytes } from 'node:crypto';
import { open, realpath, rename, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CHANGE_OPERATIONS, checkRelativePath, countChanges, sortChanges } from '../domain/changeset';
import type { ApplyResult, Changeset, FileChange } from '../domain/changeset';
import { sha256 } from '../lib/sha256';
import type { PathRefusal, ResolvedPath } from './paths';
import {
  errorCode,
  isAbsent,
  isInside,
  lstatOrNull,
  READ_NO_FOLLOW,
  realPathSoFar,
  resolveInside,
} from './paths';

/** How many problems a refusal's message spells out; the rest are in `problems`. */
const PROBLEMS_IN_MESSAGE = 5;

/**
 * Apply found the changeset unsafe and wrote nothing. Retrying cannot help: the projects (or the changeset) must
 * change first, usually by re-running Execute.
 */
export class ChangesetRefusedError extends Error {
  readonly problems: string[];

  constructor(problems: readonly string[], changesetId?: string) {
    const shown = problems.slice(0, PROBLEMS_IN_MESSAGE).map((problem) => `\n  - ${problem}`);
    const more =
      problems.length > PROBLEMS_IN_MESSAGE
        ? `\n  ... and ${problems.length - PROBLEMS_IN_MESSAGE} more`
        : '';
    const which = changesetId === undefined ? 'the changeset' : `changeset ${changesetId}`;
    const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
    super(`Apply refused ${which}, nothing was written (${count}):${shown.join('')}${more}`);
    this.name = 'ChangesetRefusedError';
    this.problems = [...problems];
  }
}

/**
 * Every reason the changeset cannot be applied to the projects as they are now; empty when it can. Reads only, so
 * it is safe to call for a preview. Changes whose end state is already in place are not problems: that is how a
 * retried Apply finishes.
 */
export async function validateChangeset(changeset: Changeset): Promise<string[]> {
  return (await inspectChangeset(changeset)).problems;
}

/**
 * Writes the changeset, all or nothing as far as validation can tell: any problem anywhere refuses the whole
 * changeset before the first write. Each file is replaced atomically, so a crash leaves every file either old or
 * new, never torn, and re-running Apply completes the rest.
 */
export async function applyChangeset(changeset: Changeset, options: { at: string }): Promise<ApplyResult> {
  const inspection = await inspectChangeset(changeset);
  if (inspection.problems.length > 0) {
    throw new ChangesetRefusedError(inspection.problems, changeset.changesetId);
  }

  let alreadyApplied = 0;
  for (const change of sortChanges(changeset.changes)) {
    const realRoot = inspection.realRoots.get(change.project);
    if (realRoot === undefined) throw new Error(`internal: project ${q(change.project)} was not validated`);
    // Checked again right before writing: the window between validation and this write is where a link could be
    // planted or a file edited, and a later change must not be applied on top of that.
    const verdict = await inspectChange(change, realRoot);
    const intrusions = readOnlyIntrusions(change, verdict.locations, inspection.readOnlyRoots);
    if (verdict.status === 'problems' || intrusions.length > 0) {
      const problems = verdict.status === 'problems' ? [...verdict.problems, ...intrusions] : intrusions;
      throw new Error(
        `Apply stopped: the project changed while changeset ${changeset.changesetId} was being applied ` +
          `(earlier changes were written; a retried Apply finishes them or refuses): ${problems.join('; ')}`,
      );
    }
    if (verdict.status === 'applied') {
      alreadyApplied++;
      continue;
    }
    await perform(change, realRoot, verdict);
  }

  return {
    changesetId: changeset.changesetId,
    ...countChanges(changeset.changes),
    alreadyApplied,
    appliedAt: options.at,
  };
}

interface Inspection {
  problems: string[];
  /**
   * The real root (every link resolved) of each writable project that passed the root checks, by name:
   * containment is decided against it, never against the stored text.
   */
  realRoots: Map<string, string>;
  /** Where every read-only project of the changeset really is; nothing is written inside any of them. */
  readOnlyRoots: ReadOnlyRoot[];
}

interface ReadOnlyRoot {
  name: string;
  /** The real path of its root, as far as it exists (see realPathSoFar in ./paths). */
  realRoot: string;
}

async function inspectChangeset(changeset: Changeset): Promise<Inspection> {
  const problems: string[] = [];
  const realRoots = new Map<string, string>();
  const roots = new Map<string, Promise<{ realRoot: string } | { problem: string }>>();
  /**
   * Which change claimed each file, keyed by its name in the project and by its resolved location (which also
   * catches two names for one file, e.g. overlapping roots).
   */
  const claims = new Map<string, { index: number; label: string }>();
  const reported = new Set<string>();
  // Project roots may overlap (a read-only link inside a writable project, or two names for one directory), so
  // where a change lands is checked against every read-only root, not only against the change's own project.
  const readOnlyRoots: ReadOnlyRoot[] = [];
  for (const project of changeset.projects) {
    if (!project.readOnly || !path.isAbsolute(project.root)) continue;
    try {
      readOnlyRoots.push({ name: project.projectName, realRoot: await realPathSoFar(project.root) });
    } catch (error) {
      // Without its real place, no write can be shown to stay out of it.
      problems.push(
        `read-only project link ${q(project.projectName)}: its root ${q(project.root)} cannot be resolved ` +
          `(${errorCode(error) ?? errorMessage(error)}); Apply cannot tell whether a change lands inside it`,
      );
    }
  }

  const claim = (key: string, index: number, label: string): void => {
    const earlier = claims.get(key);
    if (earlier === undefined) claims.set(key, { index, label });
    else if (earlier.index !== index && !reported.has(`${earlier.index}:${index}`)) {
      reported.add(`${earlier.index}:${index}`);
      problems.push(`${label}: touches the same file as ${earlier.label}; a file may change only once`);
    }
  };

  for (const [index, change] of sortChanges(changeset.changes).entries()) {
    const label = describe(change);
    const shapeProblems = checkShape(change);
    for (const problem of shapeProblems) problems.push(`${label}: ${problem}`);

    for (const relative of touchedPaths(change)) claim(`${change.project}\0${relative}`, index, label);

    const project = changeset.projects.find((p) => p.projectName === change.project);
    if (project === undefined) {
      problems.push(`${label}: project ${q(change.project)} is not part of the changeset`);
      continue;
    }
    if (project.readOnly) {
      problems.push(
        `${label}: targets read-only project link ${q(project.projectName)}; Apply never writes to it`,
      );
      continue;
    }
    let root = roots.get(project.projectName);
    if (root === undefined) {
      root = resolveRoot(project.root);
      roots.set(project.projectName, root);
    }
    const resolved = await root;
    if ('problem' in resolved) {
      problems.push(`${label}: ${resolved.problem}`);
      continue;
    }
    realRoots.set(project.projectName, resolved.realRoot);
    if (shapeProblems.length > 0) continue;

    const verdict = await inspectChange(change, resolved.realRoot);
    for (const location of verdict.locations) claim(`\0${location.real}`, index, label);
    if (verdict.status === 'problems') {
      for (const problem of verdict.problems) problems.push(`${label}: ${problem}`);
    }
    for (const problem of readOnlyIntrusions(change, verdict.locations, readOnlyRoots)) {
      problems.push(`${label}: ${problem}`);
    }
  }
  return { problems, realRoots, readOnlyRoots };
}

/**
 * Why writing (or, for a MOVE's source, removing) these locations would change a read-only project: one line per
 * location and read-only root it lies in, naming both projects. Decided on real paths, so a directory link inside
 * the writable project that leads into the read-only one is caught too.
 */
function readOnlyIntrusions(
  change: FileChange,
  locations: readonly LocationPath[],
  readOnlyRoots: readonly ReadOnlyRoot[],
): string[] {
  const problems: string[] = [];
  for (const location of locations) {
    for (const readOnly of readOnlyRoots) {
      if (!isInside(readOnly.realRoot, location.real)) continue;
      problems.push(
        `${q(location.relative)} of project ${q(change.project)} lies inside read-only project link ` +
          `${q(readOnly.name)} (the project roots overlap); Apply never writes to it`,
      );
    }
  }
  return problems;
}

async function resolveRoot(root: string): Promise<{ realRoot: string } | { problem: string }> {
  if (!path.isAbsolute(root)) return { problem: `the project root ${q(root)} is not an absolute path` };
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch (error) {
    return {
      problem: `the project root ${q(root)} does not exist (${errorCode(error) ?? errorMessage(error)})`,
    };
  }
  const stats = await lstatOrNull(realRoot);
  if (stats === null || !stats.isDirectory()) {
    return { problem: `the project root ${q(root)} is not a directory` };
  }
  return { realRoot };
}

/** Whether the change is well formed on its own: paths safe as text and content matching its hash. */
function checkShape(change: FileChange): string[] {
  const problems: string[] = [];
  const pathProblem = checkRelativePath(change.path);
  if (pathProblem !== undefined) problems.push(pathProblem);
  if (change.operation === 'MOVE') {
    if (change.fromPath === null) problems.push('a MOVE without a source path (corrupt changeset)');
    else {
      const fromProblem = checkRelativePath(change.fromPath);
      if (fromProblem !== undefined) problems.push(`source: ${fromProblem}`);
      else if (change.fromPath === change.path) problems.push('a MOVE onto itself (corrupt changeset)');
    }
    if (change.afterHash !== change.beforeHash) {
      problems.push('a MOVE whose after-hash differs from its before-hash (corrupt changeset)');
    }
  } else if (change.fromPath !== null) {
    problems.push(`a ${change.operation} with a source path (corrupt changeset)`);
  }
  if (change.operation === 'CREATE' || change.operation === 'MODIFY') {
    if (!(change.afterContent instanceof Uint8Array) || change.afterHash === null) {
      problems.push(`a ${change.operation} without its new content and hash (corrupt changeset)`);
    } else if (sha256(change.afterContent) !== change.afterHash) {
      problems.push(
        `the new content hashes to ${short(sha256(change.afterContent))}, not to the recorded ` +
          `${short(change.afterHash)} (corrupt changeset)`,
      );
    }
  }
  if (change.operation !== 'CREATE' && change.beforeHash === null) {
    problems.push(`a ${change.operation} without the hash of the file it expects (corrupt changeset)`);
  }
  if (change.operation === 'DELETE' && change.afterHash !== null) {
    problems.push('a DELETE with an after-hash (corrupt changeset)');
  }
  if (!CHANGE_OPERATIONS.includes(change.operation)) {
    problems.push(`unknown operation ${q(String(change.operation))} (corrupt changeset)`);
  }
  return problems;
}

function touchedPaths(change: FileChange): string[] {
  return change.operation === 'MOVE' && change.fromPath !== null
    ? [change.fromPath, change.path]
    : [change.path];
}

/** Where a changeset path lands on disk (see resolveInside), under its name in the changeset for messages. */
type Location = ResolvedPath & { relative: string };

type FileState =
  | { kind: 'absent' }
  | { kind: 'file'; hash: string; mode: number }
  | { kind: 'link' }
  | { kind: 'other'; what: string };

/** A file the change writes or removes: its name in the project and its real path (as it will be). */
interface LocationPath {
  relative: string;
  real: string;
}

type ChangeVerdict =
  | { status: 'problems'; problems: string[]; locations: LocationPath[] }
  | { status: 'applied'; locations: LocationPath[] }
  | {
      status: 'apply';
      locations: LocationPath[];
      target: Location;
      targetState: FileState;
      source: Location | null;
    };

/** What the change finds on disk: to be written, already written, or why it must not be. */
async function inspectChange(change: FileChange, realRoot: string): Promise<ChangeVerdict> {
  try {
    const target = await locate(realRoot, change.path, false);
    if ('problem' in target) return { status: 'problems', problems: [target.problem], locations: [] };
    const targetState = await readState(target);
    const locations: LocationPath[] = [{ relative: target.relative, real: target.path }];

    let source: Location | null = null;
    let sourceState: FileState = { kind: 'absent' };
    if (change.operation === 'MOVE' && change.fromPath !== null) {
      const located = await locate(realRoot, change.fromPath, false);
      if ('problem' in located) return { status: 'problems', problems: [located.problem], locations };
      source = located;
      sourceState = await readState(source);
      locations.push({ relative: source.relative, real: source.path });
    }

    // A link where a change lands is refused for every operation. A changeset holds regular files only (Execute's
    // comparison leaves links out on both sides), so no change is ever about a link itself: one found here is not
    // what Execute saw, and writing (CREATE, MODIFY) would go through it, DELETE would remove it and MOVE carry it.
    const problems: string[] = [];
    for (const [state, location] of [
      [targetState, target],
      [sourceState, source],
    ] as const) {
      if (location === null) continue;
      if (state.kind === 'link') {
        problems.push(
          `${q(location.relative)} is a symbolic link; Apply never writes through, moves or replaces a link`,
        );
      } else if (state.kind === 'other') {
        problems.push(`${q(location.relative)} is ${state.what}, not a regular file`);
      }
    }
    if (problems.length > 0) return { status: 'problems', problems, locations };

    const holds = (state: FileState, hash: string | null): boolean =>
      state.kind === 'file' && hash !== null && state.hash === hash;
    const stale = (what: string, state: FileState, expected: string | null): string =>
      `${what} changed since Execute (expected sha256 ${short(expected)}, found ${
        state.kind === 'file' ? short(state.hash) : 'no file'
      }); re-run Execute`;

    switch (change.operation) {
      case 'CREATE':
        if (targetState.kind === 'absent') return { status: 'apply', locations, target, targetState, source };
        if (holds(targetState, change.afterHash)) return { status: 'applied', locations };
        problems.push(`${q(change.path)} already exists (created since Execute); re-run Execute`);
        break;
      case 'MODIFY':
        if (holds(targetState, change.afterHash)) return { status: 'applied', locations };
        if (holds(targetState, change.beforeHash)) {
          return { status: 'apply', locations, target, targetState, source };
        }
        problems.push(stale(q(change.path), targetState, change.beforeHash));
        break;
      case 'DELETE':
        if (targetState.kind === 'absent') return { status: 'applied', locations };
        if (holds(targetState, change.beforeHash)) {
          return { status: 'apply', locations, target, targetState, source };
        }
        problems.push(stale(q(change.path), targetState, change.beforeHash));
        break;
      case 'MOVE': {
        if (sourceState.kind === 'absent' && holds(targetState, change.afterHash)) {
          return { status: 'applied', locations };
        }
        if (!holds(sourceState, change.beforeHash)) {
          problems.push(stale(`the source ${q(change.fromPath ?? '')}`, sourceState, change.beforeHash));
        }
        if (targetState.kind !== 'absent') {
          problems.push(
            `the destination ${q(change.path)} already exists (created since Execute); re-run Execute`,
          );
        }
        if (problems.length === 0) return { status: 'apply', locations, target, targetState, source };
        break;
      }
    }
    return { status: 'problems', problems, locations };
  } catch (error) {
    return {
      status: 'problems',
      problems: [`could not inspect the file: ${errorMessage(error)}`],
      locations: [],
    };
  }
}

/**
 * Where `relative` lands under the real root. No symbolic link is followed on the way, not even one that stays in
 * the project: a link inside it may lead into `.git` (`hooks -> .git/hooks`) or make two names for one file, and a
 * changeset names every file by its own path. The last component is left for readState, which refuses a link
 * there. With `create`, missing directories are made on the way (see resolveInside).
 */
async function locate(
  realRoot: string,
  relative: string,
  create: boolean,
): Promise<Location | { problem: string }> {
  const located = await resolveInside(realRoot, relative, { follow: 'none', final: false, create });
  if ('refusal' in located) return { problem: refusalProblem(located.refusal, relative) };
  return { ...located, relative };
}

function refusalProblem(refusal: PathRefusal, relative: string): string {
  switch (refusal.kind) {
    case 'text':
      return refusal.reason;
    case 'link-nowhere':
      return `${q(refusal.at)} is a symbolic link that leads nowhere; Apply does not follow it`;
    case 'link-outside':
      return `${q(refusal.at)} is a symbolic link that resolves outside the project root; refused`;
    case 'link':
      return `${q(refusal.at)} is a symbolic link; Apply does not follow it`;
    case 'not-directory':
      return `${q(refusal.at)} is not a directory`;
    case 'outside':
      return `${q(relative)} resolves outside the project root; refused`;
  }
}

async function readState(location: Location): Promise<FileState> {
  if (location.missing) return { kind: 'absent' };
  const file = location.path;
  const stats = await lstatOrNull(file);
  if (stats === null) return { kind: 'absent' };
  if (stats.isSymbolicLink()) return { kind: 'link' };
  if (!stats.isFile()) return { kind: 'other', what: stats.isDirectory() ? 'a directory' : 'a special file' };
  let handle;
  try {
    handle = await open(file, READ_NO_FOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ELOOP') return { kind: 'link' };
    if (isAbsent(error)) return { kind: 'absent' };
    throw error;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) return { kind: 'other', what: 'a special file' };
    return { kind: 'file', hash: sha256(await handle.readFile()), mode: opened.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

async function perform(
  change: FileChange,
  realRoot: string,
  verdict: Extract<ChangeVerdict, { status: 'apply' }>,
): Promise<void> {
  switch (change.operation) {
    case 'CREATE':
    case 'MODIFY': {
      const content = change.afterContent;
      if (content === null) throw new Error(`internal: ${describe(change)} has no content`);
      const mode = verdict.targetState.kind === 'file' ? verdict.targetState.mode : null;
      const parent = verdict.target.missing
        ? await createParent(realRoot, change.path)
        : verdict.target.parent;
      await writeAtomically(parent, verdict.target.basename, content, mode);
      return;
    }
    case 'DELETE':
      await unlink(verdict.target.path);
      await syncDirectory(verdict.target.parent);
      return;
    case 'MOVE': {
      const source = verdict.source;
      if (source === null) throw new Error(`internal: ${describe(change)} has no source`);
      const parent = verdict.target.missing
        ? await createParent(realRoot, change.path)
        : verdict.target.parent;
      const destination = path.join(parent, verdict.target.basename);
      // rename() replaces silently; the destination was absent when checked, and must still be.
      if ((await lstatOrNull(destination)) !== null) {
        throw new Error(`Apply stopped: ${describe(change)}: the destination appeared while applying`);
      }
      await rename(source.path, destination);
      await syncDirectory(parent);
      if (source.parent !== parent) await syncDirectory(source.parent);
      return;
    }
  }
}

async function createParent(realRoot: string, relative: string): Promise<string> {
  const located = await locate(realRoot, relative, true);
  if ('problem' in located) throw new Error(`Apply stopped: ${located.problem}`);
  return located.parent;
}

/**
 * Replaces (or creates) a file so that readers, and a crash, see either the old bytes or the new, never a torn
 * file: write a temp file beside it, fsync, rename over. The temp file is opened exclusively so a link planted
 * at its name is refused, and it is removed on any failure. Renaming also means a hard link elsewhere keeps the
 * old bytes instead of being written through.
 */
async function writeAtomically(
  directory: string,
  basename: string,
  content: Uint8Array,
  mode: number | null,
): Promise<void> {
  const temp = path.join(
    directory,
    `.${basename.slice(0, 100)}.cleveragents-${randomBytes(6).toString('hex')}.tmp`,
  );
  // Outside the cleanup below: if the name is taken, the file there is not ours to remove. A replacement starts
  // private and gets the old file's mode once written.
  const handle = await open(temp, 'wx', mode === null ? 0o666 : 0o600);
  try {
    try {
      await handle.writeFile(content);
      // An existing file's mode (say 0o755) must survive the edit unchanged, whatever the umask.
      if (mode !== null) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path.join(directory, basename));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(directory);
}

/** Makes a rename or unlink durable. Some platforms cannot fsync a directory; the change itself is done anyway. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
  } catch {
    return;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!['EINVAL', 'EISDIR', 'EPERM', 'EBADF', 'ENOTSUP'].includes(errorCode(error) ?? '')) throw error;
  } finally {
    await handle.close();
  }
}

function describe(change: FileChange): string {
  const where =
    change.operation === 'MOVE' ? `${q(change.fromPath ?? '')} -> ${q(change.path)}` : q(change.path);
  return `${change.project}: ${change.operation} ${where}`;
}

/** Quotes a name as JSON does, so a newline or control character in it cannot break a one-line problem. */
function q(text: string): string {
  return JSON.stringify(text);
}

function short(hash: string | null): string {
  return hash === null ? 'none' : `${hash.slice(0, 12)}…`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
