import { z } from 'zod';
import { describeEnvIssues, presentVariables, sharedEnvFields } from '../config/env';
import { PlanClientError } from './errors';

const clientEnvSchema = z.object({
  TEMPORAL_ADDRESS: sharedEnvFields.TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: sharedEnvFields.TEMPORAL_NAMESPACE,
  TEMPORAL_TASK_QUEUE: sharedEnvFields.TEMPORAL_TASK_QUEUE,
  DATABASE_URL: sharedEnvFields.DATABASE_URL,
});

export interface ClientConfig {
  temporalAddress: string;
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
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
  };
}
