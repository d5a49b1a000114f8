import { automationProfileSchema } from '../../domain/catalog';
import {
  approvalsLeft,
  canApprove,
  canPause,
  canResume,
  canSetAutomation,
  currentDetails,
  expiryOf,
  gateNeeds,
  gatePolicy,
  gateReason,
  lowestConfidence,
  pendingApprovers,
  planSummary,
  waitingFor,
  waitingSince,
} from '../../domain/gates';
import type { ConfidenceCandidate, HoldCheck, WaitingPlan } from '../../domain/gates';
import { profileSnapshotSchema } from '../../domain/schemas';
import { gateView } from './fixtures';

const approval = (by: string) => ({ by, reason: null, at: '2026-12-01T10:05:00.000Z' });

describe('gatePolicy', () => {
  it('is anyone, once, forever, with no minimum when the plan has no profile', () => {
    expect(gatePolicy(null)).toEqual({
      approvers: [],
      requiredApprovals: 1,
      timeoutSeconds: null,
      onTimeout: 'cancel',
      minConfidence: null,
    });
  });

  it('reads a snapshot frozen before gates had policies as cancel-on-expiry by anyone', () => {
    const old = profileSnapshotSchema.parse({
      name: 'team/old',
      automationLevel: 'MANUAL',
      minDecisionConfidence: 0.7,
      maxAutoRetries: 2,
      approvalTimeoutSeconds: 60,
    });
    expect(gatePolicy(old)).toEqual({
      approvers: [],
      requiredApprovals: 1,
      timeoutSeconds: 60,
      onTimeout: 'cancel',
      minConfidence: 0.7,
    });
  });
});

describe('the approval policy a profile may hold', () => {
  const base = { name: 'team/p', automationLevel: 'REVIEW_BEFORE_APPLY' as const };

  it('refuses more required approvals than there are approvers', () => {
    const parsed = automationProfileSchema.safeParse({ ...base, approvers: ['alice'], requiredApprovals: 2 });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('2 approvals can never come from 1 approver(s)');
  });

  it('refuses a person listed twice', () => {
    const parsed = automationProfileSchema.safeParse({ ...base, approvers: ['alice', 'bob', 'alice'] });
    expect(JSON.stringify(parsed.error?.issues)).toContain('alice is listed twice');
  });

  it.each(['', '-rf', 'a b', 'bob;rm', 'x'.repeat(65)])('refuses the approver name %j', (name) => {
    expect(automationProfileSchema.safeParse({ ...base, approvers: [name] }).success).toBe(false);
  });

  it('lets any number of people approve when there is no list', () => {
    expect(automationProfileSchema.parse({ ...base, requiredApprovals: 3 }).requiredApprovals).toBe(3);
  });
});

describe('canApprove', () => {
  const team = gateView({ approvers: ['alice', 'bob', 'carol'], required: 2 });

  it('lets a listed approver approve', () => {
    expect(canApprove(team, 'alice')).toEqual({ ok: true });
  });

  it('refuses someone not on the list, naming who may', () => {
    expect(canApprove(team, 'mallory')).toEqual({
      ok: false,
      reason: 'mallory may not approve entering APPLY: the approvers are alice, bob, carol',
    });
  });

  it('compares names exactly: a case variant is an outsider', () => {
    expect(canApprove(team, 'Alice').ok).toBe(false);
  });

  it('refuses the same person twice', () => {
    const verdict = canApprove({ ...team, approvals: [approval('alice')] }, 'alice');
    expect(verdict).toEqual({
      ok: false,
      reason: 'alice has already approved entering APPLY; another approver must',
    });
  });

  it('refuses a repeat even when anyone may approve', () => {
    expect(canApprove(gateView({ required: 2, approvals: [approval('dave')] }), 'dave').ok).toBe(false);
    expect(canApprove(gateView({ required: 2, approvals: [approval('dave')] }), 'erin').ok).toBe(true);
  });
});

describe('pendingApprovers and approvalsLeft', () => {
  it('drops those who approved, in the list order', () => {
    const g = gateView({ approvers: ['alice', 'bob', 'carol'], required: 2, approvals: [approval('bob')] });
    expect(pendingApprovers(g)).toEqual(['alice', 'carol']);
    expect(approvalsLeft(g)).toBe(1);
  });

  it('never counts below zero', () => {
    expect(approvalsLeft(gateView({ required: 1, approvals: [approval('a'), approval('b')] }))).toBe(0);
  });
});

describe('lowestConfidence', () => {
  const d = (seq: number, confidence: number): ConfidenceCandidate => ({
    decisionId: `d${seq}`,
    sequenceNumber: seq,
    question: `q${seq}`,
    chosenOption: `o${seq}`,
    confidence,
  });

  it('is null without a minimum, or when every decision meets it', () => {
    expect(lowestConfidence('STRATEGIZE', [d(0, 0.1)], null)).toBeNull();
    expect(lowestConfidence('STRATEGIZE', [d(0, 0.8), d(1, 0.95)], 0.8)).toBeNull();
  });

  it('names the least confident below the minimum, the first of equals', () => {
    expect(lowestConfidence('EXECUTE', [d(0, 0.9), d(1, 0.5), d(2, 0.3), d(3, 0.3)], 0.8)).toEqual({
      ...d(2, 0.3),
      phase: 'EXECUTE',
      minimum: 0.8,
    });
  });
});

describe('gateReason', () => {
  const unsure = {
    decisionId: 'd',
    sequenceNumber: 1,
    phase: 'STRATEGIZE' as const,
    question: 'q',
    chosenOption: 'o',
    confidence: 0.4,
    minimum: 0.8,
  };

  it('stops a full-automation plan only for unreviewed commands or an unsure decision', () => {
    expect(gateReason('FULL_AUTOMATION', 'EXECUTE', [], null)).toBeNull();
    expect(gateReason('FULL_AUTOMATION', 'EXECUTE', ['make'], null)).toBe('commands');
    expect(gateReason('FULL_AUTOMATION', 'EXECUTE', [], unsure)).toBe('confidence');
  });

  it('says the level when the level already asks for a person', () => {
    expect(gateReason('MANUAL', 'EXECUTE', [], unsure)).toBe('level');
    expect(gateReason('REVIEW_BEFORE_APPLY', 'APPLY', [], null)).toBe('level');
    expect(gateReason('REVIEW_BEFORE_APPLY', 'EXECUTE', [], unsure)).toBe('confidence');
  });
});

describe('expiryOf', () => {
  it('adds the timeout to the opening time, or says never', () => {
    expect(expiryOf('2026-12-01T10:00:00.000Z', 90)).toBe('2026-12-01T10:01:30.000Z');
    expect(expiryOf('2026-12-01T10:00:00.000Z', null)).toBeNull();
  });
});

describe('gateNeeds and waitingFor', () => {
  const plan = (overrides: Partial<WaitingPlan> = {}): WaitingPlan => ({
    phase: 'EXECUTE',
    state: 'COMPLETE',
    awaitingApproval: true,
    error: null,
    ...overrides,
  });

  it('says one approval by anyone', () => {
    expect(gateNeeds(gateView())).toBe('approval');
    expect(waitingFor(plan({ gate: gateView() }))).toBe('waiting at EXECUTE→APPLY for approval');
  });

  it('says how many more and from whom', () => {
    const g = gateView({ approvers: ['alice', 'bob', 'carol'], required: 2, approvals: [approval('alice')] });
    expect(waitingFor(plan({ gate: g }))).toBe('waiting at EXECUTE→APPLY for 1 more approval (bob or carol)');
    expect(gateNeeds({ ...g, approvals: [] })).toBe('2 more approvals (alice, bob or carol)');
  });

  it('names the unsure decision', () => {
    const g = gateView({
      to: 'EXECUTE',
      lowConfidence: {
        decisionId: 'd',
        sequenceNumber: 3,
        phase: 'STRATEGIZE',
        question: 'Which file?',
        chosenOption: 'notes.md',
        confidence: 0.4,
        minimum: 0.8,
      },
    });
    expect(waitingFor(plan({ phase: 'STRATEGIZE', gate: g }))).toBe(
      'waiting at STRATEGIZE→EXECUTE for approval; decision #3 "Which file?" has confidence 0.4 (below 0.8)',
    );
  });

  it('puts an error before a pause, and a pause before a gate', () => {
    const error = {
      type: 'ActivityFailed',
      message: 'make: *** [all] Error 2\nmore',
      at: '2026-12-01T11:00:00Z',
    };
    const paused = { by: 'ops', reason: 'freeze', at: '2026-12-01T10:30:00Z' };
    expect(waitingFor(plan({ state: 'ERRORED', error, paused, gate: gateView() }))).toBe(
      'retry or cancel: EXECUTE is ERRORED (ActivityFailed: make: *** [all] Error 2)',
    );
    expect(waitingFor(plan({ paused, gate: gateView() }))).toBe('resume: paused by ops (freeze)');
    expect(waitingSince({ ...plan({ paused }), updatedAt: 'u' })).toBe(paused.at);
    expect(waitingSince({ ...plan({ state: 'ERRORED', error }), updatedAt: 'u' })).toBe(error.at);
  });

  it('is null for a plan that waits for nobody', () => {
    expect(waitingFor(plan({ awaitingApproval: false, state: 'RUNNING' }))).toBeNull();
    expect(waitingSince({ ...plan({ awaitingApproval: false }), updatedAt: 'u' })).toBeNull();
  });

  it('shortens a long error line', () => {
    const error = { type: 'X', message: 'e'.repeat(500), at: 't' };
    expect(waitingFor(plan({ state: 'ERRORED', error }))?.length).toBeLessThan(220);
  });
});

describe('pause, resume and the level', () => {
  const running: HoldCheck = { phase: 'EXECUTE', state: 'RUNNING', automationLevel: 'MANUAL' };
  const paused = { ...running, paused: { by: 'ops', reason: null, at: 't' } };

  it('pauses a running plan once, and resumes only a paused one', () => {
    expect(canPause(running)).toEqual({ ok: true });
    expect(canPause(paused)).toEqual({ ok: false, reason: 'the plan is already paused by ops' });
    expect(canResume(running)).toEqual({ ok: false, reason: 'the plan is not paused' });
    expect(canResume(paused)).toEqual({ ok: true });
  });

  it('touches no finished plan', () => {
    const applied: HoldCheck = { phase: 'APPLIED', state: 'COMPLETE', automationLevel: 'MANUAL' };
    const cancelled: HoldCheck = { ...running, state: 'CANCELLED' };
    for (const plan of [applied, cancelled]) {
      expect(canPause(plan).ok).toBe(false);
      expect(canResume({ ...plan, paused: paused.paused }).ok).toBe(false);
      expect(canSetAutomation(plan, 'FULL_AUTOMATION', 'ops', { approvers: [] }).ok).toBe(false);
    }
  });

  it('keeps the level in the approvers’ hands when there are approvers', () => {
    const policy = { approvers: ['alice', 'bob'] };
    expect(canSetAutomation(running, 'FULL_AUTOMATION', 'mallory', policy)).toEqual({
      ok: false,
      reason: 'mallory may not change the automation level: only the approvers may (alice, bob)',
    });
    expect(canSetAutomation(running, 'FULL_AUTOMATION', 'bob', policy)).toEqual({ ok: true });
    expect(canSetAutomation(running, 'MANUAL', 'bob', policy)).toEqual({
      ok: false,
      reason: 'the plan already runs under MANUAL',
    });
  });
});

describe('planSummary and currentDetails', () => {
  const one = { name: 'fix-login', actionName: 'local/example', projects: [{ projectName: 'acme/api' }] };

  it('says what the plan is', () => {
    expect(planSummary(one)).toBe('fix-login: local/example on acme/api');
    const many = {
      ...one,
      projects: ['a/1', 'a/2', 'a/3', 'a/4', 'a/5'].map((projectName) => ({ projectName })),
    };
    expect(planSummary(many)).toBe('fix-login: local/example on a/1, a/2, a/3 and 2 more');
  });

  it('adds what it waits for, or where it is', () => {
    const g = gateView({ approvers: ['alice', 'bob', 'carol'], required: 2, approvals: [approval('alice')] });
    const base = { ...one, automationLevel: 'REVIEW_BEFORE_APPLY' as const, error: null };
    expect(
      currentDetails({ ...base, phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true, gate: g }),
    ).toBe(
      'fix-login: local/example on acme/api — waiting at EXECUTE→APPLY for 1 more approval (bob or carol)',
    );
    expect(currentDetails({ ...base, phase: 'EXECUTE', state: 'RUNNING', awaitingApproval: false })).toBe(
      'fix-login: local/example on acme/api — EXECUTE RUNNING, REVIEW_BEFORE_APPLY',
    );
    expect(currentDetails({ ...base, phase: 'APPLIED', state: 'COMPLETE', awaitingApproval: false })).toBe(
      'fix-login: local/example on acme/api — APPLIED, COMPLETE',
    );
  });
});
