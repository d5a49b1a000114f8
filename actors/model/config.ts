/**
 * Settings of the model-backed actor (actors/model/). The actor is optional: a worker without
 * CLEVERAGENTS_MODEL_BASE_URL runs every plan with the built-in actor and never touches the network, so the
 * variables are read here rather than in the worker's own schema, which would make them look mandatory.
 */
import { z } from 'zod';
import { describeEnvIssues, presentVariables } from '../../config/env';

const positiveInteger = (max: number) =>
  z.coerce
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(max, `must be at most ${max}`);

const modelEnvSchema = z.object({
  CLEVERAGENTS_MODEL_BASE_URL: z.url({
    protocol: /^https?$/,
    error: 'must be an http(s) URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1',
  }),
  CLEVERAGENTS_MODEL: z
    .string({ error: 'must name the model when CLEVERAGENTS_MODEL_BASE_URL is set, e.g. gpt-4o-mini' })
    .trim()
    .min(1, 'must not be blank'),
  CLEVERAGENTS_MODEL_API_KEY: z.string().optional(),
  CLEVERAGENTS_MODEL_TIMEOUT_SECONDS: positiveInteger(3600).default(120),
  CLEVERAGENTS_MODEL_MAX_ATTEMPTS: positiveInteger(10).default(2),
});

export interface ModelConfig {
  /** Without a trailing slash: `${baseUrl}/chat/completions` is the endpoint. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; null for local servers that need none. */
  apiKey: string | null;
  /** Per request, covering the wait for the whole reply. */
  timeoutSeconds: number;
  /** How many times one question is asked before output that fails validation is an error (1: never re-ask). */
  maxAttempts: number;
}

export class ModelConfigError extends Error {
  override name = 'ModelConfigError';
}

/**
 * Null when CLEVERAGENTS_MODEL_BASE_URL is not set: the model actor is simply not offered. Once it is set, a bad
 * or missing companion variable fails the worker's start rather than the first plan that uses the actor.
 */
export function loadModelConfig(env: NodeJS.ProcessEnv = process.env): ModelConfig | null {
  const present = presentVariables(env);
  if (present.CLEVERAGENTS_MODEL_BASE_URL === undefined) return null;
  const parsed = modelEnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ModelConfigError(
      `invalid model actor configuration: ${describeEnvIssues(parsed.error, env).join('; ')}`,
    );
  }
  return {
    baseUrl: parsed.data.CLEVERAGENTS_MODEL_BASE_URL.replace(/\/+$/, ''),
    model: parsed.data.CLEVERAGENTS_MODEL,
    apiKey: parsed.data.CLEVERAGENTS_MODEL_API_KEY ?? null,
    timeoutSeconds: parsed.data.CLEVERAGENTS_MODEL_TIMEOUT_SECONDS,
    maxAttempts: parsed.data.CLEVERAGENTS_MODEL_MAX_ATTEMPTS,
  };
}
