/**
 * Schema setup for `npm start`, the test global setup and CI. Both steps shell out to the Prisma CLI because
 * migrations and code generation live there, not in the client; neither imports the generated client, so they
 * can run before it exists.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { REPO_ROOT } from '../config/paths';
import { databaseFilePath, resolveDatabaseUrl } from './sqlite';

const PRISMA_CLI = path.join(REPO_ROOT, 'node_modules', 'prisma', 'build', 'index.js');
const SCHEMA_FILE = path.join(REPO_ROOT, 'prisma', 'schema.prisma');
const GENERATED_CLIENT = path.join(REPO_ROOT, 'storage', 'generated', 'prisma', 'client.ts');
const CLI_TIMEOUT_MS = 120_000;

/**
 * Applies every pending migration in prisma/migrations to the database (`prisma migrate deploy`; creates the
 * file when missing). Applied migrations are recorded in the database, so running it again is a no-op.
 * Throws with the CLI's output when it fails.
 */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const url = resolveDatabaseUrl(databaseUrl);
  checkDatabaseOpens(url);
  await runPrismaCli(['migrate', 'deploy'], url);
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
 * Runs `prisma generate` when storage/generated/prisma is missing or older than prisma/schema.prisma, so a
 * fresh clone works without a manual step and an unchanged schema costs nothing.
 */
export async function ensurePrismaClientGenerated(): Promise<void> {
  if (existsSync(GENERATED_CLIENT) && statSync(GENERATED_CLIENT).mtimeMs >= statSync(SCHEMA_FILE).mtimeMs) {
    return;
  }
  await runPrismaCli(['generate']);
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
