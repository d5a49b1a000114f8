/**
 * The model-backed actor: strategy, estimation and invariant judgement by a chat model behind any
 * OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, llama.cpp, a gateway). Execution stays
 * with the built-in actor: the model proposes steps, the engine runs them in the sandbox.
 *
 * Every answer is asked for as JSON against a schema (`response_format: json_schema`, strict) and then validated
 * again with zod, because servers differ in how faithfully they constrain decoding. Output that fails validation
 * is sent back with the problems listed, so a model can correct itself before the phase fails.
 */
import { z } from 'zod';
import type { PlanSpec } from '../domain/plan';
import {
  STEP_KINDS,
  describeStep,
  renderTemplate,
  stepFileSchema,
  stepFromFile,
  stepToFile,
} from '../domain/steps';
import type { Step, StepFile, Strategy } from '../domain/steps';
import type { ModelConfig } from './model-config';
import { ActorFailedError } from './types';
import type {
  ActorSet,
  ChangeSummary,
  ContextFile,
  Estimate,
  EstimationActor,
  InvariantActor,
  InvariantVerdict,
  StrategyActor,
} from './types';

/** The name the worker registers these actors under; plans select them with it. */
export const MODEL_ACTOR_NAME = 'model';

/** How much context-file text one strategy request carries: enough to ground the plan, small enough for any model. */
export const CONTEXT_BUDGET_CHARS = 20_000;

/** Activity heartbeats must keep coming while a slow model thinks, or Temporal would time the activity out. */
const PROGRESS_INTERVAL_MS = 10_000;

const BODY_EXCERPT_CHARS = 300;

/**
 * The endpoint could not be used: unreachable, an HTTP error, a reply that is not a chat completion, a timeout.
 * Retryable unless said otherwise: an outage may be over by the activity's next attempt.
 */
export class ModelError extends ActorFailedError {
  override name = 'ModelError';

  constructor(message: string, retryable = true) {
    super(message, retryable);
  }
}

/**
 * The endpoint answered with an HTTP error; `status` tells a bad request (the same request fails again) from an
 * outage or a rate limit (5xx, 429: worth another attempt).
 */
export class ModelHttpError extends ModelError {
  override name = 'ModelHttpError';

  constructor(
    message: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(message, status >= 500 || status === 429);
  }
}

/** The model answered, but not with what was asked, as many times as it was allowed to try: never retryable. */
export class ModelOutputError extends ActorFailedError {
  override name = 'ModelOutputError';

  constructor(
    message: string,
    readonly issues: z.core.$ZodIssue[],
    /** The last reply's content, for the error's details. */
    readonly raw: string,
  ) {
    super(message, false);
  }
}

export type JsonSchema = { [key: string]: unknown };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** `response_format.json_schema.name`: letters, digits, `_` and `-`. */
  schemaName: string;
  schema: JsonSchema;
  signal?: AbortSignal;
}

export interface ChatReply {
  /** The content as the model sent it. */
  raw: string;
  /** The content parsed as JSON. */
  json: unknown;
  /** The model's reasoning trace when the server exposes one; null otherwise. */
  reasoning: string | null;
}

const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z
          .object({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
});

/** One OpenAI-compatible chat-completions endpoint, asked for JSON only. */
export class ChatClient {
  /** Reasoning models (OpenAI's o-series, gpt-5) refuse any temperature but their default. */
  private sendTemperature = true;

  constructor(readonly config: ModelConfig) {}

  get endpoint(): string {
    return `${this.config.baseUrl}/chat/completions`;
  }

  async complete(request: ChatRequest): Promise<ChatReply> {
    let text: string;
    try {
      text = await this.post(request);
    } catch (error) {
      if (!(error instanceof ModelHttpError && error.status === 400 && this.sendTemperature)) throw error;
      if (!/temperature/i.test(error.body)) throw error;
      this.sendTemperature = false;
      text = await this.post(request);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ModelError(`the reply from ${this.endpoint} is not JSON: ${excerpt(text)}`);
    }
    const parsed = completionSchema.safeParse(body);
    const choice = parsed.success ? parsed.data.choices?.[0] : undefined;
    const message = choice?.message;
    if (message?.refusal) throw new ModelError(`the model refused to answer: ${excerpt(message.refusal)}`);
    const content = message?.content;
    if (content === undefined || content === null) {
      throw new ModelError(
        `the reply from ${this.endpoint} has no choices[0].message.content` +
          (choice?.finish_reason ? ` (finish_reason: ${choice.finish_reason})` : '') +
          `: ${excerpt(text)}`,
      );
    }
    const { json: jsonText, thinking } = splitContent(content);
    const reasoning = message?.reasoning_content || message?.reasoning || thinking;
    try {
      return { raw: content, json: JSON.parse(jsonText), reasoning };
    } catch (error) {
      const cutOff =
        choice?.finish_reason === 'length' ? ' (the reply was cut off: finish_reason length)' : '';
      throw new ModelOutputError(
        `the model's content is not JSON${cutOff}: ${excerpt(content)}`,
        [
          {
            code: 'custom',
            path: [],
            message: `not JSON${cutOff}: ${(error as Error).message}`,
            input: content,
          },
        ],
        content,
      );
    }
  }

  /** The response body as text; every way the request can fail becomes one clear error. */
  private async post(request: ChatRequest): Promise<string> {
    const { signal } = request;
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.config.timeoutSeconds * 1000);
    const forwardAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(this.config.apiKey === null ? {} : { authorization: `Bearer ${this.config.apiKey}` }),
        },
        body: JSON.stringify({
          model: this.config.model,
          messages: request.messages,
          response_format: {
            type: 'json_schema',
            json_schema: { name: request.schemaName, strict: true, schema: request.schema },
          },
          ...(this.sendTemperature ? { temperature: 0 } : {}),
        }),
        signal: controller.signal,
      });
      const text = await response.text();
      if (!response.ok) {
        throw new ModelHttpError(
          `${this.endpoint} answered HTTP ${response.status}` +
            (response.statusText ? ` ${response.statusText}` : '') +
            `${statusHint(response.status)}: ${excerpt(errorMessageOf(text))}`,
          response.status,
          text,
        );
      }
      return text;
    } catch (error) {
      if (error instanceof ModelError) throw error;
      if (timedOut) {
        throw new ModelError(
          `${this.endpoint} did not answer within ${this.config.timeoutSeconds}s ` +
            '(CLEVERAGENTS_MODEL_TIMEOUT_SECONDS)',
        );
      }
      if (signal?.aborted) {
        throw isErrorLike(signal.reason) ? signal.reason : new ModelError('the model request was cancelled');
      }
      throw new ModelError(`could not reach ${this.endpoint}: ${networkCause(error)}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }
}

/** Reasoning models served without a reasoning field put it in a leading <think> block; some wrap JSON in fences. */
function splitContent(content: string): { json: string; thinking: string | null } {
  let rest = content;
  let thinking: string | null = null;
  const think = /^\s*<think>([\s\S]*?)<\/think>\s*/.exec(rest);
  if (think) {
    thinking = (think[1] ?? '').trim() || null;
    rest = rest.slice(think[0].length);
  }
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(rest);
  return { json: fenced?.[1] ?? rest, thinking };
}

function statusHint(status: number): string {
  if (status === 401 || status === 403) return ' (check CLEVERAGENTS_MODEL_API_KEY)';
  if (status === 404)
    return ' (check CLEVERAGENTS_MODEL_BASE_URL, which usually ends in /v1, and CLEVERAGENTS_MODEL)';
  return '';
}

/** OpenAI-style error bodies say what went wrong in `error.message`; anything else is shown as it came. */
function errorMessageOf(body: string): string {
  try {
    const parsed = z.object({ error: z.object({ message: z.string() }) }).safeParse(JSON.parse(body));
    if (parsed.success) return parsed.data.error.message;
  } catch {
    // not JSON: the body itself is the best description
  }
  return body;
}

/** Duck-typed: fetch's errors come from Node's own realm, where `instanceof Error` of another realm fails. */
function isErrorLike(value: unknown): value is { message: string; code?: unknown; cause?: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** fetch says only "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND, a TLS problem). */
function networkCause(error: unknown): string {
  if (!isErrorLike(error)) return String(error);
  const parts = [error.message];
  if (isErrorLike(error.cause)) {
    if (typeof error.cause.code === 'string') parts.push(error.cause.code);
    if (error.cause.message !== '' && error.cause.message !== error.cause.code)
      parts.push(error.cause.message);
  }
  return parts.join(': ');
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty)';
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS)}…` : flat;
}

// ---------------------------------------------------------------------------------------------------------------
// Structured questions

const KEPT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'description',
]);
const UNSUPPORTED_KEYWORDS = new Set([
  '$ref',
  '$defs',
  'allOf',
  'oneOf',
  'not',
  'prefixItems',
  'patternProperties',
]);

/**
 * The JSON schema sent to the endpoint for a zod schema (its input side). Strict mode accepts only a subset of
 * JSON Schema: every object lists all its properties as required and forbids others, and keywords such as
 * minLength are refused by OpenAI and ignored elsewhere. So only structural keywords and descriptions are sent;
 * bounds and patterns are enforced by zod after the reply, and a violation is sent back to the model. A property
 * zod lets the model leave out must accept null, which strict mode uses instead.
 */
export function strictJsonSchema(schema: z.ZodType): JsonSchema {
  return tighten(z.toJSONSchema(schema, { io: 'input' }) as JsonSchema, '(root)');
}

function tighten(node: JsonSchema, where: string): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (UNSUPPORTED_KEYWORDS.has(key))
      throw new Error(`${where}: "${key}" cannot be sent in a strict schema`);
    if (!KEPT_KEYWORDS.has(key)) continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, child]) => [
          name,
          tighten(child, `${where}.${name}`),
        ]),
      );
    } else if (key === 'items') {
      out.items = tighten(value as JsonSchema, `${where}[]`);
    } else if (key === 'anyOf') {
      out.anyOf = (value as JsonSchema[]).map((child) => tighten(child, where));
    } else {
      out[key] = value;
    }
  }
  if (out.type === 'object') {
    const properties = (out.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((out.required ?? []) as string[]);
    for (const [name, child] of Object.entries(properties)) {
      if (!required.has(name) && !acceptsNull(child)) {
        throw new Error(`${where}.${name}: strict mode needs every property; make it nullable, not optional`);
      }
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

function acceptsNull(schema: JsonSchema): boolean {
  const type = schema.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  return Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some(acceptsNull);
}

export interface StructuredQuestion<T> {
  system: string;
  user: string;
  /** Names the schema for the endpoint and in messages: letters, digits, `_` and `-`. */
  schemaName: string;
  /** Validates (and may convert) the reply; its input side is what the model is asked to produce. */
  schema: z.ZodType<T>;
  signal?: AbortSignal;
  /** Told before each attempt and periodically while the model is thinking. */
  progress?: (message: string) => void;
}

export interface StructuredAnswer<T> {
  value: T;
  /** The accepted reply's content as sent. */
  raw: string;
  reasoning: string | null;
  /** How many requests it took (1 unless a reply failed validation). */
  attempts: number;
}

/**
 * Asks until the reply validates, up to `maxAttempts` requests; each retry carries the rejected reply and its
 * problems, which is usually all a model needs. Endpoint errors are not retried here: Temporal's activity retry
 * policy owns that, with backoff.
 */
export async function askStructured<T>(
  client: ChatClient,
  question: StructuredQuestion<T>,
): Promise<StructuredAnswer<T>> {
  const jsonSchema = strictJsonSchema(question.schema);
  const maxAttempts = Math.max(1, client.config.maxAttempts);
  const messages: ChatMessage[] = [
    { role: 'system', content: question.system },
    { role: 'user', content: question.user },
  ];
  let failure: ModelOutputError | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    question.progress?.(
      `asking ${client.config.model} for ${question.schemaName}` +
        (maxAttempts > 1 ? ` (attempt ${attempt} of ${maxAttempts})` : ''),
    );
    const started = Date.now();
    const ticker = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      question.progress?.(`waiting for ${client.config.model} (${question.schemaName}, ${seconds}s)`);
    }, PROGRESS_INTERVAL_MS);
    let reply: ChatReply;
    try {
      reply = await client.complete({
        messages,
        schemaName: question.schemaName,
        schema: jsonSchema,
        signal: question.signal,
      });
    } catch (error) {
      if (!(error instanceof ModelOutputError)) throw error;
      failure = error;
      messages.push(...retryMessages(error.raw, error.issues, question.schemaName));
      continue;
    } finally {
      clearInterval(ticker);
    }
    const parsed = question.schema.safeParse(reply.json);
    if (parsed.success)
      return { value: parsed.data, raw: reply.raw, reasoning: reply.reasoning, attempts: attempt };
    failure = new ModelOutputError(
      `the model's ${question.schemaName} reply is invalid: ${formatIssues(parsed.error.issues, 'line')}`,
      parsed.error.issues,
      reply.raw,
    );
    messages.push(...retryMessages(reply.raw, parsed.error.issues, question.schemaName));
  }
  const last = failure as ModelOutputError;
  throw new ModelOutputError(
    `the model's ${question.schemaName} reply was still invalid after ${maxAttempts} attempt` +
      `${maxAttempts === 1 ? '' : 's'} (CLEVERAGENTS_MODEL_MAX_ATTEMPTS): ${formatIssues(last.issues, 'line')}`,
    last.issues,
    last.raw,
  );
}

function retryMessages(raw: string, issues: z.core.$ZodIssue[], schemaName: string): ChatMessage[] {
  return [
    { role: 'assistant', content: raw },
    {
      role: 'user',
      content:
        `That reply does not match the ${schemaName} schema:\n${formatIssues(issues, 'list')}\n` +
        'Answer again with the whole corrected JSON object and nothing else.',
    },
  ];
}

/** `path: message` per issue; a bulleted list for the model, one line for an error message. */
function formatIssues(issues: readonly z.core.$ZodIssue[], layout: 'list' | 'line'): string {
  const lines = issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return `${path === '' ? '(reply)' : path}: ${issue.message}`;
  });
  return layout === 'list' ? lines.map((line) => `- ${line}`).join('\n') : lines.join('; ');
}

// ---------------------------------------------------------------------------------------------------------------
// What the model answers with

/**
 * A step as the model writes it. Action files name the verb by the key that holds the target (`run: npm test`),
 * a union strict mode cannot express; so the model fills one flat object (`kind`, `target`, every other field
 * present, null when it does not apply) and it is turned into the action-file shape before `stepFileSchema`
 * judges it, so action files and models meet the same rules.
 */
const wireStepSchema = z.object({
  kind: z
    .enum(STEP_KINDS)
    .describe('create a file, replace text, move a file, delete files, or run a command'),
  target: z
    .string()
    .describe(
      'create: the file path; replace and delete: a path or glob; move: the path to move; run: the command',
    ),
  content: nullableField(z.string(), 'create: the whole file content'),
  overwrite: nullableField(z.boolean(), 'create: whether an existing file may be replaced (default false)'),
  pattern: nullableField(z.string(), 'replace: a JavaScript regular expression'),
  with: nullableField(z.string(), 'replace: the replacement text ($1 for a group)'),
  flags: nullableField(z.string(), 'replace: any of the flags i, m, s, u (g is implied)'),
  require_match: nullableField(z.boolean(), 'replace and delete: fail when nothing matches (default true)'),
  to: nullableField(z.string(), 'move: the destination path'),
  timeout_seconds: nullableField(
    z.int(),
    'run: seconds before the command is stopped, 1 to 3600 (default 600)',
  ),
  description: nullableField(z.string(), 'why the step is needed, in a few words', 'null for none'),
  project: nullableField(
    z.string(),
    "a linked project's name or alias",
    'null for the first writable project',
  ),
});
type WireStep = z.input<typeof wireStepSchema>;

function nullableField<T extends z.ZodType>(
  schema: T,
  use: string,
  whenNull = 'null when it does not apply',
) {
  return schema.nullable().default(null).describe(`${use}; ${whenNull}`);
}

/**
 * The model's step in the action-file shape, judged by `stepFileSchema`. Its issues are renamed to the fields the
 * model wrote (`target`, not the verb; a stray field "must be null"), so a re-ask tells it what to change.
 */
const modelStepSchema = wireStepSchema.transform((wire, ctx): StepFile => {
  const { kind, target, ...rest } = wire;
  const file: Record<string, unknown> = { [kind]: target };
  for (const [key, value] of Object.entries(rest)) {
    if (value !== null && value !== undefined) file[key] = value;
  }
  const parsed = stepFileSchema.safeParse(file);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        ctx.addIssue({ code: 'custom', path: [key], message: `must be null for a ${kind} step` });
      }
    } else {
      const path = issue.path.map((part) => (part === kind ? 'target' : part));
      ctx.addIssue({ code: 'custom', path, message: issue.message });
    }
  }
  return z.NEVER;
});

/** The placeholders a step's texts may use: the plan's arguments and the names the executor fills in. */
function templateValues(plan: PlanSpec): Record<string, string> {
  const names = [...Object.keys(plan.arguments), 'plan.id', 'plan.name', 'project.name', 'project.alias'];
  return Object.fromEntries(names.map((name) => [name, '']));
}

const TEMPLATED_FIELDS = ['create', 'content', 'replace', 'with', 'move', 'to', 'delete', 'run'] as const;

/**
 * What can be checked before Execute: a step names a linked, writable project, and its placeholders exist. Caught
 * here, the model can fix them; caught in Execute, the plan fails.
 */
function checkSteps(plan: PlanSpec, steps: StepFile[], ctx: z.RefinementCtx): void {
  const values = templateValues(plan);
  const writable = plan.projects.filter((link) => !link.readOnly);
  steps.forEach((step, index) => {
    if (step.project !== undefined) {
      const link = plan.projects.find((p) => p.projectName === step.project || p.alias === step.project);
      if (link === undefined) {
        const known = plan.projects.map(
          (p) => p.projectName + (p.alias === null ? '' : ` (alias ${p.alias})`),
        );
        ctx.addIssue({
          code: 'custom',
          path: ['steps', index, 'project'],
          message: `"${step.project}" is not a linked project (linked: ${known.join(', ')})`,
        });
      } else if (link.readOnly) {
        ctx.addIssue({
          code: 'custom',
          path: ['steps', index, 'project'],
          message: `${link.projectName} is linked read-only: steps may only work in writable projects`,
        });
      }
    } else if (writable.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['steps', index, 'project'],
        message: 'every linked project is read-only, so this plan can have no steps',
      });
    }
    for (const field of TEMPLATED_FIELDS) {
      const text = (step as Record<string, unknown>)[field];
      if (typeof text !== 'string') continue;
      try {
        renderTemplate(text, values);
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          path: ['steps', index, (STEP_KINDS as readonly string[]).includes(field) ? 'target' : field],
          message: (error as Error).message,
        });
      }
    }
  });
}

function strategyReplySchema(plan: PlanSpec) {
  return z
    .object({
      summary: z.string().trim().min(1, 'must not be empty').describe('the approach, in one sentence'),
      rationale: z
        .string()
        .trim()
        .min(1, 'must not be empty')
        .describe('why this approach over the alternatives'),
      confidence: z
        .number()
        .min(0, 'must be between 0 and 1')
        .max(1, 'must be between 0 and 1')
        .describe('how likely the steps meet the definition of done, from 0 to 1'),
      alternatives: z.array(z.string()).describe('other approaches considered and not chosen, one line each'),
      steps: z.array(modelStepSchema).describe('the steps, in the order they run'),
      validation: z
        .string()
        .nullable()
        .describe('a shell command run in the sandbox after the steps to check the result; null for none'),
    })
    .superRefine((reply, ctx) => checkSteps(plan, reply.steps, ctx));
}

const estimateReplySchema = z.object({
  summary: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .describe('what the plan will do and cost, in a sentence or two'),
  files_likely_changed: z
    .int()
    .min(0, 'must not be negative')
    .nullable()
    .describe('how many files the steps will likely touch; null when it cannot be told'),
  risk: z.enum(['low', 'medium', 'high']).describe('how likely the change breaks something'),
});

const verdictReplySchema = z.object({
  status: z
    .enum(['held', 'violated', 'acknowledged'])
    .describe(
      'held: the changes respect it; violated: they break it; acknowledged: it cannot be judged from this',
    ),
  evidence: z.string().trim().min(1, 'must not be empty').describe('the facts the status rests on, briefly'),
});

// ---------------------------------------------------------------------------------------------------------------
// Prompts

const STRATEGY_SYSTEM = `You plan code changes for CleverAgents, an engine that runs your steps in a sandbox copy \
of each writable project, shows the resulting changeset to a person, and applies it only when approved.

Answer with one JSON object matching the schema. Each step is one of:
- create: write the file \`target\` with \`content\` (refused if it exists unless \`overwrite\` is true)
- replace: in every file matching the glob \`target\`, replace the regular expression \`pattern\` with \`with\`
- move: move the file \`target\` to \`to\`
- delete: delete the path or glob \`target\`
- run: run the shell command \`target\` in the project (a non-zero exit fails the step)
Every field is present in every step; use null for the fields a step's kind does not use.
Paths are relative to the project root. \`project\` names a linked project (null: the first writable one); \
read-only projects may be read for context but never changed.
Texts may use {{name}} for a plan argument and {{plan.id}}, {{plan.name}}, {{project.name}}, {{project.alias}}; \
write "{{" nowhere else.
Prefer the fewest steps that meet the definition of done and respect every invariant. The action's own steps are \
suggestions: keep, change or replace them. Give a validation command when the project has one (e.g. its tests).`;

const ESTIMATE_SYSTEM = `You estimate the size and risk of a planned code change for CleverAgents before it runs. \
Answer with one JSON object matching the schema.`;

const INVARIANT_SYSTEM = `You check one invariant (a constraint a plan must respect) for CleverAgents. \
You see the plan and the files its changeset touches (operations and paths, not contents). \
Answer "held" when the changes respect the invariant, "violated" when they break it, and "acknowledged" when it \
cannot be judged from this information (say what would be needed). Answer with one JSON object matching the schema.`;

function describePlan(plan: PlanSpec): string {
  const lines = [
    `Action: ${plan.actionName}`,
    `Plan: ${plan.name}`,
    `Description: ${plan.description === '' ? '(none)' : plan.description}`,
    `Definition of done: ${plan.definitionOfDone ?? '(none given)'}`,
  ];
  lines.push(
    plan.argumentsOrder.length === 0
      ? 'Arguments: (none)'
      : `Arguments:\n${plan.argumentsOrder.map((k) => `  ${k} = ${JSON.stringify(plan.arguments[k] ?? null)}`).join('\n')}`,
  );
  lines.push(
    `Projects:\n${plan.projects
      .map(
        (p) =>
          `  - ${p.projectName}${p.alias === null ? '' : ` (alias ${p.alias})`}: ` +
          (p.readOnly ? 'read-only (may be read, never changed)' : 'writable'),
      )
      .join('\n')}`,
  );
  if (plan.invariants.length > 0) {
    lines.push(
      `Invariants (must hold):\n${plan.invariants.map((i) => `  - ${i.text} [${i.scope}]`).join('\n')}`,
    );
  }
  return lines.join('\n');
}

/** A step in the shape the model answers with, minus the nulls, so suggestions read like the expected answer. */
function wireFromStep(step: Step): Partial<WireStep> {
  const file = stepToFile(step) as Record<string, unknown>;
  const kind = STEP_KINDS.find((k) => k in file) ?? step.kind;
  const { [kind]: target, ...rest } = file;
  return { kind, target: target as string, ...rest };
}

/**
 * Shares the budget fairly: small files are shown whole, and what they leave is split among the larger ones, so
 * one big file cannot crowd out the rest.
 */
export function renderContextFiles(
  files: readonly ContextFile[],
  budget: number = CONTEXT_BUDGET_CHARS,
): string {
  if (files.length === 0) return 'Context files: (none)';
  const allowance = new Map<ContextFile, number>();
  const texts = files
    .filter((f) => f.content !== null)
    .sort((a, b) => (a.content ?? '').length - (b.content ?? '').length);
  let left = budget;
  texts.forEach((file, index) => {
    const share = Math.floor(left / (texts.length - index));
    const shown = Math.min((file.content ?? '').length, share);
    allowance.set(file, shown);
    left -= shown;
  });
  const parts = files.map((file) => {
    if (file.content === null) return `--- ${file.path} (binary, ${file.size} bytes: not shown) ---`;
    const shown = allowance.get(file) ?? 0;
    if (shown >= file.content.length) return `--- ${file.path} ---\n${file.content}`;
    return (
      `--- ${file.path} (first ${shown} of ${file.content.length} characters: the rest is left out) ---\n` +
      file.content.slice(0, shown)
    );
  });
  return `Context files (added by a person as background):\n${parts.join('\n')}`;
}

function describeSteps(steps: readonly Step[], validation: string | null): string {
  const list =
    steps.length === 0 ? '  (none)' : steps.map((s, i) => `  ${i + 1}. ${describeStep(s)}`).join('\n');
  return `Steps:\n${list}\nValidation: ${validation ?? '(none)'}`;
}

function describeChanges(changes: readonly ChangeSummary[] | null): string {
  if (changes === null) {
    return 'Changes: none yet (the plan has not been executed). Judge what is known so far; answer acknowledged when the invariant can only be judged on the changes.';
  }
  if (changes.length === 0) return 'Changes: (the changeset is empty)';
  const lines = changes.map(
    (c) => `  ${c.operation} ${c.project}:${c.fromPath === null ? c.path : `${c.fromPath} -> ${c.path}`}`,
  );
  return `Changes:\n${lines.join('\n')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The actors

export interface ModelActorOptions {
  /** For tests and for sharing one client between actor sets. */
  client?: ChatClient;
  contextBudgetChars?: number;
}

export function createModelActors(config: ModelConfig, options: ModelActorOptions = {}): ActorSet {
  const client = options.client ?? new ChatClient(config);
  const budget = options.contextBudgetChars ?? CONTEXT_BUDGET_CHARS;

  const strategy: StrategyActor = {
    name: MODEL_ACTOR_NAME,
    async strategize(call): Promise<Strategy> {
      const { plan, action } = call;
      const suggestions =
        action.steps.length === 0
          ? 'The action suggests no steps.'
          : `The action suggests these steps:\n${JSON.stringify(action.steps.map(wireFromStep), null, 2)}`;
      const user = [
        describePlan(plan),
        suggestions,
        `The action's validation command: ${action.validation ?? '(none)'}`,
        renderContextFiles(call.contextFiles, budget),
      ].join('\n\n');
      const answer = await askStructured(client, {
        system: STRATEGY_SYSTEM,
        user,
        schemaName: 'strategy',
        schema: strategyReplySchema(plan),
        signal: call.signal,
        progress: (message) => call.progress(message),
      });
      const reply = answer.value;
      const steps = reply.steps.map(stepFromFile);
      const validation =
        reply.validation === null || reply.validation.trim() === '' ? null : reply.validation;
      const approach = call.log.record({
        type: 'strategy_choice',
        question: `How should ${plan.actionName} be carried out?`,
        chosenOption: reply.summary,
        alternatives: reply.alternatives,
        confidence: reply.confidence,
        rationale: reply.rationale,
        actorReasoning: answer.reasoning,
        context: {
          content: { model: config.model, system: STRATEGY_SYSTEM, user, attempts: answer.attempts },
        },
      });
      for (const [index, step] of steps.entries()) {
        call.log.record({
          type: 'strategy_choice',
          question: `Step ${index + 1} of ${steps.length}: what does it do?`,
          chosenOption: describeStep(step),
          alternatives: [],
          // The model states one confidence, for the approach as a whole.
          confidence: null,
          rationale: step.description ?? `Part of the chosen approach: ${reply.summary}`,
          parentSeq: approach,
        });
      }
      return { steps, validation, summary: reply.summary };
    },
  };

  const estimation: EstimationActor = {
    name: MODEL_ACTOR_NAME,
    async estimate(call): Promise<Estimate> {
      const user = [
        describePlan(call.plan),
        `Strategy: ${call.strategy.summary}`,
        describeSteps(call.strategy.steps, call.strategy.validation),
      ].join('\n\n');
      const answer = await askStructured(client, {
        system: ESTIMATE_SYSTEM,
        user,
        schemaName: 'estimate',
        schema: estimateReplySchema,
        signal: call.signal,
        progress: (message) => call.progress(message),
      });
      return {
        summary: answer.value.summary,
        filesLikelyChanged: answer.value.files_likely_changed,
        risk: answer.value.risk,
      };
    },
  };

  const invariant: InvariantActor = {
    name: MODEL_ACTOR_NAME,
    async check(call): Promise<InvariantVerdict[]> {
      const verdicts: InvariantVerdict[] = [];
      for (const [index, item] of call.invariants.entries()) {
        call.progress(`checking invariant ${index + 1} of ${call.invariants.length} with ${config.model}`);
        const user = [
          `Invariant (${item.scope}${item.sourceName === null ? '' : `, from ${item.sourceName}`}): ${item.text}`,
          `Phase: ${call.phase}`,
          describePlan({ ...call.plan, invariants: [] }),
          describeChanges(call.changes),
        ].join('\n\n');
        const answer = await askStructured(client, {
          system: INVARIANT_SYSTEM,
          user,
          schemaName: 'invariant_verdict',
          schema: verdictReplySchema,
          signal: call.signal,
          progress: (message) => call.progress(message),
        });
        verdicts.push({ invariant: item, status: answer.value.status, evidence: answer.value.evidence });
      }
      return verdicts;
    },
  };

  return { strategy, estimation, invariant };
}
