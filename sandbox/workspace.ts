import { createWriteStream } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { checkRelativePath, type FileChange } from '../domain/changeset';
import { ignoreList, isIgnored, VCS_DIR, type IgnoreList } from '../domain/ignore';
import type { LimitBreach, SizedChange } from '../domain/limits';
import { ChangesetTally, keepsOldContent } from '../domain/limits';
import { sha256, sha256Stream } from '../lib/sha256';
import { errorCode, isInside, READ_NO_FOLLOW, realPathSoFar, resolveInside } from './paths';

/**
 * Execute works on a copy of each writable project, and the changeset is what the run changed in that copy: the
 * copy as Execute left it against the project as it was copied (the baseline), never against the project as it is
 * afterwards. The project stays untouched until Apply, and a user may keep editing it meanwhile: diffing against
 * its later state would turn those edits into changes that revert them.
 *
 * `.git` (directory, or the file a worktree or submodule has instead) is never copied nor compared: VCS metadata
 * is not part of a changeset, and an actor must not be able to rewrite history through one. The rest of the
 * engine's ignore list and the action's (domain/ignore.ts) is copied, so a `run` step finds node_modules and its
 * build caches, but never compared: what a step does there stays in the sandbox.
 */

/**
 * Why a project file can no longer be read as the file Execute copied: it is gone, no longer a plain file, or no
 * longer readable. Only `beforeContent` (shown in a diff) depends on it, so none of these fails the comparison.
 */
const UNREADABLE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM']);

/**
 * What Execute saw of a project: every regular file createSandbox copied and does not ignore, by its POSIX path
 * relative to the project root, with the SHA-256 (lowercase hex) of the bytes copied. Hashes only, not contents:
 * the sandbox holds the bytes until it is changed, and a project can be large. computeChanges diffs the sandbox
 * against this, so a change is only what Execute did, and its before-hash is what Execute started from: Apply then
 * refuses a file the user changed since the copy instead of overwriting it.
 */
export type Baseline = ReadonlyMap<string, string>;

/**
 * Copies the project at `root` into `dest` and returns the Baseline of what was copied, leaving out of it what
 * `ignore` ignores (computeChanges must be given the same list). Whatever is at `dest` is removed first: an
 * activity retried after a crash mid-copy must end with the same sandbox as a first run, not with leftovers.
 * `dest` is the engine's own directory; it is refused only when removing or filling it would touch the project
 * itself.
 */
export async function createSandbox(
  root: string,
  dest: string,
  ignore: IgnoreList = ignoreList(),
): Promise<Baseline> {
  const stat = await fs.stat(root);
  if (!stat.isDirectory()) throw new Error(`The project root ${root} is not a directory`);
  const realRoot = await fs.realpath(root);
  const realDest = await realPathSoFar(dest);
  if (isInside(realDest, realRoot)) {
    throw new Error(
      `The sandbox ${dest} contains the project ${root}: recreating it would delete the project`,
    );
  }
  if (isInside(realRoot, realDest)) {
    throw new Error(`The sandbox ${dest} is inside the project ${root}: it would copy itself`);
  }
  await removeSandbox(dest);
  await fs.mkdir(dest, { recursive: true });
  const baseline = new Map<string, string>();
  await copyTree(root, dest, '', baseline, ignore, realRoot);
  return baseline;
}

/**
 * Directories are created with the default mode rather than the project's: a read-only directory copied as such
 * could be neither filled here nor removed by removeSandbox. Records each copied file in `baseline` under
 * `relative` (its POSIX path from the project root, '' for the root itself) unless `ignore` leaves it out; null
 * for `ignore` records nothing (a directory already ignored). Only real directories are descended into, so
 * `source` is `realRoot` joined with `relative`.
 */
async function copyTree(
  source: string,
  target: string,
  relative: string,
  baseline: Map<string, string>,
  ignore: IgnoreList | null,
  realRoot: string,
): Promise<void> {
  for (const entry of await fs.readdir(source, { withFileTypes: true })) {
    if (entry.name === VCS_DIR) continue;
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    const childRelative = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) {
      await fs.mkdir(to);
      const ignored = ignore === null || ignore.directory(childRelative);
      await copyTree(from, to, childRelative, baseline, ignored ? null : ignore, realRoot);
    } else if (entry.isFile()) {
      const hash = await copyFile(from, to);
      if (hash !== null && ignore !== null && !ignore.file(childRelative)) baseline.set(childRelative, hash);
    } else if (entry.isSymbolicLink()) {
      // Never the target's content: a link out of the project must not bring outside files into the copy.
      const text = await sandboxLinkText(from, path.join(realRoot, relative), realRoot);
      if (text !== null) await fs.symlink(text, to);
    }
    // Sockets, FIFOs and devices are live objects, not content: there is nothing to copy.
  }
}

/** Why a link's target cannot be resolved: it leads nowhere, loops, or passes a directory that cannot be read. */
const UNRESOLVABLE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES']);

/**
 * What the project's link `link` (in the real directory `realDir`) becomes in the sandbox, so that it leads to the
 * sandbox's copy of what it led to in the project, and never out: the project itself must not change before Apply,
 * and a command following a link to an absolute path inside the project would write the project. A link leading
 * inside the project (resolved as the kernel would, through every link on the way) is kept as written when its
 * text is relative, and becomes the relative link to the same place when it is absolute. A link leading outside
 * the project is left out of the copy (null). A link that resolves nowhere is judged by its text alone.
 */
async function sandboxLinkText(link: string, realDir: string, realRoot: string): Promise<string | null> {
  const text = await fs.readlink(link);
  let target: string;
  try {
    target = await fs.realpath(link);
  } catch (error) {
    if (!UNRESOLVABLE.has(errorCode(error) ?? '')) throw error;
    target = path.resolve(realDir, text);
  }
  if (!isInside(realRoot, target)) return null;
  return path.isAbsolute(text) ? path.relative(realDir, target) || '.' : text;
}

/**
 * A file no larger than this is copied in one read and one write; a larger one is streamed. Most of a project is
 * small files, and a stream per file costs several times the copy itself.
 */
const ONE_READ_COPY_BYTES = 1024 * 1024;

/**
 * Copies one regular file with its permission bits and returns the SHA-256 of the bytes written, hashed as they
 * are copied: the project may be edited during the copy, and the baseline must describe the copy, not a later
 * read of the project. Null (nothing copied) when `from` turned out not to be a regular file.
 */
async function copyFile(from: string, to: string): Promise<string | null> {
  const source = await fs.open(from, READ_NO_FOLLOW);
  try {
    const stats = await source.stat();
    if (!stats.isFile()) return null;
    let hash: string;
    if (stats.size <= ONE_READ_COPY_BYTES) {
      // The bytes read are the bytes written and hashed, whatever the file became since the stat.
      const bytes = await source.readFile();
      await fs.writeFile(to, bytes, { flag: 'wx' });
      hash = sha256(bytes);
    } else {
      const stream = sha256Stream();
      await pipeline(
        source.createReadStream({ autoClose: false }),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            stream.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(to, { flags: 'wx' }),
      );
      hash = stream.digest('hex');
    }
    await fs.chmod(to, stats.mode & 0o777);
    return hash;
  } finally {
    await source.close();
  }
}

/** rm -rf: a sandbox already gone (a retried cleanup) is not an error. */
export async function removeSandbox(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
}

/** A file of the baseline: only its hash is known. */
interface BaselineFile {
  path: string;
  hash: string;
}

/** A file of the sandbox as Execute left it, measured (hash and size). */
interface SandboxFile {
  path: string;
  absolute: string;
  hash: string;
  size: number;
  /** Its bytes as hashed, when they were read in one piece and kept; null: read again when needed. */
  content: Uint8Array | null;
}

/** What computeChanges leaves out and how much it may keep. */
export interface CompareOptions {
  /** The list createSandbox was given. Default: the engine's own. */
  ignore?: IgnoreList;
  /** Counts every project of one changeset against its limits. Default: a fresh tally, the default limits. */
  tally?: ChangesetTally;
}

/**
 * The steps did what they were told, but their result cannot become a changeset: the plan's failure, not the
 * worker's (a retry would find the same), and nothing of it is kept. `hint` says what a person can do about it.
 */
export class UnrecordableChangesetError extends Error {
  override name = 'UnrecordableChangesetError';

  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** A changeset over one of its limits (domain/limits.ts). */
export class ChangesetTooLargeError extends UnrecordableChangesetError {
  override name = 'ChangesetTooLargeError';

  constructor(readonly breach: LimitBreach) {
    super(
      breach.message,
      "Have the steps change less, or leave such files out with the action's `execution.ignore` and start a new plan.",
    );
  }
}

/** A change found, before its contents are read. */
interface Planned {
  change: Omit<FileChange, 'beforeContent' | 'afterContent'>;
  /** Where its new content is read from: null for DELETE and MOVE. */
  source: SandboxFile | null;
  /** The size of the old content kept for a diff (see keepsOldContent); null: none kept. */
  keepOld: number | null;
}

/**
 * The changes Execute made in `sandbox`, as changeset operations of `project`: the sandbox against `baseline`
 * (what createSandbox copied from `root`), not against the project as it is now. A file the user added, edited or
 * removed in the project while Execute ran, and that the sandbox left alone, is therefore no change: diffing
 * against the project now would record a change reverting the user's edit. A change to a file the sandbox did
 * touch keeps the baseline hash as its before-hash, so Apply refuses it if the project moved on since the copy.
 *
 * `root` is only read for `beforeContent`, the old bytes kept to show a diff: the project's current bytes when
 * they still hash to the baseline, null otherwise (the bytes Execute saw are gone, and showing others as "before"
 * would be wrong). It is read like Apply writes it, through no link leading out of the project.
 *
 * Only regular files count: symlinks are neither followed nor recorded on either side, so a link cannot make Apply
 * write outside the project. A file deleted and an identical one created elsewhere become a MOVE, so Apply checks
 * the source still holds what Execute saw instead of trusting a fresh copy. Ignored paths are no change at all:
 * a file moved into an ignored directory is a DELETE, one moved out of it a CREATE.
 *
 * Every file is measured first (hashed, the bytes of an unchanged one dropped) and the changes counted against the
 * limits before the changeset is made: one over a limit throws ChangesetTooLargeError, having held no more than the
 * limits allow.
 */
export async function computeChanges(
  project: string,
  root: string,
  sandbox: string,
  baseline: Baseline,
  options: CompareOptions = {},
): Promise<FileChange[]> {
  const ignore = options.ignore ?? ignoreList();
  const tally = options.tally ?? new ChangesetTally();
  const after = await listFiles(sandbox, ignore);
  const realRoot = await fs.realpath(root).catch((error: unknown) => {
    if (UNREADABLE.has(errorCode(error) ?? '')) return null;
    throw error;
  });
  const planned: Planned[] = [];
  const oldSize = async (relative: string): Promise<number | null> => {
    const size = await projectFileSize(realRoot, relative);
    return size !== null && keepsOldContent(size, tally.limits) ? size : null;
  };
  // The bytes of changed files are kept from the measuring read while they fit in what the changeset may still
  // hold: a changeset within its limits is read once, and one over them never holds more than the limit.
  let keptBytes = 0;
  const keep = (file: SandboxFile): SandboxFile => {
    if (file.content === null || keptBytes + file.size > tally.bytesLeft) {
      return { ...file, content: null };
    }
    keptBytes += file.size;
    return file;
  };
  const created: SandboxFile[] = [];
  for (const [relative, absolute] of after) {
    const measured = await measure(relative, absolute, tally.limits.maxFileBytes);
    if (measured === null) continue;
    const beforeHash = baseline.get(relative);
    if (beforeHash === measured.hash) continue;
    const file = keep(measured);
    if (beforeHash === undefined) {
      created.push(file);
      continue;
    }
    planned.push({
      change: {
        project,
        operation: 'MODIFY',
        path: relative,
        fromPath: null,
        beforeHash,
        afterHash: file.hash,
      },
      source: file,
      keepOld: await oldSize(relative),
    });
  }
  const deleted: BaselineFile[] = [];
  for (const [relative, hash] of baseline) {
    // A baseline made with another list must not turn what this one ignores into deletions.
    if (!after.has(relative) && !isIgnored(ignore, relative)) deleted.push({ path: relative, hash });
  }
  const pairing = pairMoves(deleted, created);
  for (const { source, target } of pairing.moved) {
    planned.push({
      change: {
        project,
        operation: 'MOVE',
        path: target.path,
        fromPath: source.path,
        beforeHash: source.hash,
        afterHash: target.hash,
      },
      source: null,
      keepOld: null,
    });
  }
  for (const entry of pairing.deleted) {
    planned.push({
      change: {
        project,
        operation: 'DELETE',
        path: entry.path,
        fromPath: null,
        beforeHash: entry.hash,
        afterHash: null,
      },
      source: null,
      keepOld: await oldSize(entry.path),
    });
  }
  for (const entry of pairing.created) {
    planned.push({
      change: {
        project,
        operation: 'CREATE',
        path: entry.path,
        fromPath: null,
        beforeHash: null,
        afterHash: entry.hash,
      },
      source: entry,
      keepOld: null,
    });
  }
  for (const { change } of planned) {
    for (const p of [change.path, change.fromPath]) {
      const problem = p === null ? undefined : checkRelativePath(p);
      if (problem !== undefined) {
        // A path Apply would refuse (a `.GIT` directory a step made, say): refused here, where it is made.
        throw new UnrecordableChangesetError(
          `cannot record a change in ${project}: ${problem}`,
          'Change the steps so they leave such paths alone, and start a new plan.',
        );
      }
    }
  }
  const ordered = [...planned].sort((a, b) => byPath(a.change, b.change));
  const breach = tally.add(
    ordered.map(({ change, source, keepOld }): SizedChange => ({
      project,
      path: change.path,
      newBytes: source?.size ?? 0,
      oldBytes: keepOld ?? 0,
    })),
  );
  if (breach !== null) throw new ChangesetTooLargeError(breach);

  const changes: FileChange[] = [];
  for (const { change, source, keepOld } of ordered) {
    changes.push({
      ...change,
      beforeContent:
        keepOld === null || change.beforeHash === null
          ? null
          : await projectContent(realRoot, change.path, change.beforeHash, keepOld),
      afterContent: source === null ? null : await sandboxContent(source),
    });
  }
  return changes;
}

interface Pairing {
  moved: Array<{ source: BaselineFile; target: SandboxFile }>;
  /** Deleted files no created file matched. */
  deleted: BaselineFile[];
  /** Created files left after pairing. */
  created: SandboxFile[];
}

/**
 * Pairs each deleted file with a created one whose hash equals its baseline hash (the deleted side's bytes are not
 * kept). Candidates are taken in path order on both sides and each is used once, so the same sandbox always yields
 * the same changeset (a retried Execute must not produce a different one).
 */
function pairMoves(deleted: readonly BaselineFile[], created: readonly SandboxFile[]): Pairing {
  const createdByHash = new Map<string, SandboxFile[]>();
  for (const entry of [...created].sort(byPath)) {
    const bucket = createdByHash.get(entry.hash);
    if (bucket === undefined) createdByHash.set(entry.hash, [entry]);
    else bucket.push(entry);
  }
  const pairing: Pairing = { moved: [], deleted: [], created: [] };
  for (const source of [...deleted].sort(byPath)) {
    const target = createdByHash.get(source.hash)?.shift();
    if (target === undefined) pairing.deleted.push(source);
    else pairing.moved.push({ source, target });
  }
  for (const bucket of createdByHash.values()) pairing.created.push(...bucket);
  return pairing;
}

/** Regular files under `dir` that `ignore` keeps, keyed by their POSIX path relative to it. */
async function listFiles(dir: string, ignore: IgnoreList): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (absolute: string, relative: string): Promise<void> => {
    for (const entry of await fs.readdir(absolute, { withFileTypes: true })) {
      const childAbsolute = path.join(absolute, entry.name);
      const childRelative = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        // An ignored directory is not even walked: node_modules alone can hold a hundred thousand files.
        if (!ignore.directory(childRelative)) await walk(childAbsolute, childRelative);
      } else if (entry.isFile() && !ignore.file(childRelative)) {
        files.set(childRelative, childAbsolute);
      }
    }
  };
  await walk(dir, '');
  return files;
}

/** A plain Uint8Array, not a Buffer: the changeset type promises no more, and Buffer serialises differently. */
function plainBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * The hash and size of a sandbox file, with its bytes when it is no larger than `oneRead` (read in one piece);
 * a larger one is streamed past, so an unchanged huge file costs no memory. Null when it is no longer a regular
 * file.
 */
async function measure(relative: string, absolute: string, oneRead: number): Promise<SandboxFile | null> {
  const handle = await fs.open(absolute, READ_NO_FOLLOW);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return null;
    if (stats.size <= oneRead) {
      const content = plainBytes(await handle.readFile());
      return { path: relative, absolute, hash: sha256(content), size: content.byteLength, content };
    }
    const hash = sha256Stream();
    let size = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
    }
    return { path: relative, absolute, hash: hash.digest('hex'), size, content: null };
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of a sandbox file measured earlier: those kept from the measuring read, else read again. Read again,
 * they must still be what was measured: a process a `run` step left behind may still be writing, and a changeset
 * whose content disagrees with its hash (or its counted size) would be wrong.
 */
async function sandboxContent(file: SandboxFile): Promise<Uint8Array> {
  if (file.content !== null) return file.content;
  const handle = await fs.open(file.absolute, READ_NO_FOLLOW);
  try {
    const stats = await handle.stat();
    const content = stats.isFile() && stats.size === file.size ? plainBytes(await handle.readFile()) : null;
    if (content === null || sha256(content) !== file.hash) {
      throw new Error(`${file.path} changed in the sandbox while it was compared with the project`);
    }
    return content;
  } finally {
    await handle.close();
  }
}

/**
 * The project file at `relative` (under the project's real root, null when that is gone) opened for reading, with
 * its size; null when it is gone, no longer a regular file, reached through a link leading out of the project, or
 * unreadable.
 */
async function openProjectFile(
  realRoot: string | null,
  relative: string,
): Promise<{ handle: FileHandle; size: number } | null> {
  if (realRoot === null) return null;
  let handle: FileHandle;
  try {
    const located = await resolveInside(realRoot, relative, { follow: 'inside', final: false });
    if ('refusal' in located || located.missing) return null;
    handle = await fs.open(located.path, READ_NO_FOLLOW);
  } catch (error) {
    if (UNREADABLE.has(errorCode(error) ?? '')) return null;
    throw error;
  }
  const stats = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (stats.isFile()) return { handle, size: stats.size };
  await handle.close();
  return null;
}

/** The size of the project file at `relative`, or null when openProjectFile finds none. */
async function projectFileSize(realRoot: string | null, relative: string): Promise<number | null> {
  const opened = await openProjectFile(realRoot, relative);
  if (opened === null) return null;
  await opened.handle.close();
  return opened.size;
}

/**
 * The bytes of the project file at `relative` if they still hash to `expected` (the baseline) and are the `size`
 * counted against the limits, else null: the file is gone, changed, or holds something other than what Execute
 * copied.
 */
async function projectContent(
  realRoot: string | null,
  relative: string,
  expected: string,
  size: number,
): Promise<Uint8Array | null> {
  const opened = await openProjectFile(realRoot, relative);
  if (opened === null) return null;
  try {
    if (opened.size !== size) return null;
    const content = plainBytes(await opened.handle.readFile());
    return sha256(content) === expected ? content : null;
  } finally {
    await opened.handle.close();
  }
}

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
