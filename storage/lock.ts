import { dialectOf } from './database-url';
import type { Prisma } from './generated/prisma/client';

/**
 * Makes the transaction the only writer of `scope` (a plan id, or CATALOG_SCOPE) until it ends, and makes the
 * reads that follow see the latest committed state, which the idempotency checks ("is this sequence number
 * stored already?") rely on. Must be the transaction's first statement.
 *
 * - SQLite: takes the whole database's write lock. Prisma opens transactions with a plain (deferred) BEGIN; a
 *   transaction that reads first and writes later cannot wait for another process's writer (SQLite answers
 *   SQLITE_BUSY_SNAPSHOT at once, whatever the busy timeout). Writing first makes it wait instead. The scope does
 *   not matter there: the lock is the database's, and which table the no-op touches is irrelevant.
 * - PostgreSQL: a transaction-scoped advisory lock on the scope, so workers writing different plans never wait for
 *   each other. Under READ COMMITTED every statement after it sees what the previous holder committed. Its key is
 *   the scope's 64-bit hash: two scopes sharing a key only wait for each other, never write wrongly.
 */
export async function claimWriteLock(tx: Prisma.TransactionClient, scope: string): Promise<void> {
  if (dialectOf(tx) === 'postgresql') {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${scope}, 0))::text AS locked`;
    return;
  }
  await tx.$executeRaw`UPDATE plans SET plan_id = plan_id WHERE 0`;
}

/** The scope of writes to actions, projects and profiles. */
export const CATALOG_SCOPE = 'catalog';
