/**
 * End to end through a real Temporal dev server, the real activities and a real SQLite database.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { planWorkflowId } from '../../domain/ids';
import type { PlanSnapshot } from '../../domain/plan';
import type { Strategy } from '../../domain/steps';
import type { ByPlanRef, ExecuteInput, ExecuteResult } from '../../activities/contracts';
import { getPlanQuery } from '../../workflows/definitions';
import { createHarness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';
import { expectSearchAttributes, searchAttributes } from '../helpers/search-attributes';
import type { Harness } from '../helpers/harness';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h?.teardown();
});

const newPlan = (automationLevel: PlanSnapshot['automationLevel']) =>
  h.client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel,
    arguments: { greeting: 'hello' },
    createdBy: 'tester',
  });

async function expectConsistentHistory(planId: string): Promise<void> {
  const events = await h.plans.listEvents(planId);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  const decisions = await h.plans.listDecisions(planId);
  expect(decisions.map((d) => d.seq)).toEqual(decisions.map((_, i) => i));
  expect(decisions.filter((d) => d.type === 'prompt_definition')).toHaveLength(1);
}

describe('FULL_AUTOMATION', () => {
  it('runs through every phase to APPLIED without stopping', async () => {
    const created = await newPlan('FULL_AUTOMATION');
    const result = await h.withWorker(() => h.env.client.workflow.getHandle(created.workflowId).result());
    expect(result).toEqual({ planId: created.planId, phase: 'APPLIED', decisionCount: 6 });

    const plan = await h.plans.getPlan(created.planId);
    expect(plan).toMatchObject({
      phase: 'APPLIED',
      state: 'COMPLETE',
      error: null,
      actionName: 'local/example',
    });

    const events = await h.plans.listEvents(created.planId);
    expect(events.map((e) => `${e.type}:${e.phase}:${e.state}`)).toEqual([
      'PLAN_CREATED:STRATEGIZE:QUEUED',
      'PHASE_STARTED:STRATEGIZE:PROCESSING',
      'PHASE_COMPLETED:STRATEGIZE:COMPLETE',
      'PHASE_ADVANCED:EXECUTE:QUEUED',
      'PHASE_STARTED:EXECUTE:PROCESSING',
      'PHASE_COMPLETED:EXECUTE:COMPLETE',
      'PHASE_ADVANCED:APPLY:QUEUED',
      'PHASE_STARTED:APPLY:PROCESSING',
      'PHASE_COMPLETED:APPLY:COMPLETE',
      'PHASE_ADVANCED:APPLIED:COMPLETE',
      'PLAN_APPLIED:APPLIED:COMPLETE',
    ]);
    await expectConsistentHistory(created.planId);

    // Each phase hangs under the last decision of the phase before; inside Execute, the resource selection and
    // each step's tool invocation hang under the implementation choice.
    const decisions = await h.plans.listDecisions(created.planId);
    expect(
      decisions.map((d) => [
        d.type,
        d.parentDecisionId === null ? null : decisions.findIndex((p) => p.decisionId === d.parentDecisionId),
      ]),
    ).toEqual([
      ['prompt_definition', null],
      ['strategy_choice', 0],
      ['implementation_choice', 1],
      ['resource_selection', 2],
      ['tool_invocation', 2],
      ['tool_invocation', 4],
    ]);
    expect(plan?.decisionRootId).toBe(decisions[0]?.decisionId);

    // The action's one step wrote its file into the project, through the changeset.
    expect(readFileSync(path.join(h.projectDir, 'demo', 'GREETING.md'), 'utf8')).toBe(
      `# hello, local/demo!\n\nWritten by plan example on local/demo (${created.planId}).\n`,
    );
    expect(plan?.changesetId).toMatch(/^[0-9A-Z]{26}$/);
    expect(plan?.validationSummary).toMatch(/applied: (1 created|0 created, 1 modified)/);

    expect(await searchAttributes(h, created.planId)).toMatchObject({
      PlanPhase: 'APPLIED',
      PlanState: 'COMPLETE',
      PlanAction: 'local/example',
      PlanAutomation: 'FULL_AUTOMATION',
      PlanAwaitingInput: false,
    });
    const memo = (await h.env.client.workflow.getHandle(created.workflowId).describe()).memo;
    expect(memo).toEqual({ planName: 'example on local/demo' });
  });
});

describe('REVIEW_BEFORE_APPLY', () => {
  it('runs Strategize and Execute, then waits for approval before Apply', async () => {
    const created = await newPlan('REVIEW_BEFORE_APPLY');
    await h.withWorker(async () => {
      const waiting = await h.client.waitForInput(created.planId);
      expect(waiting).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
      await expectSearchAttributes(h, created.planId, { PlanPhase: 'EXECUTE', PlanAwaitingInput: true });
      // The Web UI's own query language finds it too (visibility is eventually consistent: poll briefly).
      const query = `PlanAwaitingInput = true AND PlanPhase = "EXECUTE" AND WorkflowId = "${created.workflowId}"`;
      let listed: string[] = [];
      for (const deadline = Date.now() + 10_000; listed.length === 0 && Date.now() < deadline;) {
        listed = [];
        for await (const wf of h.env.client.workflow.list({ query })) listed.push(wf.workflowId);
        if (listed.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(listed).toEqual([created.workflowId]);

      const advanced = await h.client.advance(created.planId, { by: 'reviewer', reason: 'looks right' });
      expect(advanced.phase).toBe('APPLY');
      await h.env.client.workflow.getHandle(created.workflowId).result();
    });
    const decisions = await h.plans.listDecisions(created.planId);
    const interventions = decisions.filter((d) => d.type === 'user_intervention');
    expect(interventions).toHaveLength(1);
    expect(interventions[0]).toMatchObject({
      actor: 'reviewer',
      rationale: 'looks right',
      chosenOption: 'Advance to APPLY',
    });
    expect((await h.plans.getPlan(created.planId))?.phase).toBe('APPLIED');
    await expectConsistentHistory(created.planId);
  });
});

describe('MANUAL through the CLI', () => {
  it('waits at every gate and reaches APPLIED by `agents plan advance`', async () => {
    await h.withWorker(async () => {
      const use = await h.cli(
        'plan',
        'use',
        'local/example',
        '--project',
        'local/demo',
        '--automation',
        'manual',
        '--arg',
        'greeting=world',
        '--format',
        'json',
      );
      expect(use.stderr).toBe('');
      expect(use.code).toBe(0);
      const planId = (JSON.parse(use.stdout) as { plan_id: string }).plan_id;

      for (const [from, to] of [
        ['STRATEGIZE', 'EXECUTE'],
        ['EXECUTE', 'APPLY'],
        ['APPLY', 'APPLIED'],
      ] as const) {
        const wait = await h.cli('plan', 'wait', planId, '--format', 'json');
        expect(wait.code).toBe(0);
        expect(JSON.parse(wait.stdout)).toMatchObject({
          phase: from,
          state: 'COMPLETE',
          awaiting_approval: true,
        });
        const advance = await h.cli(
          'plan',
          'advance',
          planId,
          '--expect',
          from.toLowerCase(),
          '--yes',
          '--format',
          'json',
        );
        expect(advance.stderr).toBe('');
        expect(advance.code).toBe(0);
        expect(JSON.parse(advance.stdout)).toMatchObject({ phase: to });
      }

      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const show = await h.cli('plan', 'show', planId, '--format', 'json');
      expect(JSON.parse(show.stdout)).toMatchObject({
        plan_id: planId,
        phase: 'APPLIED',
        state: 'COMPLETE',
        automation_level: 'MANUAL',
        arguments: { greeting: 'world' },
      });
      const list = await h.cli('plan', 'list', '--phase', 'applied', '--format', 'plain');
      expect(list.code).toBe(0);
      // The short id (ADR 0020): at least 8 characters of the id, and what every command takes.
      const shortId = list.stdout
        .split('\n')
        .find((line) => planId.startsWith(line.split('\t')[0]!))
        ?.split('\t')[0];
      expect(shortId?.length).toBeGreaterThanOrEqual(8);
      expect(JSON.parse((await h.cli('plan', 'show', shortId!, '--format', 'json')).stdout)).toMatchObject({
        plan_id: planId,
      });

      const decisions = await h.plans.listDecisions(planId);
      expect(decisions.filter((d) => d.type === 'user_intervention').map((d) => d.actor)).toEqual([
        'tester',
        'tester',
        'tester',
      ]);
      await expectConsistentHistory(planId);
    });
  });
});

describe('refusals', () => {
  it('refuses an advance in the wrong phase or state and changes nothing', async () => {
    await h.withWorker(async () => {
      const created = await newPlan('MANUAL');
      await h.client.waitForInput(created.planId);
      const eventsBefore = await h.plans.listEvents(created.planId);

      const stale = await h.cli('plan', 'advance', created.planId, '--expect', 'execute');
      expect(stale.code).toBe(4);
      expect(stale.stderr).toBe(
        `error: cannot advance plan ${created.planId}: the plan is in STRATEGIZE, not in EXECUTE\n`,
      );
      expect(stale.stdout).toBe('');
      // Only the refusal is added to the record (ADR 0021), and the refused command returns once it is there.
      expect(await h.plans.listEvents(created.planId)).toEqual([
        ...eventsBefore,
        expect.objectContaining({
          seq: eventsBefore.length,
          type: 'COMMAND_REFUSED',
          phase: 'STRATEGIZE',
          state: 'COMPLETE',
          recordedBy: 'tester',
          message: 'advance refused: the plan is in STRATEGIZE, not in EXECUTE',
        }),
      ]);
      const live = await h.env.client.workflow.getHandle(created.workflowId).query(getPlanQuery);
      expect(live).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });

      await h.client.cancel(created.planId);
    });
  });

  it('refuses to advance a plan that runs by itself or has finished', async () => {
    const created = await newPlan('FULL_AUTOMATION');
    await h.withWorker(() => h.env.client.workflow.getHandle(created.workflowId).result());
    const eventsBefore = await h.plans.listEvents(created.planId);
    const finished = await h.cli('plan', 'advance', created.planId);
    expect(finished.code).toBe(4);
    expect(finished.stderr).toBe(
      `error: cannot advance plan ${created.planId}: the plan has finished (APPLIED, COMPLETE)\n`,
    );
    // The workflow has ended: the client logs the refusal itself, after its last event.
    expect(await h.plans.listEvents(created.planId)).toEqual([
      ...eventsBefore,
      expect.objectContaining({
        seq: eventsBefore.length,
        type: 'COMMAND_REFUSED',
        phase: 'APPLIED',
        state: 'COMPLETE',
        recordedBy: 'tester',
        message: 'advance refused: the plan has finished (APPLIED, COMPLETE)',
      }),
    ]);
  });

  it('gives one-line errors and distinct exit codes for bad input', async () => {
    const unknown = await h.cli('plan', 'advance', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA');
    expect(unknown).toEqual({
      code: 3,
      stdout: '',
      stderr: 'error: no plan with id 01KB0F5ZQ3S5G9X2N6W8Y4T7RA\n',
    });

    // Not an id, so a name (ADR 0020) that no plan has.
    const unnamed = await h.cli('plan', 'show', 'not-a-plan');
    expect(unnamed).toEqual({
      code: 3,
      stdout: '',
      stderr: 'error: no plan with id, id prefix or name "not-a-plan"\n',
    });
    const tooShort = await h.cli('plan', 'show', '01KB');
    expect(tooShort.code).toBe(2);
    expect(tooShort.stderr).toMatch(/^error: "01KB" is too short for a plan id prefix/);

    const plansBefore = await h.plans.listPlans();
    const automation = await h.cli(
      'plan',
      'use',
      'local/example',
      '--project',
      'local/demo',
      '--automation',
      'sometimes',
    );
    expect(automation.code).toBe(2);
    expect(automation.stderr).toMatch(
      /option '-a, --automation <level>' argument 'sometimes' is invalid. must be one of manual, review, full./,
    );

    const arg = await h.cli('plan', 'use', 'local/example', '--project', 'local/demo', '--arg', 'novalue');
    expect(arg).toMatchObject({ code: 2, stderr: 'error: --arg "novalue" must have the form key=value\n' });

    const action = await h.cli('plan', 'use', 'example', '--project', 'local/demo');
    expect(action.code).toBe(2);
    expect(action.stderr).toMatch(/action name "example": must look like namespace\/name/);

    const format = await h.cli('plan', 'list', '--format', 'xml');
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/Allowed choices are json, yaml, plain, table, rich/);

    expect(await h.plans.listPlans()).toEqual(plansBefore);
  });
});

describe('cancellation', () => {
  it('ends a waiting plan CANCELLED and records it', async () => {
    await h.withWorker(async () => {
      const created = await newPlan('MANUAL');
      await h.client.waitForInput(created.planId);
      const cancel = await h.cli('plan', 'cancel', created.planId, '--format', 'json');
      expect(cancel.code).toBe(0);
      expect(JSON.parse(cancel.stdout)).toMatchObject({ phase: 'STRATEGIZE', state: 'CANCELLED' });

      const description = await h.env.client.workflow.getHandle(created.workflowId).describe();
      expect(description.status.name).toBe('CANCELLED');
      const events = await h.plans.listEvents(created.planId);
      expect(events.at(-1)).toMatchObject({ type: 'PLAN_CANCELLED', state: 'CANCELLED' });
      expect(await searchAttributes(h, created.planId)).toMatchObject({
        PlanState: 'CANCELLED',
        PlanAwaitingInput: false,
      });

      const again = await h.cli('plan', 'cancel', created.planId);
      expect(again.code).toBe(4);
      expect(again.stderr).toMatch(/the plan has finished \(STRATEGIZE, CANCELLED\)/);
      await expectConsistentHistory(created.planId);
    });
  });
});

describe('durability', () => {
  it('lets a new worker finish a plan whose worker stopped while it waited', async () => {
    const created = await newPlan('MANUAL');
    await h.withWorker(() => h.client.waitForInput(created.planId));
    // No worker now: the plan's state lives in Temporal, not in the stopped process.
    await h.withWorker(async () => {
      for (const phase of ['STRATEGIZE', 'EXECUTE', 'APPLY'] as const) {
        const waiting = await h.client.waitForInput(created.planId);
        expect(waiting).toMatchObject({ phase, awaitingApproval: true });
        await h.client.advance(created.planId, { by: 'tester', expectedPhase: phase });
      }
      await h.env.client.workflow.getHandle(created.workflowId).result();
    });
    expect(await h.plans.getPlan(created.planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
    await expectConsistentHistory(created.planId);
  });
});

describe('phase failure', () => {
  it('parks a failing phase ERRORED with its error, and `plan retry` resumes it', async () => {
    let failures = 0;
    const execute = async (input: ByPlanRef<ExecuteInput>): Promise<ExecuteResult> => {
      if (input.attempt === 1) {
        failures++;
        throw ApplicationFailure.nonRetryable('the sandbox could not be created', 'PhaseFailed');
      }
      return h.activities.execute(input);
    };
    await h.withWorker(
      async () => {
        const created = await newPlan('FULL_AUTOMATION');
        const errored = await h.client.waitForInput(created.planId);
        expect(errored).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
        expect(errored.error).toMatchObject({
          type: 'PhaseFailed',
          message: 'the sandbox could not be created',
        });
        expect(await h.plans.getPlan(created.planId)).toMatchObject({
          state: 'ERRORED',
          error: { type: 'PhaseFailed', message: 'the sandbox could not be created' },
        });
        await expectSearchAttributes(h, created.planId, { PlanPhase: 'EXECUTE', PlanState: 'ERRORED' });

        const advance = await h.cli('plan', 'advance', created.planId);
        expect(advance.code).toBe(4);
        expect(advance.stderr).toMatch(
          /EXECUTE is ERRORED; a plan moves to APPLY only when its state is COMPLETE/,
        );

        const retry = await h.cli('plan', 'retry', created.planId, '--reason', 'sandbox disk freed');
        expect(retry.code).toBe(0);
        await h.env.client.workflow.getHandle(created.workflowId).result();
        expect(await h.plans.getPlan(created.planId)).toMatchObject({
          phase: 'APPLIED',
          state: 'COMPLETE',
          error: null,
        });
        const types = (await h.plans.listEvents(created.planId)).map((e) => e.type);
        expect(types).toContain('PHASE_FAILED');
        expect(types).toContain('PHASE_RETRIED');
        await expectConsistentHistory(created.planId);
      },
      { execute },
    );
    expect(failures).toBe(1);
  });
});

describe('a recording attempt lost after its write', () => {
  it('leaves no duplicate and no missing decision when a committed write runs again', async () => {
    const created = await newPlan('FULL_AUTOMATION');
    let lost = false;
    // The write is committed and its attempt is lost before the workflow hears of it (the worker's process died,
    // or the answer did): the attempt that follows runs the same write, with the same sequence numbers, again.
    await h.withWorker(() => h.env.client.workflow.getHandle(created.workflowId).result(), {
      recordPlanState: async (input) => {
        const written = await h.plans.recordPlanState(input);
        if (input.event === 'PHASE_COMPLETED' && input.phase === 'EXECUTE' && !lost) {
          lost = true;
          throw ApplicationFailure.retryable('the attempt was lost after writing', 'WorkerLost');
        }
        return written;
      },
    });
    expect(lost).toBe(true);
    const decisions = await h.plans.listDecisions(created.planId);
    expect(decisions.map((d) => d.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(decisions.map((d) => d.type)).toEqual([
      'prompt_definition',
      'strategy_choice',
      'implementation_choice',
      'resource_selection',
      'tool_invocation',
      'tool_invocation',
    ]);
    const events = await h.plans.listEvents(created.planId);
    expect(events.filter((e) => e.type === 'PHASE_COMPLETED' && e.phase === 'EXECUTE')).toHaveLength(1);
    await expectConsistentHistory(created.planId);
  });
});

describe('writes a retry cannot fix', () => {
  it('fails the plan with the conflict instead of retrying the write forever', async () => {
    const created = await newPlan('FULL_AUTOMATION');
    const handle = h.env.client.workflow.getHandle(created.workflowId);
    // Storage refuses a write whose key is taken by other content (here: the event number of PLAN_CREATED,
    // written again as something else): PlanConflictError, which activities/failures.ts makes non-retryable.
    let attempts = 0;
    const outcome = await h.withWorker(
      () =>
        handle.result().then(
          () => 'completed',
          (err: unknown) => err,
        ),
      {
        recordPlanState: async (input) => {
          attempts++;
          return h.activities.recordPlanState({ ...input, eventSeq: 0 });
        },
      },
    );
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    // A local activity's failure reaches the workflow as its ApplicationFailure; a scheduled one's inside an
    // ActivityFailure.
    const cause = (outcome as WorkflowFailedError).cause;
    const failure = cause instanceof ActivityFailure ? cause.cause : cause;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'PlanConflict', nonRetryable: true });
    // One attempt: the conflict was not retried.
    expect(attempts).toBe(1);
  });
});

describe('a state that cannot happen', () => {
  it('fails the workflow task, not the plan, and waits for a fixed worker', async () => {
    const created = await newPlan('FULL_AUTOMATION');
    const handle = h.env.client.workflow.getHandle(created.workflowId);
    await h.withWorker(
      async () => {
        // Strategize "succeeds" without steps: Execute must not run on a made-up empty strategy.
        const failedTask = await waitUntil('a failed workflow task', async () => {
          const history = await handle.fetchHistory();
          return history.events?.find((e) => e.workflowTaskFailedEventAttributes)
            ?.workflowTaskFailedEventAttributes;
        });
        expect(failedTask.failure?.message).toBe('Execute started without the strategy Strategize produced');
        const description = await handle.describe();
        expect(description.status.name).toBe('RUNNING');
        // The plan stays where the bug stopped it, not ERRORED with an error nobody can act on.
        expect(await h.plans.getPlan(created.planId)).toMatchObject({
          phase: 'EXECUTE',
          state: 'PROCESSING',
        });
        const events = await h.plans.listEvents(created.planId);
        expect(events.map((e) => e.type)).not.toContain('PHASE_FAILED');
      },
      {
        strategize: async (input) => ({
          ...(await h.activities.strategize(input)),
          strategy: null as unknown as Strategy,
        }),
      },
    );
    await handle.terminate('the test is over');
  });
});
