/**
 * Where the engine keeps its files by default: the repository it runs from, and the `.data/` directory in it that
 * holds the embedded database and Execute's sandboxes. Every process (worker, CLI, `npm start`, the Prisma CLI)
 * resolves these the same way, from the repository root rather than the working directory.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The nearest directory above this file that holds package.json. Walking up (rather than `..`) keeps the
 * answer right both from the sources and from the compiled copy in dist/config.
 */
export function findRepoRoot(start: string = __dirname): string {
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`no package.json above ${start}`);
    }
    dir = parent;
  }
}

export const REPO_ROOT = findRepoRoot();

/** The embedded default's files: the SQLite database and the sandboxes. */
export const DATA_DIR = path.join(REPO_ROOT, '.data');

/** Execute's sandbox copies live next to the embedded database unless SANDBOX_DIR says otherwise. */
export const DEFAULT_SANDBOX_DIR = path.join(DATA_DIR, 'sandboxes');

/** SANDBOX_DIR as an absolute path: relative values are taken from the repository root. */
export function resolveSandboxDir(raw: string | undefined): string {
  return raw === undefined ? DEFAULT_SANDBOX_DIR : path.resolve(REPO_ROOT, raw);
}
