/**
 * What a changeset leaves out (issue 12): the engine's own list (VCS metadata, dependencies, build output, caches)
 * and the globs an action adds (`execution.ignore`, pinned into the plan). A plan's steps may create or change such
 * files in the sandbox, and a `run: npm test` will, but they are regenerated, not authored: recorded, they would
 * fill changesets (and the database) with thousands of files nobody reviews, and Apply would write them over the
 * project's own.
 *
 * Ignored paths are still copied into the sandbox (all but `.git`, see sandbox/workspace.ts), only never compared:
 * a `run` step needs node_modules to test, and build tools their caches. Leaving them out of the copy would make
 * such steps fail, or reinstall everything in every sandbox, for no safety gained: whatever a step does to them in
 * the sandbox never reaches the project, since Apply writes only the changeset.
 *
 * Pure (picomatch only), but not for the workflow bundle.
 */
import picomatch from 'picomatch';

/** VCS metadata, directory or file (a worktree's or submodule's `.git`): neither copied nor compared. */
export const VCS_DIR = '.git';

/**
 * Directories the engine leaves out of every changeset at any depth (as .gitignore's `name/` would): installed
 * dependencies, build output and caches. Only directories: a file named `build` (a script) is compared as usual.
 */
export const IGNORED_DIRECTORIES: readonly string[] = [
  'node_modules',
  'dist',
  'build',
  'coverage',
  '.cache',
  '__pycache__',
  'target',
];

/**
 * Which paths (POSIX, relative to a project root) a sandbox walk leaves out. A directory left out takes everything
 * under it along, so a walk asks about each directory before entering it and about each file it lists; isIgnored
 * asks both questions for one path.
 */
export interface IgnoreList {
  directory(path: string): boolean;
  file(path: string): boolean;
}

/**
 * The engine's list plus `globs` (an action's `execution.ignore`), read as .gitignore reads its lines: a glob
 * without `/` matches a file or directory name at any depth (`*.log`), one with `/` the path from the project root
 * (`src/generated/**`, `docs/*.pdf`), a trailing `/` only directories (`tmp/`). Dotfiles match like any other
 * name. A leading `!` is a literal character, not a negation: the list can only leave files out, never bring back
 * what the engine leaves out.
 */
export function ignoreList(globs: readonly string[] = []): IgnoreList {
  const byName: Array<{ matches: (name: string) => boolean; directoryOnly: boolean }> = [];
  const byPath: Array<{ matches: (path: string) => boolean; directoryOnly: boolean }> = [];
  for (const raw of globs) {
    const directoryOnly = raw.endsWith('/');
    const glob = raw.replace(/\/+$/, '').replace(/^(\.\/)+/, '');
    if (glob === '') continue;
    const matches = picomatch(glob, { dot: true, nonegate: true });
    (glob.includes('/') ? byPath : byName).push({ matches, directoryOnly });
  }
  const name = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
  const matched = (path: string, isDirectory: boolean): boolean =>
    byName.some((g) => (isDirectory || !g.directoryOnly) && g.matches(name(path))) ||
    byPath.some((g) => (isDirectory || !g.directoryOnly) && g.matches(path));
  return {
    directory: (path) =>
      name(path) === VCS_DIR || IGNORED_DIRECTORIES.includes(name(path)) || matched(path, true),
    file: (path) => name(path) === VCS_DIR || matched(path, false),
  };
}

/** Whether the file at `path` is left out, by its own name or by any directory on its way. */
export function isIgnored(list: IgnoreList, path: string): boolean {
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    if (list.directory(parts.slice(0, i).join('/'))) return true;
  }
  return list.file(path);
}
