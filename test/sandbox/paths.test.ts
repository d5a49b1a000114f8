import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ResolveOptions, ResolvedPath } from '../../sandbox/paths';
import {
  DirectoryChangedError,
  errorCode,
  holdDirectory,
  isAbsent,
  isErrno,
  isInside,
  lstatOrNull,
  realPathSoFar,
  resolveInside,
} from '../../sandbox/paths';

let base: string;
/** The root paths are resolved in: a real path, as every caller passes. */
let root: string;
/** A directory beside the root, where no resolution may lead. */
let outside: string;

beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'paths-test-')));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  await fs.mkdir(path.join(root, 'src'), { recursive: true });
  await fs.writeFile(path.join(root, 'src', 'a.ts'), 'a\n');
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, 'secret.txt'), 'secret\n');
});

afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

const FOLLOW_ALL: ResolveOptions[] = [
  { follow: 'inside', final: true },
  { follow: 'inside', final: false },
  { follow: 'none', final: true },
  { follow: 'none', final: false },
];

async function resolved(relative: string, options: ResolveOptions): Promise<ResolvedPath> {
  const result = await resolveInside(root, relative, options);
  if ('refusal' in result) throw new Error(`refused: ${JSON.stringify(result.refusal)}`);
  return result;
}

async function outsideUntouched(): Promise<void> {
  expect((await fs.readdir(outside)).sort()).toEqual(['secret.txt']);
}

describe('isInside', () => {
  it('is true for the root and below it, false for a sibling sharing its prefix or anything above', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c/d')).toBe(true);
    expect(isInside('/a/b', '/a/b/..c')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
    expect(isInside('/a/b', '/x/a/b')).toBe(false);
    expect(isInside('/', '/anything')).toBe(true);
  });
});

describe('errno helpers', () => {
  it('duck-type errors from another realm and treat ENOENT and ENOTDIR as absence', () => {
    const foreign = { code: 'ENOTDIR', message: 'not a directory' };
    expect(isErrno(foreign)).toBe(true);
    expect(errorCode(foreign)).toBe('ENOTDIR');
    expect(isAbsent(foreign)).toBe(true);
    expect(isAbsent({ code: 'ENOENT' })).toBe(true);
    expect(isAbsent({ code: 'EACCES', message: 'denied' })).toBe(false);
    expect(isErrno(new Error('plain'))).toBe(false);
    expect(errorCode('ENOENT')).toBeUndefined();
  });
});

describe('lstatOrNull', () => {
  it('is null for a missing path and for one below a file, and never follows a link', async () => {
    expect(await lstatOrNull(path.join(root, 'nope'))).toBeNull();
    expect(await lstatOrNull(path.join(root, 'src', 'a.ts', 'below'))).toBeNull();
    await fs.symlink(outside, path.join(root, 'out'));
    expect((await lstatOrNull(path.join(root, 'out')))?.isSymbolicLink()).toBe(true);
  });
});

describe('realPathSoFar', () => {
  it('resolves the existing part through links and keeps the missing rest as written', async () => {
    await fs.symlink(outside, path.join(root, 'out'));
    expect(await realPathSoFar(path.join(root, 'out', 'new', 'file'))).toBe(
      path.join(outside, 'new', 'file'),
    );
    expect(await realPathSoFar(path.join(root, 'src'))).toBe(path.join(root, 'src'));
  });

  it('counts a link leading nowhere as missing, keeping its name', async () => {
    await fs.symlink(path.join(base, 'gone'), path.join(root, 'dangling'));
    expect(await realPathSoFar(path.join(root, 'dangling', 'x'))).toBe(path.join(root, 'dangling', 'x'));
  });
});

describe('resolveInside', () => {
  it.each([
    ['../outside/secret.txt', /"\.\." component/],
    ['src/../../outside/secret.txt', /"\.\." component/],
    ['/etc/passwd', /is absolute/],
    ['C:/x', /is absolute/],
    ['src\\..\\..\\x', /backslash/],
    ['src//a.ts', /empty or "\." component/],
    ['./src/a.ts', /empty or "\." component/],
    ['', /empty/],
  ])('refuses %j by its text alone', async (relative, reason) => {
    for (const options of FOLLOW_ALL) {
      const result = await resolveInside(root, relative, { ...options, create: true });
      expect(result).toEqual({ refusal: { kind: 'text', reason: expect.stringMatching(reason) } });
    }
    await outsideUntouched();
  });

  it('resolves a plain path, and reports missing directories without making them', async () => {
    expect(await resolved('src/a.ts', { follow: 'none', final: true })).toEqual({
      path: path.join(root, 'src', 'a.ts'),
      parent: path.join(root, 'src'),
      basename: 'a.ts',
      missing: false,
    });
    expect(await resolved('new/deep/file.txt', { follow: 'inside', final: true })).toEqual({
      path: path.join(root, 'new', 'deep', 'file.txt'),
      parent: path.join(root, 'new', 'deep'),
      basename: 'file.txt',
      missing: true,
    });
    expect(await lstatOrNull(path.join(root, 'new'))).toBeNull();
  });

  it('makes missing directories one at a time with create', async () => {
    const made = await resolved('new/deep/file.txt', { follow: 'inside', final: false, create: true });
    expect(made).toMatchObject({ parent: path.join(root, 'new', 'deep'), missing: false });
    expect((await fs.lstat(path.join(root, 'new', 'deep'))).isDirectory()).toBe(true);
    expect(await lstatOrNull(made.path)).toBeNull();
  });

  it('refuses a symlinked directory on the way that points outside, whatever the options', async () => {
    await fs.symlink(outside, path.join(root, 'src', 'out'));
    for (const options of FOLLOW_ALL) {
      for (const relative of ['src/out/secret.txt', 'src/out/new/file.txt']) {
        expect(await resolveInside(root, relative, { ...options, create: true })).toEqual({
          refusal: { kind: 'link-outside', at: 'src/out' },
        });
      }
    }
    await outsideUntouched();
  });

  it('refuses a link inside the root that leads outside through another link', async () => {
    await fs.symlink(outside, path.join(root, 'out'));
    await fs.symlink('out', path.join(root, 'hop'));
    expect(await resolveInside(root, 'hop/secret.txt', { follow: 'inside', final: false })).toEqual({
      refusal: { kind: 'link-outside', at: 'hop' },
    });
  });

  it('refuses a directory link higher up that leads to a directory whose own link leaves the root', async () => {
    await fs.mkdir(path.join(root, 'vendor'));
    await fs.symlink(outside, path.join(root, 'vendor', 'lib'));
    await fs.symlink('vendor', path.join(root, 'deps'));
    expect(await resolveInside(root, 'deps/lib/secret.txt', { follow: 'inside', final: false })).toEqual({
      refusal: { kind: 'link-outside', at: 'deps/lib' },
    });
  });

  it('follows a directory link staying inside only when asked to, and resolves it to the real directory', async () => {
    await fs.symlink('src', path.join(root, 'alias'));
    expect(await resolved('alias/a.ts', { follow: 'inside', final: false })).toMatchObject({
      path: path.join(root, 'src', 'a.ts'),
      parent: path.join(root, 'src'),
    });
    for (const final of [true, false]) {
      expect(await resolveInside(root, 'alias/a.ts', { follow: 'none', final })).toEqual({
        refusal: { kind: 'link', at: 'alias' },
      });
    }
  });

  it('refuses a dangling link or a link loop on the way, and a dangling final link when following it', async () => {
    await fs.symlink(path.join(base, 'gone'), path.join(root, 'dangling'));
    await fs.symlink('loop', path.join(root, 'loop'));
    for (const options of FOLLOW_ALL) {
      expect(await resolveInside(root, 'dangling/x', options)).toEqual({
        refusal: { kind: 'link-nowhere', at: 'dangling' },
      });
      expect(await resolveInside(root, 'loop/x', options)).toEqual({
        refusal: { kind: 'link-nowhere', at: 'loop' },
      });
    }
    expect(await resolveInside(root, 'dangling', { follow: 'inside', final: true })).toEqual({
      refusal: { kind: 'link-nowhere', at: 'dangling' },
    });
    // Not followed, the link is what is named: deleting or moving it touches only the link.
    expect(await resolved('dangling', { follow: 'inside', final: false })).toMatchObject({
      path: path.join(root, 'dangling'),
    });
  });

  it('follows a final link staying inside only with final, and acts on the link itself otherwise', async () => {
    await fs.symlink('src/a.ts', path.join(root, 'alias.ts'));
    expect(await resolved('alias.ts', { follow: 'inside', final: true })).toEqual({
      path: path.join(root, 'src', 'a.ts'),
      parent: path.join(root, 'src'),
      basename: 'a.ts',
      missing: false,
    });
    expect(await resolved('alias.ts', { follow: 'inside', final: false })).toMatchObject({
      path: path.join(root, 'alias.ts'),
    });
    expect(await resolveInside(root, 'alias.ts', { follow: 'none', final: true })).toEqual({
      refusal: { kind: 'link', at: 'alias.ts' },
    });
  });

  it('refuses a final link leading outside when following it, and names the link otherwise', async () => {
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'src', 'leak.txt'));
    for (const follow of ['inside', 'none'] as const) {
      expect(await resolveInside(root, 'src/leak.txt', { follow, final: true })).toEqual({
        refusal: { kind: 'link-outside', at: 'src/leak.txt' },
      });
      expect(await resolved('src/leak.txt', { follow, final: false })).toMatchObject({
        path: path.join(root, 'src', 'leak.txt'),
      });
    }
  });

  it('refuses a file, or a link to one, used as a directory', async () => {
    await fs.symlink('src/a.ts', path.join(root, 'alias.ts'));
    expect(await resolveInside(root, 'src/a.ts/x', { follow: 'inside', final: false })).toEqual({
      refusal: { kind: 'not-directory', at: 'src/a.ts' },
    });
    expect(await resolveInside(root, 'alias.ts/x', { follow: 'inside', final: false, create: true })).toEqual(
      {
        refusal: { kind: 'not-directory', at: 'alias.ts' },
      },
    );
  });

  it('never makes a directory through a link planted on the way', async () => {
    await fs.symlink(outside, path.join(root, 'planted'));
    expect(
      await resolveInside(root, 'planted/new/x', { follow: 'inside', final: false, create: true }),
    ).toEqual({ refusal: { kind: 'link-outside', at: 'planted' } });
    await outsideUntouched();
  });

  it('fails closed when the root it is given is not a real path', async () => {
    const linkedRoot = path.join(base, 'root-link');
    await fs.symlink(root, linkedRoot);
    // The walk itself finds nothing wrong; the real path of where it ended is not below the text it was given.
    expect(await resolveInside(linkedRoot, 'src/a.ts', { follow: 'inside', final: false })).toEqual({
      refusal: { kind: 'outside', at: 'src' },
    });
  });
});

describe('holdDirectory', () => {
  const byDescriptor = existsSync('/proc/self/fd');

  it('holds a real directory and names its entries', async () => {
    const src = path.join(root, 'src');
    const held = await holdDirectory(src);
    try {
      expect(held.path).toBe(src);
      expect(held.byDescriptor).toBe(byDescriptor);
      await held.verify();
      expect(await fs.readFile(held.entry('a.ts'), 'utf8')).toBe('a\n');
      expect(await held.list()).toEqual(['a.ts']);
      for (const bad of ['', '.', '..', 'x/y', 'x\0'])
        expect(() => held.entry(bad)).toThrow(/not one path component/);
    } finally {
      await held.close();
    }
  });

  it('opens a child through its held parent, and only a child', async () => {
    const parent = await holdDirectory(root);
    try {
      const child = await holdDirectory(path.join(root, 'src'), parent);
      expect(await fs.readFile(child.entry('a.ts'), 'utf8')).toBe('a\n');
      await child.close();
      await expect(holdDirectory(path.join(outside), parent)).rejects.toThrow(/is not the parent of/);
    } finally {
      await parent.close();
    }
  });

  it('refuses a link (even one staying inside), a file, nothing, and a path with a link on the way', async () => {
    await fs.symlink('src', path.join(root, 'alias'));
    await fs.mkdir(path.join(root, 'src', 'sub'));
    for (const where of ['alias', 'src/a.ts', 'missing', 'alias/sub']) {
      await expect(holdDirectory(path.join(root, where))).rejects.toBeInstanceOf(DirectoryChangedError);
    }
  });

  it('fails verify once the directory is moved away or a link takes its place', async () => {
    const held = await holdDirectory(path.join(root, 'src'));
    try {
      await fs.rename(path.join(root, 'src'), path.join(root, 'moved'));
      await fs.symlink(outside, path.join(root, 'src'));
      await expect(held.verify()).rejects.toThrow(/the directory ".*src" changed while it was in use/);
    } finally {
      await held.close();
    }
  });

  (byDescriptor ? it : it.skip)(
    'reaches the directory it holds, not the link now at its path (by descriptor)',
    async () => {
      const held = await holdDirectory(path.join(root, 'src'));
      try {
        await fs.rename(path.join(root, 'src'), path.join(root, 'moved'));
        await fs.symlink(outside, path.join(root, 'src'));
        await fs.writeFile(held.entry('b.ts'), 'b\n');
        expect(await fs.readFile(path.join(root, 'moved', 'b.ts'), 'utf8')).toBe('b\n');
        await outsideUntouched();
      } finally {
        await held.close();
      }
    },
  );
});
