import { z } from 'zod';
import { describeEnvIssues, presentVariables, sharedEnvFields } from '../config/env';
import type { LogLevel } from '../config/env';

const workerEnvSchema = z.object({
  TEMPORAL_ADDRESS: sharedEnvFields.TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: sharedEnvFields.TEMPORAL_NAMESPACE,
  TEMPORAL_TASK_QUEUE: sharedEnvFields.TEMPORAL_TASK_QUEUE,
  DATABASE_URL: sharedEnvFields.DATABASE_URL,
  LOG_LEVEL: sharedEnvFields.LOG_LEVEL,
});

export interface WorkerConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** Undefined means the embedded default database under `.data/`. */
  databaseUrl: string | undefined;
  logLevel: LogLevel;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Fails fast, naming every bad variable, before anything connects anywhere. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = workerEnvSchema.safeParse(presentVariables(env));
  if (!parsed.success) {
    throw new ConfigError(`invalid worker configuration: ${describeEnvIssues(parsed.error, env).join('; ')}`);
  }
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
    logLevel: parsed.data.LOG_LEVEL,
  };
}
