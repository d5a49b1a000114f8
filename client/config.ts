import { z } from 'zod';
import { describeEnvIssues, presentVariables, sharedEnvFields } from '../config/env';
import { CLI_SERVICE_NAME, tracingConfigFrom, tracingEnvFields } from '../config/tracing';
import type { TracingConfig } from '../config/tracing';
import { PlanClientError } from './errors';

const clientEnvSchema = z.object({
  TEMPORAL_ADDRESS: sharedEnvFields.TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: sharedEnvFields.TEMPORAL_NAMESPACE,
  TEMPORAL_TASK_QUEUE: sharedEnvFields.TEMPORAL_TASK_QUEUE,
  DATABASE_URL: sharedEnvFields.DATABASE_URL,
  ...tracingEnvFields,
});

export interface ClientConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  databaseUrl: string | undefined;
  /** Where the CLI's spans go (ADR 0012); null: tracing off. */
  tracing: TracingConfig | null;
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const parsed = clientEnvSchema.safeParse(presentVariables(env));
  if (!parsed.success) {
    throw new PlanClientError(
      'usage',
      `invalid configuration: ${describeEnvIssues(parsed.error, env).join('; ')}`,
    );
  }
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
    tracing: tracingConfigFrom(parsed.data, CLI_SERVICE_NAME),
  };
}
