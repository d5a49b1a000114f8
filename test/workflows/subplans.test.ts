/**
 * Issue 15 item 1 end to end: subplan steps spawn child plans as child workflows on a real dev server, with the real
 * activities, actors, sandboxes and database. A parallel group of three with one child waiting at its gates, the
 * parent finishing only after the last child; cancelling a parent cancels its children; a failed child under
 * `fail` parks the parent until a retry spawns a replacement; the family's fields, search attributes and decisions;
 * and the guards: depth, projects the parent was not given, unknown actions.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseActionFile } from '../../domain/action-file';
import { childPlanId } from '../../domain/subplans';
import type { AutomationLevel } from '../../domain/lifecycle';
import { PlanClientError } from '../../client/errors';
import { approveToTheEnd } from '../helpers/drives';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { expectSearchAttributes } from '../helpers/search-attributes';
import { waitUntil } from '../helpers/wait';

let h: Harness;
let demo: string;

beforeAll(async () => {
  h = await createHarness();
  demo = path.join(h.projectDir, 'demo');
});

afterAll(async () => {
  await h?.teardown();
});

beforeEach(() => {
  rmSync(demo, { recursive: true, force: true });
  mkdirSync(demo, { recursive: true });
});

async function addAction(yaml: string): Promise<string> {
  const parsed = parseActionFile(yaml, 'action.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  await h.catalog.putAction(parsed.action);
  return parsed.action.name;
}

/** A child's view once its workflow exists (the parent starts it a moment after its own progress shows). */
async function waitForPlan(planId: string, timeoutMs = 60_000) {
  await waitUntil(
    `plan ${planId} to exist`,
    () =>
      h.client.get(planId).then(
        () => true,
        (err: unknown) =>
          err instanceof PlanClientError && err.kind === 'notFound' ? false : Promise.reject(err),
      ),
    { timeoutMs },
  );
  return h.client.waitForInput(planId, timeoutMs);
}

async function startPlan(actionName: string, automation: AutomationLevel, projects = ['local/demo']) {
  const created = await h.client.create({
    actionName,
    projects,
    automationLevel: automation,
    arguments: {},
    createdBy: 'tester',
  });
  return created.planId;
}

/** A child action writing one file named by its argument. */
const WRITER = `
name: local/writer
description: Writes one file.
arguments:
  - name: file
    type: string
    required: true
steps:
  - create: "{{file}}"
    content: "written by {{plan.id}}\\n"
`;

const FAMILY = `
name: local/family
description: Three children in parallel, then the parent's own step, which needs what they wrote.
arguments:
  - name: prefix
    type: string
    default: child
steps:
  - parallel:
      - subplan: local/writer
        arguments: { file: "{{prefix}}-a.txt" }
      - subplan: local/writer
        arguments: { file: "{{prefix}}-b.txt" }
        automation: manual
      - subplan: local/writer
        arguments: { file: "{{prefix}}-c.txt" }
  - create: SUMMARY.md
    content: "all three children applied\\n"
validation: test -f child-a.txt && test -f child-b.txt && test -f child-c.txt
`;

describe('a parallel group of three children', () => {
  it('runs them as child workflows, waits for the one at its gate, then finishes the parent', async () => {
    await addAction(WRITER);
    await addAction(FAMILY);
    await h.withWorker(async () => {
      const parentId = await startPlan('local/family', 'FULL_AUTOMATION');
      const ids = [0, 1, 2].map((childIndex) => childPlanId(parentId, { stepIndex: 0, childIndex }));
      const [aId, bId, cId] = ids as [string, string, string];

      // Two children run through; the manual one stops at its first gate, and the parent waits in Execute.
      for (const id of [aId, cId]) {
        const view = await waitForPlan(id);
        expect(view).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      }
      const waiting = await waitForPlan(bId);
      expect(waiting).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });
      const parent = await h.client.get(parentId);
      expect(parent).toMatchObject({ phase: 'EXECUTE', state: 'PROCESSING' });
      expect(existsSync(path.join(demo, 'child-a.txt'))).toBe(true);
      expect(existsSync(path.join(demo, 'child-b.txt'))).toBe(false);
      expect(existsSync(path.join(demo, 'SUMMARY.md'))).toBe(false);

      // The family as the record holds it.
      const children = await h.plans.listPlans({ parentPlanId: parentId });
      expect(children.map((c) => c.planId).sort()).toEqual([...ids].sort());
      for (const child of children) {
        expect(child).toMatchObject({ parentPlanId: parentId, rootPlanId: parentId, depth: 1 });
        expect(child.automationLevel).toBe(child.planId === bId ? 'MANUAL' : 'FULL_AUTOMATION');
      }
      const spawn = (await h.plans.listDecisions(parentId)).find((d) => d.type === 'subplan_parallel_spawn');
      expect(spawn?.downstreamPlanIds).toEqual(ids);
      expect(spawn?.phase).toBe('STRATEGIZE');
      await expectSearchAttributes(h, bId, { PlanRoot: parentId, PlanAwaitingInput: true });
      await expectSearchAttributes(h, parentId, { PlanRoot: parentId, PlanPhase: 'EXECUTE' });

      // The person approves the waiting child; then the parent's own step runs and sees all three files.
      await approveToTheEnd(h, bId, 'alice');
      const done = await h.client.waitForInput(parentId);
      expect({ phase: done.phase, state: done.state, error: done.error?.message ?? null }).toEqual({
        phase: 'APPLIED',
        state: 'COMPLETE',
        error: null,
      });
      expect(readFileSync(path.join(demo, 'child-b.txt'), 'utf8')).toBe(`written by ${bId}\n`);
      expect(readFileSync(path.join(demo, 'SUMMARY.md'), 'utf8')).toBe('all three children applied\n');
      expect(done.validationSummary).toContain('passed');
      const completed = (await h.plans.listEvents(parentId)).find(
        (e) => e.type === 'PHASE_COMPLETED' && e.phase === 'EXECUTE',
      );
      expect(completed?.message).toContain('3 subplans applied');
      const seqs = (await h.plans.listDecisions(parentId)).map((d) => d.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i));

      // The family through the CLI: group 11 on both sides, the children listed, the trees nested.
      const shown = JSON.parse((await h.cli('plan', 'show', parentId, '--format', 'json')).stdout);
      expect(shown.child_plan_ids.sort()).toEqual([...ids].sort());
      expect(shown.children).toHaveLength(3);
      for (const child of shown.children)
        expect(child).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      const plain = (await h.cli('plan', 'show', parentId, '--format', 'plain')).stdout;
      expect(plain).toContain(`${bId} local/writer (APPLIED, COMPLETE)`);
      const childShown = JSON.parse((await h.cli('plan', 'show', bId, '--format', 'json')).stdout);
      expect(childShown).toMatchObject({ parent_plan_id: parentId, root_plan_id: parentId, depth: 1 });
      const keys = Object.keys(childShown);
      expect(keys.slice(keys.indexOf('created_at'))).toEqual([
        'created_at',
        'updated_at',
        'parent_plan_id',
        'root_plan_id',
        'depth',
      ]);
      const listed = JSON.parse(
        (await h.cli('plan', 'list', '--parent', parentId, '--format', 'json')).stdout,
      );
      expect(listed.map((row: { plan_id: string }) => row.plan_id).sort()).toEqual([...ids].sort());
      const family = JSON.parse(
        (await h.cli('plan', 'tree', parentId, '--subplans', '--format', 'json')).stdout,
      );
      const spawnNode = family.nodes.find(
        (n: { decision_type: string }) => n.decision_type === 'subplan_parallel_spawn',
      );
      expect(spawnNode.subplans.map((c: { plan_id: string }) => c.plan_id)).toEqual(ids);
      expect(spawnNode.subplans[1].nodes[0].decision_type).toBe('prompt_definition');
      const rich = (await h.cli('plan', 'tree', parentId, '--subplans', '--format', 'rich')).stdout;
      for (const id of ids) expect(rich).toContain(`⇢ subplan ${id} local/writer`);
      const table = (await h.cli('plan', 'tree', parentId, '--subplans', '--format', 'plain')).stdout;
      expect(table).toContain(bId);
    });
  });
});

const ONE_MANUAL_CHILD = `
name: local/one-child
description: One child that waits for a person.
steps:
  - subplan: local/writer
    arguments: { file: waited.txt }
    automation: manual
`;

describe('cancelling', () => {
  it('cancelling a parent cancels the child it waits for', async () => {
    await addAction(WRITER);
    await addAction(ONE_MANUAL_CHILD);
    await h.withWorker(async () => {
      const parentId = await startPlan('local/one-child', 'FULL_AUTOMATION');
      const childId = childPlanId(parentId, { stepIndex: 0, childIndex: 0 });
      await waitForPlan(childId);
      await h.client.cancel(parentId);
      const child = await waitUntil('the child to be cancelled', async () => {
        const view = await h.client.get(childId);
        return view.state === 'CANCELLED' ? view : undefined;
      });
      expect(child.phase).toBe('STRATEGIZE');
      expect((await h.client.get(parentId)).state).toBe('CANCELLED');
      expect(existsSync(path.join(demo, 'waited.txt'))).toBe(false);
    });
  });

  it('a child cancelled by a person fails its parent, and a retry spawns a replacement', async () => {
    await addAction(WRITER);
    await addAction(ONE_MANUAL_CHILD);
    await h.withWorker(async () => {
      const parentId = await startPlan('local/one-child', 'FULL_AUTOMATION');
      const first = childPlanId(parentId, { stepIndex: 0, childIndex: 0 });
      await waitForPlan(first);
      await h.client.cancel(first);
      const errored = await h.client.waitForInput(parentId);
      expect(errored).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(errored.error?.type).toBe('SubplanFailed');
      expect(errored.error?.message).toContain(`subplan ${first} (local/writer) was cancelled`);

      await h.client.retry(parentId, { by: 'alice', reason: 'try again' });
      const second = childPlanId(parentId, { stepIndex: 0, childIndex: 0 }, 1);
      await waitForPlan(second);
      await approveToTheEnd(h, second, 'alice');
      expect(await h.client.waitForInput(parentId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      expect(readFileSync(path.join(demo, 'waited.txt'), 'utf8')).toBe(`written by ${second}\n`);
      const spawns = (await h.plans.listDecisions(parentId)).filter((d) => d.type === 'subplan_spawn');
      expect(spawns.map((d) => d.downstreamPlanIds)).toEqual([[first], [second]]);
      expect((await h.plans.listPlans({ parentPlanId: parentId })).map((p) => p.state).sort()).toEqual([
        'CANCELLED',
        'COMPLETE',
      ]);
    });
  });

  it('under on_child_failure: continue, the parent goes on without the cancelled child', async () => {
    await addAction(WRITER);
    await addAction(`
name: local/tolerant
description: One child whose failure does not matter.
steps:
  - subplan: local/writer
    arguments: { file: optional.txt }
    automation: manual
    on_child_failure: continue
  - create: PARENT.md
    content: "parent\\n"
`);
    await h.withWorker(async () => {
      const parentId = await startPlan('local/tolerant', 'FULL_AUTOMATION');
      const childId = childPlanId(parentId, { stepIndex: 0, childIndex: 0 });
      await waitForPlan(childId);
      await h.client.cancel(childId);
      expect(await h.client.waitForInput(parentId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      expect(existsSync(path.join(demo, 'PARENT.md'))).toBe(true);
      const recovery = (await h.plans.listDecisions(parentId)).find((d) => d.type === 'error_recovery');
      expect(recovery).toMatchObject({ downstreamPlanIds: [childId] });
    });
  });
});

describe('guards', () => {
  it('refuses a subplan deeper than three levels below its root', async () => {
    await addAction(`
name: local/recursive
description: Spawns itself, which must stop.
steps:
  - subplan: local/recursive
`);
    await h.withWorker(async () => {
      const rootId = await startPlan('local/recursive', 'FULL_AUTOMATION');
      let id = rootId;
      for (let depth = 1; depth <= 3; depth++) id = childPlanId(id, { stepIndex: 0, childIndex: 0 });
      const deepest = await waitForPlan(id);
      expect(deepest).toMatchObject({ phase: 'STRATEGIZE', state: 'ERRORED', depth: 3, rootPlanId: rootId });
      expect(deepest.error?.message).toContain('4 levels below its root plan; at most 3 are allowed');
      expect(await h.plans.getPlan(childPlanId(id, { stepIndex: 0, childIndex: 0 }))).toBeNull();
      await h.client.cancel(rootId);
      await waitUntil('the whole family to be cancelled', async () => {
        const family = await h.plans.listPlans({});
        const members = family.filter((p) => p.planId === rootId || p.rootPlanId === rootId);
        return members.length === 4 && members.every((p) => p.state === 'CANCELLED');
      });
    });
  });

  it("holds a family to its profile's depth, which the children inherit", async () => {
    expect(
      (await h.cli('profile', 'add', 'local/shallow', '-a', 'full', '--max-subplan-depth', '1')).code,
    ).toBe(0);
    const tooDeep = await h.cli('profile', 'add', 'local/deep', '-a', 'full', '--max-subplan-depth', '11');
    expect(tooDeep.code).toBe(2);
    expect(tooDeep.stderr).toContain('maxSubplanDepth');
    await addAction(`
name: local/recursive-shallow
description: Spawns itself, which its profile stops one level down.
steps:
  - subplan: local/recursive-shallow
`);
    await h.withWorker(async () => {
      const created = await h.client.create({
        actionName: 'local/recursive-shallow',
        projects: ['local/demo'],
        arguments: {},
        profileName: 'local/shallow',
        createdBy: 'tester',
      });
      const child = childPlanId(created.planId, { stepIndex: 0, childIndex: 0 });
      const view = await waitForPlan(child);
      expect(view).toMatchObject({ phase: 'STRATEGIZE', state: 'ERRORED', depth: 1 });
      expect(view.error?.message).toContain('2 levels below its root plan; at most 1 are allowed');
      expect(view.effectiveProfileSnapshot?.maxSubplanDepth).toBe(1);
      await h.client.cancel(created.planId);
    });
  });

  it.each([
    [
      'a project the parent was not given',
      `  - subplan: local/writer\n    projects: [local/docs]\n    arguments: { file: x.txt }\n`,
      'projects: "local/docs" is not linked to the parent plan',
    ],
    [
      'an unknown action',
      `  - subplan: local/no-such-action\n`,
      'subplan local/no-such-action: unknown action',
    ],
    [
      'an argument the child action does not have',
      `  - subplan: local/writer\n    arguments: { file: x.txt, evil: "1" }\n`,
      'evil',
    ],
  ])('refuses %s at Strategize, before anything is spawned', async (_what, step, message) => {
    await addAction(WRITER);
    const name = await addAction(`name: local/hostile\ndescription: A bad subplan step.\nsteps:\n${step}`);
    await h.withWorker(async () => {
      const parentId = await startPlan(name, 'FULL_AUTOMATION');
      const view = await h.client.waitForInput(parentId);
      expect(view).toMatchObject({ phase: 'STRATEGIZE', state: 'ERRORED' });
      expect(view.error?.message).toContain(message);
      expect(await h.plans.listPlans({ parentPlanId: parentId })).toEqual([]);
    });
  });
});
