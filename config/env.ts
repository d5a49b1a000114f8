/**
 * The environment variables more than one process reads (worker, CLI, `npm start`), each defined once. Every
 * process composes its own zod schema from these, so a rule or a default cannot differ between them.
 */
import { z } from 'zod';
import { TASK_QUEUE } from '../domain/ids';
import { DATABASE_URL_RULE, dialectOfUrl, redactDatabaseUrl } from '../storage/database-url';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How the worker prints: `text` (lines for a person) or `json` (one object per line, for a log collector). */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** How a plan's commands run: in a bubblewrap box, or (only when asked for by name) unisolated. */
export const SANDBOX_ISOLATION_MODES = ['bwrap', 'none'] as const;
export type SandboxIsolationMode = (typeof SANDBOX_ISOLATION_MODES)[number];

export const sharedEnvFields = {
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^:\s]+:\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:7233')
    .default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(TASK_QUEUE),
  /**
   * TLS to the Temporal server (config/temporal-connection.ts): `true`/`false`; unset, on when any variable below is
   * set. The files are read at start, so a bad path fails the process before it connects.
   */
  TEMPORAL_TLS: z
    .enum(['true', 'false'], 'must be true or false')
    .transform((v) => v === 'true')
    .optional(),
  /** PEM file of the CA that signed the server's certificate; unset: the system's trusted CAs. */
  TEMPORAL_TLS_CA: z.string().min(1).optional(),
  /** PEM files of the client certificate and its key, for mTLS; one without the other is refused. */
  TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  /** The name the server's certificate is checked against, when it is not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** Sent as `Authorization: Bearer …` (Temporal Cloud's API keys); implies TLS, which Cloud requires. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /**
   * `file:` a SQLite file, `postgresql://` a PostgreSQL database (storage/database-url.ts); undefined means the
   * embedded default database under `.data/`.
   */
  DATABASE_URL: z
    .string()
    .refine((url) => dialectOfUrl(url) !== null, DATABASE_URL_RULE)
    .optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** `json`: the worker prints one JSON object per line (worker/logging.ts), the SDK's and the plans' logs too. */
  LOG_FORMAT: z.enum(LOG_FORMATS).default('text'),
  /**
   * Where Execute copies projects to work on them (relative: from the repository root); default
   * `$XDG_CACHE_HOME/cleveragents/sandboxes` (config/paths.ts).
   */
  SANDBOX_DIR: z.string().min(1).optional(),
  /**
   * `bwrap` (default): every command a plan runs is boxed (sandbox/isolation.ts), and refused where bubblewrap does
   * not work. `none` runs them unisolated, as the worker's user: only on purpose, never as a fallback.
   */
  SANDBOX_ISOLATION: z.enum(SANDBOX_ISOLATION_MODES).default('bwrap'),
  /** CPU seconds each process of a boxed command may use, on top of the step's wall-clock timeout. */
  SANDBOX_CPU_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  /**
   * How many workflows the worker keeps in memory (Temporal's sticky cache); unset: derived from the heap
   * (config/worker-memory.ts). `0` keeps none: every workflow task then replays its plan's history.
   */
  /**
   * Where the worker answers `GET /healthz` and `GET /readyz` (worker/health.ts); unset: no endpoint. `0` lets
   * the system choose a port, which the worker prints.
   */
  WORKER_HEALTH_PORT: z.coerce
    .number()
    .int('must be a port number')
    .min(0, 'must be a port number (0 to 65535)')
    .max(65_535, 'must be a port number (0 to 65535)')
    .optional(),
  /** The address the health endpoints listen on: every interface by default, as a probe from outside needs. */
  WORKER_HEALTH_HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * Where the worker serves Prometheus metrics (`GET /metrics`: the SDK's `temporal_*` and the engine's `agents_*`,
   * worker/metrics.ts); unset: no endpoint. `0` lets the system choose a port, which the worker prints.
   */
  WORKER_METRICS_PORT: z.coerce
    .number()
    .int('must be a port number')
    .min(0, 'must be a port number (0 to 65535)')
    .max(65_535, 'must be a port number (0 to 65535)')
    .optional(),
  /** The address the metrics endpoint listens on: every interface by default, as a scraper from outside needs. */
  WORKER_METRICS_HOST: z.string().min(1).default('0.0.0.0'),
  /** After SIGTERM, seconds the running phases may finish in before they are cancelled (worker/worker.ts). */
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce
    .number()
    .int('must be a whole number of seconds')
    .min(0, 'must be 0 or more seconds')
    .max(3_600, 'must be at most 3600 seconds')
    .optional(),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int('must be a whole number of workflows')
    .min(0, 'must be 0 (no cache) or more')
    .max(100_000)
    .optional(),
};

/** The variables that say how a process reaches Temporal over TLS (config/temporal-connection.ts). */
export const TEMPORAL_TLS_VARIABLES = [
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CA',
  'TEMPORAL_TLS_CERT',
  'TEMPORAL_TLS_KEY',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_API_KEY',
] as const;

/** Where and how the worker and the CLI reach Temporal: both read exactly these. */
export const temporalConnectionFields = {
  TEMPORAL_ADDRESS: sharedEnvFields.TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: sharedEnvFields.TEMPORAL_NAMESPACE,
  TEMPORAL_TASK_QUEUE: sharedEnvFields.TEMPORAL_TASK_QUEUE,
  TEMPORAL_TLS: sharedEnvFields.TEMPORAL_TLS,
  TEMPORAL_TLS_CA: sharedEnvFields.TEMPORAL_TLS_CA,
  TEMPORAL_TLS_CERT: sharedEnvFields.TEMPORAL_TLS_CERT,
  TEMPORAL_TLS_KEY: sharedEnvFields.TEMPORAL_TLS_KEY,
  TEMPORAL_TLS_SERVER_NAME: sharedEnvFields.TEMPORAL_TLS_SERVER_NAME,
  TEMPORAL_API_KEY: sharedEnvFields.TEMPORAL_API_KEY,
};

/** `FOO=` in a .env file means "not set", not "set to nothing". */
export function presentVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
}

/**
 * One problem per bad variable, naming it, the rule, and the value it had, with any password in a URL masked:
 * these lines end up in terminals, CI logs and log collectors.
 */
export function describeEnvIssues(error: z.ZodError, env: NodeJS.ProcessEnv): string[] {
  return error.issues.map((issue) => {
    const key = issue.path.join('.');
    const value = env[key];
    return `${key}: ${issue.message} (got ${JSON.stringify(value === undefined ? null : redactDatabaseUrl(value))})`;
  });
}
