/**
 * Issue 12's attack classes end to end: each test adds a hostile action through the CLI, runs it as a plan on the
 * real dev server, worker and database, and shows the attack refused or contained. "Nothing outside the sandbox
 * changed" is checked by fingerprints (test/helpers/tree-hash.ts) of the project, the engine's own checkout and a
 * canary file outside both, taken before the plan and compared after it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { treeHash } from '../helpers/tree-hash';
import { waitUntil } from '../helpers/wait';

let h: Harness;
let outside: string;
let canary: string;
const SECRET = `canary-secret-${process.pid}`;

/** Parts of the checkout that change without any plan's help (installs, generated code, git's object store). */
const ENGINE_SKIP = ['node_modules', '.data', 'storage/generated', '.git/objects', '.git/logs', 'coverage'];

beforeAll(async () => {
  // A secret only the worker's own environment holds: no step may see it by any route.
  process.env.CLEVERAGENTS_MODEL_API_KEY = SECRET;
  h = await createHarness();
  outside = mkdtempSync(path.join(h.projectDir, '..', 'outside-'));
  canary = path.join(outside, 'canary.txt');
  writeFileSync(canary, 'canary\n');
});

afterAll(async () => {
  delete process.env.CLEVERAGENTS_MODEL_API_KEY;
  await h?.teardown();
});

async function cli(...argv: string[]): Promise<string> {
  const out = await h.cli(...argv);
  if (out.code !== 0) throw new Error(`agents ${argv.join(' ')} exited ${out.code}: ${out.stderr}`);
  return out.stdout;
}

interface Fingerprints {
  project: string;
  engine: string;
  canary: string;
}

async function fingerprints(project: string): Promise<Fingerprints> {
  return {
    project: await treeHash(project),
    engine: await treeHash(REPO_ROOT, { skip: ENGINE_SKIP }),
    canary: readFileSync(canary, 'utf8'),
  };
}

let projects = 0;

interface AttackOptions {
  /** Makes the project hostile: links, odd files. */
  setup?: (project: string) => void;
  automation?: 'full' | 'review' | 'manual';
  args?: string[];
  /** Return as soon as the plan is created, instead of once it needs a person or has ended. */
  noWait?: boolean;
}

/**
 * A git repository registered as a project, made hostile by `setup`, and a plan of `action` (YAML, its name on
 * the first line) on it: returns the plan once it needs a person or has ended, with the fingerprints from before.
 */
async function runAttack(
  action: string,
  options: AttackOptions = {},
): Promise<{ planId: string; project: string; before: Fingerprints }> {
  const setup = options.setup ?? (() => undefined);
  const name = `local/victim-${++projects}`;
  const project = path.join(h.projectDir, `victim-${projects}`);
  mkdirSync(project, { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  writeFileSync(path.join(project, 'README.md'), '# victim\n');
  setup(project);
  await cli('project', 'add', name, '--path', project);
  const file = path.join(outside, `action-${projects}.yaml`);
  writeFileSync(file, action);
  await cli('action', 'add', '-f', file);
  const actionName = /^name: (\S+)/m.exec(action)?.[1] ?? '';
  const before = await fingerprints(project);
  const created = JSON.parse(
    await cli(
      'plan',
      'use',
      actionName,
      '--project',
      name,
      '--automation',
      options.automation ?? 'full',
      '--format',
      'json',
      ...(options.args ?? []),
    ),
  ) as { plan_id: string };
  if (options.noWait !== true) await h.client.waitForInput(created.plan_id);
  return { planId: created.plan_id, project, before };
}

async function expectUntouched(project: string, before: Fingerprints): Promise<void> {
  expect(await fingerprints(project)).toEqual(before);
}

/** The bytes a plan's changeset would write to `file`, as text ('' when the changeset has no such file). */
async function changed(planId: string, file: string): Promise<string> {
  const changeset = await h.changesets.latestForPlan(planId);
  const change = changeset?.changes.find((c) => c.path === file);
  return change?.afterContent === null || change === undefined
    ? ''
    : Buffer.from(change.afterContent).toString();
}

describe('what a step can reach', () => {
  it("cannot read the worker's secrets by /proc, env or the database, nor write outside its sandbox", async () => {
    // The database a step could reach is a file only on SQLite, the backend this suite runs on (jest.config.js).
    const databaseFile = h.databaseFile;
    if (databaseFile === null) throw new Error('attacks.test.ts runs on the SQLite project only');
    const { planId, project, before } = await h.withWorker(() =>
      runAttack(
        [
          'name: local/snoop',
          'steps:',
          '  - run: >-',
          '      { cat /proc/$PPID/environ /proc/1/environ /proc/*/environ; env; cat /proc/*/cmdline;',
          `      cat ${JSON.stringify(databaseFile)}; } > seen.txt 2>&1;`,
          `      echo pwned > ${JSON.stringify(databaseFile)};`,
          `      echo pwned >> ${JSON.stringify(canary)}; echo pwned > ${JSON.stringify(path.join(REPO_ROOT, 'pwned'))};`,
          '      true',
        ].join('\n') + '\n',
      ),
    );
    const seen = await changed(planId, 'seen.txt');
    expect(seen).not.toBe('');
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toContain('SQLite format 3');
    expect(seen).not.toMatch(/DATABASE_URL|TEMPORAL_ADDRESS/);
    // The plan ran to its end; only the changeset's seen.txt reached the project.
    expect((await h.plans.getPlan(planId))?.phase).toBe('APPLIED');
    const after = await fingerprints(project);
    expect(after.engine).toBe(before.engine);
    expect(after.canary).toBe(before.canary);
    expect(readdirSync(project).sort()).toEqual(['.git', 'README.md', 'seen.txt']);
    expect(readFileSync(databaseFile).subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it("cannot find the engine's repository, or any repository above its sandbox, with git", async () => {
    const { planId, project, before } = await h.withWorker(() =>
      runAttack(
        'name: local/git-escape\nsteps:\n' +
          "  - run: '{ git rev-parse --show-toplevel; git status; git reset --hard; } > git.txt 2>&1; true'\n",
      ),
    );
    expect(await changed(planId, 'git.txt')).toMatch(/not a git repository/);
    const after = await fingerprints(project);
    expect(after.engine).toBe(before.engine);
    expect(after.canary).toBe(before.canary);
  });

  it("cannot write the real project during Execute through the project's own absolute link", async () => {
    const { planId, project, before } = await h.withWorker(() =>
      runAttack("name: local/link-through\nsteps:\n  - run: 'echo pwned > notes-link'\n", {
        automation: 'review',
        setup: (dir) => {
          writeFileSync(path.join(dir, 'notes.txt'), 'notes\n');
          symlinkSync(path.join(dir, 'notes.txt'), path.join(dir, 'notes-link'));
        },
      }),
    );
    // Contained in the sandbox: the project is as it was, and the write waits in the changeset for review.
    expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE' });
    await expectUntouched(project, before);
    const changeset = await h.changesets.latestForPlan(planId);
    expect(changeset?.changes.map((c) => `${c.operation} ${c.path}`)).toEqual(['MODIFY notes.txt']);
    await h.client.cancel(planId);
  });

  it('leaves nothing running once its step ends, even a process in a new session', async () => {
    // A duration no other process uses, to find it by its command line.
    const seconds = String(400_000 + (process.pid % 100_000));
    await h.withWorker(() =>
      runAttack(`name: local/orphan\nsteps:\n  - run: 'setsid sleep ${seconds} & true'\n`),
    );
    const marker = `sleep\0${seconds}`;
    const alive = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });
    expect(alive).toEqual([]);
  });
});

describe('what Apply writes', () => {
  it('never writes through a link of the project, whatever the changeset names (hooks -> .git/hooks)', async () => {
    const { planId, project, before } = await h.withWorker(() =>
      runAttack(
        'name: local/hook\nsteps:\n  - delete: hooks\n' +
          '  - create: hooks/pre-commit\n    content: "#!/bin/sh\\necho pwned\\n"\n',
        { setup: (dir) => symlinkSync('.git/hooks', path.join(dir, 'hooks')) },
      ),
    );
    const plan = await h.plans.getPlan(planId);
    expect(plan).toMatchObject({ phase: 'APPLY', state: 'ERRORED' });
    expect(plan?.error).toMatchObject({ type: 'ChangesetRefused' });
    await expectUntouched(project, before);
  });

  it('refuses a path that is .git under another spelling, before anything is written', async () => {
    const { planId, project, before } = await h.withWorker(() =>
      runAttack('name: local/dotgit\nsteps:\n  - create: .GIT/hooks/pre-commit\n    content: "pwned"\n'),
    );
    const plan = await h.plans.getPlan(planId);
    expect(plan).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
    expect(plan?.error?.message).toMatch(/\.GIT/i);
    await expectUntouched(project, before);
  });

  it('writes a valid name that leaves no room for a temporary suffix, with the rest, all or nothing', async () => {
    const long = `${'漢'.repeat(81)}.md`;
    const { planId, project } = await h.withWorker(() =>
      runAttack(
        'name: local/long-name\nsteps:\n' +
          ['a.md', long, 'z.md'].map((f) => `  - create: "${f}"\n    content: "x"\n`).join(''),
      ),
    );
    expect((await h.plans.getPlan(planId))?.phase).toBe('APPLIED');
    expect(
      readdirSync(project)
        .filter((f) => f.endsWith('.md'))
        .sort(),
    ).toEqual(['README.md', 'a.md', long, 'z.md'].sort());
  });
});

describe('what a person reviews', () => {
  it('shows a script hidden behind a NUL byte as text, the NUL escaped', async () => {
    await h.withWorker(async () => {
      const { planId } = await runAttack(
        'name: local/nul\nsteps:\n' +
          "  - create: evil.js\n    content: \"\\0require('child_process').execSync('id');\\n\"\n",
        { automation: 'review' },
      );
      const diff = await h.cli('plan', 'diff', planId, '--format', 'plain');
      expect(diff.code).toBe(0);
      expect(diff.stdout).toContain("+\\x00require('child_process').execSync('id');");
      expect(diff.stdout).not.toContain('Binary files');
      await h.client.cancel(planId);
    });
  });

  it('keeps a `$` in an argument literal in a replacement', async () => {
    const { planId } = await h.withWorker(() =>
      runAttack(
        [
          'name: local/dollar',
          'arguments:',
          '  - name: value',
          'steps:',
          '  - replace: README.md',
          '    pattern: "victim"',
          '    with: "{{value}}"',
        ].join('\n') + '\n',
        { args: ['--arg', "value=$'$&$`"] },
      ),
    );
    expect(await changed(planId, 'README.md')).toBe("# $'$&$`\n");
  });
});

describe('a step that would stall the worker', () => {
  it('fails on its time limit while another plan is answered at once', async () => {
    await h.withWorker(async () => {
      const calm = await runAttack('name: local/calm\nsteps:\n  - create: calm.txt\n    content: "calm"\n', {
        automation: 'manual',
      });
      const evil = await runAttack(
        'name: local/backtrack\nsteps:\n  - replace: evil.txt\n    pattern: "^(a+)+$"\n    with: "x"\n',
        { setup: (dir) => writeFileSync(path.join(dir, 'evil.txt'), `${'a'.repeat(32)}b`), noWait: true },
      );
      await waitUntil('the backtracking replace to be running', async () => {
        const plan = await h.plans.getPlan(evil.planId);
        return plan?.phase === 'EXECUTE' && plan.state === 'PROCESSING';
      });
      const started = Date.now();
      await cli('plan', 'advance', calm.planId, '--yes');
      expect(Date.now() - started).toBeLessThan(5_000);
      const stopped = await h.client.waitForInput(evil.planId, 120_000);
      expect(stopped).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(stopped.error?.message).toMatch(/evil\.txt/);
      await h.client.cancel(calm.planId);
    });
  }, 180_000);
});
