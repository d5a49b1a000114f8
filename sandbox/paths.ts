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
import { lstat, mkdir, realpath } from 'node:fs/promises';
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
