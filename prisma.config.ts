/**
 * Prisma CLI configuration. Prisma 6.19 runs offline here only with the WASM schema engine, which talks to the
 * database through a driver adapter (`engine: 'js'`); without it every command tries to download a binary.
 */
import { defineConfig } from 'prisma/config';
import { DEFAULT_DATABASE_URL, resolveDatabaseUrl, WalSQLiteAdapterFactory } from './storage/sqlite';

// schema.prisma's `url = env("DATABASE_URL")` must resolve or the CLI cannot read the schema and falls back to
// downloading an engine (a misleading ENOTFOUND). The value only has to parse; the adapter below connects.
process.env.DATABASE_URL ??= DEFAULT_DATABASE_URL;

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  // Resolved lazily so `prisma generate` and `prisma validate` need neither DATABASE_URL nor the .data folder.
  adapter: async () => new WalSQLiteAdapterFactory(resolveDatabaseUrl()),
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
