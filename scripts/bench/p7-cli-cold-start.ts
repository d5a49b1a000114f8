/**
 * P7 (issue 13): the CLI's cold start for commands that read only the database.
 *   baseline: `node -e 0`, a Node process that does nothing
 *   subject:  `node bin/agents.js plan list` and `project list` against the bench database
 * Rounds are interleaved (baseline, then each command), so a busy machine slows all of them alike.
 *
 * cliColdStart moved here from scripts/bench.ts as it was; the only change is that it returns its samples for the
 * table and the JSON file (p7CliColdStart below turns them into rows).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import { createStores } from '../../storage';
import { migrateDatabase } from '../../storage/migrate';
import { createPrismaClient } from '../../storage/prisma';
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

export function cliColdStart(databaseUrl: string) {
  const env = { ...process.env, DATABASE_URL: databaseUrl };
  const agents = path.join(REPO_ROOT, 'bin', 'agents.js');
  const commands = [
    ['plan', 'list', '--format', 'json'],
    ['project', 'list', '--format', 'json'],
  ];
  const baseline: number[] = [];
  const subjects = commands.map(() => [] as number[]);
  for (let round = 0; round < CLI_RUNS; round++) {
    baseline.push(spawnMs(['-e', '0'], env));
    commands.forEach((command, i) => subjects[i]?.push(spawnMs([agents, ...command], env)));
  }
  const b = median(baseline);
  console.log(`\nP7 CLI cold start, median of ${CLI_RUNS} interleaved rounds`);
  console.log(`baseline  node -e 0:                         ${b.toFixed(0)} ms`);
  commands.forEach((command, i) => {
    const ms = median(subjects[i] ?? []);
    console.log(
      `agents ${command.slice(0, 2).join(' ').padEnd(36)} ${ms.toFixed(0)} ms  ratio ${(ms / b).toFixed(1)}`,
    );
  });
  return { baseline, commands, subjects };
}

/** A database with one project to list, so `project list` prints a row rather than nothing. */
async function benchDatabase(dir: string): Promise<string> {
  const url = `file:${path.join(dir, 'bench.db')}`;
  await migrateDatabase(url);
  const prisma = createPrismaClient(url);
  try {
    const project = path.join(dir, 'demo');
    mkdirSync(project);
    await createStores(prisma).catalog.putProject({ name: 'local/demo', path: project, description: '' });
  } finally {
    await prisma.$disconnect();
  }
  return url;
}

export async function p7CliColdStart(): Promise<PartResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agents-bench-p7-'));
  try {
    const { baseline, commands, subjects } = cliColdStart(await benchDatabase(dir));
    const b = median(baseline);
    const rows = commands.map((command, i) => {
      const ms = median(subjects[i] ?? []);
      const planList = command[0] === 'plan';
      return {
        id: 'P7',
        measure: `cold start, agents ${command.slice(0, 2).join(' ')}`,
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
