/**
 * DATABASE_URL chooses the backend: `file:` is the embedded SQLite database, `postgresql://` (or `postgres://`)
 * a PostgreSQL server (ADR 0013). Imports no generated client and no driver, so the Prisma CLI's config, the
 * config schemas and the CLI's startup can all call it.
 */
import type { Prisma, PrismaClient } from './generated/prisma/client';
import { DEFAULT_DATABASE_URL, resolveSqliteUrl } from './sqlite';

export type Dialect = 'sqlite' | 'postgresql';

const POSTGRES_SCHEMES = ['postgresql:', 'postgres:'];

/** Null for a URL of neither kind; validation (config/env.ts) turns that into a message. */
export function dialectOfUrl(url: string): Dialect | null {
  const trimmed = url.trim();
  if (trimmed.startsWith('file:')) return 'sqlite';
  if (POSTGRES_SCHEMES.some((scheme) => trimmed.startsWith(`${scheme}//`))) return 'postgresql';
  return null;
}

export const DATABASE_URL_RULE =
  'must be file:/path/to/agents.db (SQLite) or postgresql://user:password@host:5432/database (PostgreSQL)';

/**
 * The URL every process connects with: DATABASE_URL when omitted, else the embedded .data/agents.db. A SQLite
 * path is made absolute against the repository root (storage/sqlite.ts); a PostgreSQL URL is checked to parse and
 * otherwise kept as given.
 */
export function resolveDatabaseUrl(raw: string | undefined = process.env.DATABASE_URL): string {
  const url = raw?.trim() || DEFAULT_DATABASE_URL;
  switch (dialectOfUrl(url)) {
    case 'sqlite':
      return resolveSqliteUrl(url);
    case 'postgresql':
      try {
        new URL(url);
      } catch {
        throw new Error(`DATABASE_URL is not a valid URL: ${redactDatabaseUrl(url)}`);
      }
      return url;
    default:
      throw new Error(`DATABASE_URL ${DATABASE_URL_RULE}, got ${redactDatabaseUrl(url)}`);
  }
}

/** The URL with its password masked: for messages and logs, which must never carry credentials. */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@/?#]*@/i, '$1:***@');
}

/**
 * Which SQL a client or a transaction speaks. Read from the provider Prisma's runtime keeps on both (`_activeProvider`,
 * what Prisma itself branches on), so raw SQL deep inside a transaction needs no extra parameter; checked, so a
 * Prisma upgrade that renames it fails every raw query loudly instead of sending SQLite's SQL to PostgreSQL.
 */
export function dialectOf(db: PrismaClient | Prisma.TransactionClient): Dialect {
  const provider = (db as unknown as { _activeProvider?: unknown })._activeProvider;
  if (provider === 'sqlite' || provider === 'postgresql') return provider;
  throw new Error(`unknown database provider ${String(provider)} (storage/prisma.ts dialectOf)`);
}
