/**
 * Apply: writes a changeset into the real projects. This is the one place the engine changes a user's files, so it
 * refuses rather than guesses: the whole changeset is checked before the first byte is written, nothing is written
 * outside a project root, through a symbolic link (even one staying inside the project) or into git's own directory,
 * and a file that moved on since Execute is never overwritten.
 *
 * Writing is two stages, so that "nothing was written" holds for every failure that can be foreseen. Stage 1
 * checks each change again and prepares it without changing what anyone sees: it makes the missing directories
 * and writes every new file's bytes to a temp file beside it (fsynced), and puts a temp file in every directory a
 * DELETE or MOVE will change, which proves the directory takes new entries (not read-only, not full) and, for a
 * MOVE, that a rename between its two directories works. Any failure there (a full disk, a name too long for the
 * filesystem, a directory that changed) removes every temp file and directory stage 1 made and throws. Stage 2
 * only renames and unlinks, in directories held open since stage 1 (see HeldDirectory in ./paths): what can
 * still fail there is a crash or the project changing under Apply, and a retried Apply recognises what it already
 * wrote, removes the temp files a crashed attempt left, and finishes the rest.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, rmdir, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { CHANGE_OPERATIONS, checkRelativePath, countChanges, sortChanges } from '../domain/changeset';
import type { ApplyResult, Changeset, FileChange } from '../domain/changeset';
import { sha256 } from '../lib/sha256';
import type { HeldDirectory, PathRefusal, ResolvedPath } from './paths';
import {
  DirectoryChangedError,
  errorCode,
  holdDirectory,
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
 * The calls with which Apply changes the disk, and only those (it reads through node:fs directly). Tests pass their
 * own to make one fail the way a full disk or a crash would; everyone else gets NODE_FS.
 */
export interface ApplyFileSystem {
  /** Creates a temp file (the flags include O_CREAT | O_EXCL | O_NOFOLLOW). */
  open(file: string, flags: number, mode: number): Promise<TempFile>;
  mkdir(directory: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  rmdir(directory: string): Promise<void>;
}

/** What Apply does with a temp file it opened. */
export type TempFile = Pick<FileHandle, 'writeFile' | 'chmod' | 'sync' | 'close'>;

export const NODE_FS: ApplyFileSystem = {
  open: (file, flags, mode) => open(file, flags, mode),
  mkdir: async (directory) => {
    await mkdir(directory);
  },
  rename,
  unlink,
  rmdir: (directory) => rmdir(directory),
};

/**
 * Writes the changeset, all or nothing: any problem anywhere refuses the whole changeset before the first write,
 * and any failure while preparing it (stage 1) leaves the projects as they were. Each file is replaced by a rename,
 * so a crash in stage 2 leaves every file either old or new, never torn, and re-running Apply completes the rest.
 */
export async function applyChangeset(
  changeset: Changeset,
  options: { at: string; fs?: ApplyFileSystem },
): Promise<ApplyResult> {
  const inspection = await inspectChangeset(changeset);
  if (inspection.problems.length > 0) {
    throw new ChangesetRefusedError(inspection.problems, changeset.changesetId);
  }
  const writer = new Writer(changeset, inspection, options.fs ?? NODE_FS);
  let alreadyApplied: number;
  try {
    alreadyApplied = await writer.write();
  } finally {
    await writer.close();
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
  // A retried Apply removes files by this name as its own leftovers; a change must not be one of them.
  for (const relative of touchedPaths(change)) {
    if (TEMP_FILE.test(path.posix.basename(relative))) {
      problems.push(`${q(relative)} is named like one of Apply's temp files; Apply never writes such a name`);
    }
  }
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
  | { kind: 'file'; hash: string; mode: number; identity: string }
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
      /** What is at the target now, and at a MOVE's source (absent for the other operations). */
      targetState: FileState;
      sourceState: FileState;
    };

/** What the change finds on disk: to be written, already written, or why it must not be. */
async function inspectChange(change: FileChange, realRoot: string): Promise<ChangeVerdict> {
  try {
    const target = await locate(realRoot, change.path);
    if ('problem' in target) return { status: 'problems', problems: [target.problem], locations: [] };
    const targetState = await readState(target);
    const locations: LocationPath[] = [{ relative: target.relative, real: target.path }];

    let source: Location | null = null;
    let sourceState: FileState = { kind: 'absent' };
    if (change.operation === 'MOVE' && change.fromPath !== null) {
      const located = await locate(realRoot, change.fromPath);
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
        if (targetState.kind === 'absent') return { status: 'apply', locations, targetState, sourceState };
        if (holds(targetState, change.afterHash)) return { status: 'applied', locations };
        problems.push(`${q(change.path)} already exists (created since Execute); re-run Execute`);
        break;
      case 'MODIFY':
        if (holds(targetState, change.afterHash)) return { status: 'applied', locations };
        if (holds(targetState, change.beforeHash)) {
          return { status: 'apply', locations, targetState, sourceState };
        }
        problems.push(stale(q(change.path), targetState, change.beforeHash));
        break;
      case 'DELETE':
        if (targetState.kind === 'absent') return { status: 'applied', locations };
        if (holds(targetState, change.beforeHash)) {
          return { status: 'apply', locations, targetState, sourceState };
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
        if (problems.length === 0) return { status: 'apply', locations, targetState, sourceState };
        break;
      }
    }
    return { status: 'problems', problems, locations };
  } catch (error) {
    const problem =
      errorCode(error) === 'ENAMETOOLONG'
        ? nameTooLong(change)
        : `could not inspect the file: ${errorMessage(error)}`;
    return { status: 'problems', problems: [problem], locations: [] };
  }
}

function nameTooLong(change: FileChange): string {
  return `a name in ${q(change.path)} is too long for this filesystem (ENAMETOOLONG)`;
}

/**
 * Where `relative` lands under the real root. No symbolic link is followed on the way, not even one that stays in
 * the project: a link inside it may lead into `.git` (`hooks -> .git/hooks`) or make two names for one file, and a
 * changeset names every file by its own path. The last component is left for readState, which refuses a link
 * there. Since no link is followed, the location is the root joined with the path, as written.
 */
async function locate(realRoot: string, relative: string): Promise<Location | { problem: string }> {
  const located = await resolveInside(realRoot, relative, { follow: 'none', final: false });
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
    // Taken from the descriptor before reading: stage 2 compares it with what is at the name then, so an edit or a
    // swap after this read, even one leaving the same bytes, stops Apply instead of being written over.
    const opened = await handle.stat({ bigint: true });
    if (!opened.isFile()) return { kind: 'other', what: 'a special file' };
    return {
      kind: 'file',
      hash: sha256(await handle.readFile()),
      mode: Number(opened.mode & 0o7777n),
      identity: identityOf(opened),
    };
  } finally {
    await handle.close();
  }
}

/**
 * Apply's temp files: `.ca-`, 24 hex digits, `.tmp`; 36 bytes whatever the target's name (one derived from it would
 * push a valid name near NAME_MAX, 255 bytes, over it). The digits are the changeset's tag, so a retried Apply
 * knows the temp files a crashed attempt of the same changeset left and removes those only; a nonce of this
 * attempt, so an attempt that was only taken for dead and wakes up later undoes its own temp files and not the
 * retry's; and the change's slot, unique within the attempt.
 */
const TEMP_FILE = /^\.ca-[0-9a-f]{24}\.tmp$/;

/** A new file only, and never through a link planted at its name. */
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

const NOTHING = new Uint8Array(0);

/** What a file is, as far as a change is concerned: the same path holding the same inode, unchanged since. */
function identityOf(stats: BigIntStats): string {
  return [stats.dev, stats.ino, stats.size, stats.mtimeNs, stats.ctimeNs].join(':');
}

/** Stage 1's product for one change: everything stage 2 needs to finish it with renames and unlinks. */
type Prepared =
  | {
      kind: 'replace';
      change: FileChange;
      dir: HeldDirectory;
      name: string;
      /** What is at the name now: nothing (CREATE) or the file the change expects (MODIFY). */
      before: FileState;
      temp: TempEntry;
    }
  | {
      kind: 'delete';
      change: FileChange;
      dir: HeldDirectory;
      name: string;
      before: FileState;
      probe: TempEntry;
    }
  | {
      kind: 'move';
      change: FileChange;
      from: HeldDirectory;
      fromName: string;
      before: FileState;
      to: HeldDirectory;
      toName: string;
      probe: TempEntry;
    };

interface TempEntry {
  dir: HeldDirectory;
  name: string;
}

/** A refusal found while writing: the project changed since validation, or the filesystem cannot hold a name. */
class WriteRefusal extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(problems.join('; '));
    this.problems = problems;
  }
}

/**
 * One Apply's writing: the two stages, what stage 1 made (to undo it), and the directories it holds open (one
 * descriptor per directory the changeset touches, until Apply ends).
 *
 * What a concurrent writer can still do, since Node has no openat(), renameat2() or compare-and-swap on a name:
 * - between the check of a name (ensureState) and the rename or unlink that follows, the name itself can change:
 *   a file created at a CREATE's target is replaced, and a MODIFY's or DELETE's file edited or swapped in that
 *   instant is replaced or removed (an edit before the check is caught, by device, inode, size and times; one
 *   within the same nanosecond timestamp and size is not);
 * - by descriptor (Linux), a directory moved away after its verify() still receives the call, wherever it went:
 *   the write lands in the directory Apply checked, never through a link planted at its old path;
 * - by path (no /proc), a link swapped in for a directory on the way between verify() and the call redirects
 *   it, and a temp file in a directory moved away cannot be found to be removed (the error names it).
 */
class Writer {
  private readonly fs: ApplyFileSystem;
  private readonly tag: string;
  private readonly nonce: string;
  /** Every directory Apply acts in, held open by its real path from first use until the end. */
  private readonly held = new Map<string, Promise<HeldDirectory>>();
  /** The directories stage 1 made, in order, each as an entry of its parent. */
  private readonly made: TempEntry[] = [];
  /** The temp files in place now. */
  private readonly temps = new Set<TempEntry>();
  /** Renames and unlinks done in stage 2: until the first, nothing was written. */
  private written = 0;

  constructor(
    private readonly changeset: Changeset,
    private readonly inspection: Inspection,
    fs: ApplyFileSystem,
  ) {
    this.fs = fs;
    this.tag = sha256(changeset.changesetId).slice(0, 8);
    this.nonce = randomBytes(4).toString('hex');
  }

  /** Both stages; returns how many changes were found already applied. */
  async write(): Promise<number> {
    const changes = sortChanges(this.changeset.changes);
    const prepared: Prepared[] = [];
    let alreadyApplied = 0;
    try {
      await this.removeLeftovers(changes);
      for (const [index, change] of changes.entries()) {
        const step = await this.prepare(index, change);
        if (step === null) alreadyApplied++;
        else prepared.push(step);
      }
      for (const step of prepared) await this.commit(step);
    } catch (error) {
      throw await this.abort(error, prepared.length);
    }
    return alreadyApplied;
  }

  async close(): Promise<void> {
    const held = await Promise.allSettled(this.held.values());
    for (const result of held) if (result.status === 'fulfilled') await result.value.close();
  }

  /**
   * Removes what a crashed attempt of this changeset left in the directories it touches: temp files with this
   * changeset's tag and nothing else. The directories it made stay (they may hold someone's files by now).
   */
  private async removeLeftovers(changes: readonly FileChange[]): Promise<void> {
    const leftover = new RegExp(`^\\.ca-${this.tag}[0-9a-f]{16}\\.tmp$`);
    const directories = new Set<string>();
    for (const change of changes) {
      const realRoot = this.realRoot(change);
      for (const relative of touchedPaths(change)) {
        const located = await resolveInside(realRoot, relative, { follow: 'none', final: false });
        if (!('refusal' in located) && !located.missing) directories.add(located.parent);
      }
    }
    for (const directory of directories) {
      const dir = await this.hold(directory);
      for (const name of await dir.list()) {
        if (!leftover.test(name)) continue;
        await dir.verify();
        if ((await lstatOrNull(dir.entry(name)))?.isFile() === true) await this.fs.unlink(dir.entry(name));
      }
    }
  }

  /** Stage 1 for one change: checked again, then its directories and temp files made; null if already applied. */
  private async prepare(index: number, change: FileChange): Promise<Prepared | null> {
    const label = describe(change);
    const realRoot = this.realRoot(change);
    // Validation again, right before this change's first write: time has passed since, and earlier changes of the
    // changeset were prepared meanwhile.
    const verdict = await inspectChange(change, realRoot);
    const intrusions = readOnlyIntrusions(change, verdict.locations, this.inspection.readOnlyRoots);
    if (verdict.status === 'problems' || intrusions.length > 0) {
      const problems = verdict.status === 'problems' ? [...verdict.problems, ...intrusions] : intrusions;
      throw new WriteRefusal(problems.map((problem) => `${label}: ${problem}`));
    }
    if (verdict.status === 'applied') return null;
    const { targetState, sourceState } = verdict;
    return this.forChange(change, async () => {
      const [dirParts, name] = split(change.path);
      switch (change.operation) {
        case 'CREATE':
        case 'MODIFY': {
          const content = change.afterContent;
          if (content === null) throw new Error(`internal: ${label} has no content`);
          const dir = await this.directory(realRoot, dirParts, true);
          await this.ensureState(dir, name, targetState, change.path);
          const mode = targetState.kind === 'file' ? targetState.mode : null;
          const temp = await this.writeTemp(dir, index, content, mode);
          return { kind: 'replace', change, dir, name, before: targetState, temp };
        }
        case 'DELETE': {
          const dir = await this.directory(realRoot, dirParts, false);
          await this.ensureState(dir, name, targetState, change.path);
          const probe = await this.writeTemp(dir, index, NOTHING, 0o600);
          return { kind: 'delete', change, dir, name, before: targetState, probe };
        }
        case 'MOVE': {
          if (change.fromPath === null) throw new Error(`internal: ${label} has no source`);
          const [fromParts, fromName] = split(change.fromPath);
          const from = await this.directory(realRoot, fromParts, false);
          await this.ensureState(from, fromName, sourceState, change.fromPath);
          const to = await this.directory(realRoot, dirParts, true);
          await this.ensureState(to, name, { kind: 'absent' }, change.path);
          // Made in the source's directory and renamed into the destination's: the very rename stage 2 does
          // (both directories writable, one filesystem), tried on a file of our own.
          const probe = await this.writeTemp(from, index, NOTHING, 0o600);
          if (to !== from) {
            await from.verify();
            await to.verify();
            await this.fs.rename(from.entry(probe.name), to.entry(probe.name));
            probe.dir = to;
          }
          const before = sourceState;
          return { kind: 'move', change, from, fromName, before, to, toName: name, probe };
        }
      }
    });
  }

  /** Stage 2 for one change: only renames and unlinks, each after checking its name holds what stage 1 saw. */
  private async commit(step: Prepared): Promise<void> {
    await this.forChange(step.change, async () => {
      switch (step.kind) {
        case 'replace':
          await this.ensureState(step.dir, step.name, step.before, step.change.path);
          // rename() replaces whatever is at the name: checked just above, and the window until the call is the
          // one Node leaves (no renameat2 with RENAME_NOREPLACE).
          await this.fs.rename(step.dir.entry(step.temp.name), step.dir.entry(step.name));
          this.written++;
          this.temps.delete(step.temp);
          await step.dir.sync();
          return;
        case 'delete':
          await this.ensureState(step.dir, step.name, step.before, step.change.path);
          await this.fs.unlink(step.dir.entry(step.name));
          this.written++;
          await this.removeTemp(step.probe);
          await step.dir.sync();
          return;
        case 'move':
          await this.ensureState(step.to, step.toName, { kind: 'absent' }, step.change.path);
          await this.ensureState(step.from, step.fromName, step.before, step.change.fromPath ?? '');
          await this.fs.rename(step.from.entry(step.fromName), step.to.entry(step.toName));
          this.written++;
          await this.removeTemp(step.probe);
          await step.to.sync();
          if (step.from !== step.to) await step.from.sync();
          return;
      }
    });
  }

  /**
   * The directory `parts` below the root, held open; with `create`, missing ones are made one at a time (each
   * recorded for the rollback). Every component must be a real directory: a link, even one staying inside the
   * project, or a file there means the project changed since validation.
   */
  private async directory(
    realRoot: string,
    parts: readonly string[],
    create: boolean,
  ): Promise<HeldDirectory> {
    let dir = await this.hold(realRoot);
    for (const part of parts) {
      const child = path.join(dir.path, part);
      const known = this.held.get(child);
      if (known !== undefined) {
        dir = await known;
        continue;
      }
      await dir.verify();
      let stats = await lstatOrNull(dir.entry(part));
      if (stats === null && create) {
        await this.fs.mkdir(dir.entry(part));
        this.made.push({ dir, name: part });
        stats = await lstat(dir.entry(part));
      }
      if (stats === null) throw new DirectoryChangedError(child, 'it is gone');
      if (stats.isSymbolicLink()) throw new DirectoryChangedError(child, 'a symbolic link is there now');
      if (!stats.isDirectory()) throw new DirectoryChangedError(child, 'it is not a directory now');
      dir = await this.hold(child, dir);
    }
    return dir;
  }

  private hold(realPath: string, from?: HeldDirectory): Promise<HeldDirectory> {
    let held = this.held.get(realPath);
    if (held === undefined) {
      held = holdDirectory(realPath, from);
      this.held.set(realPath, held);
    }
    return held;
  }

  /** Refuses unless `name` in `dir` is still what `state` says: absent, or the very file that was hashed. */
  private async ensureState(
    dir: HeldDirectory,
    name: string,
    state: FileState,
    relative: string,
  ): Promise<void> {
    await dir.verify();
    let stats: BigIntStats | null;
    try {
      stats = await lstat(dir.entry(name), { bigint: true });
    } catch (error) {
      if (!isAbsent(error)) throw error;
      stats = null;
    }
    if (state.kind === 'absent' && stats !== null) {
      throw new WriteRefusal([`${q(relative)} appeared while Apply ran; re-run Execute`]);
    }
    if (
      state.kind === 'file' &&
      (stats === null || !stats.isFile() || identityOf(stats) !== state.identity)
    ) {
      throw new WriteRefusal([`${q(relative)} changed while Apply ran; re-run Execute`]);
    }
  }

  /**
   * Writes `content` to a new temp file in `dir` and fsyncs it. A replacement starts private and gets the old file's
   * mode once written; a new file gets the default mode (through the umask).
   */
  private async writeTemp(
    dir: HeldDirectory,
    index: number,
    content: Uint8Array,
    mode: number | null,
  ): Promise<TempEntry> {
    // One temp file per change (its bytes, or its probe), so the change's index is a unique slot.
    const name = `.ca-${this.tag}${this.nonce}${index.toString(16).padStart(8, '0')}.tmp`;
    await dir.verify();
    const file = await this.fs.open(dir.entry(name), TEMP_FLAGS, mode === null ? 0o666 : 0o600);
    const temp = { dir, name };
    this.temps.add(temp);
    try {
      await file.writeFile(content);
      // An existing file's mode (say 0o755) must survive the edit unchanged, whatever the umask.
      if (mode !== null) await file.chmod(mode);
      await file.sync();
    } finally {
      await file.close();
    }
    return temp;
  }

  private async removeTemp(temp: TempEntry): Promise<void> {
    await this.fs.unlink(temp.dir.entry(temp.name));
    this.temps.delete(temp);
  }

  /**
   * Undoes what can be undone after a failure and returns the error to throw. Temp files are removed through the
   * directory they were made in, wherever it is now (by descriptor), and the directories stage 1 made are removed
   * when empty; one holding a written file (or anyone else's) stays.
   */
  private async abort(error: unknown, total: number): Promise<Error> {
    const left: string[] = [];
    for (const temp of [...this.temps].reverse()) {
      try {
        await this.fs.unlink(temp.dir.entry(temp.name));
      } catch (failure) {
        if (!isAbsent(failure)) {
          left.push(`${path.join(temp.dir.path, temp.name)} (${describeError(failure)})`);
        }
      }
    }
    this.temps.clear();
    for (const made of [...this.made].reverse()) {
      try {
        await this.fs.rmdir(made.dir.entry(made.name));
      } catch (failure) {
        const code = errorCode(failure);
        if (isAbsent(failure) || (this.written > 0 && (code === 'ENOTEMPTY' || code === 'EEXIST'))) continue;
        left.push(`${path.join(made.dir.path, made.name)} (${describeError(failure)})`);
      }
    }
    const leftBehind =
      left.length === 0 ? [] : [`Apply could not remove what it made, remove it by hand: ${left.join(', ')}`];
    const id = this.changeset.changesetId;
    if (this.written > 0) {
      return new Error(
        `Apply stopped after ${this.written} of ${total} write(s) of changeset ${id}; the rest were not written ` +
          `(a retried Apply finishes them or refuses): ${errorMessage(error)}` +
          leftBehind.map((note) => `; ${note}`).join(''),
        { cause: error },
      );
    }
    if (error instanceof WriteRefusal)
      return new ChangesetRefusedError([...error.problems, ...leftBehind], id);
    return new Error(
      `Apply wrote nothing of changeset ${id} (every temp file and directory it made is removed): ` +
        `${errorMessage(error)}` +
        leftBehind.map((note) => `; ${note}`).join(''),
      { cause: error },
    );
  }

  /** Runs one change's part of a stage, wording its failures with the change. */
  private async forChange<T>(change: FileChange, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const label = describe(change);
      if (error instanceof WriteRefusal) throw new WriteRefusal(error.problems.map((p) => `${label}: ${p}`));
      if (error instanceof DirectoryChangedError) {
        throw new WriteRefusal([
          `${label}: ${error.message}; Apply does not follow a link or a moved directory`,
        ]);
      }
      if (errorCode(error) === 'ENAMETOOLONG') throw new WriteRefusal([`${label}: ${nameTooLong(change)}`]);
      if (errorCode(error) === 'EXDEV') {
        throw new WriteRefusal([
          `${label}: the source and the destination are on different filesystems; a MOVE cannot cross them`,
        ]);
      }
      throw new Error(`${label}: ${errorMessage(error)}`, { cause: error });
    }
  }

  private realRoot(change: FileChange): string {
    const realRoot = this.inspection.realRoots.get(change.project);
    if (realRoot === undefined) throw new Error(`internal: project ${q(change.project)} was not validated`);
    return realRoot;
  }
}

/** A relative path's directory components and its last one. */
function split(relative: string): [string[], string] {
  const parts = relative.split('/');
  const name = parts.pop() ?? relative;
  return [parts, name];
}

function describeError(error: unknown): string {
  return errorCode(error) ?? errorMessage(error);
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
