import { z } from 'zod';
import { TASK_QUEUE } from '../workflows/definitions';
import { describeZodError } from '../domain/schemas';
import { PlanClientError } from './errors';

const clientEnvSchema = z.object({
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^:\s]+:\d{1,5}$/, 'must be host:port')
    .default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(TASK_QUEUE),
  DATABASE_URL: z.string().startsWith('file:', 'must be a file: URL of the SQLite database').optional(),
});

export interface ClientConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  databaseUrl: string | undefined;
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const parsed = clientEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new PlanClientError('usage', `invalid configuration: ${describeZodError(parsed.error)}`);
  }
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
  };
}
