import { z } from 'zod';
import {
  describeEnvIssues,
  presentVariables,
  sharedEnvFields,
  temporalConnectionFields,
} from '../config/env';
import type { LogFormat, LogLevel, SandboxIsolationMode } from '../config/env';
import { resolveTemporalTls } from '../config/temporal-connection';
import type { TemporalConnectionConfig } from '../config/temporal-connection';
import { loadModelConfig } from '../actors/model/config';
import type { ModelConfig } from '../actors/model/config';
import { resolveSandboxDir } from '../config/paths';
import { defaultMaxCachedWorkflows } from '../config/worker-memory';
import { WORKER_SERVICE_NAME, tracingConfigFrom, tracingEnvFields } from '../config/tracing';
import type { TracingConfig } from '../config/tracing';

const workerEnvSchema = z.object({
  ...temporalConnectionFields,
  DATABASE_URL: sharedEnvFields.DATABASE_URL,
  LOG_LEVEL: sharedEnvFields.LOG_LEVEL,
  LOG_FORMAT: sharedEnvFields.LOG_FORMAT,
  SANDBOX_DIR: sharedEnvFields.SANDBOX_DIR,
  SANDBOX_ISOLATION: sharedEnvFields.SANDBOX_ISOLATION,
  SANDBOX_CPU_SECONDS: sharedEnvFields.SANDBOX_CPU_SECONDS,
  WORKER_MAX_CACHED_WORKFLOWS: sharedEnvFields.WORKER_MAX_CACHED_WORKFLOWS,
  WORKER_HEALTH_PORT: sharedEnvFields.WORKER_HEALTH_PORT,
  WORKER_SHUTDOWN_GRACE_SECONDS: sharedEnvFields.WORKER_SHUTDOWN_GRACE_SECONDS,
  WORKER_HEALTH_HOST: sharedEnvFields.WORKER_HEALTH_HOST,
  WORKER_METRICS_PORT: sharedEnvFields.WORKER_METRICS_PORT,
  WORKER_METRICS_HOST: sharedEnvFields.WORKER_METRICS_HOST,
  ...tracingEnvFields,
});

export interface WorkerConfig extends TemporalConnectionConfig {
  namespace: string;
  taskQueue: string;
  /** Undefined means the embedded default database under `.data/`. */
  databaseUrl: string | undefined;
  logLevel: LogLevel;
  /** `json`: every line the worker prints is one JSON object (worker/logging.ts). */
  logFormat: LogFormat;
  /** Absolute directory for Execute's sandboxes. */
  sandboxDir: string;
  /** How plans' commands run: `bwrap` (boxed, refused where bwrap does not work) or `none` (unisolated). */
  sandboxIsolation: SandboxIsolationMode;
  /** CPU seconds per process of a boxed command. */
  sandboxCpuSeconds: number;
  /**
   * Workflows kept in memory between their tasks (Temporal's sticky cache); 0: none. Unset, derived from the
   * heap (config/worker-memory.ts).
   */
  maxCachedWorkflows: number;
  /** The model-backed actor's endpoint; null when CLEVERAGENTS_MODEL_BASE_URL is not set. */
  model: ModelConfig | null;
  /** After SIGTERM, seconds the running phases may finish in (worker/worker.ts). */
  shutdownGraceSeconds: number;
  /** Where `/healthz` and `/readyz` are served (worker/health.ts); null: not served. */
  health: { port: number; host: string } | null;
  /** Where Prometheus scrapes `/metrics` (worker/metrics.ts); null: not served. */
  metrics: { port: number; host: string } | null;
  /** Where the worker's spans go (ADR 0013); null: tracing off, no interceptors. */
  tracing: TracingConfig | null;
}

/**
 * A rolling restart should not throw away work: a phase that finishes within this after SIGTERM reports its
 * result, so Temporal does not run it again on another worker. Longer phases are cancelled at its end (they
 * heartbeat, so another worker takes them over); orchestrators' own kill timeouts (Kubernetes: 30 s) bound it too.
 */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 25;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Fails fast, naming every bad variable, before anything connects anywhere. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = workerEnvSchema.safeParse(presentVariables(env));
  if (!parsed.success) {
    throw new ConfigError(`invalid worker configuration: ${describeEnvIssues(parsed.error, env).join('; ')}`);
  }
  const temporal = resolveTemporalTls(parsed.data);
  if (temporal.problems.length > 0) {
    throw new ConfigError(`invalid worker configuration: ${temporal.problems.join('; ')}`);
  }
  let model: ModelConfig | null;
  try {
    model = loadModelConfig(env);
  } catch (err) {
    throw new ConfigError(
      `invalid worker configuration: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return {
    temporalAddress: parsed.data.TEMPORAL_ADDRESS,
    temporalTls: temporal.tls,
    temporalApiKey: temporal.apiKey,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    databaseUrl: parsed.data.DATABASE_URL,
    logLevel: parsed.data.LOG_LEVEL,
    logFormat: parsed.data.LOG_FORMAT,
    sandboxDir: resolveSandboxDir(parsed.data.SANDBOX_DIR, env),
    sandboxIsolation: parsed.data.SANDBOX_ISOLATION,
    sandboxCpuSeconds: parsed.data.SANDBOX_CPU_SECONDS,
    maxCachedWorkflows: parsed.data.WORKER_MAX_CACHED_WORKFLOWS ?? defaultMaxCachedWorkflows(),
    model,
    shutdownGraceSeconds: parsed.data.WORKER_SHUTDOWN_GRACE_SECONDS ?? DEFAULT_SHUTDOWN_GRACE_SECONDS,
    health:
      parsed.data.WORKER_HEALTH_PORT === undefined
        ? null
        : { port: parsed.data.WORKER_HEALTH_PORT, host: parsed.data.WORKER_HEALTH_HOST },
    metrics:
      parsed.data.WORKER_METRICS_PORT === undefined
        ? null
        : { port: parsed.data.WORKER_METRICS_PORT, host: parsed.data.WORKER_METRICS_HOST },
    tracing: tracingConfigFrom(parsed.data, WORKER_SERVICE_NAME),
  };
}
