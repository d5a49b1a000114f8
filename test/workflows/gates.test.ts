/**
 * Issue 16 on a real dev server, with the real activities, actors and database: gates that expire (cancel, or
 * remind and keep waiting), a decision too unsure to pass a FULL_AUTOMATION plan unattended, a 2-of-3 approval
 * policy (an outsider and a repeat refused), pause and resume, a level changed mid-plan, and what the Web UI is
 * shown (summary, current details, search attributes).
 */
import path from 'node:path';
import { existsSync } from 'node:fs';
import { createActorRegistry } from '../../actors';
import { parseActionFile } from '../../domain/action-file';
import type { AutomationProfileInput } from '../../domain/catalog';
import { planWorkflowId } from '../../domain/ids';
import type { AutomationLevel } from '../../domain/lifecycle';
import { FakeModelServer, wireStep } from '../helpers/fake-model-server';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { expectSearchAttributes, searchAttributes } from '../helpers/search-attributes';
import { waitUntil } from '../helpers/wait';

let h: Harness;
let server: FakeModelServer;

beforeAll(async () => {
  h = await createHarness();
  server = await FakeModelServer.start();
  for (const yaml of [
    'name: local/unsure\nactors:\n  strategy: model\n',
    'name: local/slow-execute\nsteps:\n  - run: sleep 3\n  - create: SLOW.md\n    content: "done\\n"\n',
  ]) {
    const parsed = parseActionFile(yaml, 'action.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    await h.catalog.putAction(parsed.action);
  }
});

afterAll(async () => {
  await server?.close();
  await h?.teardown();
});

async function profile(name: string, fields: Omit<AutomationProfileInput, 'name'>): Promise<string> {
  await h.catalog.putProfile({ name, ...fields });
  return name;
}

async function startPlan(options: {
  action?: string;
  profileName?: string;
  automation?: AutomationLevel;
  name?: string;
}): Promise<string> {
  const created = await h.client.create({
    actionName: options.action ?? 'local/example',
    projects: ['local/demo'],
    ...(options.automation === undefined ? {} : { automationLevel: options.automation }),
    ...(options.profileName === undefined ? {} : { profileName: options.profileName }),
    ...(options.name === undefined ? {} : { name: options.name }),
    arguments: {},
    createdBy: 'tester',
  });
  return created.planId;
}

async function showJson(planId: string): Promise<Record<string, unknown>> {
  const result = await h.cli('plan', 'show', planId, '--format', 'json');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function eventsOf(planId: string) {
  return h.plans.listEvents(planId);
}

describe('a gate that expires', () => {
  it('cancels the plan with approval_expired once the approval timeout runs out', async () => {
    const name = await profile('team/hasty', { automationLevel: 'MANUAL', approvalTimeoutSeconds: 2 });
    await h.withWorker(async () => {
      const planId = await startPlan({ profileName: name });
      // The workflow ends by itself: nobody cancels it, its own gate does. (Its two seconds may be over before a
      // poll sees the gate open on a busy machine, so the gate's timer is read from the history instead.)
      const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));
      await handle.result();
      const timers = ((await handle.fetchHistory()).events ?? []).flatMap((event) => {
        const timeout = event.timerStartedEventAttributes?.startToFireTimeout;
        return timeout ? [Number(timeout.seconds ?? 0) + (timeout.nanos ?? 0) / 1e9] : [];
      });
      // Time left until the stored expiry, measured from the workflow task that started the timer.
      expect(timers).toHaveLength(1);
      expect(timers[0]).toBeGreaterThan(0);
      expect(timers[0]).toBeLessThanOrEqual(2);
      const record = await h.plans.getPlan(planId);
      expect(record).toMatchObject({ phase: 'STRATEGIZE', state: 'CANCELLED', gate: null });
      expect(record?.error).toMatchObject({ type: 'ApprovalExpired' });
      expect(record?.error?.message).toMatch(
        /^approval_expired: nobody approved entering EXECUTE within 2 s/,
      );
      const last = (await eventsOf(planId)).at(-1);
      expect(last).toMatchObject({ type: 'PLAN_CANCELLED', state: 'CANCELLED' });
      expect(last?.message).toContain('approval_expired');
      // Finished: an approval now is refused like any command on a finished plan.
      const late = await h.cli('plan', 'advance', planId, '--yes');
      expect(late.code).toBe(4);
      expect(late.stderr).toContain('has finished');
      await expectSearchAttributes(h, planId, { PlanState: 'CANCELLED', PlanAwaitingInput: false });
      expect((await searchAttributes(h, planId)).PlanWaitingSince).toBeUndefined();
    });
  });

  it('with --on-timeout remind, records reminders and keeps waiting for the approval', async () => {
    const name = await profile('team/patient', {
      automationLevel: 'MANUAL',
      approvalTimeoutSeconds: 1,
      onTimeout: 'remind',
    });
    await h.withWorker(async () => {
      const planId = await startPlan({ profileName: name });
      await h.client.waitForInput(planId);
      const reminders = await waitUntil(
        'two reminders',
        async () => {
          const found = (await eventsOf(planId)).filter((e) => e.type === 'APPROVAL_REMINDER');
          return found.length >= 2 ? found : null;
        },
        { timeoutMs: 30_000 },
      );
      expect(reminders[0]?.message).toMatch(/^reminder 1: waiting at STRATEGIZE→EXECUTE for approval/);
      // Still waiting, still approvable: a reminder is not a state change.
      const view = await h.client.get(planId);
      expect(view).toMatchObject({ state: 'COMPLETE', awaitingApproval: true });
      expect(view.gate?.reminders).toBeGreaterThanOrEqual(2);
      expect(Date.parse(view.gate?.expiresAt ?? '')).toBeGreaterThan(Date.parse(view.gate?.openedAt ?? ''));
      const advanced = await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice');
      expect(advanced.code).toBe(0);
      expect(JSON.parse((await h.cli('plan', 'show', planId, '--format', 'json')).stdout)).toMatchObject({
        phase: 'EXECUTE',
      });
      await h.cli('plan', 'cancel', planId);
    });
  });
});

describe('confidence gating', () => {
  it('stops a FULL_AUTOMATION plan at the next gate when a decision is below the minimum, and says which', async () => {
    const name = await profile('team/careful-full', {
      automationLevel: 'FULL_AUTOMATION',
      minDecisionConfidence: 0.8,
    });
    server.replyContent({
      summary: 'Guess at a notes file',
      rationale: 'Not sure this is wanted.',
      confidence: 0.4,
      alternatives: ['Change nothing'],
      steps: [wireStep({ kind: 'create', target: 'UNSURE.md', content: 'maybe\n', overwrite: true })],
      validation: null,
    });
    const actors = createActorRegistry({
      model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 2 },
    });
    await h.withActors(actors, async () => {
      const planId = await startPlan({ action: 'local/unsure', profileName: name });
      const waiting = await h.client.waitForInput(planId);
      expect(waiting).toMatchObject({
        phase: 'STRATEGIZE',
        state: 'COMPLETE',
        automationLevel: 'FULL_AUTOMATION',
        awaitingApproval: true,
      });
      const shown = await showJson(planId);
      const gate = shown.gate as Record<string, unknown>;
      expect(gate.to).toBe('EXECUTE');
      expect(gate.low_confidence_decision).toMatchObject({
        question: expect.any(String),
        chosen_option: 'Guess at a notes file',
        confidence: 0.4,
        min_decision_confidence: 0.8,
        phase: 'STRATEGIZE',
      });
      expect(shown.waiting_for).toMatch(/has confidence 0\.4 \(below 0\.8\)/);
      const decisionId = (gate.low_confidence_decision as { decision_id: string }).decision_id;
      const decision = (await h.plans.listDecisions(planId)).find((d) => d.decisionId === decisionId);
      expect(decision).toMatchObject({ type: 'strategy_choice', confidence: 0.4 });
      const gateEvent = (await eventsOf(planId)).find((e) => e.type === 'AWAITING_APPROVAL');
      expect(gateEvent?.message).toContain('confidence 0.4');

      // A person's yes lets it through; the rest of a FULL_AUTOMATION plan (confident decisions) runs unattended.
      expect((await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice')).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
      expect(existsSync(path.join(h.projectDir, 'demo', 'UNSURE.md'))).toBe(true);
    });
  });
});

describe('an approval policy of two of three', () => {
  it('opens only at the second distinct approver, refusing an outsider and a repeat', async () => {
    const name = await profile('team/two-of-three', {
      automationLevel: 'REVIEW_BEFORE_APPLY',
      approvers: ['alice', 'bob', 'carol'],
      requiredApprovals: 2,
    });
    await h.withWorker(async () => {
      const planId = await startPlan({ profileName: name, name: 'two-of-three' });
      const waiting = await h.client.waitForInput(planId);
      expect(waiting).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
      await expectSearchAttributes(h, planId, { PlanAwaitingInput: true });
      expect((await searchAttributes(h, planId)).PlanApprovers).toEqual(['alice', 'bob', 'carol']);

      const outsider = await h.cli('plan', 'advance', planId, '--yes', '--by', 'mallory');
      expect(outsider.code).toBe(4);
      expect(outsider.stderr).toContain(
        'mallory may not approve entering APPLY: the approvers are alice, bob, carol',
      );

      const first = await h.cli(
        'plan',
        'advance',
        planId,
        '--yes',
        '--by',
        'alice',
        '--reason',
        'diff looks right',
      );
      expect(first.code).toBe(0);
      expect(first.stderr).toContain(
        "recorded alice's approval; waiting at EXECUTE→APPLY for 1 more approval (bob or carol)",
      );
      const afterFirst = await showJson(planId);
      expect(afterFirst).toMatchObject({ phase: 'EXECUTE', awaiting_approval: true });
      expect(afterFirst.gate).toMatchObject({
        to: 'APPLY',
        approvals: [{ by: 'alice', reason: 'diff looks right' }],
        approvals_required: 2,
        approvals_left: 1,
        pending_approvers: ['bob', 'carol'],
      });
      await waitUntil('PlanApprovers to drop alice', async () => {
        const approvers = (await searchAttributes(h, planId)).PlanApprovers as string[] | undefined;
        return approvers?.join(',') === 'bob,carol';
      });
      expect((await searchAttributes(h, planId)).PlanNeeds).toBe(
        'waiting at EXECUTE→APPLY for 1 more approval (bob or carol)',
      );

      const repeat = await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice');
      expect(repeat.code).toBe(4);
      expect(repeat.stderr).toContain('alice has already approved entering APPLY');
      expect((await h.plans.getPlan(planId))?.phase).toBe('EXECUTE');

      const second = await h.cli('plan', 'advance', planId, '--yes', '--by', 'bob');
      expect(second.code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const record = await h.plans.getPlan(planId);
      expect(record).toMatchObject({ phase: 'APPLIED', gate: null });

      // Each approval is a user_intervention with who and why; the refusals changed nothing.
      const interventions = (await h.plans.listDecisions(planId)).filter(
        (d) => d.type === 'user_intervention',
      );
      expect(interventions.map((d) => [d.actor, d.chosenOption])).toEqual([
        ['alice', 'Approve entering APPLY (1 of 2)'],
        ['bob', 'Advance to APPLY'],
      ]);
      expect(interventions[0]?.rationale).toBe('diff looks right');
      const types = (await eventsOf(planId)).map((e) => e.type);
      expect(types.filter((t) => t === 'APPROVAL_RECORDED')).toHaveLength(1);
      // Under REVIEW_BEFORE_APPLY only EXECUTE→APPLY is a gate: Strategize→Execute and Apply→Applied ran through.
      expect(types.filter((t) => t === 'PHASE_ADVANCED')).toHaveLength(3);
    });
  });

  it('keeps the level out of an outsider’s hands', async () => {
    const name = await profile('team/guarded', {
      automationLevel: 'MANUAL',
      approvers: ['alice', 'bob'],
      requiredApprovals: 2,
    });
    await h.withWorker(async () => {
      const planId = await startPlan({ profileName: name });
      await h.client.waitForInput(planId);
      const outsider = await h.cli('plan', 'set-automation', planId, 'full', '--by', 'mallory');
      expect(outsider.code).toBe(4);
      expect(outsider.stderr).toContain('mallory may not change the automation level');
      expect((await h.plans.getPlan(planId))?.automationLevel).toBe('MANUAL');
      await h.cli('plan', 'cancel', planId);
    });
  });
});

describe('pause, resume and set-automation', () => {
  it('holds a FULL_AUTOMATION plan after the phase that was running, until a person resumes it', async () => {
    await h.withWorker(async () => {
      const planId = await startPlan({ action: 'local/slow-execute', automation: 'FULL_AUTOMATION' });
      await waitUntil('Execute to run', async () => {
        const record = await h.plans.getPlan(planId);
        return record?.phase === 'EXECUTE' && record.state === 'PROCESSING';
      });
      const paused = await h.cli(
        'plan',
        'pause',
        planId,
        '--by',
        'alice',
        '--reason',
        'checking the sandbox',
      );
      expect(paused.code).toBe(0);
      // Execute finishes its run; Apply does not start.
      const held = await waitUntil('Execute to complete', async () => {
        const record = await h.plans.getPlan(planId);
        return record?.state === 'COMPLETE' ? record : null;
      });
      expect(held).toMatchObject({
        phase: 'EXECUTE',
        paused: { by: 'alice', reason: 'checking the sandbox' },
      });
      expect((await showJson(planId)).waiting_for).toBe('resume: paused by alice (checking the sandbox)');
      expect((await h.cli('plan', 'pause', planId, '--by', 'bob')).code).toBe(4);
      expect((await h.plans.getPlan(planId))?.phase).toBe('EXECUTE');

      const resumed = await h.cli('plan', 'resume', planId, '--by', 'bob');
      expect(resumed.code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(await h.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', paused: null });
      const interventions = (await h.plans.listDecisions(planId)).filter(
        (d) => d.type === 'user_intervention',
      );
      expect(interventions.map((d) => [d.actor, d.chosenOption])).toEqual([
        ['alice', 'Pause the plan'],
        ['bob', 'Resume the plan'],
      ]);
      const types = (await eventsOf(planId)).map((e) => e.type);
      expect(types).toContain('PLAN_PAUSED');
      expect(types).toContain('PLAN_RESUMED');
      // Resuming what is not paused is refused.
      expect((await h.cli('plan', 'resume', planId)).code).toBe(4);
    });
  });

  it('refuses an advance while paused, and a level change takes effect from the next gate', async () => {
    await h.withWorker(async () => {
      const planId = await startPlan({ automation: 'MANUAL' });
      await h.client.waitForInput(planId);
      expect((await h.cli('plan', 'pause', planId, '--by', 'alice')).code).toBe(0);
      const refused = await h.cli('plan', 'advance', planId, '--yes');
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain('the plan is paused by alice; resume it first');
      expect((await h.cli('plan', 'resume', planId, '--by', 'alice')).code).toBe(0);

      const changed = await h.cli(
        'plan',
        'set-automation',
        planId,
        'full',
        '--by',
        'alice',
        '--format',
        'json',
      );
      expect(changed.code).toBe(0);
      expect(JSON.parse(changed.stdout)).toMatchObject({
        automation_level: 'FULL_AUTOMATION',
        awaiting_approval: true,
      });
      await expectSearchAttributes(h, planId, { PlanAutomation: 'FULL_AUTOMATION' });
      expect((await h.cli('plan', 'set-automation', planId, 'full')).code).toBe(4);
      // The open gate stays open; after it, no gate opens under full automation.
      expect((await h.cli('plan', 'advance', planId, '--yes', '--by', 'alice')).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const record = await h.plans.getPlan(planId);
      expect(record).toMatchObject({ phase: 'APPLIED', automationLevel: 'FULL_AUTOMATION' });
      const changes = (await h.plans.listDecisions(planId)).filter(
        (d) => d.type === 'user_intervention' && d.chosenOption === 'FULL_AUTOMATION',
      );
      expect(changes).toHaveLength(1);
      expect(changes[0]?.alternatives).toEqual(['MANUAL']);
    });
  });
});

describe('what the Web UI shows', () => {
  it('a summary at start and current details that say what the plan waits for', async () => {
    await h.withWorker(async () => {
      const planId = await startPlan({ automation: 'MANUAL', name: 'ui-check' });
      await h.client.waitForInput(planId);
      const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));
      expect(await (await handle.describe()).staticSummary()).toBe('ui-check: local/example on local/demo');
      const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(metadata.currentDetails).toBe(
        'ui-check: local/example on local/demo — waiting at STRATEGIZE→EXECUTE for approval',
      );
      const attributes = await searchAttributes(h, planId);
      expect(attributes.PlanNeeds).toBe('waiting at STRATEGIZE→EXECUTE for approval');
      expect(attributes.PlanWaitingSince).toBeInstanceOf(Date);
      await h.cli('plan', 'cancel', planId);
    });
  });
});
