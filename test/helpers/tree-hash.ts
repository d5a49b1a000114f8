/**
 * A fingerprint of a directory tree: every entry's relative path, kind, permission bits and content (a link's
 * target, a file's bytes), so an attack test can show that nothing outside the sandbox changed — not a file, not a
 * mode, not a link. Directories named in `skip` (relative paths) are left out whole: node_modules, caches.
 */
import { createHash } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';

export async function treeHash(root: string, options: { skip?: readonly string[] } = {}): Promise<string> {
  const skip = new Set(options.skip ?? []);
  const hash = createHash('sha256');
  const walk = async (relative: string): Promise<void> => {
    const absolute = path.join(root, relative);
    const stats = await lstat(absolute);
    const mode = (stats.mode & 0o7777).toString(8);
    if (stats.isSymbolicLink()) {
      hash.update(`L ${relative} ${mode} -> ${await readlink(absolute)}\n`);
    } else if (stats.isDirectory()) {
      hash.update(`D ${relative} ${mode}\n`);
      for (const name of (await readdir(absolute)).sort()) {
        const child = relative === '' ? name : `${relative}/${name}`;
        if (!skip.has(child)) await walk(child);
      }
    } else if (stats.isFile()) {
      hash.update(`F ${relative} ${mode} ${stats.size}\n`);
      hash.update(await readFile(absolute));
    } else {
      hash.update(`O ${relative} ${mode}\n`);
    }
  };
  await walk('');
  return hash.digest('hex');
}
