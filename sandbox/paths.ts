/**
 * Where an untrusted relative path really leads. A plan's steps, a model's proposals and the changesets they
 * produce name files by relative path, and the projects they work in may hold symbolic links of their own. Every
 * guard of the engine (the step runner in a sandbox, Apply in a project, the sandbox reading a project's old bytes)
 * resolves such a path here, so the rules have one home and one set of tests. The textual rule (no `..`, never
 * absolute) is checkRelativePath in domain/changeset.ts; this module adds what only the disk can tell.
 *
 * The rules: containment is decided on real paths, never on text; a path is resolved one component at a time with
 * lstat, so a link on the way is seen rather than silently followed, and followed only when its real target stays
 * inside the root (or not at all); and the real path of the nearest existing directory is checked again at the
 * end, as a second guard independent of the walk. A refusal is returned, not thrown: each caller words it (Apply
 * lists problems, the step runner fails the step, the sandbox skips the file).
 */
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { checkRelativePath } from '../domain/changeset';

/**
 * Opens a file to read without following a link in its last component (a link swapped in after the checks is
 * refused with ELOOP, not read through) and without blocking (a FIFO swapped in cannot hang the caller).
 */
export const READ_NO_FOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Duck-typed: errors from Node's fs are not always `instanceof Error` of the caller's realm (jest's VM, for one). */
export function isErrno(error: unknown): error is NodeJS.ErrnoException {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).message === 'string'
  );
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** Nothing is there: no such entry, or a component on the way that is not a directory (so nothing below it). */
export function isAbsent(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** lstat, with null for an absent path (see isAbsent); any other failure (EACCES, EIO) is thrown. */
export async function lstatOrNull(file: string): Promise<Stats | null> {
  try {
    return await lstat(file);
  } catch (error) {
    if (isAbsent(error)) return null;
    throw error;
  }
}

/**
 * True when `candidate` is `root` or below it. Both must be absolute and normalised; for containment they must be
 * real paths, since text says nothing about where a link leads.
 */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/**
 * The real path of `file` (made absolute) as far as it exists: its nearest existing ancestor with every link
 * resolved, then the rest as written. For places the engine owns or a configured root that may not exist yet
 * (where it would be), not for guarding an untrusted path: a link that leads nowhere counts as missing here, its
 * own name kept. Failures other than absence are thrown rather than guessed around.
 */
export async function realPathSoFar(file: string): Promise<string> {
  const rest: string[] = [];
  let existing = path.resolve(file);
  for (;;) {
    try {
      return path.join(await realpath(existing), ...rest);
    } catch (error) {
      if (!isAbsent(error)) throw error;
      const parent = path.dirname(existing);
      if (parent === existing) throw error;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * Why a relative path was refused. `at` is the prefix of the path (POSIX, '.' for the root itself) where the
 * problem is, for the caller's message.
 */
export type PathRefusal =
  /** The text alone is unsafe: checkRelativePath's reason. */
  | { kind: 'text'; reason: string }
  /** A symbolic link whose target does not exist or cannot be resolved. */
  | { kind: 'link-nowhere'; at: string }
  /** A symbolic link whose real target is outside the root. */
  | { kind: 'link-outside'; at: string }
  /** A symbolic link staying inside the root, refused because the caller follows none. */
  | { kind: 'link'; at: string }
  /** A component on the way that is neither a directory nor a link to one. */
  | { kind: 'not-directory'; at: string }
  /** The nearest existing directory really lies outside the root: something changed while it was walked. */
  | { kind: 'outside'; at: string };

export interface ResolveOptions {
  /**
   * What a symbolic link on the way may be: 'inside' follows one whose real target is inside the root (a project
   * may link within itself), 'none' refuses every link, for callers that never act through one.
   */
  follow: 'inside' | 'none';
  /**
   * Whether the last component is resolved like the others. Writing a file goes through a link there, so such a
   * link must pass the same rule; moving or deleting acts on the link itself, and Apply inspects it on its own.
   */
  final: boolean;
  /**
   * Make the missing directories on the way, one at a time, each checked like an existing one once made:
   * `mkdir -p` would follow a link planted meanwhile.
   */
  create?: boolean;
}

export interface ResolvedPath {
  /** Where to act: the resolved parent joined with the last component, or the last component's real target. */
  path: string;
  /** The real directory of `path` as it will be once its missing directories are made. */
  parent: string;
  basename: string;
  /** Some directory on the way does not exist (yet): nothing exists at `path` either. */
  missing: boolean;
}

/**
 * Resolves `relative` under `root` (a real path) by the rules above, or says why it must not be used. Failures of
 * the filesystem itself (EACCES on a directory on the way, say) are thrown.
 */
export async function resolveInside(
  root: string,
  relative: string,
  options: ResolveOptions,
): Promise<ResolvedPath | { refusal: PathRefusal }> {
  const reason = checkRelativePath(relative);
  if (reason !== undefined) return { refusal: { kind: 'text', reason } };
  const parts = relative.split('/');
  const basename = parts.pop() ?? relative;
  let existing = root;
  let existingAt = '.';
  const missing: string[] = [];
  for (const [index, part] of parts.entries()) {
    if (missing.length > 0) {
      missing.push(part);
      continue;
    }
    const at = parts.slice(0, index + 1).join('/');
    const next = path.join(existing, part);
    let stats = await lstatOrNull(next);
    if (stats === null && options.create === true) {
      try {
        await mkdir(next);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      stats = await lstat(next);
    }
    if (stats === null) {
      missing.push(part);
      continue;
    }
    let directory = next;
    if (stats.isSymbolicLink()) {
      const followed = await followLink(root, next, at, options.follow);
      if ('refusal' in followed) return followed;
      directory = followed.real;
      stats = await lstat(directory);
    }
    if (!stats.isDirectory()) return { refusal: { kind: 'not-directory', at } };
    existing = directory;
    existingAt = at;
  }
  // The walk saw each component at one moment; a directory swapped for a link since would not show in it.
  const realExisting = await realpath(existing).catch(() => null);
  if (realExisting === null || !isInside(root, realExisting)) {
    return { refusal: { kind: 'outside', at: existingAt } };
  }
  const parent = path.join(realExisting, ...missing);
  const named = path.join(parent, basename);
  if (options.final && missing.length === 0 && (await lstatOrNull(named))?.isSymbolicLink() === true) {
    const followed = await followLink(root, named, relative, options.follow);
    if ('refusal' in followed) return followed;
    return {
      path: followed.real,
      parent: path.dirname(followed.real),
      basename: path.basename(followed.real),
      missing: false,
    };
  }
  return { path: named, parent, basename, missing: missing.length > 0 };
}

/** The real target of the link at `link`, when the rule lets it be followed. */
async function followLink(
  root: string,
  link: string,
  at: string,
  follow: ResolveOptions['follow'],
): Promise<{ real: string } | { refusal: PathRefusal }> {
  // Any failure (a dangling link, a loop, an unreadable directory) leaves the target unknown: never followed.
  const real = await realpath(link).catch(() => null);
  if (real === null) return { refusal: { kind: 'link-nowhere', at } };
  if (!isInside(root, real)) return { refusal: { kind: 'link-outside', at } };
  if (follow === 'none') return { refusal: { kind: 'link', at } };
  return { real };
}

/** Opens a directory, never a link to one (ELOOP) nor anything else (ENOTDIR). */
const DIRECTORY_NO_FOLLOW = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** Where Linux lists a process's open files; each entry leads to the very file it names, wherever that is now. */
const OWN_DESCRIPTORS = '/proc/self/fd';

/** What a failed fsync of a directory may say on a platform or filesystem that cannot sync one. */
const CANNOT_SYNC = new Set(['EINVAL', 'EISDIR', 'EPERM', 'EBADF', 'ENOTSUP']);

/**
 * A held directory is no longer the directory at its path: moved, removed, or replaced by a link or another
 * directory since it was opened (or, when opening it, the path led elsewhere).
 */
export class DirectoryChangedError extends Error {
  readonly directory: string;

  constructor(directory: string, detail: string) {
    super(`the directory ${JSON.stringify(directory)} changed while it was in use (${detail})`);
    this.name = 'DirectoryChangedError';
    this.directory = directory;
  }
}

/**
 * A directory held open by descriptor, for a caller that must act in exactly the directory it checked even if a
 * link is planted on its path meanwhile. Node has no openat(), renameat() or unlinkat(); on Linux, a path through
 * `/proc/self/fd/<n>/` is the next best thing: the kernel resolves `<n>` to the open directory itself, not by its
 * name again, so a component swapped for a link after the check cannot redirect the operation. Elsewhere `entry()`
 * falls back to the path, and verify() right before each operation is the only guard (see verify).
 */
export interface HeldDirectory {
  /** The real path it was opened at (no link in it), where verify() expects it still to be. */
  readonly path: string;
  /** True when entries are reached through the descriptor (Linux); false when only through the path. */
  readonly byDescriptor: boolean;
  /** The path to pass to an fs call to act on `name` (one component) inside this directory. */
  entry(name: string): string;
  /**
   * Throws DirectoryChangedError unless the directory is still at `path` with no link on the way. By descriptor,
   * the kernel's own name for the open directory is compared, so there is no gap between the check and what the
   * descriptor points to; what remains is that the directory could be moved between verify() and the next call
   * (the call still lands in this directory, wherever it went). By path, realpath() must give `path` back and the
   * directory there must be this one (device and inode): a link swapped in after the check and before the next
   * call would not be seen, a window only openat() would close.
   */
  verify(): Promise<void>;
  /** The names in it. */
  list(): Promise<string[]>;
  /** Makes renames and unlinks in it durable; a no-op where a directory cannot be synced. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the directory at `realPath` (a real path: absolute, normalised, no link in it) and verifies it is there.
 * `from`, when given, opens it as an entry of that held directory (it must be its parent), so the path is not
 * walked by name again. Throws DirectoryChangedError when what is there is not that directory (a link, a file,
 * nothing, or a directory that is really elsewhere); any other failure (EACCES, EMFILE) as it is.
 */
export async function holdDirectory(realPath: string, from?: HeldDirectory): Promise<HeldDirectory> {
  const openPath =
    from === undefined
      ? realPath
      : from.path === path.dirname(realPath)
        ? from.entry(path.basename(realPath))
        : null;
  if (openPath === null) throw new Error(`internal: ${from?.path ?? ''} is not the parent of ${realPath}`);
  let handle: FileHandle;
  try {
    handle = await open(openPath, DIRECTORY_NO_FOLLOW);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') {
      throw new DirectoryChangedError(realPath, `${code}: not a directory there now`);
    }
    throw error;
  }
  try {
    const held = new Held(realPath, handle, await descriptorsWork(handle));
    await held.verify();
    return held;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Whether /proc/self/fd leads to `handle` in this process: Linux with /proc mounted for our pid namespace. */
async function descriptorsWork(handle: FileHandle): Promise<boolean> {
  try {
    await readlink(`${OWN_DESCRIPTORS}/${handle.fd}`);
    return true;
  } catch {
    return false;
  }
}

class Held implements HeldDirectory {
  constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    readonly byDescriptor: boolean,
  ) {}

  entry(name: string): string {
    // One component, or the descriptor's guarantee would not cover the rest of the path.
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw new Error(`internal: ${JSON.stringify(name)} is not one path component`);
    }
    return this.byDescriptor ? `${OWN_DESCRIPTORS}/${this.handle.fd}/${name}` : path.join(this.path, name);
  }

  async verify(): Promise<void> {
    if (this.byDescriptor) {
      // The kernel's name for the open directory: where it is now, with every link already resolved; a removed
      // directory reads as "<path> (deleted)".
      const now = await readlink(`${OWN_DESCRIPTORS}/${this.handle.fd}`);
      if (now !== this.path)
        throw new DirectoryChangedError(this.path, `it is now at ${JSON.stringify(now)}`);
      return;
    }
    const real = await realpath(this.path).catch(() => null);
    if (real !== this.path) {
      throw new DirectoryChangedError(this.path, `its path now leads to ${JSON.stringify(real)}`);
    }
    const [there, held] = await Promise.all([lstatOrNull(this.path), this.handle.stat()]);
    if (there === null || !there.isDirectory() || there.dev !== held.dev || there.ino !== held.ino) {
      throw new DirectoryChangedError(this.path, 'another directory is at its path');
    }
  }

  async list(): Promise<string[]> {
    return readdir(this.byDescriptor ? `${OWN_DESCRIPTORS}/${this.handle.fd}` : this.path);
  }

  async sync(): Promise<void> {
    try {
      await this.handle.sync();
    } catch (error) {
      if (!CANNOT_SYNC.has(errorCode(error) ?? '')) throw error;
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
