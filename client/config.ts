import { z } from 'zod';
import { describeEnvIssues, presentVariables, sharedEnvFields } from '../config/env';
import { resolveTemporalTls } from '../config/temporal-connection';
import type { TemporalConnectionConfig } from '../config/temporal-connection';
import { PlanClientError } from './errors';

const clientEnvSchema = z.object({
  TEMPORAL_ADDRESS: sharedEnvFields.TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: sharedEnvFields.TEMPORAL_NAMESPACE,
  TEMPORAL_TASK_QUEUE: sharedEnvFields.TEMPORAL_TASK_QUEUE,
  TEMPORAL_TLS: sharedEnvFields.TEMPORAL_TLS,
  TEMPORAL_TLS_CA: sharedEnvFields.TEMPORAL_TLS_CA,
  TEMPORAL_TLS_CERT: sharedEnvFields.TEMPORAL_TLS_CERT,
  TEMPORAL_TLS_KEY: sharedEnvFields.TEMPORAL_TLS_KEY,
  TEMPORAL_TLS_SERVER_NAME: sharedEnvFields.TEMPORAL_TLS_SERVER_NAME,
  TEMPORAL_API_KEY: sharedEnvFields.TEMPORAL_API_KEY,
  DATABASE_URL: sharedEnvFields.DATABASE_URL,
});

export interface ClientConfig extends TemporalConnectionConfig {
  namespace: string;
  taskQueue: string;
  databaseUrl: string | undefined;
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
  };
}
