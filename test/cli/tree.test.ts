/**
 * `plan tree` and `plan explain` on a plan run end to end through the real workflow, activities and database.
 */
import YAML from 'yaml';
import { planWorkflowId } from '../../domain/ids';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;
let planId: string;

beforeAll(async () => {
  h = await createHarness();
  const created = await h.client.create({
    actionName: 'local/code-review',
    projects: ['local/demo', 'local/docs::ro'],
    automationLevel: 'FULL_AUTOMATION',
    arguments: { path: 'src' },
    createdBy: 'tester',
  });
  planId = created.planId;
  await h.withWorker(() => h.env.client.workflow.getHandle(planWorkflowId(planId)).result());
});

afterAll(async () => {
  await h?.teardown();
});

interface Node {
  sequence_number: number;
  depth: number;
  decision_type: string;
  decision_id: string;
  parent_decision_id: string | null;
}

it('records the prompt, the invariants it runs under and one branch per phase', async () => {
  const out = await h.cli('plan', 'tree', planId, '--format', 'json');
  expect(out.stderr).toBe('');
  const tree = JSON.parse(out.stdout) as { plan_id: string; nodes: Node[] };
  expect(tree.plan_id).toBe(planId);
  expect(tree.nodes.map((n) => [n.depth, n.decision_type])).toEqual([
    [0, 'prompt_definition'],
    [1, 'invariant_enforced'],
    [1, 'strategy_choice'],
    [2, 'implementation_choice'],
    [3, 'resource_selection'],
    [3, 'tool_invocation'],
    [4, 'tool_invocation'],
  ]);
  expect(tree.nodes.map((n) => n.sequence_number).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  // Seed 004's field names, as `plan explain` has them.
  const explained = JSON.parse(
    (await h.cli('plan', 'explain', tree.nodes[2]!.decision_id, '--format', 'json')).stdout,
  );
  expect(tree.nodes[2]).toMatchObject({
    sequence_number: explained.sequence_number,
    decision_type: explained.decision_type,
    phase: explained.phase,
    parent_decision_id: explained.parent_decision_id,
    question: explained.question,
    chosen_option: explained.chosen_option,
    confidence_score: explained.confidence_score,
    actor: explained.actor,
    superseded_by: null,
  });
  expect(tree.nodes[2]).not.toHaveProperty('seq');
  expect(YAML.parse((await h.cli('plan', 'tree', planId, '--format', 'yaml')).stdout)).toEqual(tree);
});

it('renders the tree in plain, table and rich with full ULIDs', async () => {
  const tree = JSON.parse((await h.cli('plan', 'tree', planId, '--format', 'json')).stdout) as {
    nodes: Node[];
  };
  for (const format of ['plain', 'table', 'rich']) {
    const out = await h.cli('plan', 'tree', planId, '--format', format);
    expect(out.code).toBe(0);
    for (const node of tree.nodes) expect(out.stdout).toContain(node.decision_id);
  }
  const rich = (await h.cli('plan', 'tree', planId)).stdout.split('\n');
  expect(rich[0]).toMatch(/^prompt_definition #0 [0-9A-Z]{26} {2}Run local\/code-review/);
  expect(rich[1]).toMatch(/^├── invariant_enforced #1 /);
  expect(rich[2]).toMatch(/^└── strategy_choice #2 /);
  expect(rich[3]).toMatch(/^ {4}└── implementation_choice #3 /);
});

it('limits the depth', async () => {
  const out = await h.cli('plan', 'tree', planId, '--depth', '1', '--format', 'json');
  const tree = JSON.parse(out.stdout) as { nodes: Node[]; hidden_by_depth: number };
  expect(tree.nodes.map((n) => n.decision_type)).toEqual([
    'prompt_definition',
    'invariant_enforced',
    'strategy_choice',
  ]);
  expect(tree.hidden_by_depth).toBe(4);
  expect((await h.cli('plan', 'tree', planId, '--depth', '1')).stdout).toContain('4 deeper decisions hidden');
});

it('explains a decision, with context and reasoning on request', async () => {
  const tree = JSON.parse((await h.cli('plan', 'tree', planId, '--format', 'json')).stdout) as {
    nodes: Node[];
  };
  const root = tree.nodes[0]!;
  const plain = JSON.parse((await h.cli('plan', 'explain', root.decision_id, '--format', 'json')).stdout);
  expect(plain).toMatchObject({
    decision_id: root.decision_id,
    decision_type: 'prompt_definition',
    alternatives_considered: [],
  });
  expect(plain).not.toHaveProperty('hot_context_hash');
  expect(plain).not.toHaveProperty('rationale');

  const full = JSON.parse(
    (
      await h.cli(
        'plan',
        'explain',
        root.decision_id,
        '--show-context',
        '--show-reasoning',
        '--format',
        'json',
      )
    ).stdout,
  );
  expect(full.hot_context_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(full.hot_context_ref).toBe(`sha256:${full.hot_context_hash}`);
  expect(full.context).toMatchObject({
    action_name: 'local/code-review',
    arguments: { path: 'src', depth: 2, strict: false },
    definition_of_done: expect.any(String),
  });
  expect(full.rationale).toMatch(/prompt as given by tester/);

  const selection = tree.nodes.find((n) => n.decision_type === 'resource_selection')!;
  const yaml = YAML.parse((await h.cli('plan', 'explain', selection.decision_id, '--format', 'yaml')).stdout);
  expect(yaml).toMatchObject({
    chosen_option: 'Writable: local/demo',
    alternatives_considered: ['Also write local/docs'],
  });
});

it.each([
  [['plan', 'tree', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA'], 3, /no plan with id/],
  [['plan', 'tree', 'nope'], 3, /no plan with id, id prefix or name "nope"/],
  [['plan', 'tree', '01KB0'], 2, /too short for a plan id prefix/],
  [['plan', 'tree', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA', '--depth', '-1'], 2, /--depth/],
  [['plan', 'explain', 'nope'], 2, /is not a decision id/],
  [['plan', 'explain', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA'], 3, /decision 01KB0F5ZQ3S5G9X2N6W8Y4T7RA not found/],
  [['plan', 'tree', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA', '--format', 'xml'], 2, /Allowed choices/],
])('refuses %j', async (argv, code, message) => {
  const out = await h.cli(...argv);
  expect(out.code).toBe(code);
  expect(out.stdout).toBe('');
  expect(out.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(out.stderr).toMatch(message);
});

describe('corrections', () => {
  it('replaces a decision of a running plan; the next phase builds on the correction', async () => {
    await h.withWorker(async () => {
      const created = await h.client.create({
        actionName: 'local/example',
        projects: ['local/demo'],
        automationLevel: 'MANUAL',
        arguments: {},
        createdBy: 'tester',
      });
      await h.client.waitForInput(created.planId);
      const before = JSON.parse((await h.cli('plan', 'tree', created.planId, '--format', 'json')).stdout) as {
        nodes: Node[];
      };
      const strategy = before.nodes.find((n) => n.decision_type === 'strategy_choice')!;
      const root = before.nodes[0]!;

      const refusedRoot = await h.cli('plan', 'correct', root.decision_id, '--option', 'x', '--reason', 'y');
      expect(refusedRoot.code).toBe(4);
      expect(refusedRoot.stderr).toMatch(/cannot be corrected/);

      const corrected = await h.cli(
        'plan',
        'correct',
        strategy.decision_id,
        '--option',
        '{create: CHILDREN.md, content: "One child plan per project\n"}',
        '--reason',
        'the projects release separately',
        '--format',
        'json',
      );
      expect(corrected.stderr).toBe('');
      expect(JSON.parse(corrected.stdout)).toMatchObject({
        decision_type: 'strategy_choice',
        chosen_option: '{create: CHILDREN.md, content: "One child plan per project\n"}',
        is_correction: true,
        corrects_decision_id: strategy.decision_id,
        correction_reason: 'the projects release separately',
      });
      const again = await h.cli('plan', 'correct', strategy.decision_id, '--option', 'z', '--reason', 'z');
      expect(again.code).toBe(4);
      expect(again.stderr).toMatch(/already corrected/);
      // A correction made at a gate leaves the gate open: the plan still waits for a person, and says so.
      const waiting = await h.client.waitForInput(created.planId, 5_000);
      expect(waiting).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });

      const current = JSON.parse(
        (await h.cli('plan', 'tree', created.planId, '--format', 'json')).stdout,
      ) as {
        nodes: Node[];
        hidden_superseded: number;
      };
      expect(current.nodes.map((n) => n.decision_id)).not.toContain(strategy.decision_id);
      expect(current.hidden_superseded).toBe(1);
      const all = JSON.parse(
        (await h.cli('plan', 'tree', created.planId, '--show-superseded', '--format', 'json')).stdout,
      ) as { nodes: Array<Node & { superseded_by: string | null }> };
      expect(all.nodes.find((n) => n.decision_id === strategy.decision_id)).toMatchObject({
        superseded_by: JSON.parse(corrected.stdout).decision_id,
      });
      expect(all.nodes.find((n) => n.decision_id === JSON.parse(corrected.stdout).decision_id)).toMatchObject(
        {
          is_correction: true,
          corrects_decision_id: strategy.decision_id,
        },
      );
      const explained = JSON.parse(
        (await h.cli('plan', 'explain', strategy.decision_id, '--format', 'json')).stdout,
      );
      expect(explained.superseded_by).toBe(JSON.parse(corrected.stdout).decision_id);

      await h.client.advance(created.planId, { by: 'tester', expectedPhase: 'STRATEGIZE' });
      await h.client.waitForInput(created.planId);
      const decisions = await h.plans.listDecisions(created.planId);
      expect(decisions.map((d) => d.seq)).toEqual(decisions.map((_, i) => i));
      const implementation = decisions.find((d) => d.type === 'implementation_choice')!;
      expect(implementation.parentDecisionId).toBe(JSON.parse(corrected.stdout).decision_id);
      await h.client.cancel(created.planId);
    });
  });
});
