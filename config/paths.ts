/**
 * Where the engine keeps its files by default: the repository it runs from, the `.data/` directory in it that
 * holds the embedded database, and the user's cache directory that holds Execute's sandboxes (and the Temporal
 * CLI). Every process (worker, CLI, `npm start`, the Prisma CLI) resolves these the same way, from the repository
 * root rather than the working directory.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
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

/** The embedded default's files: the SQLite database (and the dev server's). */
export const DATA_DIR = path.join(REPO_ROOT, '.data');

/** The user's cache directory: `$XDG_CACHE_HOME`, else `~/.cache` (the XDG spec ignores a relative value). */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return xdg;
  const home = env.HOME !== undefined && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
  return path.join(home, '.cache');
}

/** The engine's machine-wide cache: outside the clone, so fresh clones and `git clean` keep it. */
export function engineCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userCacheDir(env), 'cleveragents');
}

/**
 * Execute's sandbox copies live in the user's cache, not in the checkout: a command run in a sandbox must find
 * nothing of the engine above it (its repository for `git`, its database), should it ever run unisolated.
 */
export function defaultSandboxDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(engineCacheDir(env), 'sandboxes');
}

/** SANDBOX_DIR as an absolute path (relative values are taken from the repository root), else the default. */
export function resolveSandboxDir(raw: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return raw === undefined ? defaultSandboxDir(env) : path.resolve(REPO_ROOT, raw);
}
