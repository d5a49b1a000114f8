/**
 * The subplan rules without Temporal: the step syntax (and what it refuses), child ids, the projects a child may
 * get, the depth limit, the spawn decision, and the family views of `plan tree --subplans`.
 */
import { actionCliDict, parseActionFile } from '../../domain/action-file';
import { buildTree } from '../../domain/decision-tree';
import { isUlid } from '../../domain/ids';
import { childProjectLinks } from '../../domain/project-link';
import { stepFileSchema, stepFromFile, stepToFile } from '../../domain/steps';
import type { Step, SubplanStep } from '../../domain/steps';
import {
  checkSubplanDepth,
  childPlanId,
  childPlanIds,
  isSubplanStep,
  spawnDecision,
  splitStrategySteps,
} from '../../domain/subplans';
import { familyDocument, familyRows, richFamilyLines } from '../../client/render/family-view';
import type { FamilyTree } from '../../client/render/family-view';
import type { ViewDecision } from '../../client/render/tree-view';

const PARENT = '01KB0000000000000000000000';

function parseStep(value: unknown): { ok: true; step: Step } | { ok: false; error: string } {
  const parsed = stepFileSchema.safeParse(value);
  return parsed.success
    ? { ok: true, step: stepFromFile(parsed.data) }
    : { ok: false, error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
}

describe('the step syntax', () => {
  it('reads a subplan step with every field, and writes it back the same', () => {
    const file = {
      subplan: 'local/lint',
      projects: ['api', 'web::ro'],
      arguments: { path: '{{path}}', strict: true, level: 2 },
      automation: 'review',
      profile: 'local/careful',
      on_child_failure: 'continue',
      description: 'lint first',
    };
    const parsed = parseStep(file);
    expect(parsed).toEqual({
      ok: true,
      step: {
        kind: 'subplan',
        description: 'lint first',
        project: null,
        onChildFailure: 'continue',
        child: {
          action: 'local/lint',
          projects: ['api', 'web::ro'],
          arguments: { path: '{{path}}', strict: 'true', level: '2' },
          automation: 'REVIEW_BEFORE_APPLY',
          profile: 'local/careful',
          description: 'lint first',
        },
      },
    });
    if (!parsed.ok) return;
    expect(parseStep(stepToFile(parsed.step))).toEqual(parsed);
  });

  it('reads a parallel group, failing by default when a child fails', () => {
    const parsed = parseStep({
      parallel: [{ subplan: 'local/a' }, { subplan: 'local/b', automation: 'full' }],
    });
    expect(parsed.ok && parsed.step).toMatchObject({
      kind: 'parallel',
      onChildFailure: 'fail',
      children: [
        { action: 'local/a', automation: null, projects: null, arguments: {} },
        { action: 'local/b', automation: 'FULL_AUTOMATION' },
      ],
    });
  });

  it.each([
    [{ subplan: '' }, 'subplan: must not be empty'],
    [{ subplan: 'local/a', automation: 'yolo' }, 'automation: must be one of manual, review, full'],
    [{ subplan: 'local/a', on_child_failure: 'ignore' }, 'on_child_failure: must be fail or continue'],
    [{ subplan: 'local/a', projects: [] }, 'projects: list at least one project'],
    [{ subplan: 'local/a', run: 'rm -rf /' }, 'a step has exactly one verb, got run and subplan'],
    [{ subplan: 'local/a', content: 'x' }, 'Unrecognized key'],
    [{ subplan: 'local/a', arguments: { x: { nested: 1 } } }, 'arguments.x'],
    [{ parallel: [{ subplan: 'local/a' }] }, 'a parallel group spawns at least two subplans'],
    [{ parallel: [{ subplan: 'local/a' }, { create: 'x', content: '' }] }, 'parallel.1'],
    [{ parallel: [{ subplan: 'local/a' }, { parallel: [] }] }, 'parallel.1'],
    [{ parallel: [{ subplan: 'local/a', on_child_failure: 'fail' }, { subplan: 'local/b' }] }, 'parallel.0'],
  ])('refuses %j', (value, message) => {
    const parsed = parseStep(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(message);
  });

  it('round-trips an action file with subplan steps through its dict', () => {
    const yaml = [
      'name: local/family',
      'steps:',
      '  - subplan: local/a',
      '    arguments: { n: 1 }',
      '  - parallel:',
      '      - subplan: local/b',
      '      - subplan: local/c',
      '        projects: [demo]',
      '    on_child_failure: continue',
      '  - create: X.md',
      '    content: x',
    ].join('\n');
    const parsed = parseActionFile(yaml, 'a.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    const again = parseActionFile(JSON.stringify(actionCliDict(parsed.action)), 'a.json');
    expect(again.ok && again.action.steps).toEqual(parsed.action.steps);
    const { spawns, fileSteps } = splitStrategySteps(parsed.action.steps);
    expect(spawns.map((s) => [s.stepIndex, s.step.kind, s.onChildFailure])).toEqual([
      [0, 'subplan', 'fail'],
      [1, 'parallel', 'continue'],
    ]);
    expect(fileSteps.map((s) => s.kind)).toEqual(['create']);
    expect(parsed.action.steps.map(isSubplanStep)).toEqual([true, true, false]);
  });
});

describe('child plan ids', () => {
  it('are ULIDs with the parent time, stable, and distinct by position, generation and parent', () => {
    const id = childPlanId(PARENT, { stepIndex: 0, childIndex: 0 });
    expect(isUlid(id)).toBe(true);
    expect(id.slice(0, 10)).toBe(PARENT.slice(0, 10));
    expect(childPlanId(PARENT, { stepIndex: 0, childIndex: 0 })).toBe(id);
    const others = new Set<string>([id]);
    for (let stepIndex = 0; stepIndex < 20; stepIndex++) {
      for (let childIndex = 0; childIndex < 20; childIndex++) {
        for (let generation = 0; generation < 5; generation++) {
          if (stepIndex + childIndex + generation === 0) continue;
          others.add(childPlanId(PARENT, { stepIndex, childIndex }, generation));
        }
      }
    }
    expect(others.size).toBe(20 * 20 * 5);
    expect(childPlanId('01KB0000000000000000000001', { stepIndex: 0, childIndex: 0 })).not.toBe(id);
    // A child's own children differ from its siblings'.
    expect(childPlanId(id, { stepIndex: 0, childIndex: 0 })).not.toBe(id);
  });
});

describe('the projects a child may get', () => {
  const parent = [
    { projectName: 'acme/api', alias: 'api', readOnly: false },
    { projectName: 'acme/docs', alias: null, readOnly: true },
  ];

  it("defaults to the parent's links, and picks among them by name or alias", () => {
    expect(childProjectLinks(parent, null)).toEqual({ ok: true, links: parent });
    expect(childProjectLinks(parent, ['api', 'acme/docs'])).toEqual({ ok: true, links: parent });
    expect(childProjectLinks(parent, ['acme/api:svc'])).toEqual({
      ok: true,
      links: [{ projectName: 'acme/api', alias: 'svc', readOnly: false }],
    });
  });

  it('can narrow a link to read-only, never widen one', () => {
    expect(childProjectLinks(parent, ['api::ro'])).toMatchObject({ ok: true, links: [{ readOnly: true }] });
    // The parent's read-only link stays read-only: there is no syntax to ask otherwise, and none is honoured.
    expect(childProjectLinks(parent, ['acme/docs'])).toMatchObject({ ok: true, links: [{ readOnly: true }] });
  });

  it.each([
    [['acme/secrets'], 'not linked to the parent plan'],
    [['../api'], 'projects:'],
    [['api', 'acme/api'], 'acme/api is listed twice'],
    [['api:ro'], 'is the read-only flag, not an alias'],
  ])('refuses %j', (requested, message) => {
    const result = childProjectLinks(parent, requested);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });
});

describe('the depth limit', () => {
  it('gives a child its family fields, and refuses a fourth level', () => {
    expect(checkSubplanDepth({ planId: PARENT, rootPlanId: null, depth: 0 })).toEqual({
      ok: true,
      parentPlanId: PARENT,
      rootPlanId: PARENT,
      depth: 1,
    });
    expect(checkSubplanDepth({ planId: 'B', rootPlanId: PARENT, depth: 2 })).toMatchObject({
      ok: true,
      rootPlanId: PARENT,
      depth: 3,
    });
    const refused = checkSubplanDepth({ planId: 'C', rootPlanId: PARENT, depth: 3 });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error).toContain('at most 3 are allowed');
  });
});

describe('the spawn decision', () => {
  it('names the children it creates', () => {
    const step = stepFromFile({
      parallel: [{ subplan: 'local/a' }, { subplan: 'local/b' }],
      on_child_failure: 'continue',
    }) as SubplanStep;
    const decision = spawnDecision(PARENT, 2, step, 4);
    expect(decision.type).toBe('subplan_parallel_spawn');
    expect(decision.downstreamPlanIds).toEqual(childPlanIds(PARENT, 2, step));
    expect(decision.chosenOption).toContain(`local/a as plan ${childPlanIds(PARENT, 2, step)[0]}`);
    expect(decision.chosenOption).toContain('going on if one fails');
    expect(spawnDecision(PARENT, 0, stepFromFile({ subplan: 'local/a' }) as SubplanStep, 1).type).toBe(
      'subplan_spawn',
    );
  });
});

describe('the family views', () => {
  function decision(seq: number, parent: number | null, type: ViewDecision['type'], plans: string[] = []) {
    return {
      decisionId: `D${seq}`,
      planId: 'P',
      seq,
      parentDecisionId: parent === null ? null : `D${parent}`,
      type,
      phase: 'STRATEGIZE',
      question: 'q',
      chosenOption: `choice ${seq}`,
      alternatives: [],
      confidence: null,
      rationale: '',
      actor: 'a',
      createdAt: '2026-12-01T00:00:00.000Z',
      supersededBy: null,
      isCorrection: false,
      correctsDecisionId: null,
      correctionReason: null,
      downstreamDecisionIds: [],
      downstreamPlanIds: plans,
      artifactsProduced: [],
      hotContextHash: null,
      hotContextRef: null,
      relevantResources: [],
      actorStateRef: null,
      actorReasoning: null,
    } as unknown as ViewDecision;
  }
  const member = (planId: string, decisions: ViewDecision[], subplans = new Map()): FamilyTree => ({
    planId,
    name: `plan ${planId}`,
    actionName: 'local/x',
    phase: 'APPLIED',
    state: 'COMPLETE',
    tree: buildTree(decisions),
    subplans,
  });
  const child = member('C1', [decision(0, null, 'prompt_definition')]);
  const family = member(
    'P',
    [
      decision(0, null, 'prompt_definition'),
      decision(1, 0, 'subplan_spawn', ['C1']),
      decision(2, 1, 'strategy_choice'),
    ],
    new Map([['D1', [child]]]),
  );

  it('nests a child under the decision that spawned it (json, yaml)', () => {
    const doc = familyDocument(family) as { nodes: Array<Record<string, unknown>> };
    expect(doc.nodes[1]).toMatchObject({ decision_id: 'D1', subplans: [{ plan_id: 'C1' }] });
    expect(doc.nodes[0]).not.toHaveProperty('subplans');
  });

  it('lists every member, naming the plan and the spawning decision (plain, table)', () => {
    expect(familyRows(family).map((r) => [r.plan_id, r.spawned_by, r.decision_id])).toEqual([
      ['P', null, 'D0'],
      ['P', null, 'D1'],
      ['P', null, 'D2'],
      ['C1', 'D1', 'D0'],
    ]);
  });

  it('indents a child under its spawning decision, beside that decision own children (rich)', () => {
    expect(richFamilyLines(family)).toEqual([
      'prompt_definition #0 D0  choice 0',
      '└── subplan_spawn #1 D1  choice 1',
      '    │ ⇢ subplan C1 local/x "plan C1" (APPLIED, COMPLETE)',
      '    │   prompt_definition #0 D0  choice 0',
      '    └── strategy_choice #2 D2  choice 2',
    ]);
  });
});
