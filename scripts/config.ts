/**
 * `npm start` configuration: one schema over the environment, checked before anything is started, so a typo is
 * reported with every other bad field at once instead of as a failure three steps later.
 */
import path from 'node:path';
import { z } from 'zod';
import { TEMPORAL_TLS_VARIABLES, describeEnvIssues, presentVariables, sharedEnvFields } from '../config/env';
import type { SandboxIsolationMode } from '../config/env';
import { loadModelConfig } from '../actors/model/config';
import type { ModelConfig } from '../actors/model/config';
import { DATA_DIR, REPO_ROOT, resolveSandboxDir } from '../config/paths';
import { defaultMaxCachedWorkflows } from '../config/worker-memory';
import { WORKER_SERVICE_NAME, tracingConfigFrom, tracingEnvFields } from '../config/tracing';
import type { TracingConfig } from '../config/tracing';
import { DEFAULT_DATABASE_URL } from '../storage/sqlite';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS } from '../worker/config';
import type { WorkerConfig } from '../worker/config';

export { REPO_ROOT };

/** Value of TEMPORAL_DB_FILE that keeps the dev server's state in memory. */
export const IN_MEMORY = ':memory:';

const envSchema = z.object({
  ...sharedEnvFields,
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65_535).default(8233),
  TEMPORAL_DB_FILE: z.string().default(path.join(DATA_DIR, 'temporal.db')),
  DATABASE_URL: sharedEnvFields.DATABASE_URL.default(DEFAULT_DATABASE_URL),
  // Read by ensureTemporalCli itself; listed so a bad value is reported with the rest.
  TEMPORAL_CLI: z.string().optional(),
  ...tracingEnvFields,
});

export interface StartConfig {
  temporalAddress: string;
  temporalHost: string;
  temporalPort: number;
  namespace: string;
  uiPort: number;
  /** Absolute path of the dev server's SQLite file, or null for in-memory. */
  temporalDbFile: string | null;
  databaseUrl: string;
  temporalCli: string | undefined;
  taskQueue: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  sandboxDir: string;
  sandboxIsolation: SandboxIsolationMode;
  sandboxCpuSeconds: number;
  /** The worker's sticky cache size (worker/config.ts). */
  maxCachedWorkflows: number;
  /** The model-backed actor's endpoint, or null (the engine runs fully without it). */
  model: ModelConfig | null;
  /** Where the worker's spans go (ADR 0013), or null: tracing off. */
  tracing: TracingConfig | null;
  /** The worker's operations endpoints and output, as `npm run worker` reads them (worker/config.ts). */
  worker: Pick<WorkerConfig, 'logFormat' | 'metrics' | 'health' | 'shutdownGraceSeconds'>;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): StartConfig {
  const parsed = envSchema.safeParse(presentVariables(env));
  if (!parsed.success) {
    throw new ConfigError(describeEnvIssues(parsed.error, env));
  }
  const data = parsed.data;
  const [host, port] = splitHostPort(data.TEMPORAL_ADDRESS);
  const problems: string[] = [];
  if (port < 1 || port > 65_535) problems.push(`TEMPORAL_ADDRESS: port ${port} is out of range`);
  if (port === data.TEMPORAL_UI_PORT) problems.push('TEMPORAL_UI_PORT: must differ from the gRPC port');
  let model: ModelConfig | null = null;
  try {
    model = loadModelConfig(env);
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  // npm start runs (or reuses) a local plaintext dev server: these are for `npm run worker` against a real one.
  for (const name of TEMPORAL_TLS_VARIABLES) {
    if (data[name] !== undefined) {
      problems.push(
        `${name}: npm start runs a local Temporal dev server without TLS; use npm run worker for a server that needs it`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    temporalAddress: data.TEMPORAL_ADDRESS,
    temporalHost: host,
    temporalPort: port,
    namespace: data.TEMPORAL_NAMESPACE,
    taskQueue: data.TEMPORAL_TASK_QUEUE,
    uiPort: data.TEMPORAL_UI_PORT,
    temporalDbFile:
      data.TEMPORAL_DB_FILE === IN_MEMORY ? null : path.resolve(REPO_ROOT, data.TEMPORAL_DB_FILE),
    databaseUrl: data.DATABASE_URL,
    temporalCli: data.TEMPORAL_CLI,
    logLevel: data.LOG_LEVEL,
    sandboxDir: resolveSandboxDir(data.SANDBOX_DIR, env),
    sandboxIsolation: data.SANDBOX_ISOLATION,
    sandboxCpuSeconds: data.SANDBOX_CPU_SECONDS,
    maxCachedWorkflows: data.WORKER_MAX_CACHED_WORKFLOWS ?? defaultMaxCachedWorkflows(),
    model,
    tracing: tracingConfigFrom(data, WORKER_SERVICE_NAME),
    worker: {
      logFormat: data.LOG_FORMAT,
      metrics:
        data.WORKER_METRICS_PORT === undefined
          ? null
          : { port: data.WORKER_METRICS_PORT, host: data.WORKER_METRICS_HOST },
      health:
        data.WORKER_HEALTH_PORT === undefined
          ? null
          : { port: data.WORKER_HEALTH_PORT, host: data.WORKER_HEALTH_HOST },
      shutdownGraceSeconds: data.WORKER_SHUTDOWN_GRACE_SECONDS ?? DEFAULT_SHUTDOWN_GRACE_SECONDS,
    },
  };
}

function splitHostPort(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i), Number(address.slice(i + 1))];
}
