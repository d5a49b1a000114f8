/**
 * `plan context add` takes regular files a person chose, within a size budget: each test tries to get something
 * else in (a kernel file, a device, a FIFO, a socket, too many bytes, the secrets a `-R .` would sweep up) and
 * checks the refusal is one error line, exit code 2, and nothing stored.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import path from 'node:path';
import {
  MAX_CONTEXT_FILE_BYTES,
  MAX_CONTEXT_TOTAL_BYTES,
  collectContextFiles,
  readContextFile,
} from '../../client/cli/plan-work';
import { createHarness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';
import type { Harness } from '../helpers/harness';

let h: Harness;
let planId: string;
let root: string;
let socket: Server;

/** Just under a single file's limit: five of them fit in one plan, six do not. */
const CHUNK = MAX_CONTEXT_FILE_BYTES - 1;

beforeAll(async () => {
  h = await createHarness();
  root = mkdtempSync(path.join(h.projectDir, '..', 'context-'));
  // No worker: the plan stays queued, open for context, for the whole file.
  planId = (
    await h.client.create({
      actionName: 'local/example',
      projects: ['local/demo'],
      automationLevel: 'MANUAL',
      arguments: {},
      createdBy: 'tester',
    })
  ).planId;
  await waitForRow();
  writeFileSync(path.join(root, 'notes.md'), 'notes\n');
  symlinkSync('/proc/self/environ', path.join(root, 'environ-link'));
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
  socket = createServer();
  await new Promise<void>((resolve) => socket.listen(path.join(root, 'sock'), resolve));
  for (let i = 0; i < 6; i++) writeFileSync(path.join(root, `big-${i}.txt`), 'x'.repeat(CHUNK));
  writeFileSync(path.join(root, 'too-big.txt'), 'x'.repeat(MAX_CONTEXT_FILE_BYTES + 1));
});

afterAll(async () => {
  await new Promise((resolve) => socket?.close(resolve));
  await h?.teardown();
});

async function waitForRow(): Promise<void> {
  await waitUntil(`the row of plan ${planId}`, async () => (await h.plans.getPlan(planId)) !== null, {
    timeoutMs: 10_000,
  });
}

async function listed(): Promise<Array<{ path: string; size: number }>> {
  const list = await h.cli('plan', 'context', 'list', planId, '--format', 'json');
  expect(list.code).toBe(0);
  return JSON.parse(list.stdout) as Array<{ path: string; size: number }>;
}

/** Runs `context add` expecting a refusal: exit 2, one stderr line matching `message`, the context unchanged. */
async function expectRefused(args: string[], message: RegExp): Promise<void> {
  const before = await listed();
  const result = await h.cli('plan', 'context', 'add', planId, ...args);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n')).toEqual([expect.stringMatching(message), '']);
  expect(await listed()).toEqual(before);
}

describe('only regular files', () => {
  const at = (name: string) => path.join(root, name);

  // A context that is not empty, so "unchanged" is more than "still empty": storing anything would show.
  beforeAll(async () => {
    expect((await h.cli('plan', 'context', 'add', planId, at('notes.md'))).code).toBe(0);
  });

  afterAll(async () => {
    expect((await h.cli('plan', 'context', 'clear', planId)).code).toBe(0);
  });

  // Thunks: the table is built before beforeAll has made `root`.
  it.each<[string, () => string[], RegExp]>([
    [
      'a /proc file',
      () => ['/proc/self/environ'],
      /^error: \/proc\/self\/environ is under \/proc \(it resolves to/,
    ],
    [
      'a link into /proc',
      () => [at('environ-link')],
      /environ-link is under \/proc \(it resolves to \/proc\/\d+\/environ\)/,
    ],
    [
      '/proc itself, recursively',
      () => ['/proc', '--recursive'],
      /^error: \/proc is under \/proc; only regular files/,
    ],
    ['/sys, recursively', () => ['/sys', '--recursive'], /^error: \/sys is under \/sys; only regular files/],
    ['a device', () => ['/dev/zero'], /^error: \/dev\/zero is under \/dev; only regular files/],
    ['a FIFO', () => [at('pipe')], /pipe is a FIFO; only regular files and directories can be context$/],
    ['a socket', () => [at('sock')], /sock is a socket; only regular files and directories can be context$/],
    // The good file named first is not stored again either (its added_at would change): everything is checked
    // before anything is.
    ['a FIFO after a good file', () => [at('notes.md'), at('pipe')], /pipe is a FIFO/],
  ])('refuses %s, storing nothing', async (_name, args, message) => {
    await expectRefused(args(), message);
  });

  it('checks the opened file itself, so one swapped in after the first look is refused, without hanging', async () => {
    // The reader is called directly, as if the path had passed its checks and then been replaced: a FIFO opened
    // for reading would block until a writer came, were it not opened non-blocking.
    await expect(readContextFile(at('pipe'), 'pipe', MAX_CONTEXT_TOTAL_BYTES)).rejects.toThrow(
      /^pipe is a FIFO; only regular files/,
    );
    await expect(readContextFile('/dev/zero', 'zero', MAX_CONTEXT_TOTAL_BYTES)).rejects.toThrow(
      /^zero is a device; only regular files/,
    );
    // A link put in place of the file is not followed.
    await expect(readContextFile(at('environ-link'), 'link', MAX_CONTEXT_TOTAL_BYTES)).rejects.toThrow(
      /^link: cannot be read \(ELOOP\)$/,
    );
  });

  it('refuses a kernel file even where its path does not give it away, by its size', async () => {
    // As if procfs were mounted elsewhere: the path check is passed by calling the reader directly.
    await expect(readContextFile('/proc/self/status', 'status', MAX_CONTEXT_TOTAL_BYTES)).rejects.toThrow(
      /^status reports 0 bytes but holds more; it is not a plain file/,
    );
  });

  it('skips FIFOs, sockets and links met in a recursive walk, and says so', async () => {
    const dir = mkdtempSync(path.join(root, 'walk-'));
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    symlinkSync('/proc/self/environ', path.join(dir, 'link'));
    const collected = await collectContextFiles([dir], { recursive: true });
    expect(collected.files.map((f) => path.basename(f.path))).toEqual(['a.txt']);
    expect(collected.skipped).toEqual([
      'skipped 2 entries that are neither a regular file nor a directory (symbolic links, FIFOs, sockets, devices)',
    ]);
  });
});

describe('size limits', () => {
  const big = (i: number) => path.join(root, `big-${i}.txt`);

  it('refuses a file over the per-file limit', async () => {
    await expectRefused(
      [path.join(root, 'too-big.txt')],
      new RegExp(`too-big\\.txt is ${MAX_CONTEXT_FILE_BYTES + 1} bytes; context files are limited to`),
    );
  });

  it('refuses one add over the total limit, reading no further', async () => {
    await expectRefused(
      [0, 1, 2, 3, 4, 5].map(big),
      new RegExp(
        `big-5\\.txt \\(${CHUNK} bytes\\) would take this add over ${MAX_CONTEXT_TOTAL_BYTES} bytes`,
      ),
    );
  });

  it('counts what the plan already holds, a re-added file once', async () => {
    const first = await h.cli('plan', 'context', 'add', planId, ...[0, 1, 2, 3].map(big));
    expect(first.code).toBe(0);
    // Each add is small; together with the stored four they are over.
    await expectRefused(
      [4, 5].map(big),
      new RegExp(
        `^error: plan ${planId}'s context would hold ${6 * CHUNK} bytes \\(${4 * CHUNK} already stored\\); ` +
          `a plan's context is limited to ${MAX_CONTEXT_TOTAL_BYTES} bytes; nothing was added`,
      ),
    );
    // Adding the same four again replaces them: still four files' worth, and one more fits.
    const again = await h.cli('plan', 'context', 'add', planId, ...[0, 1, 2, 3, 4].map(big));
    expect(again.code).toBe(0);
    expect((await listed()).map((f) => f.size)).toEqual([CHUNK, CHUNK, CHUNK, CHUNK, CHUNK]);
    expect((await h.cli('plan', 'context', 'clear', planId)).code).toBe(0);
  });
});

describe('hidden files', () => {
  let project: string;

  beforeAll(() => {
    project = mkdtempSync(path.join(root, 'project-'));
    mkdirSync(path.join(project, '.ssh'));
    mkdirSync(path.join(project, 'src', '.cache'), { recursive: true });
    writeFileSync(path.join(project, '.env'), 'TOKEN=secret\n');
    writeFileSync(path.join(project, '.npmrc'), '//registry.npmjs.org/:_authToken=secret\n');
    writeFileSync(path.join(project, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
    writeFileSync(path.join(project, 'src', '.cache', 'x'), 'x\n');
    writeFileSync(path.join(project, 'README.md'), 'readme\n');
    writeFileSync(path.join(project, 'src', 'app.ts'), 'app\n');
  });

  afterEach(async () => {
    expect((await h.cli('plan', 'context', 'clear', planId)).code).toBe(0);
  });

  const relative = async () => (await listed()).map((f) => path.relative(project, f.path));

  it('a recursive add skips them and says how many', async () => {
    const result = await h.cli('plan', 'context', 'add', planId, project, '--recursive');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      'skipped 4 hidden entries (names starting with "."); name them or pass --include-hidden to add them\n',
    );
    expect(await relative()).toEqual(['README.md', 'src/app.ts']);
  });

  it('a recursive add that finds only hidden files stores nothing and says why', async () => {
    const dots = mkdtempSync(path.join(root, 'dots-'));
    writeFileSync(path.join(dots, '.env'), 'TOKEN=secret\n');
    await expectRefused([dots, '--recursive'], /^error: no files to add; skipped 1 hidden entry/);
  });

  it('--include-hidden adds them', async () => {
    const result = await h.cli('plan', 'context', 'add', planId, project, '--recursive', '--include-hidden');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(await relative()).toEqual([
      '.env',
      '.npmrc',
      '.ssh/id_ed25519',
      'README.md',
      'src/.cache/x',
      'src/app.ts',
    ]);
  });

  it('a hidden file or directory named on the command line is taken', async () => {
    const result = await h.cli(
      'plan',
      'context',
      'add',
      planId,
      path.join(project, '.env'),
      path.join(project, '.ssh'),
      '--recursive',
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(await relative()).toEqual(['.env', '.ssh/id_ed25519']);
  });
});
