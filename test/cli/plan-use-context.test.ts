/**
 * `plan use … --context`: the files are stored before the plan's workflow starts, so its Strategize sees them even
 * with a worker already polling. A path that cannot be context refuses the whole command before anything exists:
 * no plan row, no workflow, no stored file. The guards are `plan context add`'s (test/cli/context-add.test.ts);
 * these tests try them through `plan use`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_CONTEXT_FILE_BYTES } from '../../client/cli/plan-work';
import { planWorkflowId } from '../../domain/ids';
import { sha256 } from '../../lib/sha256';
import { sharedPrismaClient } from '../../storage/prisma';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;
let root: string;

beforeAll(async () => {
  h = await createHarness();
  root = realpathSync(mkdtempSync(path.join(h.projectDir, '..', 'context-')));
  mkdirSync(path.join(root, 'docs', 'deeper'), { recursive: true });
  writeFileSync(path.join(root, 'brief.md'), 'The brief.\n');
  writeFileSync(path.join(root, 'docs', 'guide.md'), 'The guide.\n');
  writeFileSync(path.join(root, 'docs', 'deeper', 'notes.txt'), 'Deeper notes.\n');
  writeFileSync(path.join(root, 'docs', '.env'), 'TOKEN=secret\n');
  // Outside the tree handed over: a link inside it must not carry it in.
  writeFileSync(path.join(root, 'secret.txt'), 'not for the model\n');
  symlinkSync(path.join(root, 'secret.txt'), path.join(root, 'docs', 'escape.md'));
  symlinkSync('/proc/self/environ', path.join(root, 'environ-link'));
  symlinkSync(path.join(root, 'nothing-here'), path.join(root, 'dangling'));
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
  writeFileSync(path.join(root, 'too-big.txt'), 'x'.repeat(MAX_CONTEXT_FILE_BYTES + 1));
});

afterAll(async () => {
  await h?.teardown();
});

const at = (...parts: string[]) => path.join(root, ...parts);
const use = (...args: string[]) =>
  h.cli('plan', 'use', 'local/example', '--project', 'local/demo', '--automation', 'manual', ...args);

async function storedContextRows(): Promise<number> {
  return sharedPrismaClient(h.databaseUrl).planContextFile.count();
}

async function workflowsOnQueue(): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of h.env.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}'` })) {
    ids.push(wf.workflowId);
  }
  return ids;
}

describe('refused before anything exists', () => {
  it.each<[string, () => string[], RegExp]>([
    ['a missing file', () => ['--context', at('missing.md')], /missing\.md: no such file or directory$/],
    [
      'a directory without --recursive',
      () => ['--context', at('docs')],
      /docs is a directory; add --recursive to add the files under it$/,
    ],
    [
      'a link into /proc',
      () => ['--context', at('environ-link')],
      /environ-link is under \/proc \(it resolves to \/proc\/\d+\/environ\)/,
    ],
    ['a link to nothing', () => ['--context', at('dangling')], /dangling: a symbolic link to nothing$/],
    [
      'a FIFO after a good file',
      () => ['--context', at('brief.md'), '--context', at('pipe')],
      /pipe is a FIFO/,
    ],
    ['a file over the size limit', () => ['--context', at('too-big.txt')], /too-big\.txt is \d+ bytes/],
    ['--recursive without --context', () => ['--recursive'], /--recursive applies to --context paths/],
    [
      '--include-hidden without --context',
      () => ['--include-hidden'],
      /--include-hidden applies to --context/,
    ],
  ])('%s: exit 2, one error line, no plan, workflow or file', async (_name, args, message) => {
    const result = await use(...args());
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([expect.stringMatching(message), '']);
    expect(await h.plans.listPlans()).toEqual([]);
    expect(await storedContextRows()).toBe(0);
    expect(await workflowsOnQueue()).toEqual([]);
  });

  it('a workflow that cannot start takes its row and context with it', async () => {
    const content = new TextEncoder().encode('context of a plan that never starts\n');
    // A description over the server's payload limit: the start itself is refused, after the row and the files
    // were written.
    await expect(
      h.client.create({
        actionName: 'local/example',
        projects: ['local/demo'],
        arguments: {},
        description: 'x'.repeat(3 * 1024 * 1024),
        createdBy: 'tester',
        contextFiles: [{ path: at('brief.md'), sha256: sha256(content), content }],
      }),
    ).rejects.toThrow();
    expect(await h.plans.listPlans()).toEqual([]);
    expect(await storedContextRows()).toBe(0);
    expect(await workflowsOnQueue()).toEqual([]);
  });
});

describe('seen by Strategize', () => {
  it('stores the files before the workflow starts: the strategy decisions list them', async () => {
    await h.withWorker(async () => {
      const result = await use(
        '--context',
        at('brief.md'),
        '--context',
        at('docs'),
        '--recursive',
        '--format',
        'json',
      );
      expect(result.code).toBe(0);
      // The hidden file and the link out of the tree were left out, and the person is told.
      expect(result.stderr).toBe(
        'skipped 1 hidden entry (names starting with "."); name them or pass --include-hidden to add them\n' +
          'skipped 1 entry that is neither a regular file nor a directory (symbolic links, FIFOs, sockets, devices)\n',
      );
      const planId = (JSON.parse(result.stdout) as { plan_id: string }).plan_id;
      const expected = [at('brief.md'), at('docs', 'deeper', 'notes.txt'), at('docs', 'guide.md')];

      const gate = await h.client.waitForInput(planId);
      expect(gate).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });
      const strategy = (await h.plans.listDecisions(planId)).filter((d) => d.type === 'strategy_choice');
      expect(strategy).toHaveLength(1);
      expect(strategy[0]?.relevantResources.map((r) => r.uri).sort()).toEqual(expected);

      const listed = await h.cli('plan', 'context', 'list', planId, '--format', 'json');
      const files = JSON.parse(listed.stdout) as Array<{ path: string; added_by: string }>;
      expect(files.map((f) => f.path)).toEqual(expected);
      expect(files.every((f) => f.added_by === 'tester')).toBe(true);
      const stored = await h.contextFiles.read(planId);
      expect(stored.map((f) => new TextDecoder().decode(f.content))).toEqual([
        'The brief.\n',
        'Deeper notes.\n',
        'The guide.\n',
      ]);
      expect((await h.cli('plan', 'cancel', planId)).code).toBe(0);
    });
  });

  it('a plan without --context starts as before, and Strategize lists no files', async () => {
    await h.withWorker(async () => {
      const result = await use('--format', 'json');
      expect(result.code).toBe(0);
      const planId = (JSON.parse(result.stdout) as { plan_id: string }).plan_id;
      await h.client.waitForInput(planId);
      const strategy = (await h.plans.listDecisions(planId)).filter((d) => d.type === 'strategy_choice');
      expect(strategy[0]?.relevantResources).toEqual([]);
      expect(await workflowsOnQueue()).toContain(planWorkflowId(planId));
      expect((await h.cli('plan', 'cancel', planId)).code).toBe(0);
    });
  });
});
