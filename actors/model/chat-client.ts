/**
 * One OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, llama.cpp, a gateway), asked for JSON
 * only, and the errors a request can end in: every way the endpoint can fail becomes one clear error naming it.
 */
import { z } from 'zod';
import { ActorFailedError } from '../types';
import type { ModelConfig } from './config';

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
    /** What the reply cost, when it was one: a reply that was not JSON was still paid for. */
    readonly usage: TokenUsage | null = null,
  ) {
    super(message, false);
  }
}

/** A reply's `usage`, as OpenAI-compatible endpoints report it; a count the endpoint left out is null. */
export interface TokenUsage {
  promptTokens: number | null;
  completionTokens: number | null;
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
  /** The model that answered, as the reply names it (`model`); the configured model when it does not. */
  model: string;
  /** The reply's `usage`; null when the endpoint reports none (some local servers). */
  usage: TokenUsage | null;
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

const tokenCount = z.number().int().nonnegative().nullish().catch(null);

/**
 * Read apart from the choices: a server that reports usage oddly must not make a good answer unusable, so a count
 * that is not a non-negative integer is recorded as unknown.
 */
const metadataSchema = z.object({
  model: z.string().trim().min(1).nullish().catch(null),
  usage: z.object({ prompt_tokens: tokenCount, completion_tokens: tokenCount }).nullish().catch(null),
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
    const metadata = metadataSchema.safeParse(body);
    const model = (metadata.success ? metadata.data.model : null) ?? this.config.model;
    const reported = metadata.success ? metadata.data.usage : null;
    const usage =
      reported === null || reported === undefined
        ? null
        : {
            promptTokens: reported.prompt_tokens ?? null,
            completionTokens: reported.completion_tokens ?? null,
          };
    try {
      return { raw: content, json: JSON.parse(jsonText), reasoning, model, usage };
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
        usage,
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
