/**
 * Upgrading a database that already holds plans. The migration that added the seed 000 plan fields rebuilds the
 * plans table (SQLite cannot add a foreign key column otherwise), and the decision tree migration rebuilds the
 * decisions table, so these tests build a database at the migration before each with the real Prisma CLI, write
 * rows the way the old code did, migrate, and read them back.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ulid } from 'ulid';
import { runCli } from '../../client/cli/main';
import { planSpecSchema } from '../../domain/schemas';
import { createCatalogStore } from '../../storage/catalog';
import { createDecisionStore } from '../../storage/decisions';
import { createInvariantStore } from '../../storage/invariants';
import { migrateDatabase } from '../../storage/migrate';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import { REPO_ROOT } from '../../config/paths';

/** The last migration before the plan fields and the catalog, and the one under test. */
const PREVIOUS_MIGRATION = '20261130012007_init';
const UPGRADE_MIGRATION = '20261130021600_plan_fields_and_catalog';
/** Seed 004's decision fields and decision_contexts: rebuilds the decisions table. */
const DECISION_TREE_MIGRATION = '20261130023500_decision_tree';
const INVARIANTS_MIGRATION = '20261130042000_invariants';
const EXECUTION_POLICY_MIGRATION = '20261130233000_execution_policy';
/** Issue 15's seed details: Apply's statistics, the model behind a decision, an invariant's description. */
const SEED_DETAILS_MIGRATION = '20261201090000_seed_details';

const MIGRATIONS_DIR = path.join(REPO_ROOT, 'prisma', 'migrations');
const PRISMA_CLI = path.join(REPO_ROOT, 'node_modules', 'prisma', 'build', 'index.js');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the Prisma CLI and returns its whole output; fails the test with that output when the CLI fails. */
function prisma(args: string[], databaseUrl: string, { stdoutOnly = false } = {}): string {
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
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`prisma ${args.join(' ')} failed:\n${output}`);
  return stdoutOnly ? result.stdout : output;
}

/**
 * A Prisma config whose migrations folder stops at `last`, so `migrate deploy` builds the database exactly as a
 * release with those migrations did (including its _prisma_migrations rows), not an imitation of it.
 */
function configUpTo(last: string): string {
  const file = path.join(dir, `prisma-up-to-${last}.config.ts`);
  // One config per migration for the whole file: tests that start from the same release share it.
  if (existsSync(file)) return file;
  const migrations = path.join(dir, `migrations-up-to-${last}`);
  mkdirSync(migrations);
  cpSync(path.join(MIGRATIONS_DIR, 'migration_lock.toml'), path.join(migrations, 'migration_lock.toml'));
  for (const name of readdirSync(MIGRATIONS_DIR).filter((n) => /^\d{14}_/.test(n) && n <= last)) {
    cpSync(path.join(MIGRATIONS_DIR, name), path.join(migrations, name), { recursive: true });
  }
  writeFileSync(
    file,
    [
      `import { WalSQLiteAdapterFactory } from ${JSON.stringify(path.join(REPO_ROOT, 'storage', 'sqlite'))};`,
      'export default {',
      '  experimental: { adapter: true },',
      "  engine: 'js',",
      "  adapter: async () => new WalSQLiteAdapterFactory(process.env.DATABASE_URL ?? ''),",
      `  schema: ${JSON.stringify(path.join(REPO_ROOT, 'prisma', 'schema.prisma'))},`,
      `  migrations: { path: ${JSON.stringify(migrations)} },`,
      '};',
      '',
    ].join('\n'),
  );
  return file;
}

function columns(db: Database.Database, table: string): string[] {
  return (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
}

/** Prisma's SQLite adapter stores DateTime as ISO text with an explicit offset. */
const sqliteTime = (iso: string) => iso.replace('Z', '+00:00');

/** Tables, columns, indexes and foreign keys as SQLite reports them, without Prisma's own bookkeeping table. */
function structure(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ?",
      )
      .pluck()
      .all('_prisma_migrations') as string[];
    return Object.fromEntries(
      tables.sort().map((table) => [
        table,
        {
          columns: db.pragma(`table_info("${table}")`),
          indexes: (db.pragma(`index_list("${table}")`) as { name: string; unique: number; origin: string }[])
            .map(({ name, unique, origin }) => ({
              name,
              unique,
              origin,
              on: db.pragma(`index_info("${name}")`),
            }))
            .sort((a, b) => a.name.localeCompare(b.name)),
          foreignKeys: db.pragma(`foreign_key_list("${table}")`),
        },
      ]),
    );
  } finally {
    db.close();
  }
}

/**
 * Whether the migrations and schema.prisma agree: the migrated database must have the structure of one created
 * straight from the schema. (`db push` would say so too, but its process lingers a minute after answering.)
 */
function assertMatchesSchema(file: string): void {
  const fromSchema = path.join(dir, `${path.basename(file)}.from-schema.db`);
  const script = prisma(
    [
      'migrate',
      'diff',
      '--from-empty',
      '--to-schema-datamodel',
      path.join(REPO_ROOT, 'prisma', 'schema.prisma'),
      '--script',
    ],
    `file:${fromSchema}`,
    { stdoutOnly: true },
  );
  const db = new Database(fromSchema);
  try {
    db.exec(script);
  } finally {
    db.close();
  }
  expect(structure(file)).toEqual(structure(fromSchema));
}

describe(`migration ${UPGRADE_MIGRATION}`, () => {
  let client: PrismaClient | undefined;
  afterAll(async () => client?.$disconnect());

  it('upgrades a database with plans, events and decisions, keeping them and filling the new fields', async () => {
    const file = path.join(dir, 'old.db');
    const databaseUrl = `file:${file}`;
    prisma(['migrate', 'deploy', '--config', configUpTo(PREVIOUS_MIGRATION)], databaseUrl);

    const planId = ulid();
    const decisionId = ulid();
    const createdAt = '2026-01-02T03:04:05.678Z';
    const updatedAt = '2026-01-02T03:05:00.000Z';
    const old = new Database(file);
    try {
      expect(columns(old, 'plans')).not.toContain('tags');
      // Written as the previous release's store wrote it, including an alias from before seed 000's alias rule.
      old
        .prepare(
          `INSERT INTO plans (plan_id, workflow_id, name, action_name, description, automation_level, phase, state,
             project_links, arguments, arguments_order, error_type, error_message, error_details, error_at,
             decision_root_id, created_by, created_at, updated_at)
           VALUES (?, ?, 'Old plan', 'local/code-review', 'from before', 'MANUAL', 'EXECUTE', 'ERRORED', ?, ?, ?,
             'ActorError', 'boom', NULL, ?, ?, 'alice', ?, ?)`,
        )
        .run(
          planId,
          `plan-${planId}`,
          JSON.stringify([
            { projectName: 'org/parser', alias: 'Main Repo', readOnly: false },
            { projectName: 'org/docs', alias: null, readOnly: true },
          ]),
          JSON.stringify({ target: 'src', depth: 2 }),
          JSON.stringify(['target', 'depth']),
          sqliteTime(updatedAt),
          decisionId,
          sqliteTime(createdAt),
          sqliteTime(updatedAt),
        );
      old
        .prepare(
          `INSERT INTO plan_events (plan_id, sequence_number, event_type, phase, state, actor, message, at)
           VALUES (?, 0, 'PLAN_CREATED', 'STRATEGIZE', 'QUEUED', 'alice', NULL, ?),
                  (?, 1, 'PHASE_FAILED', 'EXECUTE', 'ERRORED', 'workflow', 'boom', ?)`,
        )
        .run(planId, sqliteTime(createdAt), planId, sqliteTime(updatedAt));
      old
        .prepare(
          `INSERT INTO decisions (decision_id, plan_id, sequence_number, parent_decision_id, decision_type, phase,
             question, chosen_option, alternatives_considered, confidence_score, rationale, actor, created_at)
           VALUES (?, ?, 0, NULL, 'prompt_definition', 'STRATEGIZE', 'what?', 'this', '[]', NULL, 'asked', 'alice', ?)`,
        )
        .run(decisionId, planId, sqliteTime(createdAt));
    } finally {
      old.close();
    }

    await migrateDatabase(databaseUrl);

    const migrated = new Database(file);
    try {
      const applied = migrated
        .prepare('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY 1')
        .all() as { migration_name: string }[];
      expect(applied.map((m) => m.migration_name)).toEqual(
        expect.arrayContaining([PREVIOUS_MIGRATION, UPGRADE_MIGRATION]),
      );
      // The rebuild drops the old plans table: with foreign keys on, that would have cascaded to the children.
      expect(migrated.pragma('foreign_key_check')).toEqual([]);
      expect(migrated.prepare('SELECT invariants, tags, sandbox_refs, depth FROM plans').get()).toEqual({
        invariants: '[]',
        tags: '[]',
        sandbox_refs: '[]',
        depth: 0,
      });
    } finally {
      migrated.close();
    }
    expect(prisma(['migrate', 'status'], databaseUrl)).toMatch(/Database schema is up to date/);
    assertMatchesSchema(file);

    client = createPrismaClient(databaseUrl);
    const store = createPlanStore(client);
    expect(await store.getPlan(planId)).toEqual({
      planId,
      workflowId: `plan-${planId}`,
      name: 'Old plan',
      actionName: 'local/code-review',
      description: 'from before',
      projects: [
        { projectName: 'org/parser', alias: 'Main Repo', readOnly: false },
        { projectName: 'org/docs', alias: null, readOnly: true },
      ],
      automationLevel: 'MANUAL',
      arguments: { target: 'src', depth: 2 },
      argumentsOrder: ['target', 'depth'],
      definitionOfDone: null,
      automationProfileName: null,
      effectiveProfileSnapshot: null,
      invariants: [],
      actors: { strategyActor: null, executionActor: null, estimationActor: null, invariantActor: null },
      tags: [],
      phase: 'EXECUTE',
      state: 'ERRORED',
      changesetId: null,
      sandboxRefs: [],
      validationSummary: null,
      decisionRootId: decisionId,
      error: { type: 'ActorError', message: 'boom', details: null, at: updatedAt },
      parentPlanId: null,
      gate: null,
      paused: null,
      rootPlanId: null,
      depth: 0,
      childPlanIds: [],
      createdBy: 'alice',
      createdAt,
      updatedAt,
      applyStatistics: null,
    });
    expect((await store.listEvents(planId)).map((e) => [e.seq, e.type])).toEqual([
      [0, 'PLAN_CREATED'],
      [1, 'PHASE_FAILED'],
    ]);
    expect(await store.listDecisions(planId)).toEqual([
      expect.objectContaining({ decisionId, planId, seq: 0, type: 'prompt_definition', createdAt }),
    ]);
    expect((await store.listPlans({ projectName: 'org/parser' })).map((p) => p.planId)).toEqual([planId]);

    // The rebuilt table's new foreign key works against rows that were there before it.
    const child = planSpecSchema.parse({
      planId: ulid(),
      name: 'Follow-up',
      actionName: 'local/code-review',
      projects: [{ projectName: 'org/parser' }],
      automationLevel: 'MANUAL',
      parentPlanId: planId,
      rootPlanId: planId,
      depth: 1,
      createdAt: '2026-02-01T00:00:00.000Z',
    });
    await store.recordPlanCreated({ spec: child, eventSeq: 0 });
    expect((await store.getPlan(planId))?.childPlanIds).toEqual([child.planId]);
  });

  it('leaves a fresh database up to date and equal to schema.prisma', async () => {
    const file = path.join(dir, 'fresh.db');
    await migrateDatabase(`file:${file}`);
    expect(prisma(['migrate', 'status'], `file:${file}`)).toMatch(/Database schema is up to date/);
    assertMatchesSchema(file);
  });
});

describe(`migration ${DECISION_TREE_MIGRATION}`, () => {
  let client: PrismaClient | undefined;
  afterAll(async () => client?.$disconnect());

  it('upgrades a database with a decision tree, keeping it and deriving the downstream lists', async () => {
    const file = path.join(dir, 'before-decision-tree.db');
    const databaseUrl = `file:${file}`;
    prisma(['migrate', 'deploy', '--config', configUpTo(UPGRADE_MIGRATION)], databaseUrl);

    const planId = ulid();
    // Ids in sequence order: 0 is the root, 1 and 2 hang under it, 3 under 1.
    const ids = [ulid(), ulid(), ulid(), ulid()] as [string, string, string, string];
    const createdAt = '2026-02-03T04:05:06.789Z';
    const old = new Database(file);
    try {
      expect(columns(old, 'decisions')).not.toContain('superseded_by');
      old
        .prepare(
          `INSERT INTO plans (plan_id, workflow_id, name, action_name, description, automation_level, phase, state,
             project_links, arguments, arguments_order, decision_root_id, created_by, created_at, updated_at,
             invariants, tags, sandbox_refs)
           VALUES (?, ?, 'Tree plan', 'local/code-review', '', 'MANUAL', 'EXECUTE', 'PROCESSING', ?, '{}', '[]', ?,
             'alice', ?, ?, '[]', '[]', '[]')`,
        )
        .run(
          planId,
          `plan-${planId}`,
          JSON.stringify([{ projectName: 'org/parser', alias: null, readOnly: false }]),
          ids[0],
          sqliteTime(createdAt),
          sqliteTime(createdAt),
        );
      old
        .prepare(
          `INSERT INTO plan_events (plan_id, sequence_number, event_type, phase, state, actor, message, at)
           VALUES (?, 0, 'PLAN_CREATED', 'STRATEGIZE', 'QUEUED', 'alice', NULL, ?),
                  (?, 1, 'PHASE_STARTED', 'EXECUTE', 'PROCESSING', 'workflow', NULL, ?)`,
        )
        .run(planId, sqliteTime(createdAt), planId, sqliteTime(createdAt));
      const insert = old.prepare(
        `INSERT INTO decisions (decision_id, plan_id, sequence_number, parent_decision_id, decision_type, phase,
           question, chosen_option, alternatives_considered, confidence_score, rationale, actor, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'because', 'workflow', ?)`,
      );
      // Inserted out of sequence order: the downstream lists must still come out in sequence order.
      for (const [seq, parent, type, phase] of [
        [0, null, 'prompt_definition', 'STRATEGIZE'],
        [2, 0, 'invariant_enforced', 'STRATEGIZE'],
        [1, 0, 'strategy_choice', 'STRATEGIZE'],
        [3, 1, 'implementation_choice', 'EXECUTE'],
      ] as const) {
        insert.run(
          ids[seq],
          planId,
          seq,
          parent === null ? null : ids[parent],
          type,
          phase,
          `question ${seq}`,
          `option ${seq}`,
          JSON.stringify([`alternative ${seq}`]),
          seq === 0 ? null : 0.75,
          sqliteTime(createdAt),
        );
      }
    } finally {
      old.close();
    }

    await migrateDatabase(databaseUrl);

    const migrated = new Database(file);
    try {
      const applied = migrated
        .prepare('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY 1')
        .all() as { migration_name: string }[];
      expect(applied.map((m) => m.migration_name)).toEqual(
        expect.arrayContaining([UPGRADE_MIGRATION, DECISION_TREE_MIGRATION]),
      );
      // The rebuild drops the old decisions table; with foreign keys on, that would have broken the parent links.
      expect(migrated.pragma('foreign_key_check')).toEqual([]);
      expect(
        migrated
          .prepare(
            `SELECT sequence_number AS seq, relevant_resources, downstream_decision_ids, downstream_plan_ids,
               artifacts_produced, is_correction, superseded_by, hot_context_hash
             FROM decisions ORDER BY sequence_number`,
          )
          .all(),
      ).toEqual(
        [
          [0, JSON.stringify([ids[1], ids[2]])],
          [1, JSON.stringify([ids[3]])],
          [2, '[]'],
          [3, '[]'],
        ].map(([seq, downstream]) => ({
          seq,
          relevant_resources: '[]',
          downstream_decision_ids: downstream,
          downstream_plan_ids: '[]',
          artifacts_produced: '[]',
          is_correction: 0,
          superseded_by: null,
          hot_context_hash: null,
        })),
      );
    } finally {
      migrated.close();
    }
    expect(prisma(['migrate', 'status'], databaseUrl)).toMatch(/Database schema is up to date/);
    assertMatchesSchema(file);

    client = createPrismaClient(databaseUrl);
    const plans = createPlanStore(client);
    const decisions = createDecisionStore(client);
    expect(await decisions.getDecision(ids[1])).toEqual({
      decisionId: ids[1],
      planId,
      seq: 1,
      parentDecisionId: ids[0],
      type: 'strategy_choice',
      phase: 'STRATEGIZE',
      question: 'question 1',
      chosenOption: 'option 1',
      alternatives: ['alternative 1'],
      confidence: 0.75,
      hotContextHash: null,
      hotContextRef: null,
      relevantResources: [],
      actorStateRef: null,
      rationale: 'because',
      actorReasoning: null,
      downstreamDecisionIds: [ids[3]],
      downstreamPlanIds: [],
      artifactsProduced: [],
      isCorrection: false,
      correctsDecisionId: null,
      correctionReason: null,
      supersededBy: null,
      modelName: null,
      promptTokens: null,
      completionTokens: null,
      actor: 'workflow',
      createdAt,
    });
    expect((await decisions.getTree(planId)).nodes.map((n) => [n.decision.seq, n.depth])).toEqual([
      [0, 0],
      [1, 1],
      [2, 1],
      [3, 2],
    ]);

    // The old tree takes new decisions with contexts, and corrections.
    const at = '2026-02-03T05:00:00.000Z';
    const { decisionIds } = await plans.recordPlanState({
      planId,
      eventSeq: 2,
      at,
      event: 'PHASE_COMPLETED',
      phase: 'EXECUTE',
      state: 'COMPLETE',
      recordedBy: 'workflow',
      message: null,
      error: null,
      decisions: [
        {
          seq: 4,
          draft: {
            type: 'tool_invocation',
            question: 'which tool?',
            chosenOption: 'lint',
            alternatives: [],
            confidence: 0.5,
            rationale: 'fast',
            parentSeq: 3,
            phase: 'EXECUTE',
            actor: 'workflow',
            context: { content: { tools: ['lint', 'test'] } },
          },
        },
      ],
    });
    const added = await decisions.getDecision(decisionIds[4] as string);
    expect(await decisions.getContext(added.hotContextRef as string)).toBe('{"tools":["lint","test"]}');
    expect((await decisions.getDecision(ids[3])).downstreamDecisionIds).toEqual([added.decisionId]);
    const { correction } = await decisions.correct({
      planId,
      decisionId: ids[1],
      interventionSeq: 5,
      correctionSeq: 6,
      by: 'bob',
      chosenOption: 'another strategy',
      reason: 'changed my mind',
      at,
    });
    expect((await decisions.getTree(planId)).nodes.map((n) => n.decision.seq)).toEqual([0, 2, 5, 6]);
    expect((await decisions.getDecision(ids[1])).supersededBy).toBe(correction.decisionId);
  });
});

describe(`migration ${EXECUTION_POLICY_MIGRATION}`, () => {
  let client: PrismaClient | undefined;
  afterAll(async () => client?.$disconnect());

  it('reads actions and plans stored before execution policies with the cautious defaults', async () => {
    const file = path.join(dir, 'before-policies.db');
    const databaseUrl = `file:${file}`;
    prisma(['migrate', 'deploy', '--config', configUpTo(INVARIANTS_MIGRATION)], databaseUrl);
    const at = '2026-11-30T12:00:00.000Z';
    const db = new Database(file);
    try {
      db.prepare(
        `INSERT INTO actions (name, description, arguments, default_automation_level, default_profile, actors,
           invariants, definition_of_done, tags, steps, validation, built_in, created_at, updated_at)
         VALUES ('local/old', '', '[]', 'MANUAL', NULL, ?, '[]', NULL, '[]', '[]', NULL, 0, ?, ?)`,
      ).run(
        JSON.stringify({
          strategyActor: null,
          executionActor: null,
          estimationActor: null,
          invariantActor: null,
        }),
        sqliteTime(at),
        sqliteTime(at),
      );
    } finally {
      db.close();
    }
    prisma(['migrate', 'deploy'], databaseUrl);
    assertMatchesSchema(file);

    client = createPrismaClient(databaseUrl);
    const stored = await createCatalogStore(client).getAction('local/old');
    expect(stored?.value.execution).toEqual({ network: false, unattendedCommands: false, ignore: [] });
    expect(columns(new Database(file, { readonly: true }), 'plans')).toContain('execution_policy');
  });
});

describe(`migration ${SEED_DETAILS_MIGRATION}`, () => {
  let client: PrismaClient | undefined;
  afterAll(async () => client?.$disconnect());

  it('reads plans, decisions and invariants stored before it with no statistics, no model and no description', async () => {
    const file = path.join(dir, 'before-seed-details.db');
    const databaseUrl = `file:${file}`;
    prisma(['migrate', 'deploy', '--config', configUpTo(EXECUTION_POLICY_MIGRATION)], databaseUrl);
    const at = sqliteTime('2026-12-01T08:00:00.000Z');
    const planId = ulid();
    const decisionId = ulid();
    const invariantId = ulid();
    const db = new Database(file);
    try {
      db.prepare(
        `INSERT INTO plans (plan_id, workflow_id, name, action_name, description, automation_level, phase, state,
           project_links, arguments, arguments_order, created_by, created_at, updated_at, invariants, tags,
           action_steps, sandbox_refs, validation_summary, changeset_id)
         VALUES (?, ?, 'old', 'local/old', '', 'MANUAL', 'APPLIED', 'COMPLETE', '[]', '{}', '[]', 'ada', ?, ?,
           '[]', '[]', '[]', '[]', 'no validation command; applied: 1 created, 0 modified, 0 deleted, 0 moved', NULL)`,
      ).run(planId, `plan-${planId}`, at, at);
      db.prepare(
        `INSERT INTO decisions (decision_id, plan_id, sequence_number, decision_type, phase, question, chosen_option,
           alternatives_considered, rationale, actor, created_at, relevant_resources, downstream_decision_ids,
           downstream_plan_ids, artifacts_produced)
         VALUES (?, ?, 0, 'prompt_definition', 'STRATEGIZE', 'q', 'o', '[]', 'r', 'ada', ?, '[]', '[]', '[]', '[]')`,
      ).run(decisionId, planId, at);
      db.prepare(
        `INSERT INTO invariants (invariant_id, text, scope, target, rule, author, created_at)
         VALUES (?, 'Keep it', 'GLOBAL', NULL, NULL, 'ada', ?)`,
      ).run(invariantId, at);
    } finally {
      db.close();
    }
    prisma(['migrate', 'deploy'], databaseUrl);
    assertMatchesSchema(file);

    client = createPrismaClient(databaseUrl);
    expect(await createPlanStore(client).getPlan(planId)).toMatchObject({
      validationSummary: 'no validation command; applied: 1 created, 0 modified, 0 deleted, 0 moved',
      applyStatistics: null,
    });
    expect(await createDecisionStore(client).getDecision(decisionId)).toMatchObject({
      modelName: null,
      promptTokens: null,
      completionTokens: null,
    });
    expect(await createInvariantStore(client).get(invariantId)).toMatchObject({
      text: 'Keep it',
      description: null,
    });
  });
});

describe('a database older than the engine', () => {
  it('makes the CLI say how to upgrade it, not print a Prisma stack', async () => {
    const file = path.join(dir, 'not-upgraded.db');
    prisma(['migrate', 'deploy', '--config', configUpTo(INVARIANTS_MIGRATION)], `file:${file}`);
    let stdout = '';
    let stderr = '';
    const code = await runCli(['plan', 'list'], {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      env: { DATABASE_URL: `file:${file}` },
      isTty: false,
    });
    expect({ code, stdout, stderr }).toEqual({
      code: 5,
      stdout: '',
      stderr:
        'error: the database is older than this engine (it has no column plans.execution_policy): upgrade it ' +
        'with `npm run db:migrate` (`npm start` does it too), then try again\n',
    });
  });
});
