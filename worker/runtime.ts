/**
 * The worker process's one Temporal Runtime: created once, before the first connection, so everything the runtime
 * is given is given here: the logger (worker/logging.ts) and the metrics exporter (worker/metrics.ts).
 */
import { Runtime } from '@temporalio/worker';
import type { RuntimeOptions } from '@temporalio/worker';
import type { LogLevel } from '../config/env';
import type { WorkerLog } from './logging';
import type { MetricsEndpoint } from './metrics';

export function runtimeOptions(options: {
  log: WorkerLog;
  level: LogLevel;
  metrics: MetricsEndpoint | null;
}): RuntimeOptions {
  const { log, level, metrics } = options;
  return {
    logger: log.sdkLogger,
    telemetryOptions: {
      ...(metrics === null ? {} : { metrics: metrics.exporter }),
      // In JSON the Rust core's own logs must reach the logger too (by default the core prints them itself, as
      // text). Its WARN and up, as it prints by default; its INFO and below are the SDK's internals.
      ...(log.format === 'json'
        ? {
            logging: {
              forward: {},
              filter: { core: level === 'error' ? 'ERROR' : 'WARN', other: 'ERROR' },
            },
          }
        : {}),
    },
  };
}

export function installRuntime(options: Parameters<typeof runtimeOptions>[0]): void {
  Runtime.install(runtimeOptions(options));
}
