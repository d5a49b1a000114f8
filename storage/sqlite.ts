/**
 * The SQLite connection as every process opens it: the CLI, the worker, the tests and the Prisma CLI itself
 * (prisma.config.ts). Kept apart from storage/prisma.ts because it must not import the generated client:
 * `prisma generate` loads prisma.config.ts before that client exists.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { DATA_DIR, REPO_ROOT } from '../config/paths';

/** How long a writer waits for another process's write lock before SQLite gives up with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

export const DEFAULT_DATABASE_URL = `file:${path.join(DATA_DIR, 'agents.db')}`;

/**
 * `file:<absolute path>` for a `file:` URL. A relative path is taken against the repo root, not the working
 * directory, so the CLI run from a subfolder and the worker open the same file. The parent directory is created
 * because SQLite creates the file but not its folder. storage/database-url.ts decides which URLs come here.
 */
export function resolveSqliteUrl(url: string): string {
  if (!url.startsWith('file:')) {
    throw new Error(`not a SQLite URL (file:/absolute/path.db): ${url}`);
  }
  const file = path.resolve(REPO_ROOT, databaseFilePath(url));
  mkdirSync(path.dirname(file), { recursive: true });
  return `file:${file}`;
}

/** The file path part of a `file:` URL (query parameters such as `?connection_limit=1` are dropped). */
export function databaseFilePath(url: string): string {
  const withoutScheme = url.replace(/^file:(\/\/(?=\/))?/, '');
  const query = withoutScheme.indexOf('?');
  return query === -1 ? withoutScheme : withoutScheme.slice(0, query);
}

/**
 * Run on every new connection, before Prisma sends its first query. journal_mode=WAL lets the CLI read while
 * the worker writes (readers never block the writer and vice versa); it is stored in the file, so setting it
 * again is a no-op. foreign_keys is per connection and off by default in stock SQLite builds.
 *
 * synchronous is left at SQLite's default. better-sqlite3's build makes that NORMAL for a connection that opens a
 * database already in WAL mode (all but the one connection that switches a new file to WAL, which keeps FULL):
 * commits are not fsynced, only checkpoints are. That cannot corrupt the database, and an application crash loses
 * nothing; a power cut or OS crash can undo the last transactions, whose activities Temporal may already have
 * recorded as done. FULL would close that gap for about 0.2-0.3 ms a commit on the 2-core machine (issue 13
 * measured it; P3's raw baseline runs NORMAL too). Left as it was pending that decision.
 */
const CONNECTION_PRAGMAS = ['PRAGMA journal_mode = WAL', 'PRAGMA foreign_keys = ON'].join(';\n');

/** The better-sqlite3 driver adapter with the pragmas above applied to each connection it opens. */
export class WalSQLiteAdapterFactory extends PrismaBetterSQLite3 {
  constructor(url: string, busyTimeoutMs: number = BUSY_TIMEOUT_MS) {
    // better-sqlite3's `timeout` is sqlite3_busy_timeout: a writer waits for the lock instead of failing.
    super({ url: `file:${databaseFilePath(url)}`, timeout: busyTimeoutMs });
  }

  override async connect(): ReturnType<PrismaBetterSQLite3['connect']> {
    const adapter = await super.connect();
    await adapter.executeScript(CONNECTION_PRAGMAS);
    return adapter;
  }
}
