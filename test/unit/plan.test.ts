import { asCliDict } from '../../client/render/plan-view';
import { checkDecisionDraft, promptDefinitionDraft } from '../../domain/decision';
import { isUlid, normalizePlanId, planWorkflowId } from '../../domain/ids';
import { initialSnapshot, parseArgumentPairs } from '../../domain/plan';
import { planSpecSchema } from '../../domain/schemas';

const PLAN_ID = '01KB0F5ZQ3S5G9X2N6W8Y4T7RA';

const validSpec = {
  planId: PLAN_ID,
  name: 'review',
  actionName: 'local/code-review',
  projects: [{ projectName: 'local/demo' }],
  automationLevel: 'MANUAL',
  arguments: { depth: '2' },
  argumentsOrder: ['depth'],
  createdBy: 'ada',
  createdAt: '2026-11-30T00:00:00.000Z',
};

describe('plan ids', () => {
  it('accepts a ULID, plan-<ULID> and lower case', () => {
    expect(isUlid(PLAN_ID)).toBe(true);
    expect(normalizePlanId(PLAN_ID)).toBe(PLAN_ID);
    expect(normalizePlanId(planWorkflowId(PLAN_ID))).toBe(PLAN_ID);
    expect(normalizePlanId(PLAN_ID.toLowerCase())).toBe(PLAN_ID);
  });

  it('rejects other shapes', () => {
    expect(normalizePlanId('plan-123')).toBeUndefined();
    expect(normalizePlanId('8ZZZZZZZZZZZZZZZZZZZZZZZZZ')).toBeUndefined();
    expect(normalizePlanId(`${PLAN_ID}X`)).toBeUndefined();
    expect(normalizePlanId('01KB0F5ZQ3S5G9X2N6W8Y4T7RU')).toBeUndefined(); // U is not Crockford base32
  });
});

describe('parseArgumentPairs', () => {
  it('keeps order and allows = in values', () => {
    expect(parseArgumentPairs(['b=1', 'a=x=y', 'c='])).toEqual({
      ok: true,
      arguments: { b: '1', a: 'x=y', c: '' },
      order: ['b', 'a', 'c'],
    });
  });

  it.each([
    ['novalue', /must have the form key=value/],
    ['=x', /must have the form key=value/],
    ['9x=1', /must start with a letter/],
    ['a b=1', /must start with a letter/],
  ])('rejects %s', (pair, message) => {
    const parsed = parseArgumentPairs([pair]);
    expect(!parsed.ok && parsed.error).toMatch(message);
  });

  it('rejects a key given twice', () => {
    const parsed = parseArgumentPairs(['a=1', 'a=2']);
    expect(!parsed.ok && parsed.error).toBe('--arg a is given twice');
  });
});

describe('planSpecSchema', () => {
  it('accepts a valid spec and fills defaults', () => {
    const spec = planSpecSchema.parse(validSpec);
    expect(spec.description).toBe('');
    expect(spec.projects).toEqual([{ projectName: 'local/demo', alias: null, readOnly: false }]);
  });

  it.each([
    [{ actionName: 'code-review' }, /actionName: must look like namespace\/name/],
    [{ projects: [] }, /projects: a plan targets at least one project/],
    [{ projects: [{ projectName: 'a/b' }, { projectName: 'A/B' }] }, /project a\/b is listed twice/],
    [{ planId: 'nope' }, /planId: must be a 26-character ULID/],
    [{ automationLevel: 'SOMETIMES' }, /automationLevel/],
    [{ argumentsOrder: [] }, /argumentsOrder: must list every argument exactly once/],
  ])('rejects %o', (patch, message) => {
    const parsed = planSpecSchema.safeParse({ ...validSpec, ...patch });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')).toMatch(message);
  });
});

describe('decision rules', () => {
  it('requires a parentless root and parents for everything else', () => {
    expect(
      checkDecisionDraft({ type: 'prompt_definition', parentSeq: null, confidence: null }, 0),
    ).toBeUndefined();
    expect(checkDecisionDraft({ type: 'prompt_definition', parentSeq: 0, confidence: null }, 1)).toMatch(
      /root/,
    );
    expect(checkDecisionDraft({ type: 'strategy_choice', parentSeq: null, confidence: null }, 1)).toMatch(
      /needs a parent/,
    );
    expect(checkDecisionDraft({ type: 'strategy_choice', parentSeq: 3, confidence: null }, 2)).toMatch(
      /before it/,
    );
  });

  it('bounds confidence to 0.0-1.0', () => {
    expect(checkDecisionDraft({ type: 'strategy_choice', parentSeq: 0, confidence: 1 }, 1)).toBeUndefined();
    expect(checkDecisionDraft({ type: 'strategy_choice', parentSeq: 0, confidence: 1.5 }, 1)).toMatch(
      /between 0.0 and 1.0/,
    );
    expect(checkDecisionDraft({ type: 'strategy_choice', parentSeq: 0, confidence: Number.NaN }, 1)).toMatch(
      /between/,
    );
  });

  it('states the prompt in the root decision', () => {
    const root = promptDefinitionDraft(planSpecSchema.parse({ ...validSpec, description: 'tidy up' }));
    expect(root).toMatchObject({ type: 'prompt_definition', parentSeq: null, actor: 'ada' });
    expect(root.chosenOption).toBe('Run local/code-review on local/demo with depth="2": tidy up');
  });
});

describe('asCliDict', () => {
  it('orders keys by the groups of seed 000 and omits unset fields', () => {
    const snapshot = initialSnapshot(planSpecSchema.parse(validSpec), planWorkflowId(PLAN_ID));
    expect(Object.keys(asCliDict(snapshot))).toEqual([
      'plan_id',
      'name',
      'action_name',
      'phase',
      'state',
      'description',
      'projects',
      'automation_level',
      'arguments',
      'created_at',
      'updated_at',
    ]);
    const errored = asCliDict({
      ...snapshot,
      state: 'ERRORED',
      awaitingApproval: true,
      decisionRootId: PLAN_ID,
      arguments: {},
      argumentsOrder: [],
      error: { type: 'PhaseFailed', message: 'boom', details: null, at: snapshot.createdAt },
    });
    expect(Object.keys(errored)).toEqual([
      'plan_id',
      'name',
      'action_name',
      'phase',
      'state',
      'awaiting_approval',
      'waiting_for',
      'description',
      'projects',
      'automation_level',
      'decision_root_id',
      'error_type',
      'error_message',
      'errored_at',
      'created_at',
      'updated_at',
    ]);
  });
});
