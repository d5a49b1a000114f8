/**
 * What a correction or an amendment re-runs (domain/correction.ts) and how a corrected step is read
 * (domain/step-option.ts): pure rules, no Temporal, no database.
 */
import {
  amendedSpec,
  canAmend,
  correctionEffect,
  correctionImpact,
  emptyTracking,
  rerunSupersedes,
} from '../../domain/correction';
import type { CorrectionSituation, ImpactDecision, RerunTracking } from '../../domain/correction';
import { planSpecSchema } from '../../domain/schemas';
import { parseStepOption } from '../../domain/step-option';

function tracking(patch: Partial<RerunTracking> = {}): RerunTracking {
  return {
    ...emptyTracking(),
    stepDecisionIds: ['s1', 's2', 's3'],
    phaseDecisionIds: { STRATEGIZE: ['s1', 's2', 's3'], EXECUTE: ['e1', 'e2'] },
    ...patch,
  };
}

function atGate(
  phase: 'STRATEGIZE' | 'EXECUTE',
  patch: Partial<CorrectionSituation> = {},
): CorrectionSituation {
  return { phase, state: 'COMPLETE', awaitingApproval: true, underWay: null, tracking: tracking(), ...patch };
}

describe('correctionEffect', () => {
  it('replaces a step at the gate after Strategize, re-asking later steps only when the actor does', () => {
    expect(correctionEffect(atGate('STRATEGIZE'), 's2')).toEqual({ kind: 'step', index: 1, rerun: null });
    const reasking = atGate('STRATEGIZE', { tracking: tracking({ reasksLaterSteps: true }) });
    expect(correctionEffect(reasking, 's2')).toEqual({ kind: 'step', index: 1, rerun: 'STRATEGIZE' });
  });

  it('re-runs Execute at the gate after Execute, for a step or a decision of Execute', () => {
    expect(correctionEffect(atGate('EXECUTE'), 's3')).toEqual({ kind: 'step', index: 2, rerun: 'EXECUTE' });
    expect(correctionEffect(atGate('EXECUTE'), 'e2')).toEqual({ kind: 'rerun', rerun: 'EXECUTE' });
  });

  it('records only what nothing re-runs: other decisions, other moments, plans without tracking', () => {
    expect(correctionEffect(atGate('STRATEGIZE'), 'invariant')).toEqual({ kind: 'record' });
    expect(correctionEffect(atGate('STRATEGIZE'), 'e1')).toEqual({ kind: 'record' });
    expect(correctionEffect(atGate('EXECUTE', { state: 'PROCESSING' }), 's1')).toEqual({ kind: 'record' });
    expect(correctionEffect(atGate('EXECUTE', { awaitingApproval: false }), 'e1')).toEqual({
      kind: 'record',
    });
    expect(correctionEffect(atGate('EXECUTE', { tracking: null }), 's1')).toEqual({ kind: 'record' });
  });

  it('refuses after Apply, on a finished plan, and while another command is under way', () => {
    for (const situation of [
      atGate('EXECUTE', { phase: 'APPLY' }),
      atGate('EXECUTE', { phase: 'APPLY', state: 'ERRORED', awaitingApproval: false }),
    ]) {
      expect(correctionEffect(situation, 'any')).toEqual({
        kind: 'refused',
        reason: expect.stringMatching(/^the plan is in APPLY/),
      });
    }
    expect(correctionEffect(atGate('EXECUTE', { phase: 'APPLIED' }), 's1')).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/has finished/),
    });
    expect(correctionEffect(atGate('EXECUTE', { state: 'CANCELLED' }), 's1')).toMatchObject({
      kind: 'refused',
    });
    const busy = atGate('EXECUTE', { underWay: 'an advance out of EXECUTE was already accepted' });
    expect(correctionEffect(busy, 's1')).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/advance/),
    });
    // A correction that re-runs nothing does not wait for it.
    expect(correctionEffect(busy, 'invariant')).toEqual({ kind: 'record' });
  });
});

describe('rerunSupersedes', () => {
  it("names the later steps for a re-ask, Execute's last run for a re-run, nothing otherwise", () => {
    const t = tracking({ reasksLaterSteps: true });
    expect(rerunSupersedes(t, { kind: 'step', index: 0, rerun: 'STRATEGIZE' })).toEqual(['s2', 's3']);
    expect(rerunSupersedes(t, { kind: 'step', index: 2, rerun: 'STRATEGIZE' })).toEqual([]);
    expect(rerunSupersedes(t, { kind: 'step', index: 0, rerun: 'EXECUTE' })).toEqual(['e1', 'e2']);
    expect(rerunSupersedes(t, { kind: 'rerun', rerun: 'EXECUTE' })).toEqual(['e1', 'e2']);
    expect(rerunSupersedes(t, { kind: 'step', index: 0, rerun: null })).toEqual([]);
    expect(rerunSupersedes(t, { kind: 'record' })).toEqual([]);
  });
});

describe('canAmend', () => {
  it('accepts only a plan waiting after Strategize, with nothing else under way', () => {
    expect(canAmend(atGate('STRATEGIZE'))).toEqual({ ok: true });
    expect(canAmend(atGate('EXECUTE'))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/only while it waits for approval after Strategize.*plan correct/),
    });
    expect(canAmend(atGate('STRATEGIZE', { state: 'PROCESSING', awaitingApproval: false }))).toMatchObject({
      ok: false,
    });
    expect(canAmend(atGate('STRATEGIZE', { tracking: null }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/before amendments existed/),
    });
    expect(canAmend(atGate('STRATEGIZE', { underWay: 'a correction is under way' }))).toEqual({
      ok: false,
      reason: 'a correction is under way',
    });
    expect(canAmend(atGate('STRATEGIZE', { state: 'CANCELLED' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/finished/),
    });
  });
});

describe('correctionImpact', () => {
  const d = (
    decisionId: string,
    seq: number,
    parent: string | null,
    phase: 'STRATEGIZE' | 'EXECUTE',
  ): ImpactDecision => ({
    decisionId,
    seq,
    parentDecisionId: parent,
    supersededBy: null,
    type: 'x',
    phase,
    chosenOption: decisionId,
  });
  // root, three steps, Execute's run under the last step (with a child of its own).
  const decisions = [
    d('root', 0, null, 'STRATEGIZE'),
    d('s1', 1, 'root', 'STRATEGIZE'),
    d('s2', 2, 'root', 'STRATEGIZE'),
    d('s3', 3, 'root', 'STRATEGIZE'),
    d('e1', 4, 's3', 'EXECUTE'),
    d('e2', 5, 'e1', 'EXECUTE'),
  ];

  it('at the gate after Execute: the step and Execute leave the tree, Execute re-runs', () => {
    const impact = correctionImpact(decisions, atGate('EXECUTE'), 's1');
    expect(impact.effect).toEqual({ kind: 'step', index: 0, rerun: 'EXECUTE' });
    expect(impact.superseded.map((x) => x.decisionId)).toEqual(['s1', 'e1', 'e2']);
    expect(impact.leavesTree.map((x) => x.decisionId)).toEqual(['s1', 'e1', 'e2']);
    expect(impact).toMatchObject({ step: 1, reruns: 'EXECUTE' });
  });

  it('counts what hangs under a superseded decision as leaving the tree with it', () => {
    const impact = correctionImpact(
      decisions,
      atGate('STRATEGIZE', { tracking: tracking({ phaseDecisionIds: { STRATEGIZE: [], EXECUTE: [] } }) }),
      's3',
    );
    expect(impact.superseded.map((x) => x.decisionId)).toEqual(['s3']);
    expect(impact.leavesTree.map((x) => x.decisionId)).toEqual(['s3', 'e1', 'e2']);
    expect(impact.reruns).toBeNull();
  });

  it('a refusal supersedes nothing', () => {
    const impact = correctionImpact(decisions, atGate('EXECUTE', { phase: 'APPLY' }), 's1');
    expect(impact).toMatchObject({
      effect: { kind: 'refused' },
      superseded: [],
      leavesTree: [],
      reruns: null,
    });
  });

  it('leaves out decisions already superseded', () => {
    const withOld = decisions.map((x) => (x.decisionId === 'e2' ? { ...x, supersededBy: 'other' } : x));
    const impact = correctionImpact(withOld, atGate('EXECUTE'), 'e1');
    expect(impact.superseded.map((x) => x.decisionId)).toEqual(['e1']);
    expect(impact.leavesTree.map((x) => x.decisionId)).toEqual(['e1']);
  });
});

describe('amendedSpec', () => {
  it('appends the amendments to the description, in order, and changes nothing without any', () => {
    const spec = { description: 'greet people', planId: 'p' };
    expect(amendedSpec(spec, [])).toBe(spec);
    expect(amendedSpec(spec, ['be brief', 'no emoji'])).toEqual({
      planId: 'p',
      description: 'greet people\n\nInstructions added since the plan was created:\n- be brief\n- no emoji',
    });
    expect(amendedSpec({ description: '' }, ['x']).description).toBe(
      'Instructions added since the plan was created:\n- x',
    );
  });
});

describe('parseStepOption', () => {
  const spec = planSpecSchema.parse({
    planId: '01KB0F5ZQ3S5G9X2N6W8Y4T7RA',
    name: 'Greet',
    actionName: 'local/example',
    description: '',
    projects: [
      { projectName: 'local/demo', alias: 'demo', readOnly: false },
      { projectName: 'local/docs', alias: null, readOnly: true },
    ],
    automationLevel: 'MANUAL',
    arguments: { greeting: 'hi' },
    argumentsOrder: ['greeting'],
    createdBy: 'alice',
    createdAt: '2026-11-30T00:00:00.000Z',
  });

  it('reads one step as YAML or JSON, and skip in any case', () => {
    expect(parseStepOption('{create: A.md, content: "{{greeting}}\\n"}', spec)).toEqual({
      ok: true,
      option: {
        skip: false,
        step: {
          kind: 'create',
          path: 'A.md',
          content: '{{greeting}}\n',
          overwrite: false,
          description: null,
          project: null,
        },
      },
    });
    expect(parseStepOption('{"run": "echo {{greeting}}", "project": "demo"}', spec)).toMatchObject({
      ok: true,
      option: { skip: false, step: { kind: 'run', command: 'echo {{greeting}}', project: 'demo' } },
    });
    expect(parseStepOption('move: a.txt\nto: b/c.txt\n', spec)).toMatchObject({ ok: true });
    expect(parseStepOption('  SKIP ', spec)).toEqual({ ok: true, option: { skip: true } });
  });

  it.each([
    ['free text', 'Write it by hand', /a step must be a mapping/],
    ['empty', '   ', /it is empty/],
    ['bad YAML', '{create: [', /not valid YAML or JSON/],
    ['two verbs', '{create: a, run: b, content: x}', /exactly one verb/],
    ['unknown key', '{create: a, content: x, mode: 777}', /mode/],
    ['a list', '[{create: a, content: x}]', /must be a mapping/],
    ['.. in a path', '{create: ../x, content: x}', /"\.\." component/],
    ['.. through a value', '{create: "{{greeting}}/../../x", content: x}', /"\.\." component/],
    ['an absolute path', '{delete: /etc/passwd}', /absolute/],
    ['a move out', '{move: a, to: ../../b}', /to: .*"\.\." component/],
    ['into .git', '{create: .GIT/config, content: x}', /git's directory/],
    ['a quoted placeholder', `{run: 'echo "{{greeting}}"'}`, /inside quotes/],
    ['a placeholder after $', '{run: "echo ${{greeting}}"}', /follows a `\$`/],
    ['an unknown placeholder', '{create: "{{nope}}", content: x}', /"nope", which this plan does not have/],
    ['a read-only project', '{create: a, content: x, project: local/docs}', /read-only/],
    ['an unlinked project', '{create: a, content: x, project: other}', /not linked/],
  ])('refuses %s', (_what, text, reason) => {
    const parsed = parseStepOption(text, spec);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.reason).toMatch(/^the option must be one step in the action step syntax/);
      expect(parsed.reason).toMatch(reason);
    }
  });

  it('refuses a text past the size limit before parsing it, and aliases past a small budget', () => {
    expect(parseStepOption(`{create: a, content: "${'x'.repeat(300 * 1024)}"}`, spec)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/longer than/),
    });
    const bomb = [
      'a: &a [x,x,x,x,x,x,x,x,x]',
      ...'bcdefghijkl'.split('').map(
        (c, i) =>
          `${c}: &${c} [${Array(9)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(',')}]`,
      ),
    ].join('\n');
    expect(parseStepOption(bomb, spec)).toMatchObject({ ok: false });
  });
});
