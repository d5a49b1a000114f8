/**
 * The one place a PrismaClient is made. Run `prisma generate` first (ensurePrismaClientGenerated in
 * storage/migrate.ts does it when needed): the client is generated into storage/generated, which is git-ignored.
 */
import { PrismaClient } from './generated/prisma/client';
import { BUSY_TIMEOUT_MS, WalSQLiteAdapterFactory, resolveDatabaseUrl } from './sqlite';

export { PrismaClient };
export { resolveDatabaseUrl };

/**
 * A client on the better-sqlite3 driver adapter (no Rust engine): WAL mode, foreign keys and a busy timeout are
 * set on each connection by WalSQLiteAdapterFactory. Nothing is opened until the first query or `$connect()`.
 *
 * Use one client per database per process (sharedPrismaClient): better-sqlite3 waits for a lock synchronously, so
 * a second client in the same process that waits for the first one's write lock blocks the very event loop the
 * first one needs to commit; every such collision costs the full busy timeout and ends in SQLITE_BUSY.
 *
 * Transaction limits: better-sqlite3 is synchronous and the adapter runs one transaction at a time per client,
 * so a transaction may queue behind others (maxWait) and may wait up to BUSY_TIMEOUT_MS for another process's
 * write lock inside its own time budget (timeout). Prisma's defaults (2 s / 5 s) are shorter than that.
 */
export function createPrismaClient(databaseUrl: string, options: StorageClientOptions = {}): PrismaClient {
  const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  return new PrismaClient({
    // Resolved here too, so a relative URL means the same file to the client as to `prisma migrate deploy`.
    adapter: new WalSQLiteAdapterFactory(resolveDatabaseUrl(databaseUrl), busyTimeoutMs),
    transactionOptions: { maxWait: 2 * BUSY_TIMEOUT_MS, timeout: 2 * BUSY_TIMEOUT_MS + busyTimeoutMs },
  });
}

export interface StorageClientOptions {
  /** How long a write waits for another connection's lock; default BUSY_TIMEOUT_MS. Tests lower it. */
  busyTimeoutMs?: number;
}

const shared = new Map<string, PrismaClient>();

/** The process-wide client for this database, created on first use (see createPrismaClient for why). */
export function sharedPrismaClient(databaseUrl: string): PrismaClient {
  const url = resolveDatabaseUrl(databaseUrl);
  let client = shared.get(url);
  if (client === undefined) {
    client = createPrismaClient(url);
    shared.set(url, client);
  }
  return client;
}

/** Disconnects every shared client (process shutdown, test teardown). */
export async function disconnectSharedPrismaClients(): Promise<void> {
  const clients = [...shared.values()];
  shared.clear();
  await Promise.all(clients.map((client) => client.$disconnect()));
}
