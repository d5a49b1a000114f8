import { z } from 'zod';
import {
  describeEnvIssues,
  presentVariables,
  sharedEnvFields,
  temporalConnectionFields,
} from '../config/env';
import { resolveTemporalTls } from '../config/temporal-connection';
import type { TemporalConnectionConfig } from '../config/temporal-connection';
import { CLI_SERVICE_NAME, tracingConfigFrom, tracingEnvFields } from '../config/tracing';
import type { TracingConfig } from '../config/tracing';
import { PlanClientError } from './errors';

const clientEnvSchema = z.object({
  ...temporalConnectionFields,
  DATABASE_URL: sharedEnvFields.DATABASE_URL,
  ...tracingEnvFields,
});

export interface ClientConfig extends TemporalConnectionConfig {
  namespace: string;
  taskQueue: string;
  databaseUrl: string | undefined;
  /** Where the CLI's spans go (ADR 0013); null: tracing off. */
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
  const temporal = resolveTemporalTls(parsed.data);
  if (temporal.problems.length > 0) {
    throw new PlanClientError('usage', `invalid configuration: ${temporal.problems.join('; ')}`);
  }
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    temporalTls: temporal.tls,
    temporalApiKey: temporal.apiKey,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
    tracing: tracingConfigFrom(parsed.data, CLI_SERVICE_NAME),
  };
}
