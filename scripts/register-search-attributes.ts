/**
 * One-shot setup for a Temporal server this project did not start (docker-compose, a shared cluster): waits for
 * the server, then registers the namespace and the engine's search attributes, both derived from the code.
 * Usage: TEMPORAL_ADDRESS=host:7233 TEMPORAL_NAMESPACE=default tsx scripts/register-search-attributes.ts
 */
import { Connection } from '@temporalio/client';
import { ConfigError, loadConfig } from './config';
import { ensureNamespace, ensureSearchAttributes } from './dev-server';

const WAIT_FOR_SERVER_MS = 5 * 60_000;

async function connectWhenReady(address: string): Promise<Connection> {
  const deadline = Date.now() + WAIT_FOR_SERVER_MS;
  for (;;) {
    const connection = Connection.lazy({ address, connectTimeout: 5_000 });
    try {
      await connection.ensureConnected();
      return connection;
    } catch (err) {
      await connection.close().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      console.log(`waiting for Temporal at ${address}...`);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await connectWhenReady(config.temporalAddress);
  try {
    await ensureNamespace(connection, config.namespace, console.log);
    await ensureSearchAttributes(connection, config.namespace, console.log);
    console.log(`search attributes ready in namespace ${config.namespace} on ${config.temporalAddress}`);
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err));
  process.exit(1);
});
