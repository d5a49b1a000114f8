import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Changeset, FileChange } from '../../domain/changeset';
import { ignoreList } from '../../domain/ignore';
import { ChangesetTally } from '../../domain/limits';
import { validateChangeset } from '../../sandbox/apply';
import {
  ChangesetTooLargeError,
  UnrecordableChangesetError,
  computeChanges,
  createSandbox,
  removeSandbox,
  type Baseline,
} from '../../sandbox/workspace';

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

/** A changeset of the project at `root` holding `changes`, for Apply's validation. */
function changesetOf(changes: FileChange[]): Changeset {
  return {
    changesetId: 'cs-1',
    planId: 'plan-1',
    attempt: 1,
    projects: [{ projectName: PROJECT, alias: null, root, readOnly: false, sandbox: dest }],
    changes,
    createdAt: '2030-01-02T03:04:05.000Z',
  };
}

describe('createSandbox', () => {
  it('copies files with their mode and leaves out .git at any depth', async () => {
    await write(root, 'README.md', 'hello\n', 0o644);
    await write(root, 'bin/run.sh', '#!/bin/sh\n', 0o755);
    await write(root, 'secret.txt', 'mine\n', 0o600);
    await write(root, '.git/HEAD', 'ref: refs/heads/main\n');
    await write(root, 'vendor/lib/.git', 'gitdir: ../../.git/modules/lib\n');
    await write(root, 'vendor/lib/index.js', 'module.exports = 1;\n');
    await fs.mkdir(path.join(root, 'empty'));

    const baseline = await createSandbox(root, dest);

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
    expect(baseline).toEqual(
      new Map([
        ['README.md', sha('hello\n')],
        ['bin/run.sh', sha('#!/bin/sh\n')],
        ['secret.txt', sha('mine\n')],
        ['vendor/lib/index.js', sha('module.exports = 1;\n')],
      ]),
    );
  });

  it('recreates symlinks that stay in the project and never follows them', async () => {
    await write(root, 'docs/guide.md', 'guide\n');
    await fs.symlink('docs/guide.md', path.join(root, 'GUIDE.md'));
    await fs.symlink('docs', path.join(root, 'manual'));
    await fs.symlink('../GUIDE.md', path.join(root, 'docs', 'up'));
    await fs.symlink('missing.txt', path.join(root, 'dangling'));

    const baseline = await createSandbox(root, dest);

    expect(await tree(dest)).toEqual([
      'GUIDE.md -> docs/guide.md',
      'dangling -> missing.txt',
      'docs dir',
      'docs/guide.md file 644 guide\n',
      'docs/up -> ../GUIDE.md',
      'manual -> docs',
    ]);
    // Only regular files are part of the baseline, as only they are part of a changeset.
    expect(baseline).toEqual(new Map([['docs/guide.md', sha('guide\n')]]));
  });

  it('rewrites absolute links into the project as relative ones, so they lead into the sandbox', async () => {
    await write(root, 'docs/guide.md', 'guide\n');
    await fs.symlink(path.join(root, 'docs', 'guide.md'), path.join(root, 'GUIDE.md'));
    await fs.symlink(path.join(root, 'docs'), path.join(root, 'docs', 'self'));
    await fs.symlink(root, path.join(root, 'docs', 'top'));
    await fs.symlink(path.join(root, 'build', 'out.js'), path.join(root, 'not-built-yet'));

    await createSandbox(root, dest);

    expect(await tree(dest)).toEqual([
      'GUIDE.md -> docs/guide.md',
      'docs dir',
      'docs/guide.md file 644 guide\n',
      'docs/self -> .',
      'docs/top -> ..',
      'not-built-yet -> build/out.js',
    ]);
    expect(await fs.readFile(path.join(dest, 'GUIDE.md'), 'utf8')).toBe('guide\n');
    expect(await fs.realpath(path.join(dest, 'GUIDE.md'))).toBe(
      path.join(await fs.realpath(dest), 'docs', 'guide.md'),
    );
  });

  it('leaves out links leading outside the project, however they get there', async () => {
    const outside = path.join(base, 'outside');
    await write(outside, 'private.txt', 'not part of the project\n');
    await write(root, 'docs/guide.md', 'guide\n');
    await fs.symlink(outside, path.join(root, 'escape'));
    await fs.symlink('../outside/private.txt', path.join(root, 'relative-escape'));
    await fs.symlink('escape/private.txt', path.join(root, 'through-escape'));
    await fs.symlink(path.join(outside, 'missing'), path.join(root, 'dangling-outside'));
    await fs.symlink('../../nowhere', path.join(root, 'docs', 'dangling-up'));

    await createSandbox(root, dest);

    expect(await tree(dest)).toEqual(['docs dir', 'docs/guide.md file 644 guide\n']);
  });

  it('skips sockets', async () => {
    await write(root, 'a.txt', 'a\n');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(root, 'app.sock'), resolve));
    let baseline: Baseline;
    try {
      baseline = await createSandbox(root, dest);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(await tree(dest)).toEqual(['a.txt file 644 a\n']);
    expect(baseline).toEqual(new Map([['a.txt', sha('a\n')]]));
  });

  it('replaces a half-copied sandbox from an interrupted run with the same copy a first run makes', async () => {
    await write(root, 'src/a.ts', 'export const a = 1;\n');
    await write(root, 'src/b.ts', 'export const b = 2;\n');
    await write(dest, 'src/a.ts', 'export const a = 1;\n', 0o444);
    await write(dest, 'src/b.ts', 'export con');
    await write(dest, 'stale/leftover.txt', 'from the crashed attempt\n');

    const retriedBaseline = await createSandbox(root, dest);
    const retried = await tree(dest);
    const fresh = path.join(base, 'fresh');
    const freshBaseline = await createSandbox(root, fresh);

    expect(retried).toEqual(await tree(fresh));
    expect(retriedBaseline).toEqual(freshBaseline);
    expect(retriedBaseline).toEqual(
      new Map([
        ['src/a.ts', sha('export const a = 1;\n')],
        ['src/b.ts', sha('export const b = 2;\n')],
      ]),
    );
    expect(retried).toEqual([
      'src dir',
      'src/a.ts file 644 export const a = 1;\n',
      'src/b.ts file 644 export const b = 2;\n',
    ]);
  });

  it('hashes a file larger than one read chunk exactly as copied', async () => {
    const large = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
    await write(root, 'data.bin', large);

    const baseline = await createSandbox(root, dest);

    expect(new Uint8Array(await fs.readFile(path.join(dest, 'data.bin')))).toEqual(large);
    expect(baseline.get('data.bin')).toBe(sha(large));
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
  async function sandboxOf(files: Record<string, string>): Promise<Baseline> {
    for (const [file, content] of Object.entries(files)) await write(root, file, content);
    return createSandbox(root, dest);
  }

  it('finds nothing when the sandbox is an unchanged copy', async () => {
    const baseline = await sandboxOf({
      'README.md': 'hi\n',
      'src/index.ts': 'export {};\n',
      '.git/config': '[core]\n',
    });
    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([]);
  });

  it('records a file created in a new nested directory', async () => {
    const baseline = await sandboxOf({ 'README.md': 'hi\n' });
    await write(dest, 'docs/api/v1.md', '# v1\n');

    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([
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
    const baseline = await sandboxOf({ 'src/index.ts': 'export const x = 1;\n' });
    await write(dest, 'src/index.ts', 'export const x = 2;\n');

    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([
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
    const baseline = await sandboxOf({ 'old.txt': 'bye\n', 'keep.txt': 'stay\n' });
    await fs.rm(path.join(dest, 'old.txt'));

    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([
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
    const baseline = await sandboxOf({ 'docs/old-name.md': 'same text\n' });
    await fs.mkdir(path.join(dest, 'guide'));
    await fs.rename(path.join(dest, 'docs/old-name.md'), path.join(dest, 'guide/new-name.md'));

    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([
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
    const baseline = await sandboxOf({ 'b-old.txt': 'dup\n', 'a-old.txt': 'dup\n', 'c-old.txt': 'other\n' });
    await fs.rm(path.join(dest, 'a-old.txt'));
    await fs.rm(path.join(dest, 'b-old.txt'));
    await fs.rm(path.join(dest, 'c-old.txt'));
    await write(dest, 'z-new.txt', 'dup\n');
    await write(dest, 'y-new.txt', 'dup\n');
    await write(dest, 'x-new.txt', 'dup\n');

    const summary = (await computeChanges(PROJECT, root, dest, baseline)).map((c) =>
      [c.operation, c.fromPath, c.path].filter((part) => part !== null).join(' '),
    );
    expect(summary).toEqual([
      'DELETE c-old.txt',
      'MOVE a-old.txt x-new.txt',
      'MOVE b-old.txt y-new.txt',
      'CREATE z-new.txt',
    ]);
    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual(
      await computeChanges(PROJECT, root, dest, baseline),
    );
  });

  it('pairs one deleted file with the first of two identical new files', async () => {
    const baseline = await sandboxOf({ 'src.txt': 'content\n' });
    await fs.rm(path.join(dest, 'src.txt'));
    await write(dest, 'copy-b.txt', 'content\n');
    await write(dest, 'copy-a.txt', 'content\n');

    const changes = await computeChanges(PROJECT, root, dest, baseline);
    expect(changes.map((c) => [c.operation, c.fromPath, c.path])).toEqual([
      ['MOVE', 'src.txt', 'copy-a.txt'],
      ['CREATE', null, 'copy-b.txt'],
    ]);
  });

  it('ignores symlinks on both sides and .git changes', async () => {
    const baseline = await sandboxOf({ 'real.txt': 'real\n' });
    await fs.symlink('real.txt', path.join(root, 'old-link'));
    await fs.symlink('real.txt', path.join(dest, 'new-link'));
    await fs.symlink(path.join(base, 'outside'), path.join(dest, 'escape'));
    await write(dest, '.git/HEAD', 'ref: refs/heads/other\n');
    await write(dest, 'pkg/.git/config', '[core]\n');

    expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([]);
  });

  it("refuses, as the plan's failure, a file a step put under another spelling of .git", async () => {
    const baseline = await sandboxOf({ 'real.txt': 'real\n' });
    // `.GIT` is `.git` on a case-insensitive filesystem: Apply would write a git hook there.
    await write(dest, '.GIT/hooks/pre-commit', '#!/bin/sh\nexit 0\n');
    const outcome = await computeChanges(PROJECT, root, dest, baseline).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(UnrecordableChangesetError);
    expect((outcome as Error).message).toMatch(/^cannot record a change in local\/demo: .*\.GIT/);
  });

  it('keeps binary content byte for byte', async () => {
    const binary = new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13, 0]);
    await write(root, 'img.bin', new Uint8Array([0, 0, 0]));
    const baseline = await createSandbox(root, dest);
    await write(dest, 'img.bin', binary);
    await write(dest, 'new.bin', binary);

    const changes = await computeChanges(PROJECT, root, dest, baseline);
    expect(changes.map((c) => [c.operation, c.path])).toEqual([
      ['MODIFY', 'img.bin'],
      ['CREATE', 'new.bin'],
    ]);
    expect(changes[0]?.beforeContent).toEqual(new Uint8Array([0, 0, 0]));
    expect(changes[0]?.afterContent).toEqual(binary);
    expect(changes[1]?.afterContent).toEqual(binary);
    expect(changes[1]?.afterHash).toBe(sha(binary));
  });
  describe('when the user edits the project while Execute runs', () => {
    it('records no change for a project file edited after the copy that the sandbox left alone', async () => {
      const baseline = await sandboxOf({ 'README.md': 'v1\n', 'src/a.ts': 'a\n' });
      await write(root, 'README.md', 'edited by the user\n');

      expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([]);
    });

    it('records no DELETE for a project file added after the copy', async () => {
      const baseline = await sandboxOf({ 'README.md': 'v1\n' });
      await write(root, 'new.txt', 'added by the user\n');
      await write(root, 'notes/todo.md', 'also added\n');

      expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([]);
    });

    it('records no CREATE for a project file removed after the copy that the sandbox left alone', async () => {
      const baseline = await sandboxOf({ 'README.md': 'v1\n', 'old.txt': 'old\n' });
      await fs.rm(path.join(root, 'old.txt'));

      expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([]);
    });

    it('keeps the baseline hash as beforeHash of a MODIFY, so Apply refuses to overwrite the user edit', async () => {
      const baseline = await sandboxOf({ 'README.md': 'v1\n' });
      await write(root, 'README.md', 'edited by the user\n');
      await write(dest, 'README.md', 'edited by the actor\n');

      const changes = await computeChanges(PROJECT, root, dest, baseline);
      expect(changes).toEqual([
        {
          project: PROJECT,
          operation: 'MODIFY',
          path: 'README.md',
          fromPath: null,
          beforeHash: sha('v1\n'),
          afterHash: sha('edited by the actor\n'),
          // The bytes Execute saw are gone from the project: the user's are not shown as "before".
          beforeContent: null,
          afterContent: bytes('edited by the actor\n'),
        },
      ]);
      expect(changes[0]?.beforeHash).not.toBe(sha('edited by the user\n'));
      expect(await validateChangeset(changesetOf(changes))).toHaveLength(1);
      expect(await fs.readFile(path.join(root, 'README.md'), 'utf8')).toBe('edited by the user\n');
    });

    it('keeps the baseline hash and drops beforeContent for a DELETE of a file the user edited', async () => {
      const baseline = await sandboxOf({ 'a.txt': 'v1\n', 'b.txt': 'b\n' });
      await write(root, 'a.txt', 'edited by the user\n');
      await fs.rm(path.join(root, 'b.txt'));
      await fs.rm(path.join(dest, 'a.txt'));
      await fs.rm(path.join(dest, 'b.txt'));

      expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([
        {
          project: PROJECT,
          operation: 'DELETE',
          path: 'a.txt',
          fromPath: null,
          beforeHash: sha('v1\n'),
          afterHash: null,
          beforeContent: null,
          afterContent: null,
        },
        {
          project: PROJECT,
          operation: 'DELETE',
          path: 'b.txt',
          fromPath: null,
          beforeHash: sha('b\n'),
          afterHash: null,
          beforeContent: null,
          afterContent: null,
        },
      ]);
    });

    it('still detects a MOVE, with the baseline hash of its source', async () => {
      const baseline = await sandboxOf({ 'docs/old.md': 'text\n', 'keep.md': 'keep\n', 'edited.md': 'v1\n' });
      await write(root, 'keep.md', 'edited by the user\n');
      await write(root, 'added.md', 'added by the user\n');
      await write(root, 'edited.md', 'edited by the user\n');
      await fs.rename(path.join(dest, 'docs/old.md'), path.join(dest, 'new.md'));
      await fs.rename(path.join(dest, 'edited.md'), path.join(dest, 'renamed.md'));

      expect(await computeChanges(PROJECT, root, dest, baseline)).toEqual([
        {
          project: PROJECT,
          operation: 'MOVE',
          path: 'new.md',
          fromPath: 'docs/old.md',
          beforeHash: sha('text\n'),
          afterHash: sha('text\n'),
          beforeContent: null,
          afterContent: null,
        },
        {
          project: PROJECT,
          operation: 'MOVE',
          path: 'renamed.md',
          fromPath: 'edited.md',
          beforeHash: sha('v1\n'),
          afterHash: sha('v1\n'),
          beforeContent: null,
          afterContent: null,
        },
      ]);
    });

    it('produces a changeset Apply accepts when the user only touched other files', async () => {
      const baseline = await sandboxOf({ 'README.md': 'v1\n', 'src/a.ts': 'a\n' });
      await write(root, 'README.md', 'edited by the user\n');
      await write(root, 'new.txt', 'added by the user\n');
      await write(dest, 'src/a.ts', 'a2\n');

      const changes = await computeChanges(PROJECT, root, dest, baseline);
      expect(changes.map((c) => [c.operation, c.path, c.beforeContent])).toEqual([
        ['MODIFY', 'src/a.ts', bytes('a\n')],
      ]);
      expect(await validateChangeset(changesetOf(changes))).toEqual([]);
    });
  });
});

describe('changeset limits', () => {
  const MIB = 1024 * 1024;

  /** What computeChanges threw, or a failure when it returned. */
  async function refusal(...args: Parameters<typeof computeChanges>): Promise<ChangesetTooLargeError> {
    const outcome = await computeChanges(...args).catch((error: unknown) => error);
    if (!(outcome instanceof ChangesetTooLargeError))
      throw new Error(`expected a refusal, got ${String(outcome)}`);
    return outcome;
  }

  it('refuses a step that created 2,001 files, naming the count limit and the first file over it', async () => {
    await write(root, 'README.md', 'hi\n');
    const baseline = await createSandbox(root, dest);
    const names = Array.from({ length: 2001 }, (_, i) => `many/f${String(i).padStart(4, '0')}.txt`);
    await fs.mkdir(path.join(dest, 'many'));
    await Promise.all(names.map((name) => fs.writeFile(path.join(dest, name), 'x')));

    const refused = await refusal(PROJECT, root, dest, baseline);
    expect(refused.breach).toMatchObject({ limit: 'files', path: 'many/f2000.txt' });
    expect(refused.message).toBe(
      'The changeset is too large: more than 2,000 files changed, the limit for one changeset; ' +
        'the first over it is many/f2000.txt in local/demo',
    );

    await fs.rm(path.join(dest, 'many/f2000.txt'));
    expect(await computeChanges(PROJECT, root, dest, baseline)).toHaveLength(2000);
  });

  it('refuses a file of 10 MiB and one byte, naming it; one of 10 MiB is kept', async () => {
    const baseline = await createSandbox(root, dest);
    await write(dest, 'assets/big.bin', Buffer.alloc(10 * MIB + 1, 7));

    const refused = await refusal(PROJECT, root, dest, baseline);
    expect(refused.breach).toMatchObject({ limit: 'file-bytes', path: 'assets/big.bin' });
    expect(refused.message).toBe(
      'The changeset is too large: assets/big.bin in local/demo is 10,485,761 bytes, over the limit of ' +
        '10 MiB (10,485,760 bytes) for one file',
    );

    await fs.truncate(path.join(dest, 'assets/big.bin'), 10 * MIB);
    const [kept] = await computeChanges(PROJECT, root, dest, baseline);
    expect(kept?.afterContent?.byteLength).toBe(10 * MIB);
  });

  it('counts old contents kept for a diff towards the total', async () => {
    await write(root, 'a.txt', '0123456789');
    const baseline = await createSandbox(root, dest);
    await write(dest, 'a.txt', 'abcdefghij');
    const limits = { maxFiles: 10, maxFileBytes: 10, maxTotalBytes: 15 };

    const refused = await refusal(PROJECT, root, dest, baseline, { tally: new ChangesetTally(limits) });
    expect(refused.breach).toMatchObject({ limit: 'total-bytes', path: 'a.txt' });
    const roomy = new ChangesetTally({ ...limits, maxTotalBytes: 20 });
    expect(await computeChanges(PROJECT, root, dest, baseline, { tally: roomy })).toHaveLength(1);
  });

  it('never counts a large file the steps left alone, nor refuses deleting or shrinking one', async () => {
    await write(root, 'same.bin', 'x'.repeat(20));
    await write(root, 'gone.bin', 'y'.repeat(20));
    await write(root, 'shrunk.bin', 'z'.repeat(20));
    const baseline = await createSandbox(root, dest);
    await fs.rm(path.join(dest, 'gone.bin'));
    await write(dest, 'shrunk.bin', 'z');
    const tally = new ChangesetTally({ maxFiles: 10, maxFileBytes: 8, maxTotalBytes: 8 });

    const changes = await computeChanges(PROJECT, root, dest, baseline, { tally });
    // The old bytes are over the per-file limit: not kept (the diff shows them as unavailable), the hash still is.
    expect(changes.map((c) => [c.operation, c.path, c.beforeHash, c.beforeContent, c.afterContent])).toEqual([
      ['DELETE', 'gone.bin', sha('y'.repeat(20)), null, null],
      ['MODIFY', 'shrunk.bin', sha('z'.repeat(20)), null, bytes('z')],
    ]);
  });

  it('counts every project of one changeset with one tally', async () => {
    const baseline = await createSandbox(root, dest);
    await write(dest, 'a.txt', 'a');
    await write(dest, 'b.txt', 'b');
    const tally = new ChangesetTally({ maxFiles: 3, maxFileBytes: 10, maxTotalBytes: 100 });

    expect(await computeChanges(PROJECT, root, dest, baseline, { tally })).toHaveLength(2);
    const refused = await refusal('local/other', root, dest, baseline, { tally });
    expect(refused.breach).toMatchObject({ limit: 'files', project: 'local/other', path: 'b.txt' });
  });
});

describe('the ignore list', () => {
  const ignore = ignoreList(['generated/', '*.log']);

  it('copies ignored paths into the sandbox (bar .git), but never records them in the baseline', async () => {
    await write(root, 'src/a.ts', 'a\n');
    await write(root, 'node_modules/dep/index.js', 'dep\n');
    await write(root, 'packages/app/node_modules/x/y.js', 'y\n');
    await write(root, 'generated/api.ts', 'api\n');
    await write(root, 'logs/app.log', 'log\n');
    await write(root, '.git/HEAD', 'ref\n');

    const baseline = await createSandbox(root, dest, ignore);
    expect([...baseline.keys()]).toEqual(['src/a.ts']);
    const copied = (await tree(dest)).filter((entry) => entry.includes(' file '));
    expect(copied.map((entry) => entry.split(' ')[0])).toEqual([
      'generated/api.ts',
      'logs/app.log',
      'node_modules/dep/index.js',
      'packages/app/node_modules/x/y.js',
      'src/a.ts',
    ]);
  });

  it('leaves node_modules and the action-ignored globs out of the changeset, whatever the steps did there', async () => {
    await write(root, 'src/a.ts', 'a\n');
    await write(root, 'node_modules/dep/index.js', 'dep\n');
    await write(root, 'packages/app/node_modules/x/y.js', 'y\n');
    await write(root, 'generated/api.ts', 'api\n');
    const baseline = await createSandbox(root, dest, ignore);

    await write(dest, 'node_modules/dep/index.js', 'patched\n');
    await write(dest, 'node_modules/new/index.js', 'new\n');
    await fs.rm(path.join(dest, 'packages/app/node_modules'), { recursive: true });
    await write(dest, 'generated/api.ts', 'regenerated\n');
    await write(dest, 'generated/more/b.ts', 'b\n');
    await write(dest, 'debug.log', 'noise\n');
    await write(dest, 'src/deep/trace.log', 'noise\n');
    await write(dest, 'dist/bundle.js', 'built\n');
    await write(dest, 'src/b.ts', 'b\n');

    const changes = await computeChanges(PROJECT, root, dest, baseline, { ignore });
    expect(changes.map((c) => [c.operation, c.path])).toEqual([['CREATE', 'src/b.ts']]);
  });

  it('records a file moved into an ignored directory as deleted, and one moved out of it as created', async () => {
    await write(root, 'src/a.ts', 'a\n');
    await write(root, 'node_modules/dep.js', 'dep\n');
    const baseline = await createSandbox(root, dest, ignore);
    await fs.rename(path.join(dest, 'src/a.ts'), path.join(dest, 'node_modules/a.ts'));
    await fs.rename(path.join(dest, 'node_modules/dep.js'), path.join(dest, 'src/dep.js'));

    const changes = await computeChanges(PROJECT, root, dest, baseline, { ignore });
    expect(changes.map((c) => [c.operation, c.path])).toEqual([
      ['DELETE', 'src/a.ts'],
      ['CREATE', 'src/dep.js'],
    ]);
  });

  it('turns no ignored baseline entry into a deletion when the baseline was made without the list', async () => {
    await write(root, 'generated/api.ts', 'api\n');
    const baseline = await createSandbox(root, dest);
    await fs.rm(path.join(dest, 'generated'), { recursive: true });
    expect(await computeChanges(PROJECT, root, dest, baseline, { ignore })).toEqual([]);
  });
});
