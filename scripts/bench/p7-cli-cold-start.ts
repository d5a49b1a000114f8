/**
 * P7 (issue 13): the CLI's cold start.
 *   baseline: `node -e 0`, a Node process that does nothing
 *   subject:  `node bin/agents.js plan list`, `project list` and `plan show`, run from dist/ after building it
 *             when stale (the table says which path ran); `plan show` also asks Temporal, so a dev server on free
 *             ports holds the plan's workflow, started on a task queue no worker polls
 * Rounds are interleaved (baseline, then each command), so a busy machine slows all of them alike.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ulid } from 'ulid';
import { REPO_ROOT } from '../../config/paths';
import { planWorkflowId } from '../../domain/ids';
import { planSpecSchema } from '../../domain/schemas';
import { createStores } from '../../storage';
import { migrateDatabase } from '../../storage/migrate';
import { createPrismaClient } from '../../storage/prisma';
import { checkBuild } from '../build-freshness';
import { ensureCliBuilt } from '../cli-build';
import { searchAttributeArgs } from '../dev-server';
import { ensureTemporalCli } from '../temporal-cli';
import type { PartResult } from './report';
import { median, round } from './stats';

const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 7);

/** Wall time of one process, start to exit; a failing command fails the bench rather than timing an error. */
function spawnMs(args: string[], env: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: REPO_ROOT, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

function cliColdStart(env: NodeJS.ProcessEnv, planId: string) {
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
  return { baseline, commands, subjects };
}

/** A database with one project to list and one plan to show. */
async function benchDatabase(dir: string): Promise<{ url: string; planId: string }> {
  const url = `file:${path.join(dir, 'bench.db')}`;
  await migrateDatabase(url);
  const prisma = createPrismaClient(url);
  const planId = ulid();
  try {
    const project = path.join(dir, 'demo');
    mkdirSync(project);
    const stores = createStores(prisma);
    await stores.catalog.putProject({ name: 'local/demo', path: project, description: '' });
    await stores.plans.recordPlanCreated({
      eventSeq: 0,
      spec: planSpecSchema.parse({
        planId,
        name: 'bench',
        actionName: 'local/example',
        projects: [{ projectName: 'local/demo' }],
        automationLevel: 'MANUAL',
        createdAt: new Date().toISOString(),
      }),
    });
  } finally {
    await prisma.$disconnect();
  }
  return { url, planId };
}

export async function p7CliColdStart(): Promise<PartResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agents-bench-p7-'));
  try {
    ensureCliBuilt((line) => console.log(line));
    const build = checkBuild(REPO_ROOT);
    const from = build.fresh ? 'compiled dist/' : `tsx, ${build.reason}`;
    const { url, planId } = await benchDatabase(dir);
    const temporal = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: await ensureTemporalCli() },
        ip: '127.0.0.1',
        extraArgs: searchAttributeArgs(),
      },
    });
    let samples: ReturnType<typeof cliColdStart>;
    try {
      await temporal.client.workflow.start('planWorkflow', {
        workflowId: planWorkflowId(planId),
        taskQueue: 'bench-no-worker',
        args: [],
      });
      samples = cliColdStart(
        {
          ...process.env,
          DATABASE_URL: url,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_NAMESPACE: temporal.namespace ?? 'default',
        },
        planId,
      );
    } finally {
      await temporal.teardown();
    }
    const { baseline, commands, subjects } = samples;
    const b = median(baseline);
    const rows = commands.map((command, i) => {
      const ms = median(subjects[i] ?? []);
      const planList = command[0] === 'plan' && command[1] === 'list';
      return {
        id: 'P7',
        measure: `cold start, agents ${command.slice(0, 2).join(' ')} (${from})`,
        subject: `${ms.toFixed(0)} ms`,
        baseline: `${b.toFixed(0)} ms node -e 0`,
        ratio: (ms / b).toFixed(2),
        goal: planList ? '< 400 ms and ≤ 3×' : '',
        met: planList ? ms < 400 && ms / b <= 3 : null,
      };
    });
    return {
      rows,
      data: {
        runs: CLI_RUNS,
        from,
        baselineMs: baseline.map((v) => round(v, 1)),
        commands: commands.map((command, i) => ({
          command: command.join(' '),
          samplesMs: (subjects[i] ?? []).map((v) => round(v, 1)),
          medianMs: round(median(subjects[i] ?? []), 1),
        })),
        medianBaselineMs: round(b, 1),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
