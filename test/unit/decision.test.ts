import { checkCorrection, checkDecisionDraft, correctionDrafts, DECISION_TYPES } from '../../domain/decision';
import type { CorrectedDecision, CorrectionRequest } from '../../domain/decision';
import { decisionDraftExtrasSchema, decisionTypeSchema } from '../../domain/decision-schemas';

const original: CorrectedDecision = {
  seq: 3,
  type: 'implementation_choice',
  phase: 'EXECUTE',
  question: 'How to parse?',
  chosenOption: 'regex',
  alternatives: ['hand-written parser', 'parser generator'],
  parentSeq: 1,
};

const request: CorrectionRequest = {
  by: 'alice',
  chosenOption: 'hand-written parser',
  reason: 'regexes cannot nest',
  phase: 'APPLY',
  interventionSeq: 7,
  correctionSeq: 8,
};

describe('decision types', () => {
  it('has the 11 types of seed 004 with their phases', () => {
    expect(Object.keys(DECISION_TYPES)).toHaveLength(11);
    expect(DECISION_TYPES.prompt_definition).toBe('STRATEGIZE');
    expect(DECISION_TYPES.tool_invocation).toBe('EXECUTE');
    expect(DECISION_TYPES.user_intervention).toBeUndefined();
    expect(decisionTypeSchema.options).toEqual(Object.keys(DECISION_TYPES));
  });
});

describe('checkDecisionDraft', () => {
  it('accepts confidence at both ends and none, refuses outside 0..1 and NaN', () => {
    const draft = (confidence: number | null) => ({
      type: 'strategy_choice' as const,
      parentSeq: 0,
      confidence,
    });
    expect(checkDecisionDraft(draft(0), 1)).toBeUndefined();
    expect(checkDecisionDraft(draft(1), 1)).toBeUndefined();
    expect(checkDecisionDraft(draft(null), 1)).toBeUndefined();
    expect(checkDecisionDraft(draft(1.5), 1)).toMatch(/between 0.0 and 1.0/);
    expect(checkDecisionDraft(draft(-0.1), 1)).toMatch(/between 0.0 and 1.0/);
    expect(checkDecisionDraft(draft(Number.NaN), 1)).toMatch(/between 0.0 and 1.0/);
  });
});

describe('decisionDraftExtrasSchema', () => {
  it('accepts the optional seed 004 fields', () => {
    expect(
      decisionDraftExtrasSchema.safeParse({
        context: {
          content: { anything: [1, 'two'] },
          relevantResources: [{ kind: 'file', uri: 'src/a.ts', description: 'entry' }],
          actorStateRef: 'checkpoint/1',
        },
        actorReasoning: 'thought about it',
        downstreamPlanIds: ['01KB0F5ZQ3S5G9X2N6W8Y4T7RA'],
        artifactsProduced: [{ kind: 'changeset', uri: 'cs/1' }],
      }).success,
    ).toBe(true);
    expect(decisionDraftExtrasSchema.safeParse({}).success).toBe(true);
  });

  it('refuses malformed references and plan ids', () => {
    expect(decisionDraftExtrasSchema.safeParse({ downstreamPlanIds: ['not-a-ulid'] }).success).toBe(false);
    expect(decisionDraftExtrasSchema.safeParse({ artifactsProduced: [{ kind: 'x' }] }).success).toBe(false);
    expect(
      decisionDraftExtrasSchema.safeParse({
        context: { content: 1, relevantResources: [{ kind: '', uri: 'u' }] },
      }).success,
    ).toBe(false);
  });
});

describe('checkCorrection', () => {
  it('accepts a correction after the original, intervention first', () => {
    expect(checkCorrection(original, request)).toBeUndefined();
  });

  it('refuses to correct the prompt_definition root', () => {
    expect(
      checkCorrection({ ...original, type: 'prompt_definition', parentSeq: null, seq: 0 }, request),
    ).toMatch(/root .* cannot be corrected/);
  });

  it.each([
    [{ by: ' ' }, /name of the person/],
    [{ chosenOption: '' }, /option chosen instead/],
    [{ interventionSeq: -1 }, /non-negative integer/],
    [{ interventionSeq: 3 }, /must come after the corrected decision/],
    [{ correctionSeq: 2, interventionSeq: 1 }, /must come after/],
    [{ interventionSeq: 8, correctionSeq: 8 }, /intervention \(8\) must come before the correction \(8\)/],
    [{ interventionSeq: 9, correctionSeq: 8 }, /must come before/],
  ])('refuses %o', (patch, message) => {
    expect(checkCorrection(original, { ...request, ...patch })).toMatch(message);
  });
});

describe('correctionDrafts', () => {
  it('writes a user_intervention and a correcting decision, both under the original parent', () => {
    const { intervention, correction } = correctionDrafts(original, request);
    expect(intervention).toEqual({
      type: 'user_intervention',
      question: 'Correct decision 3 (implementation_choice): How to parse?',
      chosenOption: 'Replace "regex" with "hand-written parser"',
      alternatives: ['Keep "regex"'],
      confidence: null,
      rationale: 'regexes cannot nest',
      parentSeq: 1,
      phase: 'APPLY',
      actor: 'alice',
    });
    expect(correction).toEqual({
      type: 'implementation_choice',
      question: 'How to parse?',
      chosenOption: 'hand-written parser',
      // The replaced option first; the new choice is no longer an alternative.
      alternatives: ['regex', 'parser generator'],
      confidence: null,
      rationale: 'regexes cannot nest',
      parentSeq: 1,
      phase: 'EXECUTE',
      actor: 'alice',
    });
  });

  it('says who corrected when no reason is given', () => {
    const { intervention, correction } = correctionDrafts(original, { ...request, reason: null });
    expect(intervention.rationale).toBe('alice gave no reason.');
    expect(correction.rationale).toBe('Corrected by alice.');
  });
});
