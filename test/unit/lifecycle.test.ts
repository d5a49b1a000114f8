import {
  AUTOMATION_LEVELS,
  PHASES,
  PROCESSING_STATES,
  canAdvance,
  canRetry,
  canTransition,
  isFinished,
  nextPhase,
  parseAutomationLevel,
  requiresApproval,
} from '../../domain/lifecycle';
import { checkReviewedChangeset } from '../../domain/lifecycle';
import type { Phase } from '../../domain/lifecycle';

describe('canTransition', () => {
  const legal: Array<[Phase, Phase]> = [
    ['STRATEGIZE', 'EXECUTE'],
    ['EXECUTE', 'APPLY'],
    ['APPLY', 'APPLIED'],
  ];

  it.each(legal)('allows %s -> %s when COMPLETE', (from, to) => {
    expect(canTransition({ phase: from, state: 'COMPLETE' }, to)).toEqual({ ok: true });
  });

  it('allows exactly the three forward steps out of every phase/target pair', () => {
    const allowed: string[] = [];
    for (const from of PHASES) {
      for (const to of PHASES) {
        if (canTransition({ phase: from, state: 'COMPLETE' }, to).ok) allowed.push(`${from}->${to}`);
      }
    }
    expect(allowed).toEqual(legal.map(([a, b]) => `${a}->${b}`));
  });

  it.each(PROCESSING_STATES.filter((s) => s !== 'COMPLETE'))(
    'refuses to leave a phase that is %s',
    (state) => {
      const verdict = canTransition({ phase: 'EXECUTE', state }, 'APPLY');
      expect(verdict.ok).toBe(false);
      expect(!verdict.ok && verdict.reason).toMatch(
        state === 'CANCELLED' ? /CANCELLED/ : /only when its state is COMPLETE/,
      );
    },
  );

  it('explains skipping and going back', () => {
    const skip = canTransition({ phase: 'STRATEGIZE', state: 'COMPLETE' }, 'APPLY');
    expect(!skip.ok && skip.reason).toMatch(/STRATEGIZE can only move to EXECUTE, not to APPLY/);
    const back = canTransition({ phase: 'APPLY', state: 'COMPLETE' }, 'EXECUTE');
    expect(back.ok).toBe(false);
  });

  it('treats APPLIED as terminal', () => {
    for (const to of PHASES) {
      const verdict = canTransition({ phase: 'APPLIED', state: 'COMPLETE' }, to);
      expect(!verdict.ok && verdict.reason).toMatch(/terminal/);
    }
    expect(nextPhase('APPLIED')).toBeUndefined();
    expect(isFinished({ phase: 'APPLIED', state: 'COMPLETE' })).toBe(true);
    expect(isFinished({ phase: 'EXECUTE', state: 'CANCELLED' })).toBe(true);
    expect(isFinished({ phase: 'EXECUTE', state: 'ERRORED' })).toBe(false);
  });
});

describe('requiresApproval', () => {
  it('follows the automation levels of seed 000', () => {
    const gates = Object.fromEntries(
      AUTOMATION_LEVELS.map((level) => [level, PHASES.slice(1).filter((to) => requiresApproval(level, to))]),
    );
    expect(gates).toEqual({
      MANUAL: ['EXECUTE', 'APPLY', 'APPLIED'],
      REVIEW_BEFORE_APPLY: ['APPLY'],
      FULL_AUTOMATION: [],
    });
  });
});

describe('canAdvance', () => {
  const waiting = {
    phase: 'STRATEGIZE' as Phase,
    state: 'COMPLETE' as const,
    awaitingApproval: true,
    automationLevel: 'MANUAL' as const,
  };

  it('accepts a plan waiting at its gate', () => {
    expect(canAdvance(waiting)).toEqual({ ok: true });
    expect(canAdvance(waiting, 'STRATEGIZE')).toEqual({ ok: true });
  });

  it('refuses a stale expected phase', () => {
    const verdict = canAdvance(waiting, 'EXECUTE');
    expect(!verdict.ok && verdict.reason).toBe('the plan is in STRATEGIZE, not in EXECUTE');
  });

  it('refuses while the phase is still running or failed', () => {
    const running = canAdvance({ ...waiting, state: 'PROCESSING', awaitingApproval: false });
    expect(!running.ok && running.reason).toMatch(
      /STRATEGIZE is PROCESSING; a plan moves to EXECUTE only when/,
    );
    const failed = canAdvance({ ...waiting, state: 'ERRORED', awaitingApproval: false });
    expect(!failed.ok && failed.reason).toMatch(/ERRORED/);
  });

  it('refuses finished plans', () => {
    const applied = canAdvance({ ...waiting, phase: 'APPLIED', awaitingApproval: false });
    expect(!applied.ok && applied.reason).toMatch(/has finished \(APPLIED, COMPLETE\)/);
    const cancelled = canAdvance({ ...waiting, state: 'CANCELLED' });
    expect(!cancelled.ok && cancelled.reason).toMatch(/has finished/);
  });

  it('says whether the gate is about to open or does not exist', () => {
    const soon = canAdvance({ ...waiting, awaitingApproval: false });
    expect(!soon.ok && soon.reason).toMatch(/will wait for approval to enter EXECUTE in a moment/);
    const none = canAdvance({ ...waiting, awaitingApproval: false, automationLevel: 'FULL_AUTOMATION' });
    expect(!none.ok && none.reason).toMatch(/moves on by itself/);
  });
});

describe('canRetry', () => {
  it('allows only an ERRORED phase of a running plan', () => {
    expect(canRetry({ phase: 'EXECUTE', state: 'ERRORED' })).toEqual({ ok: true });
    expect(canRetry({ phase: 'EXECUTE', state: 'COMPLETE' }).ok).toBe(false);
    expect(canRetry({ phase: 'APPLIED', state: 'COMPLETE' }).ok).toBe(false);
  });
});

describe('parseAutomationLevel', () => {
  it.each([
    ['manual', 'MANUAL'],
    ['review', 'REVIEW_BEFORE_APPLY'],
    ['REVIEW_BEFORE_APPLY', 'REVIEW_BEFORE_APPLY'],
    ['full', 'FULL_AUTOMATION'],
    [' Full ', 'FULL_AUTOMATION'],
  ])('%s -> %s', (input, level) => {
    expect(parseAutomationLevel(input)).toBe(level);
  });

  it('rejects anything else', () => {
    expect(parseAutomationLevel('sometimes')).toBeUndefined();
    expect(parseAutomationLevel('')).toBeUndefined();
  });
});

describe('checkReviewedChangeset', () => {
  const atGate = { phase: 'EXECUTE' as const, changesetId: '01KB0F5ZQ3S5G9X2N6W8Y4T7RA' };

  it('lets an advance into APPLY through when it names the current changeset or makes no claim', () => {
    expect(checkReviewedChangeset(atGate, atGate.changesetId)).toEqual({ ok: true });
    expect(checkReviewedChangeset(atGate, undefined)).toEqual({ ok: true });
  });

  it('refuses one that reviewed nothing or another changeset', () => {
    expect(checkReviewedChangeset(atGate, null)).toEqual({
      ok: false,
      reason: expect.stringMatching(/writes changeset 01KB0F5ZQ3S5G9X2N6W8Y4T7RA, which was not shown/),
    });
    expect(checkReviewedChangeset(atGate, '01KB0F5ZQ3S5G9X2N6W8Y4T7RB')).toEqual({
      ok: false,
      reason: expect.stringMatching(/changed since it was reviewed \(reviewed 01KB0F5ZQ3S5G9X2N6W8Y4T7RB/),
    });
  });

  it('ignores the claim where no changeset is written', () => {
    expect(checkReviewedChangeset({ phase: 'STRATEGIZE', changesetId: null }, null)).toEqual({ ok: true });
    expect(checkReviewedChangeset({ phase: 'APPLY', changesetId: atGate.changesetId }, null)).toEqual({
      ok: true,
    });
    expect(checkReviewedChangeset({ phase: 'EXECUTE', changesetId: null }, null)).toEqual({ ok: true });
  });
});
