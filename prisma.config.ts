/**
 * Prisma CLI configuration. Prisma 6.19 runs offline here only with the WASM schema engine, which talks to the
 * database through a driver adapter (`engine: 'js'`); without it every command tries to download a binary.
 * DATABASE_URL picks the backend, and with it the schema and migrations (ADR 0013). `prisma generate` for the
 * PostgreSQL client passes `--schema prisma/postgresql/schema.prisma`, which wins over the choice made here.
 */
import { defineConfig } from 'prisma/config';
import { dialectOfUrl, resolveDatabaseUrl } from './storage/database-url';
import { createPostgresAdapterFactory } from './storage/postgres';
import { DEFAULT_DATABASE_URL, WalSQLiteAdapterFactory } from './storage/sqlite';

// schema.prisma's `url = env("DATABASE_URL")` must resolve or the CLI cannot read the schema and falls back to
// downloading an engine (a misleading ENOTFOUND). The value only has to parse; the adapter below connects.
process.env.DATABASE_URL ??= DEFAULT_DATABASE_URL;
const postgres = dialectOfUrl(process.env.DATABASE_URL) === 'postgresql';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  // Resolved lazily so `prisma generate` and `prisma validate` need neither a database nor the .data folder.
  adapter: async () =>
    postgres
      ? createPostgresAdapterFactory(resolveDatabaseUrl())
      : new WalSQLiteAdapterFactory(resolveDatabaseUrl()),
  schema: postgres ? 'prisma/postgresql/schema.prisma' : 'prisma/schema.prisma',
  migrations: { path: postgres ? 'prisma/postgresql/migrations' : 'prisma/migrations' },
});
