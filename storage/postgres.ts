/**
 * The PostgreSQL connection as every process opens it (the worker, the CLI, the migration runner, the Prisma CLI).
 * Like storage/sqlite.ts it imports no generated client: prisma.config.ts loads it before one exists.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import type { PoolConfig } from 'pg';

/**
 * How long a new connection may take before the query fails as "not reachable" (a transient storage error, so
 * the activity retries). pg's own default is to wait forever, which would hang an activity for as long as the
 * database is down instead of letting Temporal retry it with backoff.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/** Connections per process. Activities of one worker share them; the default leaves room for many workers. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * pg's pool settings for a DATABASE_URL. `?schema=name` (Prisma's convention) selects a schema: pg itself does
 * not know the parameter, so it becomes the connection's search_path, which raw SQL relies on, and the adapter's
 * `schema`, which Prisma's generated queries qualify their tables with. `?connection_limit=n` sizes the pool.
 */
export function postgresPoolConfig(url: string): { pool: PoolConfig; schema: string | undefined } {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  const limit = parsed.searchParams.get('connection_limit');
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('connection_limit');
  if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    // Interpolated into the connection's options below: only a plain identifier may get there.
    throw new Error(`DATABASE_URL's schema must be a plain identifier (letters, digits, _), got ${schema}`);
  }
  const max = limit === null ? DEFAULT_POOL_SIZE : Number(limit);
  if (!Number.isInteger(max) || max < 1) {
    throw new Error(`DATABASE_URL's connection_limit must be a whole number of 1 or more, got ${limit}`);
  }
  return {
    pool: {
      connectionString: parsed.toString(),
      max,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    },
    schema,
  };
}

export function createPostgresAdapterFactory(url: string): PrismaPg {
  const { pool, schema } = postgresPoolConfig(url);
  return new PrismaPg(pool, {
    ...(schema === undefined ? {} : { schema }),
    // An idle connection the server dropped (a restart, a failover) is reported here; without a listener pg's
    // pool would raise it as an uncaught error and end the process. The next query opens a new connection.
    onPoolError: () => undefined,
  });
}
