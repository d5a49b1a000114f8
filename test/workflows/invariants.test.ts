/**
 * Issue 7 end to end: invariants managed through the CLI, pinned into plans at creation, enforced at every phase
 * transition by the real workflow and activities on a real Temporal dev server and SQLite database.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { planWorkflowId } from '../../domain/ids';
import { createHarness } from '../helpers/harness';
import { expectSearchAttributes } from '../helpers/search-attributes';
import type { Harness } from '../helpers/harness';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h?.teardown();
});

beforeEach(async () => {
  for (const inv of await h.invariants.list()) await h.invariants.remove(inv.id);
  rmSync(path.join(h.projectDir, 'demo', 'GREETING.md'), { force: true });
});

async function cliJson<T>(...argv: string[]): Promise<T> {
  const out = await h.cli(...argv, '--format', 'json');
  if (out.code !== 0) throw new Error(`agents ${argv.join(' ')} failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as T;
}

async function addInvariant(...argv: string[]): Promise<string> {
  return (await cliJson<{ id: string }>('invariant', 'add', ...argv)).id;
}

async function newPlan(automation: 'MANUAL' | 'REVIEW_BEFORE_APPLY' | 'FULL_AUTOMATION'): Promise<string> {
  const created = await h.client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel: automation,
    arguments: { greeting: 'hi' },
    createdBy: 'tester',
  });
  return created.planId;
}

describe('managing invariants', () => {
  it('adds to each scope, lists with filters and a pattern, and removes', async () => {
    const global = await addInvariant('Never delete production data', '--global');
    const project = await addInvariant('All API changes need tests', '--project', 'local/demo');
    const action = await addInvariant(
      'Keep the greeting short',
      '--action',
      'local/example',
      '--rule',
      '{max_changed_files: 1}',
    );
    const all = await cliJson<Array<{ id: string; scope: string; target: string; rule: string }>>(
      'invariant',
      'list',
    );
    expect(all.map((r) => [r.id, r.scope, r.target])).toEqual([
      [global, 'GLOBAL', ''],
      [project, 'PROJECT', 'local/demo'],
      [action, 'ACTION', 'local/example'],
    ]);
    expect(all[2]?.rule).toBe('at most 1 changed file(s)');
    expect((await cliJson<unknown[]>('invariant', 'list', '--global')).length).toBe(1);
    expect(
      (await cliJson<Array<{ id: string }>>('invariant', 'list', '--project', 'local/demo'))[0]?.id,
    ).toBe(project);
    expect((await cliJson<Array<{ id: string }>>('invariant', 'list', 'API')).map((r) => r.id)).toEqual([
      project,
    ]);
    expect(
      (await cliJson<Array<{ id: string }>>('invariant', 'list', '*production*')).map((r) => r.id),
    ).toEqual([global]);

    const removed = await h.cli('invariant', 'remove', global.toLowerCase());
    expect(removed).toMatchObject({ code: 0, stdout: `removed invariant ${global}\n` });
    expect((await cliJson<unknown[]>('invariant', 'list')).length).toBe(2);
  });

  it("takes seed 004's form, add <NAME> --description <DESC>, and shows the description in list and show", async () => {
    const described = await addInvariant(
      'Never touch the migrations',
      '--global',
      '--description',
      '  Migrations are reviewed by the DBA team before they ship.  ',
    );
    const plain = await addInvariant('Keep the changelog current', '--global');
    const shown = await cliJson<Record<string, unknown>>('invariant', 'show', described.toLowerCase());
    expect(shown).toEqual({
      id: described,
      text: 'Never touch the migrations',
      description: 'Migrations are reviewed by the DBA team before they ship.',
      scope: 'GLOBAL',
      target: null,
      rule: null,
      author: expect.any(String),
      created_at: expect.any(String),
    });
    expect(await cliJson<Record<string, unknown>>('invariant', 'show', plain)).toMatchObject({
      text: 'Keep the changelog current',
      description: null,
    });
    const listed = await cliJson<Array<{ id: string; description: string }>>('invariant', 'list', '--global');
    expect(listed.map((r) => [r.id, r.description])).toEqual([
      [described, 'Migrations are reviewed by the DBA team before they ship.'],
      [plain, ''],
    ]);
    const table = await h.cli('invariant', 'list', '--global', '--format', 'table');
    expect(table.stdout).toContain('description');
    expect(table.stdout).toContain('Migrations are reviewed by the DBA team');
    // A plan made now pins the invariant with its description, and `plan show` says it.
    const planId = await newPlan('MANUAL');
    const plan = await cliJson<{ invariants: Array<Record<string, unknown>> }>('plan', 'show', planId);
    expect(plan.invariants).toEqual(
      expect.arrayContaining([
        {
          text: 'Never touch the migrations',
          scope: 'GLOBAL',
          id: described,
          description: 'Migrations are reviewed by the DBA team before they ship.',
        },
        { text: 'Keep the changelog current', scope: 'GLOBAL', id: plain },
      ]),
    );
    await h.withWorker(() => h.client.cancel(planId));
    for (const id of [described, plain]) expect((await h.cli('invariant', 'remove', id)).code).toBe(0);
  });

  it('shows the effective set for a project: precedence, duplicates collapsed, the source of each', async () => {
    await addInvariant('Never touch prod', '--global');
    await addInvariant('Keep tests green', '--global', '--description', 'CI must pass before a release');
    const projectProd = await addInvariant(
      'never touch prod.',
      '--project',
      'local/demo',
      '--rule',
      '{protected_paths: ["prod/**"]}',
    );
    await addInvariant('Docs only', '--project', 'local/docs');
    const actionProd = await addInvariant('NEVER touch prod', '--action', 'local/example');

    const forProject = await cliJson<Array<Record<string, string>>>(
      'invariant',
      'list',
      '--effective',
      '--project',
      'local/demo',
    );
    expect(forProject).toEqual([
      {
        text: 'never touch prod.',
        description: '',
        scope: 'PROJECT',
        source: 'local/demo',
        id: projectProd,
        rule: 'protected: prod/**',
        collapsed: 'GLOBAL global',
      },
      {
        text: 'Keep tests green',
        description: 'CI must pass before a release',
        scope: 'GLOBAL',
        source: 'global',
        id: expect.any(String),
        rule: '',
        collapsed: '',
      },
    ]);

    const withAction = await cliJson<Array<Record<string, string>>>(
      'invariant',
      'list',
      '--effective',
      '--project',
      'local/demo',
      '--action',
      'local/example',
    );
    expect(withAction.map((r) => [r.text, r.scope, r.source, r.collapsed])).toEqual([
      ['NEVER touch prod', 'PLAN', 'local/example', 'PROJECT local/demo, GLOBAL global'],
      ['Keep tests green', 'GLOBAL', 'global', ''],
    ]);
    expect(withAction[0]?.id).toBe(actionProd);

    const table = await h.cli(
      'invariant',
      'list',
      '--effective',
      '--project',
      'local/demo',
      '--format',
      'table',
    );
    expect(table.stdout).toMatch(/never touch prod\. +│ PROJECT │ local\/demo .*│ GLOBAL global │/);
  });
});

describe('enforcement', () => {
  it('records invariant_enforced decisions at the start of Strategize, with how each came out', async () => {
    await addInvariant('Be kind to the README', '--global');
    await addInvariant('Greeting only', '--project', 'local/demo', '--rule', '{protected_paths: ["src/**"]}');
    await h.withWorker(async () => {
      const planId = await newPlan('FULL_AUTOMATION');
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const enforced = (await h.plans.listDecisions(planId)).filter((d) => d.type === 'invariant_enforced');
      expect(enforced.map((d) => d.chosenOption)).toEqual(['Greeting only', 'Be kind to the README']);
      expect(enforced[0]?.rationale).toMatch(
        /^PROJECT invariant from local\/demo with the rule protected: src\/\*\*; acknowledged: checked once Execute has produced a changeset/,
      );
      expect(enforced[1]?.rationale).toMatch(/^GLOBAL invariant; acknowledged: no machine-checkable rule/);
      const started = (await h.plans.listEvents(planId)).find((e) => e.type === 'PHASE_STARTED');
      expect(started?.message).toBe(
        '2 invariant(s) checked at the start of STRATEGIZE: 0 held, 2 acknowledged, 0 violated',
      );
    });
  });

  it('stops a plan whose changes touch a protected path before Apply, and completes once the invariant is removed', async () => {
    await h.withWorker(async () => {
      const planId = await newPlan('MANUAL');
      await h.client.waitForInput(planId);
      const guard = await addInvariant(
        'Leave the greeting alone',
        '--plan',
        planId,
        '--rule',
        '{protected_paths: ["GREETING.md"]}',
      );
      // plan show lists what the plan enforces, the invariant added to it included.
      const shown = await cliJson<{ invariants: Array<{ text: string; id?: string }> }>(
        'plan',
        'show',
        planId,
      );
      expect(shown.invariants).toEqual([
        {
          text: 'Leave the greeting alone',
          scope: 'PLAN',
          id: guard,
          rule: { protected_paths: ['GREETING.md'] },
        },
      ]);

      expect((await h.cli('plan', 'advance', planId)).code).toBe(0);
      const stopped = await h.client.waitForInput(planId);
      expect(stopped).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED', awaitingApproval: false });
      expect(stopped.error?.type).toBe('InvariantViolated');
      expect(stopped.error?.message).toBe(
        'invariant violated before APPLY: "Leave the greeting alone" (PLAN): ' +
          'CREATE GREETING.md (local/demo) matches protected "GREETING.md"',
      );
      const violated = (await h.plans.listEvents(planId)).filter((e) => e.type === 'INVARIANT_VIOLATED');
      expect(violated).toEqual([
        expect.objectContaining({ phase: 'EXECUTE', state: 'ERRORED', message: stopped.error?.message }),
      ]);
      const show = await cliJson<{ phase: string; state: string; error: { type: string } }>(
        'plan',
        'show',
        planId,
      );
      expect(show).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(JSON.stringify(show)).toContain('InvariantViolated');
      await expectSearchAttributes(h, planId, {
        PlanPhase: 'EXECUTE',
        PlanState: 'ERRORED',
        PlanAwaitingInput: false,
      });
      expect(existsSync(path.join(h.projectDir, 'demo', 'GREETING.md'))).toBe(false);

      // A retry with the invariant still there checks again and stops again.
      expect((await h.cli('plan', 'retry', planId, '--reason', 'try anyway')).code).toBe(0);
      const again = await h.client.waitForInput(planId);
      expect(again).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect((await h.plans.listEvents(planId)).filter((e) => e.type === 'INVARIANT_VIOLATED')).toHaveLength(
        2,
      );

      expect((await h.cli('invariant', 'remove', guard)).code).toBe(0);
      expect((await h.cli('plan', 'retry', planId, '--reason', 'invariant removed')).code).toBe(0);
      const gate = await h.client.waitForInput(planId);
      expect(gate).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
      await expectSearchAttributes(h, planId, { PlanState: 'COMPLETE', PlanAwaitingInput: true });
      expect((await h.cli('plan', 'advance', planId, '--yes')).code).toBe(0);
      await h.client.waitForInput(planId);
      expect((await h.cli('plan', 'advance', planId)).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(await h.plans.getPlan(planId)).toMatchObject({
        phase: 'APPLIED',
        state: 'COMPLETE',
        error: null,
      });
      expect(readFileSync(path.join(h.projectDir, 'demo', 'GREETING.md'), 'utf8')).toContain(
        '# hi, local/demo!',
      );
    });
  });

  it('stops an approved advance when an invariant added while the gate was open is violated', async () => {
    await h.withWorker(async () => {
      const planId = await newPlan('REVIEW_BEFORE_APPLY');
      const gate = await h.client.waitForInput(planId);
      expect(gate).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
      const late = await addInvariant(
        'No greeting',
        '--plan',
        planId,
        '--rule',
        '{protected_paths: ["*.md"]}',
      );

      const advance = await h.cli('plan', 'advance', planId, '--yes', '--format', 'json');
      expect(advance.code).toBe(4);
      expect(JSON.parse(advance.stdout)).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(advance.stderr).toMatch(
        /^error: the transition was approved but did not happen: invariant violated before APPLY: "No greeting" \(PLAN\)/,
      );
      expect(await h.client.get(planId)).toMatchObject({ state: 'ERRORED', awaitingApproval: false });
      expect(existsSync(path.join(h.projectDir, 'demo', 'GREETING.md'))).toBe(false);

      // Once it is gone, a retry takes the approved transition without asking again.
      expect((await h.cli('invariant', 'remove', late)).code).toBe(0);
      expect((await h.cli('plan', 'retry', planId)).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      expect(existsSync(path.join(h.projectDir, 'demo', 'GREETING.md'))).toBe(true);
    });
  });

  it('keeps a plan to the set pinned at its creation when invariants change afterwards', async () => {
    const pinned = await addInvariant(
      'No greetings',
      '--global',
      '--rule',
      '{protected_paths: ["GREETING.md"]}',
    );
    await h.withWorker(async () => {
      const planId = await newPlan('MANUAL');
      await h.client.waitForInput(planId);
      const before = await cliJson<{ invariants: unknown[] }>('plan', 'show', planId);

      // "Editing" the global invariant: remove it, add a different one.
      expect((await h.cli('invariant', 'remove', pinned)).code).toBe(0);
      await addInvariant('Something else entirely', '--global');
      const after = await cliJson<{ invariants: unknown[] }>('plan', 'show', planId);
      expect(after.invariants).toEqual(before.invariants);
      expect(after.invariants).toEqual([
        { text: 'No greetings', scope: 'GLOBAL', id: pinned, rule: { protected_paths: ['GREETING.md'] } },
      ]);
      expect((await h.plans.getPlan(planId))?.invariants.map((i) => i.text)).toEqual(['No greetings']);

      // The pinned rule still holds the plan back.
      expect((await h.cli('plan', 'advance', planId)).code).toBe(0);
      const stopped = await h.client.waitForInput(planId);
      expect(stopped).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(stopped.error?.message).toMatch(/"No greetings" \(GLOBAL\)/);
      await h.client.cancel(planId);

      // A plan created now gets the current set.
      const fresh = await newPlan('MANUAL');
      const freshShow = await cliJson<{ invariants: Array<{ text: string }> }>('plan', 'show', fresh);
      expect(freshShow.invariants.map((i) => i.text)).toEqual(['Something else entirely']);
      await h.client.cancel(fresh);
    });
  });

  it('runs a command rule in the sandbox before Apply and blocks on its failure', async () => {
    await addInvariant(
      'The greeting says hello',
      '--project',
      'local/demo',
      '--rule',
      '{command: "grep -q hello GREETING.md"}',
    );
    await h.withWorker(async () => {
      const planId = await newPlan('FULL_AUTOMATION');
      const stopped = await h.client.waitForInput(planId);
      expect(stopped).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(stopped.error?.message).toMatch(
        /^invariant violated before APPLY: "The greeting says hello" \(PROJECT from local\/demo\): `grep -q hello GREETING.md` exited with code 1 in local\/demo/,
      );
      expect(existsSync(path.join(h.projectDir, 'demo', 'GREETING.md'))).toBe(false);
      await h.client.cancel(planId);
    });
  });

  it('runs a command rule on a worker that did not run Execute, in a sandbox rebuilt from the changeset', async () => {
    const planId = await h.withWorker(async () => {
      const id = await newPlan('REVIEW_BEFORE_APPLY');
      expect(await h.client.waitForInput(id)).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
      return id;
    });
    // Another worker, with none of this one's disk: Execute's copy is gone, the changeset is in the database.
    rmSync(path.join(h.sandboxDir, planId), { recursive: true, force: true });
    const absent = await addInvariant(
      'No greeting yet',
      '--plan',
      planId,
      '--rule',
      '{command: "test ! -f GREETING.md"}',
    );
    await h.withWorker(async () => {
      // Without a sandbox the rule could only wait; rebuilt, it sees the file Execute created and fails.
      const advance = await h.cli('plan', 'advance', planId, '--yes');
      expect(advance.code).toBe(4);
      expect(advance.stderr).toMatch(
        /"No greeting yet" \(PLAN\): `test ! -f GREETING\.md` exited with code 1/,
      );
      expect(existsSync(path.join(h.projectDir, 'demo', 'GREETING.md'))).toBe(false);

      expect((await h.cli('invariant', 'remove', absent)).code).toBe(0);
      await addInvariant(
        'The greeting is there',
        '--plan',
        planId,
        '--rule',
        '{command: "test -f GREETING.md"}',
      );
      expect((await h.cli('plan', 'retry', planId)).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
    });
    expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
    expect(existsSync(path.join(h.projectDir, 'demo', 'GREETING.md'))).toBe(true);
    // Apply removed the rebuilt sandbox with the plan's others.
    expect(existsSync(path.join(h.sandboxDir, planId))).toBe(false);
  });
});
