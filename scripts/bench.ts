/**
 * `npm run bench`: speed targets measured as ratios against a baseline run in the same process, so a noisy,
 * shared machine changes both sides alike. Absolute figures are printed for the record, never asserted.
 *
 * Target (issue 5): `plan tree --format json` of a 10,000-decision plan in well under a second.
 *   baseline: read the plan's decision rows and JSON.stringify them as they are
 *   subject:  read them through the decision store, build the tree breadth-first, render the json rows
 *
 * P7 (issue 13): the CLI's cold start for commands that read only the database.
 *   baseline: `node -e 0`, a Node process that does nothing
 *   subject:  `node bin/agents.js plan list`, `project list` and `plan show` against the bench database (and a
 *             dev server holding the plan's workflow), run from dist/ after building it when stale
 * Rounds are interleaved (baseline, then each command), so a busy machine slows all of them alike.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ulid } from 'ulid';
import type { DecisionWrite } from '../activities/contracts';
import type { DecisionType } from '../domain/decision';
import { planSpecSchema } from '../domain/schemas';
import { treeRows } from '../client/render/tree-view';
import { createDecisionStore } from '../storage/decisions';
import { migrateDatabase } from '../storage/migrate';
import { createPlanStore } from '../storage/plans';
import { createPrismaClient } from '../storage/prisma';
import { REPO_ROOT } from '../config/paths';
import { planWorkflowId } from '../domain/ids';
import { checkBuild } from './build-freshness';
import { ensureCliBuilt } from './cli-build';
import { searchAttributeArgs } from './dev-server';
import { ensureTemporalCli } from './temporal-cli';

const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const BATCH = 500;
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 7);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function time(run: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** A bushy tree like a long plan's: strategy choices under the root, implementation steps under those, and so on. */
function decisionBatch(first: number, count: number): DecisionWrite[] {
  const types: DecisionType[] = [
    'strategy_choice',
    'implementation_choice',
    'resource_selection',
    'tool_invocation',
  ];
  const writes: DecisionWrite[] = [];
  for (let seq = first; seq < first + count; seq++) {
    const root = seq === 0;
    writes.push({
      seq,
      draft: {
        type: root ? 'prompt_definition' : (types[seq % types.length] as DecisionType),
        question: `question ${seq}`,
        chosenOption: `option ${seq}`,
        alternatives: [`alternative ${seq}a`, `alternative ${seq}b`],
        confidence: root ? null : (seq % 100) / 100,
        rationale: `because ${seq}`,
        // Each decision hangs under one of the decisions before it: about 5 children per parent.
        parentSeq: root ? null : Math.floor((seq - 1) / 5),
        phase: 'STRATEGIZE',
        actor: 'bench',
      },
    });
  }
  return writes;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agents-bench-'));
  const url = `file:${path.join(dir, 'bench.db')}`;
  await migrateDatabase(url);
  const prisma = createPrismaClient(url);
  try {
    const plans = createPlanStore(prisma);
    const decisions = createDecisionStore(prisma);
    const planId = ulid();
    await plans.recordPlanCreated({
      eventSeq: 0,
      spec: planSpecSchema.parse({
        planId,
        name: 'bench',
        actionName: 'local/example',
        projects: [{ projectName: 'local/demo' }],
        automationLevel: 'FULL_AUTOMATION',
        createdAt: new Date().toISOString(),
      }),
    });
    const loadMs = await time(async () => {
      for (let first = 0, eventSeq = 1; first < DECISIONS; first += BATCH, eventSeq++) {
        await plans.recordPlanState({
          planId,
          eventSeq,
          at: new Date().toISOString(),
          event: 'PHASE_STARTED',
          phase: 'STRATEGIZE',
          state: 'PROCESSING',
          recordedBy: 'bench',
          message: null,
          error: null,
          decisions: decisionBatch(first, Math.min(BATCH, DECISIONS - first)),
        });
      }
    });

    const baseline: number[] = [];
    const subject: number[] = [];
    let bytes = 0;
    for (let i = 0; i < RUNS; i++) {
      baseline.push(
        await time(async () => {
          const rows = await prisma.decision.findMany({ where: { planId }, orderBy: { seq: 'asc' } });
          JSON.stringify(rows);
        }),
      );
      subject.push(
        await time(async () => {
          const tree = await decisions.getTree(planId);
          bytes = JSON.stringify({ plan_id: planId, nodes: treeRows(tree) }, null, 2).length;
        }),
      );
    }
    const b = median(baseline);
    const s = median(subject);
    console.log(`decisions: ${DECISIONS} (written in ${Math.round(loadMs)} ms, batches of ${BATCH})`);
    console.log(`baseline  read rows + JSON.stringify:          median ${b.toFixed(1)} ms over ${RUNS} runs`);
    console.log(
      `plan tree read + build tree + json rendering:  median ${s.toFixed(1)} ms (${bytes} bytes of JSON)`,
    );
    console.log(`ratio subject/baseline: ${(s / b).toFixed(2)}`);
    await cliColdStart(url, planId);
  } finally {
    await prisma.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Wall time of one process, start to exit; a failing command fails the bench rather than timing an error. */
function spawnMs(args: string[], env: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: REPO_ROOT, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

/**
 * `plan show` also asks Temporal for the plan's workflow: a dev server on free ports holds one, started on a task
 * queue no worker polls, so it stays running for `describe` without executing anything.
 */
async function cliColdStart(databaseUrl: string, planId: string): Promise<void> {
  ensureCliBuilt((line) => console.log(`\n${line}`));
  const build = checkBuild(REPO_ROOT);
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: await ensureTemporalCli() },
      ip: '127.0.0.1',
      extraArgs: searchAttributeArgs(),
    },
  });
  try {
    await temporal.client.workflow.start('planWorkflow', {
      workflowId: planWorkflowId(planId),
      taskQueue: 'bench-no-worker',
      args: [],
    });
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace ?? 'default',
    };
    const agents = path.join(REPO_ROOT, 'bin', 'agents.js');
    const commands = [
      ['plan', 'list', '--format', 'json'],
      ['project', 'list', '--format', 'json'],
      ['plan', 'show', planId, '--format', 'json'],
    ];
    const baseline: number[] = [];
    const subjects = commands.map(() => [] as number[]);
    for (let round = 0; round < CLI_RUNS; round++) {
      baseline.push(spawnMs(['-e', '0'], env));
      commands.forEach((command, i) => subjects[i]?.push(spawnMs([agents, ...command], env)));
    }
    const b = median(baseline);
    const from = build.fresh ? 'compiled dist/' : `sources through tsx: ${build.reason}`;
    console.log(`\nP7 CLI cold start (${from}), median of ${CLI_RUNS} interleaved rounds`);
    console.log(`baseline  node -e 0:                         ${b.toFixed(0)} ms`);
    commands.forEach((command, i) => {
      const ms = median(subjects[i] ?? []);
      console.log(
        `agents ${command.slice(0, 2).join(' ').padEnd(36)} ${ms.toFixed(0)} ms  ratio ${(ms / b).toFixed(1)}`,
      );
    });
  } finally {
    await temporal.teardown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
