/**
 * Structured questions: a zod schema turned into the strict JSON schema an endpoint accepts, and asked until the
 * reply validates. Servers differ in how faithfully they constrain decoding, so every reply is validated again with
 * zod, and output that fails is sent back with the problems listed so a model can correct itself.
 */
import { z } from 'zod';
import type { ModelUsage } from '../../domain/decision';
import { ModelOutputError } from './chat-client';
import type { ChatClient, ChatMessage, ChatReply, JsonSchema, TokenUsage } from './chat-client';

/** Activity heartbeats must keep coming while a slow model thinks, or Temporal would time the activity out. */
const PROGRESS_INTERVAL_MS = 10_000;

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
  /**
   * The model that gave the accepted reply and the tokens of every request it took, the rejected replies'
   * included: each count is null unless every request reported it (a partial sum would understate the cost).
   */
  usage: ModelUsage;
}

/** Adds up the requests' counts; one unknown count makes the total unknown. */
function addUsage(total: TokenUsage, usage: TokenUsage | null): TokenUsage {
  const add = (a: number | null, b: number | null | undefined) =>
    a === null || b === null || b === undefined ? null : a + b;
  return {
    promptTokens: add(total.promptTokens, usage?.promptTokens),
    completionTokens: add(total.completionTokens, usage?.completionTokens),
  };
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
  let tokens: TokenUsage = { promptTokens: 0, completionTokens: 0 };
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
      tokens = addUsage(tokens, error.usage);
      messages.push(...retryMessages(error.raw, error.issues, question.schemaName));
      continue;
    } finally {
      clearInterval(ticker);
    }
    tokens = addUsage(tokens, reply.usage);
    const parsed = question.schema.safeParse(reply.json);
    if (parsed.success) {
      return {
        value: parsed.data,
        raw: reply.raw,
        reasoning: reply.reasoning,
        attempts: attempt,
        usage: { modelName: reply.model, ...tokens },
      };
    }
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
