import { createWriteStream } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { checkRelativePath, sortChanges, type FileChange } from '../domain/changeset';
import { sha256, sha256Stream } from '../lib/sha256';
import { errorCode, isInside, READ_NO_FOLLOW, realPathSoFar, resolveInside } from './paths';

/**
 * Execute works on a copy of each writable project, and the changeset is what the run changed in that copy: the
 * copy as Execute left it against the project as it was copied (the baseline), never against the project as it is
 * afterwards. The project stays untouched until Apply, and a user may keep editing it meanwhile: diffing against
 * its later state would turn those edits into changes that revert them.
 *
 * `.git` (directory, or the file a worktree or submodule has instead) is never copied nor compared: VCS metadata
 * is not part of a changeset, and an actor must not be able to rewrite history through one.
 */
const VCS_DIR = '.git';

/**
 * Why a project file can no longer be read as the file Execute copied: it is gone, no longer a plain file, or no
 * longer readable. Only `beforeContent` (shown in a diff) depends on it, so none of these fails the comparison.
 */
const UNREADABLE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EPERM']);

/**
 * What Execute saw of a project: every regular file createSandbox copied, by its POSIX path relative to the
 * project root, with the SHA-256 (lowercase hex) of the bytes copied. Hashes only, not contents: the sandbox holds
 * the bytes until it is changed, and a project can be large. computeChanges diffs the sandbox against this, so a
 * change is only what Execute did, and its before-hash is what Execute started from: Apply then refuses a file
 * the user changed since the copy instead of overwriting it.
 */
export type Baseline = ReadonlyMap<string, string>;

/**
 * Copies the project at `root` into `dest` and returns the Baseline of what was copied. Whatever is at `dest` is
 * removed first: an activity retried after a crash mid-copy must end with the same sandbox as a first run, not
 * with leftovers. `dest` is the engine's own directory; it is refused only when removing or filling it would touch
 * the project itself.
 */
export async function createSandbox(root: string, dest: string): Promise<Baseline> {
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
  await copyTree(root, dest, '', baseline, realRoot);
  return baseline;
}

/**
 * Directories are created with the default mode rather than the project's: a read-only directory copied as such
 * could be neither filled here nor removed by removeSandbox. Records each copied file in `baseline` under
 * `relative` (its POSIX path from the project root, '' for the root itself). Only real directories are descended
 * into, so `source` is `realRoot` joined with `relative`.
 */
async function copyTree(
  source: string,
  target: string,
  relative: string,
  baseline: Map<string, string>,
  realRoot: string,
): Promise<void> {
  for (const entry of await fs.readdir(source, { withFileTypes: true })) {
    if (entry.name === VCS_DIR) continue;
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    const childRelative = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) {
      await fs.mkdir(to);
      await copyTree(from, to, childRelative, baseline, realRoot);
    } else if (entry.isFile()) {
      const hash = await copyFile(from, to);
      if (hash !== null) baseline.set(childRelative, hash);
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
 * Copies one regular file with its permission bits and returns the SHA-256 of the bytes written, hashed as they
 * are copied: the project may be edited during the copy, and the baseline must describe the copy, not a later
 * read of the project. Null (nothing copied) when `from` turned out not to be a regular file.
 */
async function copyFile(from: string, to: string): Promise<string | null> {
  const source = await fs.open(from, READ_NO_FOLLOW);
  try {
    const stats = await source.stat();
    if (!stats.isFile()) return null;
    const hash = sha256Stream();
    await pipeline(
      source.createReadStream({ autoClose: false }),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(to, { flags: 'wx' }),
    );
    await fs.chmod(to, stats.mode & 0o777);
    return hash.digest('hex');
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

/** A file of the sandbox as Execute left it. */
interface SandboxFile {
  path: string;
  content: Uint8Array;
  hash: string;
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
 * the source still holds what Execute saw instead of trusting a fresh copy.
 */
export async function computeChanges(
  project: string,
  root: string,
  sandbox: string,
  baseline: Baseline,
): Promise<FileChange[]> {
  const after = await listFiles(sandbox);
  const realRoot = await fs.realpath(root).catch((error: unknown) => {
    if (UNREADABLE.has(errorCode(error) ?? '')) return null;
    throw error;
  });
  const changes: FileChange[] = [];
  const created: SandboxFile[] = [];
  for (const [relative, absolute] of after) {
    const content = await readBytes(absolute);
    const hash = sha256(content);
    const beforeHash = baseline.get(relative);
    if (beforeHash === undefined) {
      created.push({ path: relative, content, hash });
      continue;
    }
    if (beforeHash === hash) continue;
    changes.push({
      project,
      operation: 'MODIFY',
      path: relative,
      fromPath: null,
      beforeHash,
      afterHash: hash,
      beforeContent: await projectContent(realRoot, relative, beforeHash),
      afterContent: content,
    });
  }
  const deleted: BaselineFile[] = [];
  for (const [relative, hash] of baseline) {
    if (!after.has(relative)) deleted.push({ path: relative, hash });
  }
  const pairing = pairMoves(deleted, created);
  for (const { source, target } of pairing.moved) {
    changes.push({
      project,
      operation: 'MOVE',
      path: target.path,
      fromPath: source.path,
      beforeHash: source.hash,
      afterHash: target.hash,
      beforeContent: null,
      afterContent: null,
    });
  }
  for (const entry of pairing.deleted) {
    changes.push({
      project,
      operation: 'DELETE',
      path: entry.path,
      fromPath: null,
      beforeHash: entry.hash,
      afterHash: null,
      beforeContent: await projectContent(realRoot, entry.path, entry.hash),
      afterContent: null,
    });
  }
  for (const entry of pairing.created) {
    changes.push({
      project,
      operation: 'CREATE',
      path: entry.path,
      fromPath: null,
      beforeHash: null,
      afterHash: entry.hash,
      beforeContent: null,
      afterContent: entry.content,
    });
  }
  for (const change of changes) {
    for (const p of [change.path, change.fromPath]) {
      const problem = p === null ? undefined : checkRelativePath(p);
      if (problem !== undefined) throw new Error(`Cannot record a change in ${project}: ${problem}`);
    }
  }
  return sortChanges(changes);
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

/** Regular files under `dir`, keyed by their POSIX path relative to it. */
async function listFiles(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (absolute: string, relative: string): Promise<void> => {
    for (const entry of await fs.readdir(absolute, { withFileTypes: true })) {
      if (entry.name === VCS_DIR) continue;
      const childAbsolute = path.join(absolute, entry.name);
      const childRelative = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await walk(childAbsolute, childRelative);
      else if (entry.isFile()) files.set(childRelative, childAbsolute);
    }
  };
  await walk(dir, '');
  return files;
}

/** A plain Uint8Array, not a Buffer: the changeset type promises no more, and Buffer serialises differently. */
function plainBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

async function readBytes(file: string): Promise<Uint8Array> {
  return plainBytes(await fs.readFile(file));
}

/**
 * The bytes of the project file at `relative` (under the project's real root, null when that is gone) if they
 * still hash to `expected` (the baseline), else null: the file is gone, no longer a regular file, now reached
 * through a link leading out of the project, unreadable, or holds something other than what Execute copied.
 */
async function projectContent(
  realRoot: string | null,
  relative: string,
  expected: string,
): Promise<Uint8Array | null> {
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
  try {
    if (!(await handle.stat()).isFile()) return null;
    const content = plainBytes(await handle.readFile());
    return sha256(content) === expected ? content : null;
  } finally {
    await handle.close();
  }
}

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
