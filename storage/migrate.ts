/**
 * Schema setup for `npm start`, the test global setup and CI. Both steps shell out to the Prisma CLI because
 * migrations and code generation live there, not in the client; neither imports the generated client, so they
 * can run before it exists.
 */
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { REPO_ROOT } from '../config/paths';
import { dialectOfUrl, redactDatabaseUrl, resolveDatabaseUrl } from './database-url';
import { postgresPoolConfig } from './postgres';
import { POSTGRES_SCHEMA_FILE, SQLITE_SCHEMA_FILE } from './schema-variants';
import { databaseFilePath } from './sqlite';

const PRISMA_CLI = path.join(REPO_ROOT, 'node_modules', 'prisma', 'build', 'index.js');
const GENERATED_CLIENTS = [
  { schema: SQLITE_SCHEMA_FILE, client: path.join(REPO_ROOT, 'storage', 'generated', 'prisma', 'client.ts') },
  {
    schema: POSTGRES_SCHEMA_FILE,
    client: path.join(REPO_ROOT, 'storage', 'generated', 'prisma-pg', 'client.ts'),
  },
];
export const POSTGRES_MIGRATIONS_DIR = path.join(REPO_ROOT, 'prisma', 'postgresql', 'migrations');
const CLI_TIMEOUT_MS = 120_000;

/**
 * Applies every pending migration to the database; applied migrations are recorded in it (`_prisma_migrations`),
 * so running it again is a no-op. SQLite: prisma/migrations through `prisma migrate deploy` (creates the file when
 * missing; throws with the CLI's output when it fails). PostgreSQL: prisma/postgresql/migrations through
 * migratePostgres, because the WASM schema engine cannot run `migrate deploy` there (ADR 0013).
 */
export async function migrateDatabase(databaseUrl: string): Promise<MigrationReport> {
  const url = resolveDatabaseUrl(databaseUrl);
  if (dialectOfUrl(url) === 'postgresql') return migratePostgres(url);
  checkDatabaseOpens(url);
  const output = await runPrismaCli(['migrate', 'deploy'], url);
  // `migrate deploy` lists what it applied as a tree: `└─ 20261130012007_init/` over `└─ migration.sql`.
  return { applied: [...output.matchAll(/└─ (\d{14}_[^/\s]+)\//g)].map((m) => m[1] ?? '') };
}

export interface MigrationReport {
  /** The migrations this call applied, oldest first (empty: the database was up to date). */
  applied: string[];
}

/**
 * Prisma's own bookkeeping table, as `prisma migrate deploy` creates it on PostgreSQL, so `prisma migrate status`
 * (on a machine whose schema engine can run it) and a later switch to `migrate deploy` agree with this runner.
 */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** The advisory lock key `prisma migrate deploy` takes, so this runner and Prisma's never migrate at once. */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

export interface PostgresMigration {
  name: string;
  sql: string;
  /** SHA-256 of migration.sql, hex: what Prisma stores in `_prisma_migrations.checksum`. */
  checksum: string;
}

export function readPostgresMigrations(dir: string = POSTGRES_MIGRATIONS_DIR): PostgresMigration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const bytes = readFileSync(path.join(dir, name, 'migration.sql'));
      return {
        name,
        sql: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      };
    });
}

/**
 * Applies prisma/postgresql/migrations in name order, each in one transaction together with its
 * `_prisma_migrations` row: PostgreSQL's DDL is transactional, so a migration that fails leaves neither a
 * half-changed schema nor a row, and the error names it. Holds Prisma's migration lock throughout, so two
 * runners (two deployments starting at once) apply each migration once. An applied migration whose file changed
 * since is refused: the database would no longer match what the files say.
 */
export async function migratePostgres(
  databaseUrl: string,
  migrations: readonly PostgresMigration[] = readPostgresMigrations(),
): Promise<MigrationReport> {
  const { pool, schema } = postgresPoolConfig(databaseUrl);
  const client = new pg.Client(pool);
  const where = redactDatabaseUrl(databaseUrl);
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`cannot connect to the database ${where}: ${(err as Error).message}`, { cause: err });
  }
  try {
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
    await client.query(CREATE_MIGRATIONS_TABLE);
    const rows = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations"
       WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.rows.map((row) => [row.migration_name, row.checksum]));
    const known = new Set(migrations.map((m) => m.name));
    const unknown = [...applied.keys()].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new Error(
        `the database ${where} has migrations this engine does not know (${unknown.join(', ')}): ` +
          'it was migrated by a newer engine; run that version, or restore a backup',
      );
    }
    const done: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(
            `migration ${migration.name} was changed after it was applied to ${where}; ` +
              'migrations are append-only: restore its file and add a new migration instead',
          );
        }
        continue;
      }
      await applyPostgresMigration(client, migration, where);
      done.push(migration.name);
    }
    return { applied: done };
  } finally {
    // Ending the session releases the advisory lock too.
    await client.end().catch(() => undefined);
  }
}

async function applyPostgresMigration(client: pg.Client, migration: PostgresMigration, where: string) {
  const started = new Date();
  try {
    await client.query('BEGIN');
    // A multi-statement string goes through the simple query protocol: the whole file runs as written.
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations"
         (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
       VALUES ($1, $2, now(), $3, NULL, NULL, $4, 1)`,
      [randomUUID(), migration.checksum, migration.name, started],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(
      `migration ${migration.name} failed on ${where} and was rolled back: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * The WASM schema engine reports driver failures as "External error id#0", without SQLite's message. Opening the
 * file here first turns the common cases (not a database, unwritable folder, locked) into a readable error.
 */
function checkDatabaseOpens(url: string): void {
  const file = databaseFilePath(url);
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    db.pragma('schema_version');
  } catch (err) {
    throw new Error(`cannot open the database ${file}: ${(err as Error).message}`, { cause: err });
  } finally {
    db?.close();
  }
}

/**
 * Runs `prisma generate` for each backend whose client in storage/generated is missing or older than its schema,
 * so a fresh clone works without a manual step and an unchanged schema costs nothing.
 */
export async function ensurePrismaClientGenerated(): Promise<void> {
  for (const { schema, client } of GENERATED_CLIENTS) {
    if (existsSync(client) && statSync(client).mtimeMs >= statSync(schema).mtimeMs) continue;
    await runPrismaCli(['generate', '--schema', path.relative(REPO_ROOT, schema)]);
  }
}

function runPrismaCli(args: string[], databaseUrl?: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The machines are offline: skip the version check and update notice instead of waiting for them to fail.
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  };
  if (databaseUrl !== undefined) {
    env.DATABASE_URL = databaseUrl;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PRISMA_CLI, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: CLI_TIMEOUT_MS,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (err) =>
      reject(new Error(`prisma ${args.join(' ')} could not start: ${err.message}`, { cause: err })),
    );
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve(output);
        return;
      }
      const how = signal !== null ? `was killed (${signal})` : `exited with code ${code}`;
      reject(new Error(`prisma ${args.join(' ')} ${how}:\n${output.trim()}`));
    });
  });
}
