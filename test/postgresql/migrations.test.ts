/**
 * PostgreSQL's migrations and connection (ADR 0014): the runner that stands in for `prisma migrate deploy`, the
 * schema it produces, upgrading a database that holds plans, and the write lock's PostgreSQL twin.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { ulid } from 'ulid';
import { runCli } from '../../client/cli/main';
import { REPO_ROOT } from '../../config/paths';
import { planSpecSchema } from '../../domain/schemas';
import { createStores } from '../../storage';
import { isTransientStorageError } from '../../storage/errors';
import { claimWriteLock } from '../../storage/lock';
import { migrateDatabase, migratePostgres, readPostgresMigrations } from '../../storage/migrate';
import type { PostgresMigration } from '../../storage/migrate';
import { createPrismaClient, dialectOf } from '../../storage/prisma';
import { createPostgresTestDatabase } from '../helpers/database';

const PRISMA_CLI = path.join(REPO_ROOT, 'node_modules', 'prisma', 'build', 'index.js');

async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** Tables, columns with their types and defaults, indexes and constraints: what two schemas must share. */
async function structure(url: string): Promise<string[]> {
  const rows = await query<{ item: string }>(
    url,
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
              coalesce(column_default, '-') AS item
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
     UNION ALL
     SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
     UNION ALL
     SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
       WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations'
     ORDER BY 1`,
  );
  return rows.map((r) => r.item);
}

function prisma(
  args: string[],
  databaseUrl: string,
): { code: number | null; stdout: string; output: string } {
  const result = spawnSync(process.execPath, [PRISMA_CLI, ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      CHECKPOINT_DISABLE: '1',
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}` };
}

const migration = (name: string, sql: string): PostgresMigration => ({
  name,
  sql,
  checksum: createHash('sha256').update(sql).digest('hex'),
});

describe('the PostgreSQL migrations', () => {
  it('build the schema prisma/postgresql/schema.prisma describes', async () => {
    const migrated = await createPostgresTestDatabase();
    expect((await migrateDatabase(migrated)).applied).toEqual(readPostgresMigrations().map((m) => m.name));
    // The reference: the schema's own DDL, as `migrate diff` writes it from nothing.
    const fresh = await createPostgresTestDatabase();
    const ddl = prisma(
      [
        'migrate',
        'diff',
        '--from-empty',
        '--to-schema-datamodel',
        'prisma/postgresql/schema.prisma',
        '--script',
      ],
      fresh,
    );
    expect(ddl.code).toBe(0);
    await query(fresh, ddl.stdout);
    expect(await structure(migrated)).toEqual(await structure(fresh));
  });

  it('are recorded the way Prisma records them: `prisma migrate status` agrees, and a second run is a no-op', async () => {
    const url = await createPostgresTestDatabase();
    await migrateDatabase(url);
    expect((await migrateDatabase(url)).applied).toEqual([]);
    const rows = await query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      url,
      'SELECT migration_name, checksum, finished_at FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(
      readPostgresMigrations().map((m) => [m.name, m.checksum]),
    );
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
    const status = prisma(['migrate', 'status'], url);
    expect(status.output).toContain('Database schema is up to date!');
    expect(status.code).toBe(0);
  });

  it('upgrade a database that holds plans, keeping them, when a new migration arrives', async () => {
    const url = await createPostgresTestDatabase();
    const shipped = readPostgresMigrations();
    await migratePostgres(url, shipped);
    const client = createPrismaClient(url);
    try {
      const stores = createStores(client);
      const spec = planSpecSchema.parse({
        planId: ulid(),
        name: 'kept',
        actionName: 'local/example',
        description: '',
        projects: [{ projectName: 'local/demo', alias: 'demo', readOnly: false }],
        automationLevel: 'MANUAL',
        arguments: {},
        argumentsOrder: [],
        createdBy: 'tester',
        createdAt: new Date().toISOString(),
      });
      await stores.plans.recordPlanCreated({ spec, eventSeq: 0 });
      const next = migration(
        '29990101000000_add_note',
        'ALTER TABLE "plans" ADD COLUMN "note" TEXT NOT NULL DEFAULT \'none\';\n',
      );
      expect((await migratePostgres(url, [...shipped, next])).applied).toEqual([next.name]);
      const kept = await query<{ name: string; note: string }>(url, 'SELECT name, note FROM plans');
      expect(kept).toEqual([{ name: 'kept', note: 'none' }]);
      expect((await stores.plans.getPlan(spec.planId))?.name).toBe('kept');
    } finally {
      await client.$disconnect();
    }
  });

  it('roll a failing migration back whole and record nothing, naming it', async () => {
    const url = await createPostgresTestDatabase();
    const shipped = readPostgresMigrations();
    await migratePostgres(url, shipped);
    const broken = migration(
      '29990101000000_broken',
      'CREATE TABLE half_done (id TEXT);\nALTER TABLE no_such_table ADD COLUMN x TEXT;\n',
    );
    await expect(migratePostgres(url, [...shipped, broken])).rejects.toThrow(
      /migration 29990101000000_broken failed on postgresql:\/\/.* and was rolled back: relation "no_such_table" does not exist/,
    );
    expect(await query(url, "SELECT 1 FROM pg_tables WHERE tablename = 'half_done'")).toEqual([]);
    expect(
      await query(url, "SELECT 1 FROM _prisma_migrations WHERE migration_name = '29990101000000_broken'"),
    ).toEqual([]);
  });

  it('refuse a migration changed after it was applied, and a database migrated by a newer engine', async () => {
    const url = await createPostgresTestDatabase();
    const shipped = readPostgresMigrations();
    await migratePostgres(url, shipped);
    const [first, ...rest] = shipped as [PostgresMigration, ...PostgresMigration[]];
    const edited = migration(first.name, `${first.sql}\n-- edited afterwards\n`);
    await expect(migratePostgres(url, [edited, ...rest])).rejects.toThrow(
      new RegExp(`migration ${first.name} was changed after it was applied`),
    );
    await expect(migratePostgres(url, [])).rejects.toThrow(/has migrations this engine does not know/);
  });

  it('apply each migration once when two runners start together', async () => {
    const url = await createPostgresTestDatabase();
    const reports = await Promise.all([migrateDatabase(url), migrateDatabase(url), migrateDatabase(url)]);
    expect(reports.flatMap((r) => r.applied)).toEqual(readPostgresMigrations().map((m) => m.name));
    const rows = await query<{ n: string }>(url, 'SELECT count(*)::text AS n FROM _prisma_migrations');
    expect(rows).toEqual([{ n: String(readPostgresMigrations().length) }]);
  });

  it('say which database could not be reached, without its password', async () => {
    const unreachable = 'postgresql://agents:s3cret@127.0.0.1:1/agents';
    const err: unknown = await migrateDatabase(unreachable).catch((e: unknown) => e);
    expect(String(err)).toMatch(
      /cannot connect to the database postgresql:\/\/agents:\*\*\*@127\.0\.0\.1:1\/agents/,
    );
    expect(String(err)).not.toContain('s3cret');
  });
});

describe('the PostgreSQL connection', () => {
  it("holds a plan's writers to one at a time, and lets writers of other plans through", async () => {
    const url = await createPostgresTestDatabase();
    await migrateDatabase(url);
    const a = createPrismaClient(url);
    const b = createPrismaClient(url);
    try {
      expect(dialectOf(a)).toBe('postgresql');
      const order: string[] = [];
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked: () => void = () => undefined;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const first = a.$transaction(async (tx) => {
        expect(dialectOf(tx)).toBe('postgresql');
        await claimWriteLock(tx, 'plan-1');
        order.push('first has plan-1');
        locked();
        await held;
        order.push('first commits');
      });
      await isLocked;
      // Another plan's writer is not held up...
      await b.$transaction(async (tx) => {
        await claimWriteLock(tx, 'plan-2');
        order.push('other plan written');
      });
      // ...the same plan's waits for the first to commit.
      const second = b.$transaction(async (tx) => {
        await claimWriteLock(tx, 'plan-1');
        order.push('second has plan-1');
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      order.push('300 ms later');
      release();
      await Promise.all([first, second]);
      expect(order).toEqual([
        'first has plan-1',
        'other plan written',
        '300 ms later',
        'first commits',
        'second has plan-1',
      ]);
    } finally {
      await Promise.all([a.$disconnect(), b.$disconnect()]);
    }
  });

  it('tells the CLI user what is wrong: a database older than the engine, or one that does not answer', async () => {
    const url = await createPostgresTestDatabase();
    await migrateDatabase(url);
    await query(url, 'ALTER TABLE plans DROP COLUMN tags');
    const cli = async (databaseUrl: string) => {
      let stderr = '';
      const code = await runCli(['plan', 'list'], {
        stdout: () => undefined,
        stderr: (t) => (stderr += t),
        env: { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: '127.0.0.1:1' },
        isTty: false,
      });
      return { code, stderr };
    };
    expect(await cli(url)).toEqual({
      code: 5,
      stderr:
        'error: the database is older than this engine (it has no column plans.tags): upgrade it with ' +
        '`npm run db:migrate` (`npm start` does it too), then try again\n',
    });
    const down = await cli('postgresql://agents:s3cret@127.0.0.1:1/agents');
    expect(down.code).toBe(5);
    expect(down.stderr).toBe(
      "error: the database postgresql://agents:***@127.0.0.1:1/agents did not answer: Can't reach database server " +
        'at 127.0.0.1:1; check that it runs and that DATABASE_URL points at it (nothing was changed)\n',
    );
  });

  it('reports an unreachable server as a transient storage error', async () => {
    const client = createPrismaClient('postgresql://agents@127.0.0.1:1/agents');
    try {
      const err: unknown = await client.plan.count().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(isTransientStorageError(err)).toBe(true);
    } finally {
      await client.$disconnect();
    }
  });
});
