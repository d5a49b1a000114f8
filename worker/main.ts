import { NativeConnection } from '@temporalio/worker';
import { createActorRegistry } from '../actors';
import { describeTemporalSecurity, temporalConnectionOptions } from '../config/temporal-connection';
import { TASK_QUEUE } from '../domain/ids';
import { describeIsolation, detectIsolation } from '../sandbox/isolation';
import type { Isolation } from '../sandbox/isolation';
import { createStores } from '../storage';
import { disconnectSharedPrismaClients, resolveDatabaseUrl, sharedPrismaClient } from '../storage/prisma';
import { loadWorkerConfig } from './config';
import type { WorkerConfig } from './config';
import { startHealthServer } from './health';
import { createWorkerLog, printFatal, routeConsoleTo } from './logging';
import { prometheusEndpoint } from './metrics';
import { installRuntime } from './runtime';
import { createPlanWorker } from './worker';
import type { TracingConfig } from '../config/tracing';
import type { Tracing } from '../lib/tracing';
import type * as TracingLib from '../lib/tracing';

/**
 * Runs the plan worker until SIGINT/SIGTERM. Temporal's runtime catches those signals and drains the worker,
 * after which this resolves and the database and connection are closed in order.
 */
export async function runWorker(
  config: Pick<
    WorkerConfig,
    | 'temporalAddress'
    | 'namespace'
    | 'databaseUrl'
    | 'sandboxDir'
    | 'sandboxIsolation'
    | 'sandboxCpuSeconds'
    | 'maxCachedWorkflows'
    | 'model'
  > &
    Partial<
      Pick<
        WorkerConfig,
        | 'taskQueue'
        | 'logLevel'
        | 'health'
        | 'shutdownGraceSeconds'
        | 'logFormat'
        | 'metrics'
        | 'temporalTls'
        | 'temporalApiKey'
        | 'tracing'
      >
    > & {
      /** Found already by the caller (`npm start` checks first); otherwise detected here. */
      isolation?: Isolation;
    },
): Promise<void> {
  const log = createWorkerLog({ format: config.logFormat ?? 'text', level: config.logLevel ?? 'info' });
  const restoreConsole = routeConsoleTo(log);
  const metrics = config.metrics ? await prometheusEndpoint(config.metrics) : null;
  if (config.logLevel !== undefined || metrics !== null || log.format === 'json') {
    // Must precede the first connection: the runtime is created once per process.
    installRuntime({ log, level: config.logLevel ?? 'info', metrics });
  }
  // Once, before polling: a worker that cannot box commands says so now, not at a plan's first `run` step.
  const isolation =
    config.isolation ??
    (await detectIsolation({ mode: config.sandboxIsolation, cpuSeconds: config.sandboxCpuSeconds }));
  const isolationLine = `worker: ${describeIsolation(isolation)}`;
  if (isolation.mode === 'bwrap') log.info(isolationLine);
  else log.warn(isolationLine);
  const prisma = sharedPrismaClient(resolveDatabaseUrl(config.databaseUrl));
  const temporal = {
    temporalAddress: config.temporalAddress,
    temporalTls: config.temporalTls ?? null,
    temporalApiKey: config.temporalApiKey ?? null,
  };
  const connection = await NativeConnection.connect(temporalConnectionOptions(temporal));
  const tracing = config.tracing ? startWorkerTracing(config.tracing) : undefined;
  try {
    const taskQueue = config.taskQueue ?? TASK_QUEUE;
    const actors = createActorRegistry({ model: config.model });
    const worker = await createPlanWorker({
      connection,
      namespace: config.namespace,
      taskQueue,
      ...createStores(prisma),
      actors,
      sandboxDir: config.sandboxDir,
      isolation,
      maxCachedWorkflows: config.maxCachedWorkflows,
      shutdownGraceSeconds: config.shutdownGraceSeconds,
      ...(tracing ? { tracing } : {}),
    });
    // Listening before the polling line: whoever waits for that line can probe at once.
    const health = config.health
      ? await startHealthServer({ ...config.health, state: () => worker.getState() })
      : null;
    if (health !== null) log.info(`worker: health on ${health.url} (/healthz, /readyz)`);
    // The runtime listens since its install; said here, with the rest, before the polling line.
    if (metrics !== null) log.info(`worker: metrics on ${metrics.url}`);
    const security = describeTemporalSecurity(temporal);
    log.info(
      `worker: polling task queue ${taskQueue} on ${config.temporalAddress} (namespace ${config.namespace}` +
        `${security === 'plaintext' ? '' : `, ${security}`}); ` +
        `up to ${worker.options.maxCachedWorkflows} workflows cached`,
    );
    log.info(
      `worker: strategy actors ${actors.names('strategy').join(', ')}; sandboxes in ${config.sandboxDir}`,
    );
    try {
      await worker.run();
    } finally {
      await health?.close();
    }
    log.info('worker: stopped');
  } finally {
    await tracing?.shutdown(); // the spans of the last tasks, before the process exits
    await connection.close();
    await disconnectSharedPrismaClients();
    restoreConsole();
  }
}

/** OTLP/HTTP export of the worker's spans (ADR 0013); the SDK is loaded only here. */
function startWorkerTracing(config: TracingConfig): Tracing {
  // Console lines go through the worker's log (routeConsoleTo).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- tracing off loads no OpenTelemetry SDK
  const { otlpTraceExporter, startTracing } = require('../lib/tracing') as typeof TracingLib;
  console.log(`worker: tracing to ${config.tracesUrl} as ${config.serviceName}`);
  return startTracing({ serviceName: config.serviceName, exporter: otlpTraceExporter(config.tracesUrl) });
}

if (require.main === module) {
  // A bad configuration is reported like any other failure: one line naming the variables, no stack trace.
  Promise.resolve()
    .then(() => runWorker(loadWorkerConfig()))
    .catch((err: unknown) => {
      printFatal(`worker: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
}
