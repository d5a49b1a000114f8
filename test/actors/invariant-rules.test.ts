import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkInvariantRule, MAX_LISTED } from '../../actors/invariant-rules';
import type { RuleCheckInput } from '../../actors/invariant-rules';
import type { ChangeSummary } from '../../actors/types';
import type { Workspace } from '../../domain/project-link';
import type { InvariantRule } from '../../domain/invariant-rule';
import type { PlanSpec } from '../../domain/plan';
import { planSpecSchema } from '../../domain/schemas';
import type { Isolation } from '../../sandbox/isolation';
import { testIsolation } from '../helpers/isolation';
import { CREATED_AT, PLAN_ID } from '../unit/fixtures';

let base: string;
let isolation: Isolation;

beforeAll(async () => {
  isolation = await testIsolation();
});

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'invariant-rules-'));
});

afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function plan(): PlanSpec {
  return planSpecSchema.parse({
    planId: PLAN_ID,
    name: 'demo plan',
    actionName: 'local/demo',
    projects: [
      { projectName: 'acme/api', alias: 'api' },
      { projectName: 'acme/web' },
      { projectName: 'acme/docs', readOnly: true },
    ],
    automationLevel: 'MANUAL',
    arguments: {},
    argumentsOrder: [],
    createdAt: CREATED_AT,
  });
}

/** A workspace whose sandbox is a real directory holding the given files (path -> content). */
async function workspace(
  project: string,
  files: Record<string, string>,
  options: { readOnly?: boolean } = {},
): Promise<Workspace> {
  const root = path.join(base, 'projects', project);
  const sandbox = path.join(base, 'sandboxes', project);
  await fs.mkdir(root, { recursive: true });
  await fs.mkdir(sandbox, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(sandbox, rel)), { recursive: true });
    await fs.writeFile(path.join(sandbox, rel), content);
  }
  return { projectName: project, alias: null, readOnly: options.readOnly ?? false, root, sandbox };
}

function noSandbox(project: string): Workspace {
  return {
    projectName: project,
    alias: null,
    readOnly: false,
    root: path.join(base, 'projects', project),
    sandbox: null,
  };
}

function input(changes: ChangeSummary[] | null, patch: Partial<RuleCheckInput> = {}): RuleCheckInput {
  return {
    changes,
    workspaces: [],
    plan: plan(),
    signal: new AbortController().signal,
    progress: () => undefined,
    isolation,
    ...patch,
  };
}

function change(
  operation: ChangeSummary['operation'],
  file: string,
  fromPath: string | null = null,
  project = 'acme/api',
): ChangeSummary {
  return { project, operation, path: file, fromPath };
}

describe('protected_paths', () => {
  const rule: InvariantRule = { protected_paths: ['src/**', 'LICENSE'] };

  it('holds when no change touches a protected glob', async () => {
    const verdict = await checkInvariantRule(
      rule,
      input([change('MODIFY', 'docs/readme.md'), change('CREATE', 'test/a.test.ts')]),
    );
    expect(verdict).toEqual({ status: 'held', evidence: 'no change touches src/**, LICENSE' });
  });

  it('is violated by a change whose path matches, naming the change, its project and the glob', async () => {
    const verdict = await checkInvariantRule(
      rule,
      input([change('MODIFY', 'src/a.ts'), change('DELETE', 'LICENSE', null, 'acme/web')]),
    );
    expect(verdict).toEqual({
      status: 'violated',
      evidence:
        'MODIFY src/a.ts (acme/api) matches protected "src/**", DELETE LICENSE (acme/web) matches protected "LICENSE"',
    });
  });

  it('is violated by a MOVE whose source is protected, even though its destination is not', async () => {
    const verdict = await checkInvariantRule(rule, input([change('MOVE', 'lib/a.ts', 'src/a.ts')]));
    expect(verdict).toEqual({
      status: 'violated',
      evidence: 'MOVE src/a.ts -> lib/a.ts (acme/api) matches protected "src/**"',
    });
  });

  it('matches dotfiles, so a protected directory covers its hidden files', async () => {
    const verdict = await checkInvariantRule(
      { protected_paths: ['config/**'] },
      input([change('MODIFY', 'config/.env')]),
    );
    expect(verdict.status).toBe('violated');
    expect(verdict.evidence).toContain('config/.env');
  });

  it(`lists at most ${MAX_LISTED} offending paths, then "and N more"`, async () => {
    const changes = Array.from({ length: 8 }, (_, i) => change('MODIFY', `src/f${i}.ts`));
    const verdict = await checkInvariantRule(rule, input(changes));
    expect(verdict.status).toBe('violated');
    expect(verdict.evidence).toContain('src/f4.ts');
    expect(verdict.evidence).not.toContain('src/f5.ts');
    expect(verdict.evidence).toMatch(/ and 3 more$/);
    expect(verdict.evidence).not.toContain('\n');
  });
});

describe('max_changed_files', () => {
  it('holds at the limit', async () => {
    const verdict = await checkInvariantRule(
      { max_changed_files: 3 },
      input([change('CREATE', 'a'), change('MODIFY', 'b')]),
    );
    expect(verdict).toEqual({ status: 'held', evidence: '2 files changed (at most 3)' });
  });

  it('is violated above the limit', async () => {
    const changes = ['a', 'b', 'c', 'd', 'e'].map((f) => change('MODIFY', f));
    const verdict = await checkInvariantRule({ max_changed_files: 3 }, input(changes));
    expect(verdict).toEqual({ status: 'violated', evidence: '5 files changed; at most 3 allowed' });
  });

  it('holds with a limit of 0 when nothing changed', async () => {
    const verdict = await checkInvariantRule({ max_changed_files: 0 }, input([]));
    expect(verdict).toEqual({ status: 'held', evidence: '0 files changed (at most 0)' });
  });
});

describe('undeletable_paths', () => {
  const rule: InvariantRule = { undeletable_paths: ['migrations/**'] };

  it('holds when protected files are only modified, created or moved into place', async () => {
    const verdict = await checkInvariantRule(
      rule,
      input([
        change('MODIFY', 'migrations/001.sql'),
        change('CREATE', 'migrations/002.sql'),
        change('MOVE', 'migrations/003.sql', 'drafts/003.sql'),
        change('DELETE', 'src/old.ts'),
      ]),
    );
    expect(verdict).toEqual({ status: 'held', evidence: 'no change deletes or moves away migrations/**' });
  });

  it('is violated by a DELETE', async () => {
    const verdict = await checkInvariantRule(rule, input([change('DELETE', 'migrations/001.sql')]));
    expect(verdict).toEqual({
      status: 'violated',
      evidence: 'DELETE migrations/001.sql (acme/api) matches undeletable "migrations/**"',
    });
  });

  it('is violated by a MOVE away from an undeletable path', async () => {
    const verdict = await checkInvariantRule(
      rule,
      input([change('MOVE', 'archive/001.sql', 'migrations/001.sql')]),
    );
    expect(verdict).toEqual({
      status: 'violated',
      evidence: 'MOVE migrations/001.sql -> archive/001.sql (acme/api) matches undeletable "migrations/**"',
    });
  });
});

describe('command', () => {
  const rule: InvariantRule = { command: 'test -f ok' };

  it('holds when the command passes in every writable sandbox', async () => {
    const api = await workspace('acme/api', { ok: '' });
    const web = await workspace('acme/web', { ok: '' });
    const verdict = await checkInvariantRule(rule, input([], { workspaces: [api, web] }));
    expect(verdict).toEqual({ status: 'held', evidence: '`test -f ok` passed in acme/api, acme/web' });
  });

  it('is violated when it fails in one of two sandboxes, naming that project, the exit code and the output', async () => {
    const api = await workspace('acme/api', { ok: '' });
    const web = await workspace('acme/web', {});
    const verdict = await checkInvariantRule(
      { command: 'echo checking; test -f ok' },
      input([], { workspaces: [api, web] }),
    );
    expect(verdict.status).toBe('violated');
    expect(verdict.evidence).toBe(
      '`echo checking; test -f ok` exited with code 1 in acme/web; output:\nchecking',
    );
    expect(verdict.evidence).not.toContain('acme/api');
  });

  it('keeps only the last lines of a long output', async () => {
    const ws = await workspace('acme/api', {});
    const verdict = await checkInvariantRule(
      { command: 'seq 1 100; exit 3' },
      input([], { workspaces: [ws] }),
    );
    expect(verdict.status).toBe('violated');
    expect(verdict.evidence).toMatch(/^`seq 1 100; exit 3` exited with code 3 in acme\/api; output:\n81\n/);
    expect(verdict.evidence).toMatch(/\n100$/);
    expect(verdict.evidence).not.toContain('\n80\n');
  });

  it('skips read-only workspaces, even one with a sandbox where the command would fail', async () => {
    const api = await workspace('acme/api', { ok: '' });
    const docs = await workspace('acme/docs', {}, { readOnly: true });
    const progress: string[] = [];
    const verdict = await checkInvariantRule(
      rule,
      input([], { workspaces: [docs, api], progress: (m) => progress.push(m) }),
    );
    expect(verdict).toEqual({ status: 'held', evidence: '`test -f ok` passed in acme/api' });
    expect(progress).toEqual(['invariant rule: running `test -f ok` in acme/api']);
  });

  it('is acknowledged when no workspace has a sandbox yet', async () => {
    const verdict = await checkInvariantRule(rule, input(null, { workspaces: [noSandbox('acme/api')] }));
    expect(verdict).toEqual({
      status: 'acknowledged',
      evidence: 'checked once a writable project has a sandbox',
    });
  });

  it('is violated when the sandbox directory has vanished', async () => {
    const ws = { ...noSandbox('acme/api'), sandbox: path.join(base, 'gone') };
    const verdict = await checkInvariantRule(rule, input([], { workspaces: [ws] }));
    expect(verdict.status).toBe('violated');
    expect(verdict.evidence).toMatch(/^`test -f ok` could not run in acme\/api: .*does not exist/);
  });

  it('rethrows an abort instead of turning it into a verdict', async () => {
    const ws = await workspace('acme/api', {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('plan cancelled')), 200);
    await expect(
      checkInvariantRule({ command: 'sleep 30' }, input([], { workspaces: [ws], signal: controller.signal })),
    ).rejects.toThrow('plan cancelled');
  });

  it('rethrows when the signal is already aborted, without running anything', async () => {
    const ws = await workspace('acme/api', {});
    const controller = new AbortController();
    controller.abort(new Error('plan cancelled'));
    await expect(
      checkInvariantRule(
        { command: 'touch ran', protected_paths: ['src/**'] },
        input([], { workspaces: [ws], signal: controller.signal }),
      ),
    ).rejects.toThrow('plan cancelled');
    await expect(fs.access(path.join(ws.sandbox as string, 'ran'))).rejects.toThrow();
  });
});

describe('combined keys', () => {
  const rule: InvariantRule = { protected_paths: ['src/**'], max_changed_files: 3, command: 'test -f ok' };

  it('holds only when every key holds, listing each', async () => {
    const ws = await workspace('local/demo', { ok: '' });
    const verdict = await checkInvariantRule(
      rule,
      input([change('MODIFY', 'docs/a.md'), change('CREATE', 'docs/b.md')], { workspaces: [ws] }),
    );
    expect(verdict).toEqual({
      status: 'held',
      evidence: 'no change touches src/**; 2 files changed (at most 3); `test -f ok` passed in local/demo',
    });
  });

  it('joins every violation with "; "', async () => {
    const ws = await workspace('acme/api', {});
    const changes = ['src/a.ts', 'b', 'c', 'd'].map((f) => change('MODIFY', f));
    const verdict = await checkInvariantRule(rule, input(changes, { workspaces: [ws] }));
    expect(verdict).toEqual({
      status: 'violated',
      evidence:
        'MODIFY src/a.ts (acme/api) matches protected "src/**"; 4 files changed; at most 3 allowed; ' +
        '`test -f ok` exited with code 1 in acme/api (no output)',
    });
  });

  it('is acknowledged before Execute when nothing can be checked yet', async () => {
    const verdict = await checkInvariantRule(
      { protected_paths: ['src/**'], max_changed_files: 3, undeletable_paths: ['migrations/**'] },
      input(null),
    );
    expect(verdict).toEqual({
      status: 'acknowledged',
      evidence: 'checked once Execute has produced a changeset',
    });
  });

  it('names both conditions when the changes and the sandbox are both missing', async () => {
    const verdict = await checkInvariantRule(rule, input(null, { workspaces: [noSandbox('acme/api')] }));
    expect(verdict).toEqual({
      status: 'acknowledged',
      evidence: 'checked once Execute has produced a changeset and a writable project has a sandbox',
    });
  });

  it('holds what it could check and says which keys wait', async () => {
    const ws = await workspace('acme/api', { ok: '' });
    const verdict = await checkInvariantRule(rule, input(null, { workspaces: [ws] }));
    expect(verdict).toEqual({
      status: 'held',
      evidence:
        "`test -f ok` passed in acme/api; protected_paths and max_changed_files wait for Execute's changeset",
    });
  });

  it('says the command waits when only the changeset is there', async () => {
    const verdict = await checkInvariantRule(rule, input([change('MODIFY', 'docs/a.md')]));
    expect(verdict).toEqual({
      status: 'held',
      evidence: 'no change touches src/**; 1 file changed (at most 3); the command waits for a sandbox',
    });
  });

  it('is violated by a checked key even while another waits', async () => {
    const verdict = await checkInvariantRule(rule, input([change('DELETE', 'src/a.ts')]));
    expect(verdict).toEqual({
      status: 'violated',
      evidence: 'DELETE src/a.ts (acme/api) matches protected "src/**"',
    });
  });
});
