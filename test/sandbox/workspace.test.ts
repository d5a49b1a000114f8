import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { computeChanges, createSandbox, removeSandbox } from '../../sandbox/workspace';

const PROJECT = 'local/demo';

let base: string;
let root: string;
let dest: string;

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'workspace-test-'));
  root = path.join(base, 'project');
  dest = path.join(base, 'sandbox');
  await fs.mkdir(root);
});

afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

/** Modes are set explicitly so the expectations do not depend on the umask. */
async function write(dir: string, file: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  const target = path.join(dir, file);
  await fs.mkdir(path.dirname(target), { recursive: true });
  await fs.writeFile(target, content);
  await fs.chmod(target, mode);
}

/** Every entry under `dir` as `path type`, with the mode of files and the text of links. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (absolute: string, relative: string): Promise<void> => {
    const entries = await fs.readdir(absolute, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = path.join(absolute, entry.name);
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        out.push(`${rel} dir`);
        await walk(child, rel);
      } else if (entry.isSymbolicLink()) {
        out.push(`${rel} -> ${await fs.readlink(child)}`);
      } else {
        const stat = await fs.lstat(child);
        out.push(`${rel} file ${(stat.mode & 0o777).toString(8)} ${await fs.readFile(child, 'utf8')}`);
      }
    }
  };
  await walk(dir, '');
  return out;
}

const sha = (content: string | Uint8Array) => createHash('sha256').update(content).digest('hex');
const bytes = (text: string) => new Uint8Array(Buffer.from(text));

describe('createSandbox', () => {
  it('copies files with their mode and leaves out .git at any depth', async () => {
    await write(root, 'README.md', 'hello\n', 0o644);
    await write(root, 'bin/run.sh', '#!/bin/sh\n', 0o755);
    await write(root, 'secret.txt', 'mine\n', 0o600);
    await write(root, '.git/HEAD', 'ref: refs/heads/main\n');
    await write(root, 'vendor/lib/.git', 'gitdir: ../../.git/modules/lib\n');
    await write(root, 'vendor/lib/index.js', 'module.exports = 1;\n');
    await fs.mkdir(path.join(root, 'empty'));

    await createSandbox(root, dest);

    expect(await tree(dest)).toEqual([
      'README.md file 644 hello\n',
      'bin dir',
      'bin/run.sh file 755 #!/bin/sh\n',
      'empty dir',
      'secret.txt file 600 mine\n',
      'vendor dir',
      'vendor/lib dir',
      'vendor/lib/index.js file 644 module.exports = 1;\n',
    ]);
  });

  it('recreates symlinks with their link text and never follows them, even out of the project', async () => {
    const outside = path.join(base, 'outside');
    await write(outside, 'private.txt', 'not part of the project\n');
    await write(root, 'docs/guide.md', 'guide\n');
    await fs.symlink('docs/guide.md', path.join(root, 'GUIDE.md'));
    await fs.symlink('docs', path.join(root, 'manual'));
    await fs.symlink(outside, path.join(root, 'escape'));
    await fs.symlink('missing.txt', path.join(root, 'dangling'));

    await createSandbox(root, dest);

    expect(await tree(dest)).toEqual([
      'GUIDE.md -> docs/guide.md',
      'dangling -> missing.txt',
      'docs dir',
      'docs/guide.md file 644 guide\n',
      `escape -> ${outside}`,
      'manual -> docs',
    ]);
  });

  it('skips sockets', async () => {
    await write(root, 'a.txt', 'a\n');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(root, 'app.sock'), resolve));
    try {
      await createSandbox(root, dest);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(await tree(dest)).toEqual(['a.txt file 644 a\n']);
  });

  it('replaces a half-copied sandbox from an interrupted run with the same copy a first run makes', async () => {
    await write(root, 'src/a.ts', 'export const a = 1;\n');
    await write(root, 'src/b.ts', 'export const b = 2;\n');
    await write(dest, 'src/a.ts', 'export const a = 1;\n', 0o444);
    await write(dest, 'src/b.ts', 'export con');
    await write(dest, 'stale/leftover.txt', 'from the crashed attempt\n');

    await createSandbox(root, dest);
    const retried = await tree(dest);
    const fresh = path.join(base, 'fresh');
    await createSandbox(root, fresh);

    expect(retried).toEqual(await tree(fresh));
    expect(retried).toEqual([
      'src dir',
      'src/a.ts file 644 export const a = 1;\n',
      'src/b.ts file 644 export const b = 2;\n',
    ]);
  });

  it('refuses a sandbox that contains or is inside the project', async () => {
    await write(root, 'a.txt', 'a\n');
    await expect(createSandbox(root, base)).rejects.toThrow(/would delete the project/);
    await expect(createSandbox(root, root)).rejects.toThrow(/would delete the project/);
    await expect(createSandbox(root, path.join(root, '.sandbox'))).rejects.toThrow(/inside the project/);
    expect(await tree(root)).toEqual(['a.txt file 644 a\n']);
  });
});

describe('removeSandbox', () => {
  it('removes the sandbox, read-only files included, and accepts one already gone', async () => {
    await write(dest, 'deep/file.txt', 'x', 0o444);
    await removeSandbox(dest);
    await expect(fs.access(dest)).rejects.toThrow();
    await expect(removeSandbox(dest)).resolves.toBeUndefined();
  });
});

describe('computeChanges', () => {
  async function sandboxOf(files: Record<string, string>): Promise<void> {
    for (const [file, content] of Object.entries(files)) await write(root, file, content);
    await createSandbox(root, dest);
  }

  it('finds nothing when the sandbox is an unchanged copy', async () => {
    await sandboxOf({ 'README.md': 'hi\n', 'src/index.ts': 'export {};\n', '.git/config': '[core]\n' });
    expect(await computeChanges(PROJECT, root, dest)).toEqual([]);
  });

  it('records a file created in a new nested directory', async () => {
    await sandboxOf({ 'README.md': 'hi\n' });
    await write(dest, 'docs/api/v1.md', '# v1\n');

    expect(await computeChanges(PROJECT, root, dest)).toEqual([
      {
        project: PROJECT,
        operation: 'CREATE',
        path: 'docs/api/v1.md',
        fromPath: null,
        beforeHash: null,
        afterHash: sha('# v1\n'),
        beforeContent: null,
        afterContent: bytes('# v1\n'),
      },
    ]);
  });

  it('records a modified file with both contents', async () => {
    await sandboxOf({ 'src/index.ts': 'export const x = 1;\n' });
    await write(dest, 'src/index.ts', 'export const x = 2;\n');

    expect(await computeChanges(PROJECT, root, dest)).toEqual([
      {
        project: PROJECT,
        operation: 'MODIFY',
        path: 'src/index.ts',
        fromPath: null,
        beforeHash: sha('export const x = 1;\n'),
        afterHash: sha('export const x = 2;\n'),
        beforeContent: bytes('export const x = 1;\n'),
        afterContent: bytes('export const x = 2;\n'),
      },
    ]);
  });

  it('records a deleted file with its old content', async () => {
    await sandboxOf({ 'old.txt': 'bye\n', 'keep.txt': 'stay\n' });
    await fs.rm(path.join(dest, 'old.txt'));

    expect(await computeChanges(PROJECT, root, dest)).toEqual([
      {
        project: PROJECT,
        operation: 'DELETE',
        path: 'old.txt',
        fromPath: null,
        beforeHash: sha('bye\n'),
        afterHash: null,
        beforeContent: bytes('bye\n'),
        afterContent: null,
      },
    ]);
  });

  it('records a rename as a MOVE without contents', async () => {
    await sandboxOf({ 'docs/old-name.md': 'same text\n' });
    await fs.mkdir(path.join(dest, 'guide'));
    await fs.rename(path.join(dest, 'docs/old-name.md'), path.join(dest, 'guide/new-name.md'));

    expect(await computeChanges(PROJECT, root, dest)).toEqual([
      {
        project: PROJECT,
        operation: 'MOVE',
        path: 'guide/new-name.md',
        fromPath: 'docs/old-name.md',
        beforeHash: sha('same text\n'),
        afterHash: sha('same text\n'),
        beforeContent: null,
        afterContent: null,
      },
    ]);
  });

  it('pairs identical contents deterministically, by path, each file at most once', async () => {
    await sandboxOf({ 'b-old.txt': 'dup\n', 'a-old.txt': 'dup\n', 'c-old.txt': 'other\n' });
    await fs.rm(path.join(dest, 'a-old.txt'));
    await fs.rm(path.join(dest, 'b-old.txt'));
    await fs.rm(path.join(dest, 'c-old.txt'));
    await write(dest, 'z-new.txt', 'dup\n');
    await write(dest, 'y-new.txt', 'dup\n');
    await write(dest, 'x-new.txt', 'dup\n');

    const summary = (await computeChanges(PROJECT, root, dest)).map((c) =>
      [c.operation, c.fromPath, c.path].filter((part) => part !== null).join(' '),
    );
    expect(summary).toEqual([
      'DELETE c-old.txt',
      'MOVE a-old.txt x-new.txt',
      'MOVE b-old.txt y-new.txt',
      'CREATE z-new.txt',
    ]);
    expect(await computeChanges(PROJECT, root, dest)).toEqual(await computeChanges(PROJECT, root, dest));
  });

  it('pairs one deleted file with the first of two identical new files', async () => {
    await sandboxOf({ 'src.txt': 'content\n' });
    await fs.rm(path.join(dest, 'src.txt'));
    await write(dest, 'copy-b.txt', 'content\n');
    await write(dest, 'copy-a.txt', 'content\n');

    const changes = await computeChanges(PROJECT, root, dest);
    expect(changes.map((c) => [c.operation, c.fromPath, c.path])).toEqual([
      ['MOVE', 'src.txt', 'copy-a.txt'],
      ['CREATE', null, 'copy-b.txt'],
    ]);
  });

  it('ignores symlinks on both sides and .git changes', async () => {
    await sandboxOf({ 'real.txt': 'real\n' });
    await fs.symlink('real.txt', path.join(root, 'old-link'));
    await fs.symlink('real.txt', path.join(dest, 'new-link'));
    await fs.symlink(path.join(base, 'outside'), path.join(dest, 'escape'));
    await write(dest, '.git/HEAD', 'ref: refs/heads/other\n');
    await write(dest, 'pkg/.git/config', '[core]\n');

    expect(await computeChanges(PROJECT, root, dest)).toEqual([]);
  });

  it('keeps binary content byte for byte', async () => {
    const binary = new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13, 0]);
    await write(root, 'img.bin', new Uint8Array([0, 0, 0]));
    await createSandbox(root, dest);
    await write(dest, 'img.bin', binary);
    await write(dest, 'new.bin', binary);

    const changes = await computeChanges(PROJECT, root, dest);
    expect(changes.map((c) => [c.operation, c.path])).toEqual([
      ['MODIFY', 'img.bin'],
      ['CREATE', 'new.bin'],
    ]);
    expect(changes[0]?.beforeContent).toEqual(new Uint8Array([0, 0, 0]));
    expect(changes[0]?.afterContent).toEqual(binary);
    expect(changes[1]?.afterContent).toEqual(binary);
    expect(changes[1]?.afterHash).toBe(sha(binary));
  });
});
