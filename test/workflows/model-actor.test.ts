/**
 * The model-backed actor in a real plan: a worker whose registry has it (pointed at a local fake endpoint) runs a
 * plan whose action names it, through the same workflow and activities as the built-in actor.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createActorRegistry } from '../../actors';
import { parseActionFile } from '../../domain/action-file';
import { planWorkflowId } from '../../domain/ids';
import YAML from 'yaml';
import { countTokens, FakeModelServer, promptTokensOf, wireStep } from '../helpers/fake-model-server';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;
let server: FakeModelServer;

beforeAll(async () => {
  h = await createHarness();
  server = await FakeModelServer.start();
  const parsed = parseActionFile(
    'name: local/model-made\nactors:\n  strategy: model\narguments:\n  - name: topic\n    default: tests\n',
    'action.yaml',
  );
  if (!parsed.ok) throw new Error(parsed.error);
  await h.catalog.putAction(parsed.action);
});

afterAll(async () => {
  await server?.close();
  await h?.teardown();
});

async function startPlan(): Promise<string> {
  const created = await h.client.create({
    actionName: 'local/model-made',
    projects: ['local/demo'],
    automationLevel: 'FULL_AUTOMATION',
    arguments: {},
    createdBy: 'tester',
  });
  return created.planId;
}

it('runs the steps the model proposed, and records its choice with its reasoning', async () => {
  server.replyContent(
    {
      summary: 'Write notes about tests',
      rationale: 'A notes file is the smallest useful change.',
      confidence: 0.7,
      alternatives: ['Change nothing'],
      steps: [
        wireStep({ kind: 'create', target: 'NOTES.md', content: 'Notes on {{topic}}\n', overwrite: true }),
      ],
      validation: null,
    },
    { reasoning_content: 'The plan asks for notes; one file will do.' },
  );
  const actors = createActorRegistry({
    model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 2 },
  });
  await h.withActors(actors, async () => {
    const planId = await startPlan();
    await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
    expect(readFileSync(path.join(h.projectDir, 'demo', 'NOTES.md'), 'utf8')).toBe('Notes on tests\n');
    const strategy = (await h.plans.listDecisions(planId)).filter((d) => d.type === 'strategy_choice');
    expect(strategy[0]).toMatchObject({
      chosenOption: 'Write notes about tests',
      confidence: 0.7,
      alternatives: ['Change nothing'],
      actorReasoning: 'The plan asks for notes; one file will do.',
    });
    expect(strategy[1]?.chosenOption).toBe('create NOTES.md');
  });
  expect(server.requests).toHaveLength(1);
});

it('records the model and the tokens its reply cost on the decision it made; the built-in ones have none', async () => {
  const reply = {
    summary: 'Write a changelog',
    rationale: 'One file.',
    confidence: 0.8,
    alternatives: [],
    steps: [
      wireStep({ kind: 'create', target: 'CHANGELOG-model.md', content: 'changes\n', overwrite: true }),
    ],
    validation: null,
  };
  server.replyContent(reply, { model: 'fake-2026-12-01' });
  const actors = createActorRegistry({
    model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 2 },
  });
  const before = server.requests.length;
  const planId = await h.withActors(actors, async () => {
    const id = await startPlan();
    await h.env.client.workflow.getHandle(planWorkflowId(id)).result();
    return id;
  });
  const request = server.requests[before];
  expect(server.requests).toHaveLength(before + 1);
  const tree = JSON.parse((await h.cli('plan', 'tree', planId, '--format', 'json')).stdout) as {
    nodes: Array<{ decision_id: string; decision_type: string; actor: string }>;
  };
  const explain = async (decisionId: string, format = 'json') =>
    (await h.cli('plan', 'explain', decisionId, '--format', format)).stdout;
  const [approach, step] = tree.nodes.filter((n) => n.decision_type === 'strategy_choice');
  // The endpoint's name for the model that answered, and what the one request cost.
  expect(JSON.parse(await explain(approach!.decision_id))).toMatchObject({
    chosen_option: 'Write a changelog',
    model_name: 'fake-2026-12-01',
    prompt_tokens: promptTokensOf(request!),
    completion_tokens: countTokens(JSON.stringify(reply)),
  });
  expect(YAML.parse(await explain(approach!.decision_id, 'yaml'))).toMatchObject({
    model_name: 'fake-2026-12-01',
    prompt_tokens: promptTokensOf(request!),
  });
  // The step came from the same reply: the model is named, its tokens are counted once, on the approach.
  expect(JSON.parse(await explain(step!.decision_id))).toMatchObject({
    model_name: 'fake-2026-12-01',
    prompt_tokens: null,
    completion_tokens: null,
  });
  for (const node of tree.nodes.filter((n) => n.decision_type !== 'strategy_choice')) {
    expect(JSON.parse(await explain(node.decision_id))).toMatchObject({
      model_name: null,
      prompt_tokens: null,
      completion_tokens: null,
    });
  }
  // Apply's statistics are fields of the applied plan.
  expect(JSON.parse((await h.cli('plan', 'show', planId, '--format', 'json')).stdout)).toMatchObject({
    phase: 'APPLIED',
    files_created: 1,
    files_modified: 0,
    files_deleted: 0,
    files_moved: 0,
  });
});

it("records the model's verdict on an invariant with the model and the tokens of its request", async () => {
  const parsed = parseActionFile(
    'name: local/model-judged\nactors:\n  invariant: model\ninvariants:\n  - Keep the change small\n',
    'action.yaml',
  );
  if (!parsed.ok) throw new Error(parsed.error);
  await h.catalog.putAction(parsed.action);
  const verdict = { status: 'held', evidence: 'Nothing has changed yet.' };
  // The check at the start of Strategize (recorded) and the one before the gate after it.
  server.replyContent(verdict, { model: 'judge-1' }).replyContent(verdict, { model: 'judge-1' });
  const before = server.requests.length;
  const actors = createActorRegistry({
    model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 2 },
  });
  await h.withActors(actors, async () => {
    const created = await h.client.create({
      actionName: 'local/model-judged',
      projects: ['local/demo'],
      automationLevel: 'MANUAL',
      arguments: {},
      createdBy: 'tester',
    });
    expect(await h.client.waitForInput(created.planId)).toMatchObject({ awaitingApproval: true });
    const [enforced] = (await h.plans.listDecisions(created.planId)).filter(
      (d) => d.type === 'invariant_enforced',
    );
    expect(enforced).toMatchObject({
      chosenOption: 'Keep the change small',
      modelName: 'judge-1',
      promptTokens: promptTokensOf(server.requests[before]!),
      completionTokens: countTokens(JSON.stringify(verdict)),
    });
    await h.client.cancel(created.planId);
  });
});

it('parks a plan ERRORED, naming the actors it has, when the worker lacks the one the plan names', async () => {
  await h.withWorker(async () => {
    const planId = await startPlan();
    const errored = await h.client.waitForInput(planId);
    expect(errored).toMatchObject({ phase: 'STRATEGIZE', state: 'ERRORED' });
    expect(errored.error).toMatchObject({
      type: 'ActorUnavailable',
      message: 'no strategy actor named "model" on this worker (available: builtin)',
    });
    await h.client.cancel(planId);
  });
});

describe('commands the model proposes', () => {
  const proposal = {
    summary: 'Write notes, then check them',
    rationale: 'A notes file, checked by a command.',
    confidence: 0.6,
    alternatives: [],
    steps: [
      wireStep({ kind: 'create', target: 'CHECKED.md', content: 'checked\n', overwrite: true }),
      wireStep({ kind: 'run', target: 'grep -q checked CHECKED.md' }),
    ],
    validation: 'test -s CHECKED.md',
  };
  const modelActors = () =>
    createActorRegistry({
      model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 2 },
    });

  it('stop a fully automatic plan before Execute and show the commands; nothing runs until a person says yes', async () => {
    server.replyContent(proposal);
    await h.withActors(modelActors(), async () => {
      const planId = await startPlan();
      const gate = await h.client.waitForInput(planId);
      expect(gate).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });
      const waiting = (await h.plans.listEvents(planId)).at(-1);
      expect(waiting).toMatchObject({
        type: 'AWAITING_APPROVAL',
        message:
          'waiting for approval to enter EXECUTE: the strategy proposes 2 command(s) the action does not contain; ' +
          'review them first: "grep -q checked CHECKED.md"; "test -s CHECKED.md"',
      });
      // Nobody at a terminal: refused, with the way to approve anyway.
      const unattended = await h.cli('plan', 'advance', planId);
      expect(unattended.code).toBe(2);
      expect(unattended.stderr).toContain('  $ grep -q checked CHECKED.md\n  $ test -s CHECKED.md\n');
      expect(unattended.stderr).toMatch(/runs 2 command\(s\) nobody has reviewed.*pass --yes to run them/);
      // A person who says no leaves the plan waiting, and nothing ran.
      const declined = await h.cliAnswering(false, 'plan', 'advance', planId);
      expect(declined.code).not.toBe(0);
      expect(declined.questions).toEqual(['Run these 2 command(s)? [y/N] ']);
      expect((await h.client.waitForInput(planId)).awaitingApproval).toBe(true);
      expect(existsSync(path.join(h.projectDir, 'demo', 'CHECKED.md'))).toBe(false);
      // A yes runs them, and the plan goes on by itself as FULL_AUTOMATION does.
      const approved = await h.cliAnswering(true, 'plan', 'advance', planId);
      expect(approved.code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(readFileSync(path.join(h.projectDir, 'demo', 'CHECKED.md'), 'utf8')).toBe('checked\n');
    });
  });

  it('run without a stop when the action allows unattended commands', async () => {
    const parsed = parseActionFile(
      'name: local/model-trusted\nactors:\n  strategy: model\nexecution:\n  unattended_commands: true\n',
      'action.yaml',
    );
    if (!parsed.ok) throw new Error(parsed.error);
    await h.catalog.putAction(parsed.action);
    server.replyContent(proposal);
    await h.withActors(modelActors(), async () => {
      const created = await h.client.create({
        actionName: 'local/model-trusted',
        projects: ['local/demo'],
        automationLevel: 'FULL_AUTOMATION',
        arguments: {},
        createdBy: 'tester',
      });
      const result = await h.env.client.workflow.getHandle(created.workflowId).result();
      expect(result.phase).toBe('APPLIED');
      const events = await h.plans.listEvents(created.planId);
      expect(events.map((e) => e.type)).not.toContain('AWAITING_APPROVAL');
    });
  });
});
