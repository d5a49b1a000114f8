/**
 * The database a test file runs on. The jest project decides (jest.config.js): the `sqlite` project gives every
 * test a file in its temp dir, the `postgresql` project a fresh database in the private cluster that
 * test/global-setup-postgresql.ts started. Either way it is migrated the way `npm start` migrates.
 */
import path from 'node:path';
import { ulid } from 'ulid';
import { migrateDatabase } from '../../storage/migrate';
import type { Dialect } from '../../storage/database-url';

/** Set by test/setup-postgresql.ts in the postgresql project; jest gives each test file its own process.env. */
export const TEST_BACKEND: Dialect =
  process.env.AGENTS_TEST_BACKEND === 'postgresql' ? 'postgresql' : 'sqlite';

/** Admin URL of the cluster the postgresql project's global setup started. */
export function testClusterUrl(): string {
  const url = process.env.AGENTS_TEST_POSTGRES_URL;
  if (url === undefined) {
    throw new Error(
      'AGENTS_TEST_POSTGRES_URL is not set: PostgreSQL tests run in the postgresql jest project',
    );
  }
  return url;
}

/** A new, empty PostgreSQL database in the test cluster; its URL. */
export async function createPostgresTestDatabase(): Promise<string> {
  const admin = testClusterUrl();
  const name = `t_${ulid().toLowerCase()}`;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A migrated database of this file's backend (a SQLite file in `dir`, or a PostgreSQL database); its URL. */
export async function createTestDatabase(dir: string, fileName = 'agents.db'): Promise<string> {
  const url =
    TEST_BACKEND === 'postgresql' ? await createPostgresTestDatabase() : `file:${path.join(dir, fileName)}`;
  await migrateDatabase(url);
  return url;
}
