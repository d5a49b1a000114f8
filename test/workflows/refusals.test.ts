/**
 * Issue 16 items 4 and 8 on a real dev server (ADR 0021): every refused command is in the plan's event log with
 * who, what and why (while the plan runs, and after it has finished), `agents plan events` shows it, and the Web
 * UI's `approve` signal approves like `plan advance`, or is refused into the log without failing the workflow.
 */
import type { AutomationProfileInput } from '../../domain/catalog';
import { planWorkflowId } from '../../domain/ids';
import type { AutomationLevel } from '../../domain/lifecycle';
import { approveSignal } from '../../workflows/definitions';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h?.teardown();
});

/** The policy of the issue: `profile add … --approvers alice,bob,carol --required-approvals 2`. */
async function twoOfThree(name: string, fields: Partial<AutomationProfileInput> = {}): Promise<string> {
  await h.catalog.putProfile({
    name,
    automationLevel: 'REVIEW_BEFORE_APPLY',
    approvers: ['alice', 'bob', 'carol'],
    requiredApprovals: 2,
    ...fields,
  });
  return name;
}

async function startPlan(options: { profileName?: string; automation?: AutomationLevel }): Promise<string> {
  const created = await h.client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    ...(options.automation === undefined ? {} : { automationLevel: options.automation }),
    ...(options.profileName === undefined ? {} : { profileName: options.profileName }),
    arguments: {},
    createdBy: 'tester',
  });
  return created.planId;
}

interface EventJson {
  seq: number;
  time: string;
  type: string;
  phase: string;
  state: string;
  actor: string;
  message: string | null;
  refused?: { command: string; reason: string };
}

async function eventsJson(planId: string): Promise<EventJson[]> {
  const result = await h.cli('plan', 'events', planId, '--format', 'json');
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as EventJson[];
}

async function refusalsOf(planId: string): Promise<EventJson[]> {
  return (await eventsJson(planId)).filter((e) => e.type === 'COMMAND_REFUSED');
}

/** Refusals are logged a moment after the refused command returns (the workflow records them). */
async function waitForRefusals(planId: string, count: number): Promise<EventJson[]> {
  return waitUntil(`${count} refusal(s) in the log of ${planId}`, async () => {
    const found = await refusalsOf(planId);
    return found.length >= count ? found : null;
  });
}

function sequential(events: readonly { seq: number }[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
}

describe('a 2-of-3 gate and the log of refusals', () => {
  it('logs an outsider and a repeat, opens at the second approver, and shows all three attempts in plan events', async () => {
    const profileName = await twoOfThree('team/logged-two-of-three');
    await h.withWorker(async () => {
      const planId = await startPlan({ profileName });
      expect(await h.client.waitForInput(planId)).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });

      const outsider = await h.cli(
        'plan',
        'advance',
        planId,
        '--yes',
        '--by',
        'mallory',
        '--reason',
        'ship it',
      );
      expect(outsider.code).toBe(4);
      expect(outsider.stderr).toContain('mallory may not approve entering APPLY');
      await waitForRefusals(planId, 1);

      const first = await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice', '--reason', 'diff ok');
      expect(first.code).toBe(0);
      const repeat = await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice');
      expect(repeat.code).toBe(4);
      expect(repeat.stderr).toContain('alice has already approved entering APPLY');
      await waitForRefusals(planId, 2);

      const second = await h.cli('plan', 'advance', planId, '--yes', '--by', 'bob', '--reason', 'agreed');
      expect(second.code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();

      const events = await eventsJson(planId);
      sequential(events);
      // The three attempts, in order, each with who and why; the refusals moved nothing.
      const attempts = events.filter(
        (e) => e.type === 'COMMAND_REFUSED' || e.type === 'APPROVAL_RECORDED' || e.actor === 'bob',
      );
      expect(attempts.map((e) => [e.type, e.actor, e.phase])).toEqual([
        ['COMMAND_REFUSED', 'mallory', 'EXECUTE'],
        ['APPROVAL_RECORDED', 'alice', 'EXECUTE'],
        ['COMMAND_REFUSED', 'alice', 'EXECUTE'],
        ['PHASE_ADVANCED', 'bob', 'APPLY'],
      ]);
      expect(attempts[0]?.refused).toEqual({
        command: 'advance',
        reason: 'mallory may not approve entering APPLY: the approvers are alice, bob, carol',
      });
      expect(attempts[0]?.message).toBe(
        'advance refused: mallory may not approve entering APPLY: the approvers are alice, bob, carol',
      );
      expect(attempts[1]?.message).toContain('alice approved entering APPLY (1 of 2)');
      expect(attempts[2]?.refused).toEqual({
        command: 'advance',
        reason: 'alice has already approved entering APPLY; another approver must',
      });
      expect(attempts[3]?.message).toBe('agreed');
      expect(events.at(-1)).toMatchObject({ type: 'PLAN_APPLIED', phase: 'APPLIED', state: 'COMPLETE' });

      // A unique prefix of the id means the plan too (ADR 0020).
      const byPrefix = await h.cli('plan', 'events', planId.slice(0, 20), '--format', 'json');
      expect(JSON.parse(byPrefix.stdout)).toEqual(events);

      // The other four formats show the same log.
      const plain = await h.cli('plan', 'events', planId, '--format', 'plain');
      expect(plain.code).toBe(0);
      expect(plain.stdout.trimEnd().split('\n')).toHaveLength(events.length);
      expect(plain.stdout).toContain('\tCOMMAND_REFUSED\tEXECUTE\tCOMPLETE\tmallory\tadvance refused: ');
      for (const format of ['yaml', 'table', 'rich']) {
        const shown = await h.cli('plan', 'events', planId, '--format', format);
        expect(shown.code).toBe(0);
        expect(shown.stdout).toContain('COMMAND_REFUSED');
      }

      // Finished: a refused advance (and cancel) is logged by the client itself, after the workflow's events.
      const late = await h.cli('plan', 'advance', planId, '--yes', '--by', 'carol', '--reason', 'late');
      expect(late.code).toBe(4);
      expect(late.stderr).toContain('has finished');
      const lateCancel = await h.cli('plan', 'cancel', planId, '--by', 'dave');
      expect(lateCancel.code).toBe(4);
      const after = await eventsJson(planId);
      sequential(after);
      expect(after.slice(events.length)).toEqual([
        expect.objectContaining({
          type: 'COMMAND_REFUSED',
          actor: 'carol',
          phase: 'APPLIED',
          state: 'COMPLETE',
          refused: { command: 'advance', reason: 'the plan has finished (APPLIED, COMPLETE)' },
        }),
        expect.objectContaining({
          actor: 'dave',
          refused: { command: 'cancel', reason: 'the plan has finished (APPLIED, COMPLETE)' },
        }),
      ]);
      // The plan row is as the workflow left it.
      expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });

      // --follow on a finished plan prints the whole log, one JSON object a line, and stops.
      const followed = await h.cli('plan', 'events', planId, '--follow', '--format', 'json');
      expect(followed.code).toBe(0);
      const lines = followed.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as EventJson);
      expect(lines).toEqual(after);
    });
  });
});

describe('the approve signal (the Web UI’s "Send signal")', () => {
  it('logs an outsider’s and a malformed signal without failing the workflow, and counts an approver’s', async () => {
    const profileName = await twoOfThree('team/signalled-two-of-three');
    await h.withWorker(async () => {
      const planId = await startPlan({ profileName });
      await h.client.waitForInput(planId);
      const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));

      await handle.signal(approveSignal, { by: 'eve', reason: 'trust me' });
      // What the Web UI sends when someone leaves the input empty or types something else.
      await handle.signal('approve');
      await handle.signal('approve', 'alice');
      await handle.signal(approveSignal, { by: 'mal\u001b[2Jlory' });
      const refusals = await waitForRefusals(planId, 4);
      expect(refusals.map((e) => [e.actor, e.refused?.command])).toEqual([
        ['eve', 'approve'],
        ['unknown', 'approve'],
        ['unknown', 'approve'],
        ['mal [2Jlory', 'approve'],
      ]);
      expect(refusals[0]?.refused?.reason).toBe(
        'eve may not approve entering APPLY: the approvers are alice, bob, carol',
      );
      expect(refusals[1]?.refused?.reason).toContain('{"by": "alice"');
      expect(refusals[3]?.refused?.reason).toContain('without control characters');
      // Still running, still at its gate, no approval counted.
      expect((await handle.describe()).status.name).toBe('RUNNING');
      expect(await h.client.snapshot(planId)).toMatchObject({
        phase: 'EXECUTE',
        awaitingApproval: true,
        gate: expect.objectContaining({ approvals: [] }),
      });

      // An approver's signal counts like `plan advance`: the first of two is recorded, the gate stays open.
      await handle.signal(approveSignal, { by: 'carol', reason: 'from the UI' });
      await waitUntil('carol’s approval', async () => {
        const gate = (await h.plans.getPlan(planId))?.gate;
        return gate?.approvals.length === 1 ? gate : null;
      });
      // A repeat by signal is refused into the log too.
      await handle.signal(approveSignal, { by: 'carol' });
      await waitForRefusals(planId, 5);
      // The second approver, by signal, opens the gate.
      await handle.signal(approveSignal, { by: 'bob' });
      await handle.result();

      expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      const interventions = (await h.plans.listDecisions(planId)).filter(
        (d) => d.type === 'user_intervention',
      );
      expect(interventions.map((d) => [d.actor, d.chosenOption, d.rationale])).toEqual([
        ['carol', 'Approve entering APPLY (1 of 2)', 'from the UI'],
        ['bob', 'Advance to APPLY', expect.any(String)],
      ]);
      const events = await eventsJson(planId);
      sequential(events);
      expect(events.filter((e) => e.type === 'COMMAND_REFUSED').at(-1)).toMatchObject({
        actor: 'carol',
        refused: {
          command: 'approve',
          reason: 'carol has already approved entering APPLY; another approver must',
        },
      });
    });
  });

  it('approves a plain MANUAL gate like plan advance, and logs nothing then', async () => {
    await h.withWorker(async () => {
      const planId = await startPlan({ automation: 'MANUAL' });
      await h.client.waitForInput(planId);
      const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));
      await handle.signal(approveSignal, { by: 'alice' });
      await waitUntil('the plan past its first gate', async () => {
        const view = await h.client.waitForInput(planId);
        return view.phase === 'EXECUTE' ? view : null;
      });
      await h.cli('plan', 'cancel', planId, '--by', 'alice');
      expect((await h.plans.getPlan(planId))?.state).toBe('CANCELLED');
      const types = (await eventsJson(planId)).map((e) => e.type);
      expect(types).not.toContain('COMMAND_REFUSED');
    });
  });
});

describe('plan events --follow', () => {
  it('prints each event once, in order, while the plan runs, and stops when it has finished', async () => {
    await h.withWorker(async () => {
      const planId = await startPlan({ automation: 'MANUAL' });
      const following = h.cli('plan', 'events', planId, '--follow', '--format', 'json', '--timeout', '120');
      for (let gate = 0; gate < 3; gate++) {
        const view = await h.client.waitForInput(planId);
        if (!view.awaitingApproval) break;
        // A refused command in between: retry is refused at a gate.
        expect((await h.cli('plan', 'retry', planId, '--by', 'bob')).code).toBe(4);
        expect((await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice')).code).toBe(0);
      }
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const followed = await following;
      expect(followed.code).toBe(0);
      const printed = followed.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as EventJson);
      sequential(printed);
      expect(printed).toEqual(await eventsJson(planId));
      expect(printed.filter((e) => e.type === 'COMMAND_REFUSED').map((e) => e.refused?.command)).toEqual([
        'retry',
        'retry',
        'retry',
      ]);
      expect(printed.at(-1)?.type).toBe('PLAN_APPLIED');
    });
  });

  it('refuses an unknown plan (exit 3) and an id prefix too short to mean one (exit 2)', async () => {
    const unknown = await h.cli('plan', 'events', '01JDV4Q0ZQ8Y5X7W3N2M1K0HGF', '--format', 'json');
    expect(unknown.code).toBe(3);
    expect((await h.cli('plan', 'events', 'no-such-plan', '--follow')).code).toBe(3);
    expect((await h.cli('plan', 'events', '01J')).code).toBe(2);
  });
});
