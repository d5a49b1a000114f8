import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ChatClient,
  ModelError,
  ModelHttpError,
  ModelOutputError,
  askStructured,
  createModelActors,
  renderContextFiles,
} from '../../actors/model';
import { loadModelConfig } from '../../actors/model/config';
import type { ModelConfig } from '../../actors/model/config';
import type {
  ActorCall,
  ChangeSummary,
  ContextFile,
  EstimationActor,
  InvariantActor,
  StrategyActor,
} from '../../actors/types';
import type { ActionDefinition, Strategy } from '../../domain/steps';
import { DecisionLog } from '../../domain/decision-log';
import { planSpecSchema } from '../../domain/schemas';
import type { PlanSpec } from '../../domain/schemas';
import { stepFromFile } from '../../domain/steps';
import { childPlanId } from '../../domain/subplans';
import { countTokens, FakeModelServer, promptTokensOf, wireStep } from '../helpers/fake-model-server';
import type { RecordedRequest } from '../helpers/fake-model-server';
import { waitUntil } from '../helpers/wait';
import { CREATED_AT, PLAN_ID } from '../unit/fixtures';
import { z } from 'zod';

const plan: PlanSpec = planSpecSchema.parse({
  planId: PLAN_ID,
  name: 'code-review on acme/api',
  actionName: 'local/code-review',
  description: 'Review the code under a path.',
  projects: [
    { projectName: 'acme/api', alias: 'api' },
    { projectName: 'acme/docs', readOnly: true },
  ],
  automationLevel: 'MANUAL',
  arguments: { path: 'src' },
  argumentsOrder: ['path'],
  definitionOfDone: 'Every file under the path is reviewed.',
  invariants: [
    { text: 'Do not modify files outside the path.', scope: 'ACTION', sourceName: 'local/code-review' },
    { text: 'Keep the public API.', scope: 'GLOBAL' },
  ],
  createdAt: CREATED_AT,
});

const contextFiles: ContextFile[] = [
  {
    path: '/home/me/review-guide.md',
    sha256: 'a'.repeat(64),
    size: 40,
    content: 'Look for unchecked errors and dead code.',
  },
  { path: '/home/me/build.log', sha256: 'b'.repeat(64), size: 30_000, content: 'x'.repeat(30_000) },
  { path: '/home/me/diagram.png', sha256: 'c'.repeat(64), size: 1234, content: null },
];

const action: ActionDefinition = {
  steps: [stepFromFile({ create: 'REVIEW.md', content: '# Review of {{path}}\n' })],
  validation: 'npm test',
};

const strategy: Strategy = {
  steps: [
    stepFromFile({ create: 'REVIEW.md', content: '# Review\n', description: 'the review notes' }),
    stepFromFile({ run: 'npm test' }),
  ],
  validation: 'npm test',
  summary: 'Write review notes and run the tests',
};

const validStrategy = {
  summary: 'Write review notes for src and mark the TODOs',
  rationale: 'Notes capture the review; marked TODOs show what was looked at.',
  confidence: 0.8,
  alternatives: ['Comment inline in every file', 'Open one issue per finding'],
  steps: [
    wireStep({
      kind: 'create',
      target: 'REVIEW.md',
      content: '# Review of {{path}}\n',
      description: 'the notes',
    }),
    wireStep({
      kind: 'replace',
      target: 'src/**/*.ts',
      pattern: 'TODO',
      with: 'TODO(review)',
      require_match: false,
      project: 'api',
    }),
    wireStep({ kind: 'run', target: 'npm test', timeout_seconds: 300 }),
  ],
  validation: 'npm test',
};

function modelConfig(server: FakeModelServer, patch: Partial<ModelConfig> = {}): ModelConfig {
  return {
    baseUrl: server.baseUrl,
    model: 'test-model',
    apiKey: 'sk-test',
    timeoutSeconds: 10,
    maxAttempts: 2,
    ...patch,
  };
}

function actorCall(patch: Partial<Omit<ActorCall, 'progress'>> = {}): ActorCall & { progress: jest.Mock } {
  return {
    plan,
    workspaces: [],
    contextFiles,
    log: new DecisionLog({ firstSeq: 5, parentSeq: 4, phase: 'STRATEGIZE', actor: 'model' }),
    signal: new AbortController().signal,
    progress: jest.fn(),
    // The model actors run no command: one that did would fail here rather than run anything.
    isolation: { mode: 'unavailable', reason: 'the model actor tests run no command' },
    ...patch,
  };
}

function actors(config: ModelConfig) {
  const set = createModelActors(config);
  return {
    strategy: set.strategy as StrategyActor,
    estimation: set.estimation as EstimationActor,
    invariant: set.invariant as InvariantActor,
  };
}

interface SentBody {
  model: string;
  temperature: number;
  messages: Array<{ role: string; content: string }>;
  response_format: {
    type: string;
    json_schema: { name: string; strict: boolean; schema: Record<string, unknown> };
  };
}

function sent(request: RecordedRequest | undefined): SentBody {
  if (request === undefined) throw new Error('no request was recorded');
  return request.body as SentBody;
}

/** What OpenAI's strict mode demands of every object, at every depth, and no keyword it refuses. */
function expectStrictSchema(schema: Record<string, unknown>, where = '(root)'): void {
  for (const refused of ['$schema', 'minLength', 'minimum', 'maximum', 'pattern', 'default']) {
    expect({ where, has: refused in schema }).toEqual({ where, has: false });
  }
  const type = schema.type;
  if (type === 'object' || (Array.isArray(type) && type.includes('object'))) {
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    expect({ where, additionalProperties: schema.additionalProperties }).toEqual({
      where,
      additionalProperties: false,
    });
    expect({ where, required: [...(schema.required as string[])].sort() }).toEqual({
      where,
      required: Object.keys(properties).sort(),
    });
    for (const [name, child] of Object.entries(properties)) expectStrictSchema(child, `${where}.${name}`);
  }
  if (schema.items !== undefined) expectStrictSchema(schema.items as Record<string, unknown>, `${where}[]`);
  for (const child of (schema.anyOf as Array<Record<string, unknown>> | undefined) ?? []) {
    expectStrictSchema(child, where);
  }
}

let server: FakeModelServer;

beforeEach(async () => {
  server = await FakeModelServer.start();
});

afterEach(async () => {
  await server.close();
});

describe('loadModelConfig', () => {
  it('is null when no base URL is set, so the actor is simply not offered', () => {
    expect(loadModelConfig({})).toBeNull();
    expect(
      loadModelConfig({ CLEVERAGENTS_MODEL_BASE_URL: '', CLEVERAGENTS_MODEL: 'gpt-4o-mini' }),
    ).toBeNull();
  });

  it('reads the variables, with defaults and without a trailing slash', () => {
    expect(
      loadModelConfig({
        CLEVERAGENTS_MODEL_BASE_URL: 'http://127.0.0.1:11434/v1/',
        CLEVERAGENTS_MODEL: 'llama3.1',
      }),
    ).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama3.1',
      apiKey: null,
      timeoutSeconds: 120,
      maxAttempts: 2,
    });
    expect(
      loadModelConfig({
        CLEVERAGENTS_MODEL_BASE_URL: 'https://api.openai.com/v1',
        CLEVERAGENTS_MODEL: 'gpt-4o-mini',
        CLEVERAGENTS_MODEL_API_KEY: 'sk-secret',
        CLEVERAGENTS_MODEL_TIMEOUT_SECONDS: '30',
        CLEVERAGENTS_MODEL_MAX_ATTEMPTS: '3',
      }),
    ).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      apiKey: 'sk-secret',
      timeoutSeconds: 30,
      maxAttempts: 3,
    });
  });

  it('fails naming every bad variable on one line', () => {
    expect(() => loadModelConfig({ CLEVERAGENTS_MODEL_BASE_URL: 'https://api.openai.com/v1' })).toThrow(
      /^invalid model actor configuration: CLEVERAGENTS_MODEL: must name the model/,
    );
    let message = '';
    try {
      loadModelConfig({
        CLEVERAGENTS_MODEL_BASE_URL: 'ftp://models.example',
        CLEVERAGENTS_MODEL: 'm',
        CLEVERAGENTS_MODEL_TIMEOUT_SECONDS: 'soon',
        CLEVERAGENTS_MODEL_MAX_ATTEMPTS: '0',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain('\n');
    expect(message).toMatch(
      /CLEVERAGENTS_MODEL_BASE_URL: must be an http\(s\) URL.*\(got "ftp:\/\/models.example"\)/,
    );
    expect(message).toMatch(/CLEVERAGENTS_MODEL_TIMEOUT_SECONDS: must be a whole number \(got "soon"\)/);
    expect(message).toMatch(/CLEVERAGENTS_MODEL_MAX_ATTEMPTS: must be at least 1 \(got "0"\)/);
  });
});

describe('model strategy actor', () => {
  it('sends the plan, its context and a strict json_schema to /chat/completions', async () => {
    server.replyContent(validStrategy);
    await actors(modelConfig(server)).strategy.strategize({ ...actorCall(), action });

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.headers['content-type']).toBe('application/json');

    const body = sent(request);
    expect(body.model).toBe('test-model');
    expect(body.temperature).toBe(0);
    expect(body.response_format.type).toBe('json_schema');
    expect(body.response_format.json_schema.name).toBe('strategy');
    expect(body.response_format.json_schema.strict).toBe(true);
    expectStrictSchema(body.response_format.json_schema.schema);

    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const user = body.messages[1]?.content ?? '';
    expect(user).toContain('Action: local/code-review');
    expect(user).toContain('Definition of done: Every file under the path is reviewed.');
    expect(user).toContain('path = "src"');
    expect(user).toContain('acme/docs: read-only');
    expect(user).toContain('Do not modify files outside the path.');
    expect(user).toContain('"target": "REVIEW.md"');
    expect(user).toContain("The action's validation command: npm test");
    expect(user).toContain('--- /home/me/review-guide.md ---\nLook for unchecked errors and dead code.');
    expect(user).toMatch(/\/home\/me\/build\.log \(first 19960 of 30000 characters/);
    expect(user).toContain('/home/me/diagram.png (binary, 1234 bytes');
  });

  it('sends no Authorization header without an API key', async () => {
    server.replyContent(validStrategy);
    await actors(modelConfig(server, { apiKey: null })).strategy.strategize({ ...actorCall(), action });
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('re-asks only the steps after a corrected one, telling the model what stays and what changed', async () => {
    server.replyContent({ ...validStrategy, steps: [validStrategy.steps[2]] });
    const call = actorCall({
      log: new DecisionLog({ firstSeq: 9, parentSeq: 8, phase: 'STRATEGIZE', actor: 'model' }),
    });
    const kept = {
      kind: 'create' as const,
      path: 'X.md',
      content: 'x',
      overwrite: false,
      description: null,
      project: null,
    };
    const result = await actors(modelConfig(server)).strategy.revise!({
      ...call,
      action,
      revision: { keptSteps: [kept], correctedStep: 1, replacement: kept, reason: 'X instead' },
    });
    expect(result.steps.map((s) => s.kind)).toEqual(['run']);
    expect(result.stepDecisions).toEqual([9]);
    const drafts = call.log.drafts();
    // Under the correction (the phase parent the workflow gives), numbered after the kept steps.
    expect(drafts).toMatchObject([
      {
        type: 'strategy_choice',
        parentSeq: 8,
        question: 'Step 2 of 2: what does it do?',
        chosenOption: 'run npm test',
      },
    ]);
    const body = server.requests[0]?.body as SentBody;
    const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
    expect(user).toContain('These steps are fixed and run first');
    expect(user).toContain('"target": "X.md"');
    expect(user).toContain('A person replaced step 1 with: create X.md. Their reason: X instead');
    expect(body.messages.find((m) => m.role === 'system')?.content).toContain(
      'Answer with only the steps that come AFTER',
    );
  });

  it('converts the steps and records the approach with one decision per step under it', async () => {
    server.replyContent(validStrategy, {
      reasoning_content: 'The notes are the review; tests guard the edit.',
    });
    const call = actorCall();
    const result = await actors(modelConfig(server)).strategy.strategize({ ...call, action });

    expect(result).toEqual({
      summary: validStrategy.summary,
      validation: 'npm test',
      steps: [
        {
          kind: 'create',
          path: 'REVIEW.md',
          content: '# Review of {{path}}\n',
          overwrite: false,
          description: 'the notes',
          project: null,
        },
        {
          kind: 'replace',
          files: 'src/**/*.ts',
          pattern: 'TODO',
          replacement: 'TODO(review)',
          flags: '',
          requireMatch: false,
          description: null,
          project: 'api',
        },
        { kind: 'run', command: 'npm test', timeoutSeconds: 300, description: null, project: null },
      ],
      // The step decisions' numbers, for a correction to find the step by (ADR 0016).
      stepDecisions: [6, 7, 8],
    });

    const drafts = call.log.drafts();
    expect(drafts).toHaveLength(4);
    expect(drafts.map((d) => d.type)).toEqual(Array(4).fill('strategy_choice'));
    expect(drafts.map((d) => d.parentSeq)).toEqual([4, 5, 5, 5]);
    expect(drafts.every((d) => d.phase === 'STRATEGIZE' && d.actor === 'model')).toBe(true);
    const [approach, ...steps] = drafts;
    expect(approach).toMatchObject({
      chosenOption: validStrategy.summary,
      alternatives: validStrategy.alternatives,
      confidence: 0.8,
      rationale: validStrategy.rationale,
      actorReasoning: 'The notes are the review; tests guard the edit.',
    });
    const prompt = approach?.context?.content as {
      model: string;
      system: string;
      user: string;
      attempts: number;
    };
    expect(prompt.model).toBe('test-model');
    expect(prompt.user).toBe(sent(server.requests[0]).messages[1]?.content);
    expect(prompt.attempts).toBe(1);
    expect(steps.map((d) => d.chosenOption)).toEqual([
      'create REVIEW.md (the notes)',
      'replace /TODO/ in src/**/*.ts',
      'run npm test',
    ]);
    expect(call.progress).toHaveBeenCalledWith('asking test-model for strategy (attempt 1 of 2)');
  });

  it('re-asks once with the validation errors and accepts the corrected reply', async () => {
    const invalid = {
      ...validStrategy,
      confidence: 1.5,
      steps: [wireStep({ kind: 'run', target: 'npm test', content: 'leftover' })],
    };
    server.replyContent(invalid).replyContent(validStrategy);
    const call = actorCall();
    const result = await actors(modelConfig(server)).strategy.strategize({ ...call, action });

    expect(result.steps).toHaveLength(3);
    expect(server.requests).toHaveLength(2);
    const retry = sent(server.requests[1]).messages;
    expect(retry.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(retry[2]?.content).toBe(JSON.stringify(invalid));
    expect(retry[3]?.content).toContain('confidence: must be between 0 and 1');
    expect(retry[3]?.content).toContain('steps.0.content: must be null for a run step');
    expect((call.log.drafts()[0]?.context?.content as { attempts: number }).attempts).toBe(2);
    expect(call.progress).toHaveBeenCalledWith('asking test-model for strategy (attempt 2 of 2)');
  });

  it('re-asks a run step or validation that quotes a placeholder, and accepts it written bare', async () => {
    const greetingPlan: PlanSpec = {
      ...plan,
      arguments: { ...plan.arguments, greeting: 'hello' },
      argumentsOrder: [...plan.argumentsOrder, 'greeting'],
    };
    const quoted = {
      ...validStrategy,
      steps: [wireStep({ kind: 'run', target: 'echo "{{greeting}}" > NOTES.md' })],
      validation: 'grep -q "{{greeting}}" NOTES.md',
    };
    const bare = {
      ...validStrategy,
      steps: [wireStep({ kind: 'run', target: 'echo {{greeting}} > NOTES.md' })],
      validation: 'grep -q -- {{greeting}} NOTES.md',
    };
    server.replyContent(quoted).replyContent(bare);
    const call = actorCall({ plan: greetingPlan });
    const result = await actors(modelConfig(server)).strategy.strategize({ ...call, action });

    expect(server.requests).toHaveLength(2);
    const retry = sent(server.requests[1]).messages;
    expect(retry[2]?.content).toBe(JSON.stringify(quoted));
    expect(retry[3]?.content).toContain(
      '- steps.0.target: {{greeting}} is inside quotes in the command; write it bare (it is quoted for you) ' +
        'or use $CLEVERAGENTS_ARG_GREETING\n' +
        '- validation: {{greeting}} is inside quotes in the command;',
    );
    expect(result.steps).toEqual([stepFromFile({ run: 'echo {{greeting}} > NOTES.md' })]);
    expect(result.validation).toBe('grep -q -- {{greeting}} NOTES.md');
  });

  it('proposes a child plan, re-asked when it names a value the plan lacks, and records its spawn', async () => {
    const subplan = (value: string) =>
      wireStep({
        kind: 'subplan',
        target: 'local/lint',
        projects: ['api::ro'],
        arguments: [{ name: 'dir', value }],
        automation: 'review',
        on_child_failure: null,
      });
    const unknownValue = { ...validStrategy, steps: [subplan('{{nope}}')] };
    const stray = {
      ...validStrategy,
      steps: [wireStep({ kind: 'create', target: 'x', content: '', automation: 'full' })],
    };
    const fixed = { ...validStrategy, steps: [subplan('{{path}}/lib')] };
    server.replyContent(unknownValue).replyContent(fixed);
    const call = actorCall();
    const result = await actors(modelConfig(server, { maxAttempts: 2 })).strategy.strategize({
      ...call,
      action,
    });

    const retry = sent(server.requests[1]).messages;
    expect(retry[3]?.content).toContain('steps.0.arguments.dir: the template refers to "nope"');
    expect(result.steps).toEqual([
      stepFromFile({
        subplan: 'local/lint',
        projects: ['api::ro'],
        arguments: { dir: '{{path}}/lib' },
        automation: 'REVIEW_BEFORE_APPLY',
      }),
    ]);
    const spawn = call.log.drafts()[1];
    expect(spawn).toMatchObject({ type: 'subplan_spawn', parentSeq: 5, actor: 'model' });
    expect(spawn?.downstreamPlanIds).toEqual([childPlanId(plan.planId, { stepIndex: 0, childIndex: 0 })]);

    // The action's own subplan steps are suggested in the same shape, a group as its children.
    const family: ActionDefinition = {
      steps: [
        stepFromFile({ subplan: 'local/lint', arguments: { dir: 'src' }, automation: 'FULL_AUTOMATION' }),
        stepFromFile({ parallel: [{ subplan: 'local/a' }, { subplan: 'local/b', projects: ['api'] }] }),
      ],
      validation: null,
    };
    server.replyContent(fixed);
    await actors(modelConfig(server)).strategy.strategize({ ...actorCall(), action: family });
    const suggested = sent(server.requests.at(-1)).messages[1]?.content ?? '';
    const start =
      suggested.indexOf('The action suggests these steps:\n') + 'The action suggests these steps:\n'.length;
    const listed = JSON.parse(suggested.slice(start, suggested.indexOf('\n]', start) + 2));
    expect(listed).toEqual([
      {
        kind: 'subplan',
        target: 'local/lint',
        arguments: [{ name: 'dir', value: 'src' }],
        automation: 'full',
      },
      { kind: 'subplan', target: 'local/a' },
      { kind: 'subplan', target: 'local/b', projects: ['api'] },
    ]);

    // A subplan's fields on another kind of step are refused like any stray field.
    server.replyContent(stray).replyContent(stray);
    await expect(actors(modelConfig(server)).strategy.strategize({ ...actorCall(), action })).rejects.toThrow(
      'steps.0.automation: must be null for a create step',
    );
  });

  it('fails with ModelOutputError when the reply is still invalid after the last attempt', async () => {
    const invalid = { ...validStrategy, steps: [wireStep({ kind: 'move', target: 'a.txt' })] };
    server.replyContent(invalid).replyContent(invalid);
    const call = actorCall();
    const failure = actors(modelConfig(server)).strategy.strategize({ ...call, action });

    await expect(failure).rejects.toBeInstanceOf(ModelOutputError);
    await expect(failure).rejects.toThrow(/still invalid after 2 attempts.*steps\.0\.to/);
    const error = (await failure.catch((e: unknown) => e)) as ModelOutputError;
    expect(error.issues.map((i) => i.path.join('.'))).toEqual(['steps.0.to']);
    expect(error.raw).toBe(JSON.stringify(invalid));
    expect(server.requests).toHaveLength(2);
    expect(call.log.drafts()).toEqual([]);
  });

  it('rejects steps in read-only or unknown projects and unknown placeholders', async () => {
    server.replyContent({
      ...validStrategy,
      steps: [
        wireStep({ kind: 'create', target: 'NOTES.md', content: 'by {{author}}', project: 'acme/docs' }),
        wireStep({ kind: 'delete', target: 'tmp', project: 'acme/web' }),
      ],
    });
    const failure = actors(modelConfig(server, { maxAttempts: 1 })).strategy.strategize({
      ...actorCall(),
      action,
    });
    const error = (await failure.catch((e: unknown) => e)) as ModelOutputError;
    expect(error).toBeInstanceOf(ModelOutputError);
    expect(error.message).toContain('after 1 attempt (');
    const issues = error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toEqual([
      expect.stringMatching(/^steps\.0\.project: .*acme\/docs, which is linked read-only/),
      expect.stringMatching(/^steps\.0\.content: .*"author", which this plan does not have \(known: .*path/),
      expect.stringMatching(/^steps\.1\.project: .*"acme\/web", which is not linked to this plan/),
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('re-asks after content that is not JSON, and accepts fenced JSON after a <think> block', async () => {
    server
      .replyContent('Sure! Here is the plan you asked for.')
      .replyContent(`<think>Notes first.</think>\n\`\`\`json\n${JSON.stringify(validStrategy)}\n\`\`\``);
    const call = actorCall();
    const result = await actors(modelConfig(server)).strategy.strategize({ ...call, action });
    expect(result.summary).toBe(validStrategy.summary);
    expect(sent(server.requests[1]).messages[3]?.content).toMatch(/- \(reply\): not JSON/);
    expect(call.log.drafts()[0]?.actorReasoning).toBe('Notes first.');
  });
});

describe('ChatClient errors', () => {
  const question = {
    system: 'Answer.',
    user: 'Anything.',
    schemaName: 'anything',
    schema: z.object({ ok: z.boolean() }),
  };

  it('reports an HTTP error with its status and a body excerpt, without retrying', async () => {
    server.reply({ status: 500, body: { error: { message: 'the model is overloaded' } } });
    const failure = askStructured(new ChatClient(modelConfig(server)), question);
    await expect(failure).rejects.toBeInstanceOf(ModelHttpError);
    await expect(failure).rejects.toMatchObject({ status: 500 });
    await expect(failure).rejects.toThrow(/chat\/completions answered HTTP 500 .*: the model is overloaded$/);
    expect(server.requests).toHaveLength(1);
  });

  it('drops temperature for models that accept only their default, and keeps it dropped', async () => {
    server
      .reply({
        status: 400,
        body: {
          error: {
            message: "Unsupported value: 'temperature' does not support 0 with this model.",
            param: 'temperature',
          },
        },
      })
      .replyContent({ ok: true })
      .replyContent({ ok: false });
    const client = new ChatClient(modelConfig(server));
    expect((await askStructured(client, question)).value).toEqual({ ok: true });
    expect((await askStructured(client, question)).value).toEqual({ ok: false });
    const bodies = server.requests.map((r) => r.body as Record<string, unknown>);
    expect(bodies.map((b) => 'temperature' in b)).toEqual([true, false, false]);
  });

  it('points at the API key on 401', async () => {
    server.reply({ status: 401, body: 'no key' });
    await expect(askStructured(new ChatClient(modelConfig(server)), question)).rejects.toThrow(
      /HTTP 401 .*check CLEVERAGENTS_MODEL_API_KEY.*: no key/,
    );
  });

  it('reports an endpoint nobody listens on', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = new ChatClient({ ...modelConfig(server), baseUrl: `http://127.0.0.1:${port}/v1` });
    await expect(askStructured(client, question)).rejects.toThrow(/could not reach .*ECONNREFUSED/);
  });

  it('reports a reply without choices[0].message.content, and a body that is not JSON', async () => {
    server.reply({ body: { choices: [] } }).reply({ body: '<html>Bad gateway</html>' });
    const client = new ChatClient(modelConfig(server));
    await expect(askStructured(client, question)).rejects.toThrow(/has no choices\[0\]\.message\.content/);
    await expect(askStructured(client, question)).rejects.toThrow(/is not JSON: <html>Bad gateway<\/html>/);
  });

  it('times out a model that does not answer', async () => {
    server.hang();
    const started = Date.now();
    const error = await askStructured(
      new ChatClient(modelConfig(server, { timeoutSeconds: 0.2 })),
      question,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).toMatch(
      /did not answer within 0\.2s \(CLEVERAGENTS_MODEL_TIMEOUT_SECONDS\)/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("stops waiting when the call's signal aborts, and sends nothing once aborted", async () => {
    server.hang();
    const controller = new AbortController();
    const call = actorCall({ signal: controller.signal });
    const pending = actors(modelConfig(server)).strategy.strategize({ ...call, action });
    await waitUntil('the strategy request to reach the model', () => server.requests.length > 0);
    controller.abort(new Error('plan cancelled'));
    await expect(pending).rejects.toThrow('plan cancelled');

    await expect(
      actors(modelConfig(server)).strategy.strategize({
        ...actorCall({ signal: controller.signal }),
        action,
      }),
    ).rejects.toThrow('plan cancelled');
    expect(server.requests).toHaveLength(1);
  });
});

describe('model estimation and invariant actors', () => {
  it('estimates from the strategy', async () => {
    server.replyContent({ summary: 'One new file and a test run.', files_likely_changed: 1, risk: 'low' });
    const call = actorCall();
    const estimate = await actors(modelConfig(server)).estimation.estimate({ ...call, strategy });

    expect(estimate).toEqual({ summary: 'One new file and a test run.', filesLikelyChanged: 1, risk: 'low' });
    const body = sent(server.requests[0]);
    expect(body.response_format.json_schema.name).toBe('estimate');
    expectStrictSchema(body.response_format.json_schema.schema);
    expect(body.messages[1]?.content).toContain('1. create REVIEW.md (the review notes)\n  2. run npm test');
    expect(call.log.drafts()).toEqual([]);
  });

  it('judges each invariant against the changes and records nothing itself', async () => {
    server
      .replyContent({ status: 'held', evidence: 'Only src/ files change.' })
      .replyContent({ status: 'acknowledged', evidence: 'Paths alone do not show the API.' });
    const changes: ChangeSummary[] = [
      { project: 'acme/api', operation: 'MODIFY', path: 'src/a.ts', fromPath: null },
      { project: 'acme/api', operation: 'MOVE', path: 'src/b2.ts', fromPath: 'src/b.ts' },
    ];
    const call = actorCall();
    const verdicts = await actors(modelConfig(server)).invariant.check({
      ...call,
      phase: 'EXECUTE',
      invariants: plan.invariants,
      changes,
    });

    expect(server.requests).toHaveLength(2);
    // Each verdict says which model judged it and what that request cost (the fake counts what was sent).
    const usage = (i: number, reply: unknown) => ({
      modelName: 'test-model',
      promptTokens: promptTokensOf(server.requests[i] as RecordedRequest),
      completionTokens: countTokens(JSON.stringify(reply)),
    });
    expect(verdicts).toEqual([
      {
        invariant: plan.invariants[0],
        status: 'held',
        evidence: 'Only src/ files change.',
        model: usage(0, { status: 'held', evidence: 'Only src/ files change.' }),
      },
      {
        invariant: plan.invariants[1],
        status: 'acknowledged',
        evidence: 'Paths alone do not show the API.',
        model: usage(1, { status: 'acknowledged', evidence: 'Paths alone do not show the API.' }),
      },
    ]);
    const [first, second] = server.requests.map((r) => sent(r).messages[1]?.content ?? '');
    expect(first).toContain(
      'Invariant (ACTION, from local/code-review): Do not modify files outside the path.',
    );
    expect(first).toContain('Phase: EXECUTE');
    expect(first).toContain('MODIFY acme/api:src/a.ts');
    expect(first).toContain('MOVE acme/api:src/b.ts -> src/b2.ts');
    expect(second).toContain('Invariant (GLOBAL): Keep the public API.');
    expect(sent(server.requests[0]).response_format.json_schema.name).toBe('invariant_verdict');
    expect(call.log.drafts()).toEqual([]);
    expect(call.progress).toHaveBeenCalledWith('checking invariant 2 of 2 with test-model');
  });

  it('says when there are no changes yet', async () => {
    server.replyContent({ status: 'acknowledged', evidence: 'Nothing has changed yet.' });
    const verdicts = await actors(modelConfig(server)).invariant.check({
      ...actorCall(),
      phase: 'STRATEGIZE',
      invariants: plan.invariants.slice(1),
      changes: null,
    });
    expect(verdicts.map((v) => v.status)).toEqual(['acknowledged']);
    expect(sent(server.requests[0]).messages[1]?.content).toContain('Changes: none yet');
  });
});

describe('renderContextFiles', () => {
  it('shows small files whole and shares the rest of the budget among the large ones', () => {
    const file = (path: string, length: number): ContextFile => ({
      path,
      sha256: '0'.repeat(64),
      size: length,
      content: 'y'.repeat(length),
    });
    const text = renderContextFiles([file('/a', 100), file('/b', 5_000), file('/c', 5_000)], 2_100);
    expect(text).toContain('--- /a ---');
    expect(text).toContain('--- /b (first 1000 of 5000 characters');
    expect(text).toContain('--- /c (first 1000 of 5000 characters');
    expect(renderContextFiles([])).toBe('Context files: (none)');
  });
});

describe('the model and its token counts (seed 001 PlanBuild)', () => {
  it('counts every request a reply took, the rejected ones included, on the approach; its steps name the model only', async () => {
    const invalid = { ...validStrategy, confidence: 1.5 };
    server
      .replyContent('not JSON at all', { model: 'test-model-0613' })
      .replyContent(invalid, { model: 'test-model-0613' })
      .replyContent(validStrategy, { model: 'test-model-0613' });
    const call = actorCall();
    await actors(modelConfig(server, { maxAttempts: 3 })).strategy.strategize({ ...call, action });
    expect(server.requests).toHaveLength(3);
    const prompt = server.requests.reduce((sum, r) => sum + promptTokensOf(r), 0);
    const completion =
      countTokens('not JSON at all') +
      countTokens(JSON.stringify(invalid)) +
      countTokens(JSON.stringify(validStrategy));
    const [approach, ...steps] = call.log.drafts();
    expect(approach?.model).toEqual({
      modelName: 'test-model-0613',
      promptTokens: prompt,
      completionTokens: completion,
    });
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) {
      expect(step.model).toEqual({
        modelName: 'test-model-0613',
        promptTokens: null,
        completionTokens: null,
      });
    }
  });

  it('names the configured model when the reply does not, and records unknown counts as null, never as a partial sum', async () => {
    server
      .replyContent(
        { ...validStrategy, confidence: 2 },
        { usage: { prompt_tokens: 100, completion_tokens: 20 } },
      )
      .replyContent(validStrategy, { usage: null });
    const call = actorCall();
    await actors(modelConfig(server)).strategy.strategize({ ...call, action });
    expect(call.log.drafts()[0]?.model).toEqual({
      modelName: 'test-model',
      promptTokens: null,
      completionTokens: null,
    });
  });

  it('keeps a good answer whose usage is malformed, with the counts it could read', async () => {
    server.replyContent(validStrategy, {
      model: '  ',
      usage: { prompt_tokens: 'many', completion_tokens: 7, total_tokens: -1 },
    });
    const call = actorCall();
    const result = await actors(modelConfig(server)).strategy.strategize({ ...call, action });
    expect(result.summary).toBe(validStrategy.summary);
    expect(call.log.drafts()[0]?.model).toEqual({
      modelName: 'test-model',
      promptTokens: null,
      completionTokens: 7,
    });
  });

  it('gives the model invariant actor the description of an invariant that has one', async () => {
    server.replyContent({ status: 'held', evidence: 'No migration changes.' });
    await actors(modelConfig(server)).invariant.check({
      ...actorCall(),
      phase: 'EXECUTE',
      invariants: [
        {
          text: 'Never touch the migrations',
          scope: 'GLOBAL',
          sourceName: null,
          id: null,
          rule: null,
          description: 'Migrations are reviewed by the DBA team.',
        },
      ],
      changes: [],
    });
    expect(sent(server.requests[0]).messages[1]?.content).toContain(
      'Invariant (GLOBAL): Never touch the migrations\nWhat it means: Migrations are reviewed by the DBA team.',
    );
  });
});
