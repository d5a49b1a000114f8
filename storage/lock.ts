import type { Prisma } from './generated/prisma/client';

/**
 * Takes SQLite's write lock as the transaction's first statement. Prisma opens transactions with a plain
 * (deferred) BEGIN; a transaction that reads first and writes later cannot wait for another process's writer
 * (SQLite answers SQLITE_BUSY_SNAPSHOT at once, whatever the busy timeout). Writing first makes it wait instead,
 * and the reads that follow see the latest committed state, which the idempotency checks rely on. The lock is the
 * whole database's, so which table the no-op touches does not matter.
 */
export async function claimWriteLock(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$executeRaw`UPDATE plans SET plan_id = plan_id WHERE 0`;
}
