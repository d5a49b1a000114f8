/**
 * The model-backed actor in a real plan: a worker whose registry has it (pointed at a local fake endpoint) runs a
 * plan whose action names it, through the same workflow and activities as the built-in actor.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createActorRegistry } from '../../actors';
import { parseActionFile } from '../../domain/action-file';
import { planWorkflowId } from '../../domain/ids';
import { FakeModelServer } from '../helpers/fake-model-server';
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

const step = (fields: Record<string, unknown>) => ({
  content: null,
  overwrite: null,
  pattern: null,
  with: null,
  flags: null,
  require_match: null,
  to: null,
  timeout_seconds: null,
  description: null,
  project: null,
  ...fields,
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
      steps: [step({ kind: 'create', target: 'NOTES.md', content: 'Notes on {{topic}}\n', overwrite: true })],
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
