/**
 * The one place a PrismaClient is made. Run `prisma generate` first (ensurePrismaClientGenerated in
 * storage/migrate.ts does it when needed): the clients are generated into storage/generated, which is git-ignored.
 */
import { PrismaClient } from './generated/prisma/client';
import { dialectOfUrl, resolveDatabaseUrl } from './database-url';
import type { Dialect } from './database-url';
import { BUSY_TIMEOUT_MS, WalSQLiteAdapterFactory } from './sqlite';
// Types only (erased): the modules themselves are required lazily in createPostgresClient.
import type * as PostgresGenerated from './generated/prisma-pg/client';
import type * as PostgresConnection from './postgres';

export { PrismaClient };
export { resolveDatabaseUrl };
export type { Dialect };
export { dialectOf } from './database-url';

/**
 * A client for DATABASE_URL's backend, typed as the SQLite client: the two generated clients have the same models
 * and the stores use only what both backends support; where SQL differs, they ask dialectOf. Nothing is opened
 * until the first query or `$connect()`.
 */
export function createPrismaClient(databaseUrl: string, options: StorageClientOptions = {}): PrismaClient {
  const url = resolveDatabaseUrl(databaseUrl);
  return dialectOfUrl(url) === 'postgresql' ? createPostgresClient(url) : createSqliteClient(url, options);
}

/**
 * A client on the better-sqlite3 driver adapter (no Rust engine): WAL mode, foreign keys and a busy timeout are
 * set on each connection by WalSQLiteAdapterFactory.
 *
 * Use one client per database per process (sharedPrismaClient): better-sqlite3 waits for a lock synchronously, so
 * a second client in the same process that waits for the first one's write lock blocks the very event loop the
 * first one needs to commit; every such collision costs the full busy timeout and ends in SQLITE_BUSY.
 *
 * Transaction limits: better-sqlite3 is synchronous and the adapter runs one transaction at a time per client,
 * so a transaction may queue behind others (maxWait) and may wait up to BUSY_TIMEOUT_MS for another process's
 * write lock inside its own time budget (timeout). Prisma's defaults (2 s / 5 s) are shorter than that.
 */
function createSqliteClient(url: string, options: StorageClientOptions): PrismaClient {
  const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  return new PrismaClient({
    adapter: new WalSQLiteAdapterFactory(url, busyTimeoutMs),
    transactionOptions: { maxWait: 2 * BUSY_TIMEOUT_MS, timeout: 2 * BUSY_TIMEOUT_MS + busyTimeoutMs },
  });
}

/**
 * A client on the pg driver adapter, from the PostgreSQL-generated client (prisma/postgresql/schema.prisma).
 * Loaded on first use so a SQLite process never pays for it. Transactions get the same time budget as on SQLite:
 * a plan-scoped transaction may wait for another worker's write to the same plan (storage/lock.ts), and a pool
 * connection may take up to CONNECT_TIMEOUT_MS to open.
 */
function createPostgresClient(url: string): PrismaClient {
  /* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose (see above) */
  const generated = require('./generated/prisma-pg/client') as typeof PostgresGenerated;
  const { createPostgresAdapterFactory } = require('./postgres') as typeof PostgresConnection;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const client = new generated.PrismaClient({
    adapter: createPostgresAdapterFactory(url),
    transactionOptions: { maxWait: 2 * BUSY_TIMEOUT_MS, timeout: 3 * BUSY_TIMEOUT_MS },
  });
  // Same models, same runtime (@prisma/client/runtime), other SQL: see createPrismaClient.
  return client as unknown as PrismaClient;
}

export interface StorageClientOptions {
  /** SQLite: how long a write waits for another connection's lock; default BUSY_TIMEOUT_MS. Tests lower it. */
  busyTimeoutMs?: number;
}

const shared = new Map<string, PrismaClient>();

/**
 * The process-wide client for this database, created on first use: one per database per process (SQLite: see
 * createSqliteClient for why; PostgreSQL: one connection pool per process).
 */
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
