import { waitingKind } from '../../domain/gates';
import type { GateView, WaitingPlan } from '../../domain/gates';
import {
  INBOX_ATTRIBUTES,
  PLAN_WORKFLOW_TYPE,
  canActOn,
  checkInboxUser,
  formatAge,
  inboxColumns,
  inboxQuery,
  inboxRow,
  inboxRows,
  quoteLiteral,
  sortInbox,
} from '../../domain/inbox';
import type { InboxRow, InboxSource } from '../../domain/inbox';
import { planWorkflow } from '../../workflows';
import { gateView } from './fixtures';
import {
  PlanActionKey,
  PlanApprovalsLeftKey,
  PlanApprovedByKey,
  PlanApproversKey,
  PlanAutomationKey,
  PlanAwaitingInputKey,
  PlanNeedsKey,
  PlanPhaseKey,
  PlanRemindersKey,
  PlanStateKey,
  PlanWaitingForKey,
  PlanWaitingSinceKey,
  SEARCH_ATTRIBUTE_DEFINITIONS,
  planSearchAttributes,
} from '../../workflows/definitions';

const PLAN_ID = '01KBD0Q1W8N7Y3J5Z2T4V6X8AB';
const NOW = new Date('2026-12-02T12:00:00.000Z');

/** Opened two and a half hours before NOW: the ages below count from it. */
function gate(overrides: Partial<GateView> = {}): GateView {
  return gateView({ openedAt: '2026-12-02T09:30:00.000Z', ...overrides });
}

const approval = (by: string) => ({ by, reason: null, at: '2026-12-02T10:00:00.000Z' });

type SnapshotFields = Parameters<typeof planSearchAttributes>[0];

function snapshot(overrides: Partial<SnapshotFields> = {}): SnapshotFields {
  return {
    planId: PLAN_ID,
    rootPlanId: null,
    phase: 'EXECUTE',
    state: 'COMPLETE',
    actionName: 'local/example',
    automationLevel: 'MANUAL',
    awaitingApproval: true,
    error: null,
    updatedAt: '2026-12-02T09:30:00.000Z',
    gate: gate(),
    paused: null,
    ...overrides,
  };
}

/** What visibility lists for a plan in this state: the attributes its last upsert left set. */
function listed(plan: SnapshotFields, name: string | null = 'fix-login'): InboxSource {
  const attributes: Record<string, unknown> = {};
  for (const { key, value } of planSearchAttributes(plan)) {
    if (value !== null) attributes[key.name] = value;
  }
  return { workflowId: `plan-${plan.planId}`, name, attributes };
}

function row(plan: SnapshotFields): InboxRow {
  const shaped = inboxRow(listed(plan), NOW);
  if (shaped === null) throw new Error('not a waiting plan');
  return shaped;
}

describe('the attributes the inbox reads', () => {
  it('are spelled as the workflow defines and registers them', () => {
    expect(INBOX_ATTRIBUTES).toEqual({
      phase: PlanPhaseKey.name,
      state: PlanStateKey.name,
      action: PlanActionKey.name,
      automation: PlanAutomationKey.name,
      awaiting: PlanAwaitingInputKey.name,
      waitingSince: PlanWaitingSinceKey.name,
      approvers: PlanApproversKey.name,
      needs: PlanNeedsKey.name,
      waitingFor: PlanWaitingForKey.name,
      approvedBy: PlanApprovedByKey.name,
      approvalsLeft: PlanApprovalsLeftKey.name,
      reminders: PlanRemindersKey.name,
    });
    const registered = SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => d.name);
    for (const name of Object.values(INBOX_ATTRIBUTES)) expect(registered).toContain(name);
    expect(PLAN_WORKFLOW_TYPE).toBe(planWorkflow.name);
  });

  it('registers each new attribute with the type its key has', () => {
    const types = Object.fromEntries(SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => [d.name, d.type]));
    expect(types).toMatchObject({
      PlanWaitingFor: 'Keyword',
      PlanApprovedBy: 'KeywordList',
      PlanApprovalsLeft: 'Int',
      PlanReminders: 'Int',
    });
    expect([
      PlanWaitingForKey.type,
      PlanApprovedByKey.type,
      PlanApprovalsLeftKey.type,
      PlanRemindersKey.type,
    ]).toEqual(['KEYWORD', 'KEYWORD_LIST', 'INT', 'INT']);
  });

  it('say at a half-approved gate who approved, who may still, how many are left and how often it reminded', () => {
    const plan = snapshot({
      gate: gate({
        approvers: ['alice', 'bob', 'carol'],
        required: 2,
        approvals: [approval('bob')],
        reminders: 3,
      }),
    });
    const values = Object.fromEntries(planSearchAttributes(plan).map((p) => [p.key.name, p.value]));
    expect(values).toMatchObject({
      PlanWaitingFor: 'APPROVAL',
      PlanApprovers: ['alice', 'carol'],
      PlanApprovedBy: ['bob'],
      PlanApprovalsLeft: 1,
      PlanReminders: 3,
    });
  });

  it('are all removed once the plan waits for nobody', () => {
    const values = Object.fromEntries(
      planSearchAttributes(snapshot({ awaitingApproval: false, gate: null, state: 'PROCESSING' })).map(
        (p) => [p.key.name, p.value],
      ),
    );
    for (const name of [
      'PlanWaitingSince',
      'PlanWaitingFor',
      'PlanApprovers',
      'PlanApprovedBy',
      'PlanApprovalsLeft',
      'PlanReminders',
      'PlanNeeds',
    ]) {
      expect(values[name]).toBeNull();
    }
  });
});

describe('waitingKind', () => {
  const base: WaitingPlan = {
    phase: 'EXECUTE',
    state: 'COMPLETE',
    awaitingApproval: true,
    error: null,
    gate: gate(),
  };
  const error = { type: 'StepFailed', message: 'boom', at: '2026-12-02T11:00:00.000Z' };
  const paused = { by: 'ops', reason: null, at: '2026-12-02T11:30:00.000Z' };

  it('is set exactly when the plan waits for someone, and names what for, as waitingFor does', () => {
    expect(waitingKind(base)).toBe('APPROVAL');
    expect(waitingKind({ ...base, awaitingApproval: false, state: 'ERRORED', error })).toBe('RETRY');
    // Held at a gate: the gate cannot pass until someone resumes it.
    expect(waitingKind({ ...base, paused })).toBe('RESUME');
    expect(waitingKind({ ...base, state: 'ERRORED', error, paused })).toBe('RETRY');
    expect(waitingKind({ ...base, awaitingApproval: false, state: 'PROCESSING', gate: null })).toBeNull();
  });
});

describe('inboxQuery', () => {
  it('lists every running plan that waits for someone', () => {
    expect(inboxQuery()).toEqual({
      ok: true,
      query: "WorkflowType = 'planWorkflow' AND ExecutionStatus = 'Running' AND PlanWaitingSince IS NOT NULL",
    });
  });

  it('keeps, for one person, what anyone may do and the gates they may still approve', () => {
    const built = inboxQuery({ as: 'alice' });
    expect(built).toEqual({
      ok: true,
      query:
        "WorkflowType = 'planWorkflow' AND ExecutionStatus = 'Running' AND PlanWaitingSince IS NOT NULL AND " +
        "(PlanAwaitingInput = false OR PlanState = 'ERRORED' OR PlanWaitingFor IN ('RETRY', 'RESUME') OR " +
        "((PlanApprovers IS NULL OR PlanApprovers = 'alice') AND (PlanApprovedBy IS NULL OR PlanApprovedBy != 'alice')))",
    });
  });

  it('takes every name an approver can have, as given (trimmed like --by)', () => {
    for (const name of ['bob', 'a.b-c_d+e@example.org', 'Z9', 'x'.repeat(64)]) {
      const built = inboxQuery({ as: name });
      expect(built.ok).toBe(true);
      if (built.ok) expect(built.query).toContain(`PlanApprovers = '${name}'`);
    }
    expect(checkInboxUser('  alice ')).toEqual({ ok: true, name: 'alice' });
  });

  it.each([
    ["x' OR 1=1 --"],
    ["alice') OR (PlanState = 'APPLIED"],
    ['alice"'],
    ['back\\slash'],
    ['two words'],
    ['tab\there'],
    ['line\nbreak'],
    ['nul\u0000'],
    ['é'],
    [''],
    ['   '],
    ['-leading-dash'],
    ['x'.repeat(65)],
    ['x'.repeat(100_000)],
  ])('refuses %j, so it cannot widen or break the query', (hostile) => {
    const built = inboxQuery({ as: hostile });
    expect(built.ok).toBe(false);
    if (!built.ok) {
      expect(built.error).toMatch(/^--as /);
      // The refusal quotes the name escaped (JSON) and cut short: no raw control characters, no huge echo.
      expect([...built.error].some((c) => c !== '\t' && c.charCodeAt(0) < 0x20)).toBe(false);
      expect(built.error.length).toBeLessThan(200);
    }
  });

  it('quotes any value as one literal: quotes and backslashes are escaped, nothing ends it early', () => {
    expect(quoteLiteral('alice')).toBe("'alice'");
    expect(quoteLiteral("x' OR 1=1 --")).toBe("'x\\' OR 1=1 --'");
    expect(quoteLiteral("o'brien\\")).toBe("'o\\'brien\\\\'");
    // A backslash before a quote cannot escape the escaping: the backslash is doubled first.
    expect(quoteLiteral("\\' OR 'a'='a")).toBe("'\\\\\\' OR \\'a\\'=\\'a'");
    for (const value of ["x' OR 1=1 --", "\\'", "''", "\\\\'"]) {
      const quoted = quoteLiteral(value);
      // Inside the quotes every quote is preceded by an odd number of backslashes: escaped.
      const inner = quoted.slice(1, -1);
      for (let i = 0; i < inner.length; i++) {
        if (inner[i] !== "'") continue;
        let slashes = 0;
        for (let j = i - 1; j >= 0 && inner[j] === '\\'; j--) slashes++;
        expect(slashes % 2).toBe(1);
      }
    }
  });
});

describe('inboxRow', () => {
  it('shapes a gate waiting for 2 of 3 approvers', () => {
    const shaped = row(
      snapshot({
        gate: gate({ approvers: ['alice', 'bob', 'carol'], required: 2, approvals: [approval('bob')] }),
      }),
    );
    expect(shaped).toEqual({
      plan_id: PLAN_ID,
      short_id: '01KBD0Q1',
      name: 'fix-login',
      action_name: 'local/example',
      phase: 'EXECUTE',
      state: 'COMPLETE',
      automation_level: 'MANUAL',
      waiting_for: 'APPROVAL',
      gate: 'EXECUTE→APPLY',
      waiting_since: '2026-12-02T09:30:00.000Z',
      age: '2h 30m',
      needs: 'waiting at EXECUTE→APPLY for 1 more approval (alice or carol)',
      approvals_left: 1,
      approvers: ['alice', 'carol'],
      approved_by: ['bob'],
      reminders: 0,
    });
  });

  it('shows the low-confidence decision and its confidence in what is needed', () => {
    const shaped = row(
      snapshot({
        automationLevel: 'FULL_AUTOMATION',
        gate: gate({
          lowConfidence: {
            decisionId: 'd',
            sequenceNumber: 4,
            phase: 'EXECUTE',
            question: 'Which file?',
            chosenOption: 'a.ts',
            confidence: 0.4,
            minimum: 0.8,
          },
        }),
      }),
    );
    expect(shaped.needs).toBe(
      'waiting at EXECUTE→APPLY for approval; decision #4 "Which file?" has confidence 0.4 (below 0.8)',
    );
  });

  it('shapes an ERRORED plan: no gate, the error in what is needed, waiting since the failure', () => {
    const shaped = row(
      snapshot({
        awaitingApproval: false,
        gate: null,
        state: 'ERRORED',
        error: {
          type: 'StepFailed',
          message: 'npm test failed\nlots of output',
          details: null,
          at: '2026-12-02T11:59:15.000Z',
        },
      }),
    );
    expect(shaped).toMatchObject({
      waiting_for: 'RETRY',
      gate: null,
      age: '45s',
      needs: 'retry or cancel: EXECUTE is ERRORED (StepFailed: npm test failed)',
      approvals_left: null,
      approvers: [],
      approved_by: [],
      reminders: null,
    });
    expect(inboxColumns(shaped)).toMatchObject({ gate: 'EXECUTE', waiting: 'RETRY' });
  });

  it('shapes a paused plan at a gate, and a reminded gate', () => {
    const paused = row(snapshot({ paused: { by: 'ops', reason: 'freeze', at: '2026-12-01T12:00:00.000Z' } }));
    expect(paused).toMatchObject({ waiting_for: 'RESUME', gate: 'EXECUTE→APPLY', age: '1d 0h' });
    expect(paused.needs).toBe('resume: paused by ops (freeze)');
    const reminded = row(snapshot({ gate: gate({ reminders: 2 }) }));
    expect(inboxColumns(reminded)).toEqual({
      id: '01KBD0Q1',
      name: 'fix-login',
      action: 'local/example',
      waiting: 'APPROVAL (reminded 2×)',
      gate: 'EXECUTE→APPLY',
      age: '2h 30m',
      needs: 'waiting at EXECUTE→APPLY for approval',
    });
  });

  it('reads a plan that last changed before PlanWaitingFor and the approval counts existed', () => {
    const old = listed(snapshot());
    for (const name of ['PlanWaitingFor', 'PlanApprovedBy', 'PlanApprovalsLeft', 'PlanReminders']) {
      delete old.attributes[name];
    }
    expect(inboxRow(old, NOW)).toMatchObject({
      waiting_for: 'APPROVAL',
      approvals_left: null,
      approved_by: [],
      reminders: null,
    });
    const errored = listed(snapshot({ awaitingApproval: false, gate: null, state: 'ERRORED' }));
    delete errored.attributes.PlanWaitingFor;
    expect(inboxRow(errored, NOW)?.waiting_for).toBe('RETRY');
    const held = listed(
      snapshot({ awaitingApproval: false, gate: null, paused: { by: 'o', reason: null, at: 'x' } }),
    );
    delete held.attributes.PlanWaitingFor;
    held.attributes.PlanWaitingSince = new Date('2026-12-02T11:00:00.000Z');
    expect(inboxRow(held, NOW)?.waiting_for).toBe('RESUME');
  });

  it('skips what is not a waiting plan: another workflow, no waiting time, a time that is not one', () => {
    const plan = listed(snapshot());
    expect(inboxRow({ ...plan, workflowId: 'something-else' }, NOW)).toBeNull();
    expect(inboxRow({ ...plan, workflowId: `plan-${PLAN_ID}x` }, NOW)).toBeNull();
    const { PlanWaitingSince: _dropped, ...rest } = plan.attributes;
    expect(inboxRow({ ...plan, attributes: rest }, NOW)).toBeNull();
    expect(inboxRow({ ...plan, attributes: { ...rest, PlanWaitingSince: 'not a date' } }, NOW)).toBeNull();
  });

  it('tolerates attributes of the wrong type and a missing name', () => {
    const shaped = inboxRow(
      {
        workflowId: `plan-${PLAN_ID}`,
        name: null,
        attributes: {
          PlanWaitingSince: '2026-12-02T11:00:00.000Z',
          PlanPhase: 42,
          PlanApprovers: 'alice',
          PlanApprovedBy: [1, 'bob'],
          PlanApprovalsLeft: -1,
          PlanReminders: 1.5,
        },
      },
      NOW,
    );
    expect(shaped).toMatchObject({
      name: '',
      phase: '',
      gate: null,
      approvers: [],
      approved_by: ['bob'],
      approvals_left: null,
      reminders: null,
    });
  });
});

describe('canActOn: the --as rule on the rows', () => {
  const anyone = row(snapshot());
  const twoOfThree = row(
    snapshot({
      gate: gate({ approvers: ['alice', 'bob', 'carol'], required: 2, approvals: [approval('bob')] }),
    }),
  );
  const notAlice = row(snapshot({ gate: gate({ approvers: ['bob', 'carol'] }) }));
  const anyoneAliceDone = row(snapshot({ gate: gate({ required: 2, approvals: [approval('alice')] }) }));
  const errored = row(
    snapshot({
      awaitingApproval: false,
      gate: null,
      state: 'ERRORED',
      error: { type: 'StepFailed', message: 'x', details: null, at: '2026-12-02T11:00:00.000Z' },
    }),
  );
  const pausedAtGate = row(
    snapshot({
      gate: gate({ approvers: ['bob'] }),
      paused: { by: 'bob', reason: null, at: '2026-12-02T11:00:00.000Z' },
    }),
  );

  it('keeps gates anyone may approve and those naming the person', () => {
    expect(canActOn(anyone, 'alice')).toBe(true);
    expect(canActOn(twoOfThree, 'alice')).toBe(true);
    expect(canActOn(twoOfThree, 'carol')).toBe(true);
  });

  it('drops gates that leave the person out, or that they already approved', () => {
    expect(canActOn(notAlice, 'alice')).toBe(false);
    expect(canActOn(twoOfThree, 'bob')).toBe(false);
    expect(canActOn(twoOfThree, 'dave')).toBe(false);
    expect(canActOn(anyoneAliceDone, 'alice')).toBe(false);
    expect(canActOn(anyoneAliceDone, 'bob')).toBe(true);
    // Names compare exactly, as approvals do.
    expect(canActOn(twoOfThree, 'Alice')).toBe(false);
  });

  it('keeps ERRORED and paused plans for everyone', () => {
    expect(canActOn(errored, 'alice')).toBe(true);
    expect(canActOn(pausedAtGate, 'alice')).toBe(true);
  });
});

describe('inboxRows: what is shown', () => {
  const at = (id: string, since: string, overrides: Partial<SnapshotFields> = {}) => {
    const shaped = inboxRow({ ...listed(snapshot({ ...overrides, planId: id })) }, NOW);
    if (shaped === null) throw new Error('not waiting');
    return { ...shaped, waiting_since: since };
  };
  // Two plans made in the same second share their first 8 characters; a third does not.
  const first = at('01KBD0Q1W8N7Y3J5Z2T4V6X8AB', '2026-12-02T11:00:00.000Z');
  const second = at('01KBD0Q1XAN7Y3J5Z2T4V6X8AB', '2026-12-02T10:00:00.000Z', {
    gate: gate({ approvers: ['bob'] }),
  });
  const third = at('01KBE00000N7Y3J5Z2T4V6X8AB', '2026-12-02T09:00:00.000Z');

  it('gives each row the shortest prefix no other row shares, at least 8 characters', () => {
    expect(inboxRows([first, second, third]).map((r) => r.short_id)).toEqual([
      '01KBE000',
      '01KBD0Q1X',
      '01KBD0Q1W',
    ]);
  });

  it("keeps one person's rows only, and shortens among those", () => {
    const alice = inboxRows([first, second, third], 'alice');
    expect(alice.map((r) => [r.plan_id, r.short_id])).toEqual([
      [third.plan_id, '01KBE000'],
      [first.plan_id, '01KBD0Q1'],
    ]);
  });
});

describe('sortInbox and formatAge', () => {
  it('puts the longest waiting first, ties by id', () => {
    const a = { ...row(snapshot()), plan_id: 'B', waiting_since: '2026-12-02T10:00:00.000Z' };
    const b = { ...a, plan_id: 'A' };
    const c = { ...a, plan_id: 'C', waiting_since: '2026-12-01T10:00:00.000Z' };
    expect(sortInbox([a, b, c]).map((r) => r.plan_id)).toEqual(['C', 'A', 'B']);
  });

  it('says the two largest units', () => {
    expect(formatAge(-5_000)).toBe('0s');
    expect(formatAge(59_999)).toBe('59s');
    expect(formatAge(60_000)).toBe('1m');
    expect(formatAge(3_600_000 + 4 * 60_000 + 30_000)).toBe('1h 4m');
    expect(formatAge(3 * 86_400_000 + 5 * 3_600_000 + 59 * 60_000)).toBe('3d 5h');
  });
});
