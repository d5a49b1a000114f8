/**
 * The files a glob names, for `replace` and `delete` steps and for estimating what a strategy will touch. Listing
 * never follows a symbolic link: a linked directory is neither walked nor used as the glob's base, and a link is
 * listed as itself (marked), for the caller to skip or remove, never to read through.
 */
import { promises as fs } from 'node:fs';
import type { Stats } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { checkRelativePath } from '../../domain/changeset';
import { lstatOrNull, resolveInside } from '../../sandbox/paths';

export interface ListedFile {
  /** POSIX, relative to the listed root. */
  path: string;
  symlink: boolean;
}

/**
 * Files under `root` (which must exist) for glob matching: regular files and symbolic links, `.git` skipped. Only
 * the glob's literal base directory is walked, so `src/**` does not read all of node_modules.
 */
export async function listFiles(root: string, glob: string): Promise<ListedFile[]> {
  const realRoot = await fs.realpath(root);
  const scan = picomatch.scan(glob);
  let start = '';
  if (scan.base !== '' && checkRelativePath(scan.base) === undefined) {
    const stats = await entryWithoutLinks(realRoot, scan.base);
    if (stats === null || !stats.isDirectory()) return scan.isGlob ? [] : listSingle(realRoot, scan.base);
    start = scan.base;
  }
  const found: ListedFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(rel === '' ? realRoot : path.join(realRoot, rel), {
      withFileTypes: true,
    });
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== '.git') await walk(child);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        found.push({ path: child, symlink: entry.isSymbolicLink() });
      }
    }
  };
  await walk(start);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A literal (non-glob) path whose last component is a file or link: scan() reports it as its own base. */
async function listSingle(realRoot: string, rel: string): Promise<ListedFile[]> {
  const stats = await entryWithoutLinks(realRoot, rel);
  if (stats === null || !(stats.isFile() || stats.isSymbolicLink())) return [];
  return [{ path: rel, symlink: stats.isSymbolicLink() }];
}

/**
 * What is at `rel` (the last component not followed), or null when it is absent or reached only through a link or
 * a file on the way: like the walk, a literal path never goes through a linked directory.
 */
async function entryWithoutLinks(realRoot: string, rel: string): Promise<Stats | null> {
  const located = await resolveInside(realRoot, rel, { follow: 'none', final: false });
  if ('refusal' in located || located.missing) return null;
  return lstatOrNull(located.path);
}

export function globMatcher(glob: string): (file: string) => boolean {
  return picomatch(glob, { dot: false });
}
