import fs from 'node:fs/promises';
import path from 'node:path';
import { checkRelativePath, sortChanges, type FileChange } from '../domain/changeset';
import { sha256 } from './apply';

/**
 * Execute works on a copy of each writable project and the changeset is what differs between the copy and the
 * project afterwards, so the project itself stays untouched until Apply.
 *
 * `.git` (directory, or the file a worktree or submodule has instead) is never copied nor compared: VCS metadata
 * is not part of a changeset, and an actor must not be able to rewrite history through one.
 */
const VCS_DIR = '.git';

/**
 * Copies the project at `root` into `dest`. Whatever is at `dest` is removed first: an activity retried after a
 * crash mid-copy must end with the same sandbox as a first run, not with leftovers. `dest` is the engine's own
 * directory; it is refused only when removing or filling it would touch the project itself.
 */
export async function createSandbox(root: string, dest: string): Promise<void> {
  const stat = await fs.stat(root);
  if (!stat.isDirectory()) throw new Error(`The project root ${root} is not a directory`);
  const realRoot = await fs.realpath(root);
  const realDest = await realpathAllowingMissing(dest);
  if (isWithin(realDest, realRoot)) {
    throw new Error(
      `The sandbox ${dest} contains the project ${root}: recreating it would delete the project`,
    );
  }
  if (isWithin(realRoot, realDest)) {
    throw new Error(`The sandbox ${dest} is inside the project ${root}: it would copy itself`);
  }
  await removeSandbox(dest);
  await fs.mkdir(dest, { recursive: true });
  await copyTree(root, dest);
}

/**
 * Directories are created with the default mode rather than the project's: a read-only directory copied as such
 * could be neither filled here nor removed by removeSandbox.
 */
async function copyTree(source: string, target: string): Promise<void> {
  for (const entry of await fs.readdir(source, { withFileTypes: true })) {
    if (entry.name === VCS_DIR) continue;
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    if (entry.isDirectory()) {
      await fs.mkdir(to);
      await copyTree(from, to);
    } else if (entry.isFile()) {
      const { mode } = await fs.lstat(from);
      await fs.copyFile(from, to, fs.constants.COPYFILE_EXCL);
      await fs.chmod(to, mode & 0o777);
    } else if (entry.isSymbolicLink()) {
      // The link text, never the target: a link out of the project must not bring outside files into the copy.
      await fs.symlink(await fs.readlink(from), to);
    }
    // Sockets, FIFOs and devices are live objects, not content: there is nothing to copy.
  }
}

/** rm -rf: a sandbox already gone (a retried cleanup) is not an error. */
export async function removeSandbox(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
}

interface FileEntry {
  path: string;
  content: Uint8Array;
  hash: string;
}

/**
 * The changes that turn the project at `root` into `sandbox`, as changeset operations of `project`. Only regular
 * files count: symlinks are neither followed nor recorded on either side, so a link cannot make Apply write
 * outside the project. A file deleted and an identical one created elsewhere become a MOVE, so Apply checks the
 * source still holds what Execute saw instead of trusting a fresh copy.
 */
export async function computeChanges(project: string, root: string, sandbox: string): Promise<FileChange[]> {
  const [before, after] = await Promise.all([listFiles(root), listFiles(sandbox)]);
  const changes: FileChange[] = [];
  const created: FileEntry[] = [];
  const deleted: FileEntry[] = [];
  for (const [relative, absolute] of after) {
    const newContent = await readBytes(absolute);
    const original = before.get(relative);
    if (original === undefined) {
      created.push({ path: relative, content: newContent, hash: sha256(newContent) });
      continue;
    }
    const oldContent = await readBytes(original);
    if (bytesEqual(oldContent, newContent)) continue;
    changes.push({
      project,
      operation: 'MODIFY',
      path: relative,
      fromPath: null,
      beforeHash: sha256(oldContent),
      afterHash: sha256(newContent),
      beforeContent: oldContent,
      afterContent: newContent,
    });
  }
  for (const [relative, absolute] of before) {
    if (after.has(relative)) continue;
    const content = await readBytes(absolute);
    deleted.push({ path: relative, content, hash: sha256(content) });
  }
  changes.push(...pairMoves(project, deleted, created));
  for (const change of changes) {
    for (const p of [change.path, change.fromPath]) {
      const problem = p === null ? undefined : checkRelativePath(p);
      if (problem !== undefined) throw new Error(`Cannot record a change in ${project}: ${problem}`);
    }
  }
  return sortChanges(changes);
}

/**
 * Candidates are taken in path order on both sides and each is used once, so the same sandbox always yields the
 * same changeset (a retried Execute must not produce a different one).
 */
function pairMoves(project: string, deleted: FileEntry[], created: FileEntry[]): FileChange[] {
  const createdByHash = new Map<string, FileEntry[]>();
  for (const entry of [...created].sort(byPath)) {
    const bucket = createdByHash.get(entry.hash);
    if (bucket === undefined) createdByHash.set(entry.hash, [entry]);
    else bucket.push(entry);
  }
  const changes: FileChange[] = [];
  for (const source of [...deleted].sort(byPath)) {
    const bucket = createdByHash.get(source.hash) ?? [];
    const index = bucket.findIndex((candidate) => bytesEqual(candidate.content, source.content));
    const target = index === -1 ? undefined : bucket.splice(index, 1)[0];
    if (target === undefined) {
      changes.push({
        project,
        operation: 'DELETE',
        path: source.path,
        fromPath: null,
        beforeHash: source.hash,
        afterHash: null,
        beforeContent: source.content,
        afterContent: null,
      });
      continue;
    }
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
  for (const bucket of createdByHash.values()) {
    for (const entry of bucket) {
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
  }
  return changes;
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
async function readBytes(file: string): Promise<Uint8Array> {
  const buffer = await fs.readFile(file);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

function byPath(a: FileEntry, b: FileEntry): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** True when `child` is `parent` or below it. */
function isWithin(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/**
 * The real path of `target` even when it does not exist yet (its nearest existing ancestor resolved), so a
 * sandbox reached through a symlinked parent is still recognised as overlapping the project.
 */
async function realpathAllowingMissing(target: string): Promise<string> {
  const missing: string[] = [];
  let current = path.resolve(target);
  for (;;) {
    try {
      return path.join(await fs.realpath(current), ...missing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(target);
      missing.unshift(path.basename(current));
      current = parent;
    }
  }
}
