import { NativeConnection } from '@temporalio/worker';
import { disconnectSharedPrismaClients, resolveDatabaseUrl, sharedPrismaClient } from '../storage/prisma';
import { createPlanStore } from '../storage/plans';
import { TASK_QUEUE } from '../workflows/definitions';
import { loadWorkerConfig } from './config';
import type { WorkerConfig } from './config';
import { createPlanWorker } from './worker';

/**
 * Runs the plan worker until SIGINT/SIGTERM. Temporal's runtime catches those signals and drains the worker,
 * after which this resolves and the database and connection are closed in order.
 */
export async function runWorker(
  config: Pick<WorkerConfig, 'temporalAddress' | 'namespace' | 'databaseUrl'> & { taskQueue?: string },
): Promise<void> {
  const prisma = sharedPrismaClient(resolveDatabaseUrl(config.databaseUrl));
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  try {
    const taskQueue = config.taskQueue ?? TASK_QUEUE;
    const worker = await createPlanWorker({
      connection,
      namespace: config.namespace,
      taskQueue,
      plans: createPlanStore(prisma),
    });
    console.log(
      `worker: polling task queue ${taskQueue} on ${config.temporalAddress} (namespace ${config.namespace})`,
    );
    await worker.run();
    console.log('worker: stopped');
  } finally {
    await connection.close();
    await disconnectSharedPrismaClients();
  }
}

if (require.main === module) {
  runWorker(loadWorkerConfig()).catch((err: unknown) => {
    console.error(`worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
