/**
 * Long plans stay small: at a gate, once the history passes its limit, the run hands its whole state to a new
 * run of the same workflow. A limit of one event makes every gate do it, so the plan crosses three runs.
 */
import { PlanClient } from '../../client/plans';
import { getPlanQuery } from '../../workflows/definitions';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;
let client: PlanClient;

beforeAll(async () => {
  h = await createHarness();
  client = new PlanClient(h.env.client, h.plans, h.catalog, h.invariants, {
    taskQueue: h.taskQueue,
    historyEventLimit: 1,
  });
});

afterAll(async () => {
  await h?.teardown();
});

/** The runs of a workflow, oldest first, as the visibility store lists them. */
async function runsOf(workflowId: string): Promise<Array<{ runId: string; status: string }>> {
  const runs: Array<{ runId: string; status: string; start: number }> = [];
  for await (const run of h.env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs.push({ runId: run.runId, status: run.status.name, start: run.startTime.getTime() });
  }
  return runs.sort((a, b) => a.start - b.start).map(({ runId, status }) => ({ runId, status }));
}

it('continues as new at every gate past the limit and finishes with one unbroken record', async () => {
  const created = await client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel: 'MANUAL',
    arguments: { greeting: 'hello' },
    createdBy: 'tester',
  });
  const handle = h.env.client.workflow.getHandle(created.workflowId);
  await h.withWorker(async () => {
    const first = await client.waitForInput(created.planId);
    expect(first).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });
    // The state travelled: the query of the new run answers with the same plan, waiting at the same gate.
    await expect(handle.query(getPlanQuery)).resolves.toMatchObject({
      phase: 'STRATEGIZE',
      awaitingApproval: true,
      decisionRootId: first.decisionRootId,
    });
    // A correction at a continued gate takes the next numbers and is what later decisions build on.
    const choice = (await h.plans.listDecisions(created.planId)).find((d) => d.type === 'strategy_choice');
    if (choice === undefined) throw new Error('no strategy_choice recorded');
    await client.correct(created.planId, {
      by: 'tester',
      decisionId: choice.decisionId,
      chosenOption: '{create: GREETING.md, content: "written by hand\n", overwrite: true}',
    });
    for (const phase of ['STRATEGIZE', 'EXECUTE', 'APPLY'] as const) {
      const view = await client.waitForInput(created.planId);
      expect(view).toMatchObject({ phase, awaitingApproval: true });
      await client.advance(created.planId, { by: 'tester', expectedPhase: phase });
    }
    await handle.result();
  });

  const runs = await runsOf(created.workflowId);
  // One run per gate (three) and the one that finished the plan.
  expect(runs.map((r) => r.status)).toEqual([
    'CONTINUED_AS_NEW',
    'CONTINUED_AS_NEW',
    'CONTINUED_AS_NEW',
    'COMPLETED',
  ]);
  const events = await h.plans.listEvents(created.planId);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  expect(events.map((e) => e.type)).toEqual([
    'PLAN_CREATED',
    'PHASE_STARTED',
    'PHASE_COMPLETED',
    'AWAITING_APPROVAL',
    'DECISION_CORRECTED',
    'PHASE_ADVANCED',
    'PHASE_STARTED',
    'PHASE_COMPLETED',
    'AWAITING_APPROVAL',
    'PHASE_ADVANCED',
    'PHASE_STARTED',
    'PHASE_COMPLETED',
    'AWAITING_APPROVAL',
    'PHASE_ADVANCED',
    'PLAN_APPLIED',
  ]);
  const decisions = await h.plans.listDecisions(created.planId);
  expect(decisions.map((d) => d.seq)).toEqual(decisions.map((_, i) => i));
  expect(decisions.filter((d) => d.type === 'prompt_definition')).toHaveLength(1);
  // Execute's first decision hangs under the correction, not under the choice it replaced.
  const correction = decisions.find((d) => d.isCorrection);
  const executeFirst = decisions.find((d) => d.phase === 'EXECUTE');
  expect(correction).toBeDefined();
  expect(executeFirst?.parentDecisionId).toBe(correction?.decisionId);
  await expect(h.plans.getPlan(created.planId)).resolves.toMatchObject({
    phase: 'APPLIED',
    state: 'COMPLETE',
  });
});
