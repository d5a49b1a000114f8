/**
 * What the worker prints, in the format LOG_FORMAT asks for. `text` (the default) is what a person reads in a
 * terminal: the worker's own lines on stdout, the SDK's logs on stderr through its DefaultLogger. `json` is for a
 * log collector: every line the process prints is one JSON object on stdout (pino), the worker's own lines, the
 * SDK's and its Rust core's logs, the workflows' (`log` from @temporalio/workflow) and the activities' (the
 * activity context's logger), and anything else written through `console`. A line about a plan carries both
 * `planId` and `workflowId`, so a collector can follow one plan across workers whichever id it was given.
 */
import { format } from 'node:util';
import { DefaultLogger } from '@temporalio/worker';
import type { LogMetadata, Logger as SdkLogger, LogLevel as SdkLogLevel } from '@temporalio/common';
import { pino } from 'pino';
import type { Logger as PinoLogger } from 'pino';
import type { LogFormat, LogLevel } from '../config/env';
import { PLAN_WORKFLOW_PREFIX, normalizePlanId, planWorkflowId } from '../domain/ids';

export interface WorkerLog {
  format: LogFormat;
  /** The worker's own lines: startup, where it listens, stopping. */
  info(line: string): void;
  warn(line: string): void;
  error(line: string): void;
  /** For Runtime.install: receives the SDK's logs and the workflows' and activities' through it. */
  sdkLogger: SdkLogger;
}

export function createWorkerLog(options: {
  format: LogFormat;
  level: LogLevel;
  /** Where JSON lines go; stdout unless a test says otherwise. */
  destination?: NodeJS.WritableStream | pino.DestinationStream;
}): WorkerLog {
  if (options.format === 'text') {
    return {
      format: 'text',
      info: (line) => console.log(line),
      warn: (line) => console.warn(line),
      error: (line) => console.error(line),
      sdkLogger: new DefaultLogger(toSdkLevel(options.level)),
    };
  }
  const logger = jsonLogger({ level: options.level, destination: options.destination });
  return {
    format: 'json',
    info: (line) => logger.info(line),
    warn: (line) => logger.warn(line),
    error: (line) => logger.error(line),
    sdkLogger: new PinoSdkLogger(logger),
  };
}

function jsonLogger(options: {
  level: LogLevel;
  destination: NodeJS.WritableStream | pino.DestinationStream | undefined;
}): PinoLogger {
  return pino(
    {
      level: options.level,
      // Readable by a person grepping too: the level's name and an ISO time, not 30 and epoch milliseconds.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The SDK hands failures over as `error` (an Error, which JSON.stringify would print as {}).
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    },
    // Synchronous: the last lines before process.exit (a failed start) must not be lost in a buffer.
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/**
 * The SDK's Logger over pino. The SDK gives workflow and activity logs their context as metadata (workflowId, runId,
 * workflowType, activityType, namespace, taskQueue, sdkComponent); this adds the plan's id beside its workflow id.
 */
class PinoSdkLogger implements SdkLogger {
  constructor(private readonly logger: PinoLogger) {}

  log(level: SdkLogLevel, message: string, meta?: LogMetadata): void {
    this.logger[toPinoLevel(level)](withPlanIds(meta ?? {}), message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * `planId` and `workflowId` both, whichever of the two the line came with: the SDK knows only the workflow id, the
 * engine's own workflow logs name the plan. A workflow that is not a plan's keeps its meta as it is. Symbol keys
 * (the SDK's forwarded timestamp) are left out: pino stamps its own time.
 */
export function withPlanIds(meta: LogMetadata): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...meta };
  const { workflowId, planId } = fields;
  if (typeof workflowId === 'string' && planId === undefined && workflowId.startsWith(PLAN_WORKFLOW_PREFIX)) {
    const id = normalizePlanId(workflowId);
    if (id !== undefined) fields.planId = id;
  } else if (typeof planId === 'string' && workflowId === undefined) {
    fields.workflowId = planWorkflowId(planId);
  }
  return fields;
}

/**
 * In JSON mode, lines printed through `console` by anything in the process (a library's warning, a stray debug
 * line) become JSON lines too, so a collector never meets a line it cannot parse. Returns the undo.
 */
export function routeConsoleTo(log: WorkerLog): () => void {
  if (log.format !== 'json') return () => undefined;
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  console.log = (...args: unknown[]) => log.info(format(...args));
  console.info = console.log;
  console.warn = (...args: unknown[]) => log.warn(format(...args));
  console.error = (...args: unknown[]) => log.error(format(...args));
  return () => Object.assign(console, saved);
}

/**
 * A failure before the configuration is read (or of the configuration itself) still comes out in the format asked
 * for, as far as the raw variable says which.
 */
export function printFatal(line: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env.LOG_FORMAT === 'json') jsonLogger({ level: 'error', destination: undefined }).fatal(line);
  else console.error(line);
}

export function toSdkLevel(level: LogLevel): SdkLogLevel {
  return level.toUpperCase() as Uppercase<LogLevel>;
}

function toPinoLevel(level: SdkLogLevel): LogLevel {
  return level.toLowerCase() as Lowercase<SdkLogLevel>;
}
