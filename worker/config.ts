import { z } from 'zod';
import { TASK_QUEUE } from '../workflows/definitions';
import { describeZodError } from '../domain/schemas';

const workerEnvSchema = z.object({
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^:\s]+:\d{1,5}$/, 'must be host:port')
    .default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(TASK_QUEUE),
  DATABASE_URL: z.string().startsWith('file:', 'must be a file: URL of the SQLite database').optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
});

export interface WorkerConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** Undefined means the embedded default database under `.data/`. */
  databaseUrl: string | undefined;
  logLevel: z.infer<typeof workerEnvSchema>['LOG_LEVEL'];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Fails fast, naming every bad variable, before anything connects anywhere. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = workerEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`invalid worker configuration: ${describeZodError(parsed.error)}`);
  }
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
    logLevel: parsed.data.LOG_LEVEL,
  };
}
