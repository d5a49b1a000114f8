/**
 * `npx tsx scripts/bench/capacity.ts`: the PostgreSQL figures of docs/operations.md's Capacity section, next to
 * SQLite's. Not part of `npm run bench` (it compares no baseline and takes several minutes). Every run gets a fresh
 * world of its own: a Temporal dev server on a temp state file, a migrated engine database (a SQLite file, or a
 * private PostgreSQL cluster from scripts/postgres-cluster.ts), and real worker processes started as
 * `npm run worker` starts them (test/helpers/worker-process.ts), each with its own SANDBOX_DIR.
 *
 * 1. Throughput: CAPACITY_PLANS (60) FULL_AUTOMATION plans of the bench action started at once, each on a project
 *    of its own; wall time from the first start until the last is APPLIED, after a small warm-up batch. For SQLite
 *    + 1 worker, PostgreSQL + 1 worker and PostgreSQL + 2 workers, in turn, CAPACITY_ROUNDS (3) times, so a noisy
 *    moment hits one run of a configuration, not all of them. Meanwhile a sampler reads /proc every second: the CPU
 *    of each worker process, of the PostgreSQL server (postmaster and every backend), of the Temporal dev server,
 *    of this process (the client) and of the whole machine; on PostgreSQL also pg_stat_activity (connections,
 *    active backends, backends waiting for a lock).
 * 2. Size: on PostgreSQL with one worker, CAPACITY_SIZE_PLANS (20) plans per automation level, driven through their
 *    gates by approving; row counts and pg_total_relation_size per table before and after each level, per plan.
 *
 * Prints the tables and writes bench/results/<YYYY-MM-DD>-capacity.json with every raw sample.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Table from 'cli-table3';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { loadBuiltInActions } from '../../client/catalog';
import { PlanClient } from '../../client/plans';
import { parseActionFile } from '../../domain/action-file';
import { BENCH_ACTION, BENCH_ACTION_YAML } from './world';
import { planWorkflowId } from '../../domain/ids';
import type { AutomationLevel } from '../../domain/lifecycle';
import { createStores } from '../../storage';
import type { Stores } from '../../storage';
import { migrateDatabase } from '../../storage/migrate';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import { approveToTheEnd } from '../../test/helpers/drives';
import { startWorkerProcess } from '../../test/helpers/worker-process';
import type { WorkerProcess, WorkerTarget } from '../../test/helpers/worker-process';
import { startDevServer } from '../dev-server';
import type { DevServer } from '../dev-server';
import { freePort } from '../../lib/net';
import { startPostgresCluster } from '../postgres-cluster';
import type { PostgresCluster } from '../postgres-cluster';
import { ensureTemporalCli } from '../temporal-cli';
import { printTable, writeResults } from './report';
import type { PartFailure, PartResult } from './report';
import { envNumber, median, nowMs, percentile, round } from './stats';

const PLANS = envNumber('CAPACITY_PLANS', 60);
const WARMUP_PLANS = envNumber('CAPACITY_WARMUP_PLANS', 6);
const ROUNDS = envNumber('CAPACITY_ROUNDS', 3);
const SIZE_PLANS = envNumber('CAPACITY_SIZE_PLANS', 20);
const SIZE_ROUNDS = envNumber('CAPACITY_SIZE_ROUNDS', 2);
const BATCH_TIMEOUT_MS = 10 * 60_000;
const LEVELS: readonly AutomationLevel[] = ['FULL_AUTOMATION', 'REVIEW_BEFORE_APPLY', 'MANUAL'];
/** USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s on Linux. */
const TICKS_PER_SECOND = 100;

type Backend = 'sqlite' | 'postgresql';

interface Config {
  name: string;
  backend: Backend;
  workers: number;
}

const CONFIGS: readonly Config[] = [
  { name: 'SQLite, 1 worker', backend: 'sqlite', workers: 1 },
  { name: 'PostgreSQL, 1 worker', backend: 'postgresql', workers: 1 },
  { name: 'PostgreSQL, 2 workers', backend: 'postgresql', workers: 2 },
];

interface World {
  dir: string;
  backend: Backend;
  cluster: PostgresCluster | null;
  databaseUrl: string;
  server: DevServer;
  prisma: PrismaClient;
  stores: Stores;
  connection: Connection;
  client: PlanClient;
  workers: WorkerProcess[];
  projects: number;
}

async function startWorld(backend: Backend, workerCount: number): Promise<World> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capacity-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    let cluster: PostgresCluster | null = null;
    let databaseUrl = `file:${path.join(dir, 'agents.db')}`;
    if (backend === 'postgresql') {
      const started = await startPostgresCluster();
      cluster = started;
      cleanups.push(() => started.destroy());
      databaseUrl = await started.createDatabase('agents');
    }
    await migrateDatabase(databaseUrl);
    const prisma = createPrismaClient(databaseUrl);
    cleanups.push(() => prisma.$disconnect());
    const stores = createStores(prisma);
    await loadBuiltInActions(stores.catalog);
    const parsed = parseActionFile(BENCH_ACTION_YAML, 'bench-action.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    await stores.catalog.putAction(parsed.action);
    await stores.invariants.add({
      text: 'The bench changes at most ten files and no secrets',
      scope: 'ACTION',
      target: BENCH_ACTION,
      rule: { max_changed_files: 10, protected_paths: ['secrets/**'] },
      author: 'bench',
      at: new Date().toISOString(),
    });
    const cliPath = process.env.TEMPORAL_CLI_PATH || (await ensureTemporalCli());
    const server = await startDevServer({
      cliPath,
      host: '127.0.0.1',
      port: await freePort(),
      uiPort: await freePort(),
      dbFile: path.join(dir, 'temporal.db'),
      namespace: 'default',
      log: () => undefined,
    });
    cleanups.push(() => server.stop());
    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const taskQueue = 'capacity';
    const client = new PlanClient(
      new Client({ connection, namespace: 'default' }),
      stores.plans,
      stores.catalog,
      stores.invariants,
      { taskQueue, commandTimeoutMs: 120_000 },
    );
    const target: WorkerTarget = {
      env: { address: server.address, namespace: 'default' },
      taskQueue,
      databaseUrl,
      sandboxDir: path.join(dir, 'sandboxes'),
    };
    const workers: WorkerProcess[] = [];
    cleanups.push(async () => {
      await Promise.allSettled(workers.map((w) => w.stop()));
    });
    for (let i = 0; i < workerCount; i++) {
      workers.push(await startWorkerProcess(target, { SANDBOX_DIR: path.join(dir, `sandboxes-${i}`) }));
    }
    const world: World = {
      dir,
      backend,
      cluster,
      databaseUrl,
      server,
      prisma,
      stores,
      connection,
      client,
      workers,
      projects: 0,
    };
    worldCleanups.set(world, cleanups);
    return world;
  } catch (err) {
    await runCleanups(cleanups);
    throw err;
  }
}

const worldCleanups = new WeakMap<World, (() => Promise<void> | void)[]>();

async function runCleanups(cleanups: (() => Promise<void> | void)[]): Promise<void> {
  // Last made, first undone: the workers before the server and the database they use.
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // Teardown does its best; a failed step must not keep the next world from starting.
    }
  }
}

async function withWorld<T>(backend: Backend, workers: number, fn: (w: World) => Promise<T>): Promise<T> {
  const world = await startWorld(backend, workers);
  try {
    return await fn(world);
  } finally {
    await runCleanups(worldCleanups.get(world) ?? []);
  }
}

/** Registers `count` fresh project directories; each plan gets one of its own. */
async function addProjects(w: World, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = w.projects++;
    const root = path.join(w.dir, 'projects', `p${n}`);
    mkdirSync(root, { recursive: true });
    await w.stores.catalog.putProject({ name: `local/p${n}`, path: root, description: '' });
    names.push(`local/p${n}`);
  }
  return names;
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish in ${BATCH_TIMEOUT_MS / 1000} s`)),
      BATCH_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function startPlans(w: World, projects: string[], level: AutomationLevel): Promise<string[]> {
  return Promise.all(
    projects.map(async (project) => {
      const created = await w.client.create({
        actionName: BENCH_ACTION,
        projects: [project],
        automationLevel: level,
        arguments: {},
        createdBy: 'capacity',
      });
      return created.planId;
    }),
  );
}

/** Starts one FULL_AUTOMATION plan per project at once and waits until every one is APPLIED. */
async function fullBatch(
  w: World,
  projects: string[],
): Promise<{ seconds: number; planIds: string[]; finishedAfter: number[] }> {
  const start = nowMs();
  const finishedAfter: number[] = [];
  const planIds = await withTimeout(
    Promise.all(
      projects.map(async (project) => {
        const [planId] = await startPlans(w, [project], 'FULL_AUTOMATION');
        const id = planId as string;
        const result = await w.client.temporal.workflow.getHandle(planWorkflowId(id)).result();
        if (result.phase !== 'APPLIED') throw new Error(`plan ${id} ended in ${result.phase}`);
        finishedAfter.push((nowMs() - start) / 1000);
        return id;
      }),
    ),
    `a batch of ${projects.length} plans`,
  );
  return { seconds: (nowMs() - start) / 1000, planIds, finishedAfter };
}

// ---------------------------------------------------------------------------------------------------------------
// CPU from /proc

function readStat(pid: number): { utime: number; stime: number; cutime: number; cstime: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      utime: Number(fields[11]),
      stime: Number(fields[12]),
      cutime: Number(fields[13]),
      cstime: Number(fields[14]),
    };
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}

/**
 * CPU seconds a process tree has used so far: the root's own time and that of its children it has reaped
 * (cutime/cstime: PostgreSQL's backends that ended), plus the live descendants' own time.
 */
function treeCpuSeconds(root: number): number {
  const stat = readStat(root);
  if (stat === null) return 0;
  let ticks = stat.utime + stat.stime + stat.cutime + stat.cstime;
  const pending = childrenOf(root);
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    const s = readStat(pid);
    if (s === null) continue;
    ticks += s.utime + s.stime;
    pending.push(...childrenOf(pid));
  }
  return ticks / TICKS_PER_SECOND;
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The dev server started by this process (startDevServer spawns the CLI as a direct child). */
function devServerPid(): number | null {
  return childrenOf(process.pid).find((pid) => commOf(pid) === 'temporal') ?? null;
}

function postmasterPid(cluster: PostgresCluster): number | null {
  try {
    return Number(readFileSync(path.join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
}

/** The machine's busy and total jiffies (/proc/stat's first line; idle and iowait count as not busy). */
function machineJiffies(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

interface CpuGroups {
  [group: string]: () => number;
}

interface SamplerResult {
  /** Mean CPUs used by each group over the batch (CPU seconds / wall seconds). */
  meanCpus: Record<string, number>;
  /** The highest one-second sample of each group. */
  peakCpus: Record<string, number>;
  /** The machine's busy fraction over the batch (all processes, including other jobs). */
  machineBusy: number;
  /** PostgreSQL only: pg_stat_activity of the engine database, sampled every second. */
  pgActivity: { maxConnections: number; maxActive: number; meanActive: number; maxLockWaits: number } | null;
  /** PostgreSQL only: committed transactions per second over the batch (pg_stat_database). */
  pgCommitsPerSecond: number | null;
}

async function pgQuery<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function pgCommits(adminUrl: string): Promise<number> {
  const rows = await pgQuery<{ commits: string }>(
    adminUrl,
    `SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = 'agents'`,
  );
  return Number(rows[0]?.commits ?? 0);
}

/** Samples every second until stop() is called; the means cover exactly the span between start and stop. */
function startSampler(groups: CpuGroups, cluster: PostgresCluster | null) {
  const names = Object.keys(groups);
  const read = () => Object.fromEntries(names.map((n) => [n, (groups[n] as () => number)()]));
  const first = { at: nowMs(), cpu: read(), machine: machineJiffies() };
  let last = first;
  const peak: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const activity: { connections: number; active: number; lockWaits: number }[] = [];
  let pgClient: pg.Client | null = null;
  let busy = false;
  const commitsAtStart = cluster === null ? Promise.resolve(0) : pgCommits(cluster.adminUrl);
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const now = { at: nowMs(), cpu: read(), machine: machineJiffies() };
      const seconds = (now.at - last.at) / 1000;
      for (const n of names) {
        peak[n] = Math.max(peak[n] ?? 0, ((now.cpu[n] ?? 0) - (last.cpu[n] ?? 0)) / seconds);
      }
      last = now;
      if (cluster !== null) {
        if (pgClient === null) {
          pgClient = new pg.Client({ connectionString: cluster.adminUrl });
          await pgClient.connect();
        }
        const rows = await pgClient.query<{ connections: string; active: string; lock_waits: string }>(
          `SELECT count(*) AS connections,
                  count(*) FILTER (WHERE state = 'active') AS active,
                  count(*) FILTER (WHERE wait_event_type = 'Lock') AS lock_waits
             FROM pg_stat_activity WHERE datname = 'agents' AND pid <> pg_backend_pid()`,
        );
        const row = rows.rows[0];
        if (row) {
          activity.push({
            connections: Number(row.connections),
            active: Number(row.active),
            lockWaits: Number(row.lock_waits),
          });
        }
      }
    } catch {
      // A missed sample is only a missed sample.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), 1_000);
  return {
    async stop(): Promise<SamplerResult> {
      clearInterval(timer);
      const end = { at: nowMs(), cpu: read(), machine: machineJiffies() };
      const client = pgClient as pg.Client | null;
      if (client !== null) await client.end().catch(() => undefined);
      const seconds = (end.at - first.at) / 1000;
      const meanCpus = Object.fromEntries(
        names.map((n) => [n, round(((end.cpu[n] ?? 0) - (first.cpu[n] ?? 0)) / seconds, 2)]),
      );
      const machineBusy =
        (end.machine.busy - first.machine.busy) / Math.max(1, end.machine.total - first.machine.total);
      let pgCommitsPerSecond: number | null = null;
      if (cluster !== null) {
        pgCommitsPerSecond = round(
          ((await pgCommits(cluster.adminUrl)) - (await commitsAtStart)) / seconds,
          1,
        );
      }
      return {
        meanCpus,
        peakCpus: Object.fromEntries(names.map((n) => [n, round(peak[n] ?? 0, 2)])),
        machineBusy: round(machineBusy, 2),
        pgActivity:
          activity.length === 0
            ? null
            : {
                maxConnections: Math.max(...activity.map((a) => a.connections)),
                maxActive: Math.max(...activity.map((a) => a.active)),
                meanActive: round(activity.reduce((s, a) => s + a.active, 0) / activity.length, 2),
                maxLockWaits: Math.max(...activity.map((a) => a.lockWaits)),
              },
        pgCommitsPerSecond,
      };
    },
  };
}

function cpuGroups(w: World): CpuGroups {
  const groups: CpuGroups = {};
  w.workers.forEach((worker, i) => {
    // bootstrap.js and the worker under it (and anything the worker runs: its reaped children count too).
    const bootstrap = worker.child.pid as number;
    groups[`worker${i + 1}`] = () => treeCpuSeconds(bootstrap);
  });
  const pgPid = w.cluster === null ? null : postmasterPid(w.cluster);
  if (pgPid !== null) groups.postgres = () => treeCpuSeconds(pgPid);
  const temporalPid = devServerPid();
  if (temporalPid !== null) groups.temporal = () => treeCpuSeconds(temporalPid);
  groups.client = () => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1e6;
  };
  return groups;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Throughput

interface ThroughputRun {
  config: string;
  round: number;
  plans: number;
  seconds: number;
  plansPerSecond: number;
  /** CPU ms per plan of each group, over the timed batch. */
  cpuMsPerPlan: Record<string, number>;
  sampler: SamplerResult;
  /** Seconds from the batch's start until each plan finished: median, 90th percentile, last. */
  finishedAfter: { median: number; p90: number; last: number };
  histories: HistoryFindings;
}

interface HistoryFindings {
  /** Activity completions by worker, to show that every worker took work. */
  activitiesByWorker: number[];
  /** The highest attempt any activity started with (1: nothing was retried). */
  maxActivityAttempt: number;
  /** Workflow tasks that timed out or failed, and activities that timed out: what a stall would show. */
  workflowTaskTimeouts: number;
  workflowTaskFailures: number;
  activityTimeouts: number;
}

async function readHistories(w: World, planIds: string[]): Promise<HistoryFindings> {
  const counts = w.workers.map(() => 0);
  const findings = {
    maxActivityAttempt: 0,
    workflowTaskTimeouts: 0,
    workflowTaskFailures: 0,
    activityTimeouts: 0,
  };
  for (const id of planIds) {
    const history = await w.client.temporal.workflow.getHandle(planWorkflowId(id)).fetchHistory();
    for (const event of history.events ?? []) {
      findings.maxActivityAttempt = Math.max(
        findings.maxActivityAttempt,
        event.activityTaskStartedEventAttributes?.attempt ?? 0,
      );
      if (event.workflowTaskTimedOutEventAttributes) findings.workflowTaskTimeouts++;
      if (event.workflowTaskFailedEventAttributes) findings.workflowTaskFailures++;
      if (event.activityTaskTimedOutEventAttributes) findings.activityTimeouts++;
      const identity = event.activityTaskCompletedEventAttributes?.identity;
      if (!identity) continue;
      const index = w.workers.findIndex((worker) => identity.startsWith(`${worker.pid}@`));
      if (index >= 0) counts[index] = (counts[index] ?? 0) + 1;
    }
  }
  return { activitiesByWorker: counts, ...findings };
}

async function throughputRun(config: Config, roundNo: number): Promise<ThroughputRun> {
  return withWorld(config.backend, config.workers, async (w) => {
    // The workers' first plans compile and warm their code; those are not what a running fleet pays.
    await fullBatch(w, await addProjects(w, WARMUP_PLANS));
    const projects = await addProjects(w, PLANS);
    const sampler = startSampler(cpuGroups(w), w.cluster);
    const batch = await fullBatch(w, projects);
    const sampled = await sampler.stop();
    const cpuMsPerPlan = Object.fromEntries(
      Object.entries(sampled.meanCpus).map(([n, cpus]) => [
        n,
        round((cpus * batch.seconds * 1000) / PLANS, 0),
      ]),
    );
    const run: ThroughputRun = {
      config: config.name,
      round: roundNo,
      plans: PLANS,
      seconds: round(batch.seconds, 1),
      plansPerSecond: round(PLANS / batch.seconds, 2),
      cpuMsPerPlan,
      sampler: sampled,
      finishedAfter: {
        median: round(median(batch.finishedAfter), 1),
        p90: round(percentile(batch.finishedAfter, 90), 1),
        last: round(Math.max(...batch.finishedAfter), 1),
      },
      histories: await readHistories(w, batch.planIds),
    };
    const cpus = Object.entries(sampled.meanCpus)
      .map(([n, v]) => `${n} ${v.toFixed(2)}`)
      .join(', ');
    console.log(
      `${config.name}, run ${roundNo}: ${PLANS} plans in ${batch.seconds.toFixed(1)} s = ` +
        `${run.plansPerSecond.toFixed(2)} plans/s; mean CPUs: ${cpus}; machine busy ${sampled.machineBusy}; ` +
        `finished after ${JSON.stringify(run.finishedAfter)} s; ${JSON.stringify(run.histories)}`,
    );
    return run;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Size per plan (PostgreSQL)

interface TableSnapshot {
  rows: number;
  bytes: number;
}

async function snapshot(databaseUrl: string): Promise<Record<string, TableSnapshot>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = (
      await client.query<{ name: string }>(
        `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`,
      )
    ).rows.map((r) => r.name);
    const result: Record<string, TableSnapshot> = {};
    for (const name of tables) {
      const quoted = `"${name.replace(/"/g, '""')}"`;
      const row = (
        await client.query<{ rows: string; bytes: string }>(
          `SELECT (SELECT count(*) FROM ${quoted}) AS rows, pg_total_relation_size($1::regclass) AS bytes`,
          [quoted],
        )
      ).rows[0];
      result[name] = { rows: Number(row?.rows ?? 0), bytes: Number(row?.bytes ?? 0) };
    }
    return result;
  } finally {
    await client.end();
  }
}

interface SizeLevel {
  level: AutomationLevel;
  plans: number;
  seconds: number;
  /** Per plan: rows and bytes (pg_total_relation_size: heap, indexes, TOAST) each table grew by. */
  perPlan: Record<string, { rows: number; bytes: number }>;
  rowsPerPlan: number;
  bytesPerPlan: number;
  databaseBytesPerPlan: number;
}

async function databaseSize(databaseUrl: string): Promise<number> {
  const rows = await pgQuery<{ bytes: string }>(
    databaseUrl,
    'SELECT pg_database_size(current_database()) AS bytes',
  );
  return Number(rows[0]?.bytes ?? 0);
}

async function sizeRun(roundNo: number): Promise<SizeLevel[]> {
  return withWorld('postgresql', 1, async (w) => {
    await fullBatch(w, await addProjects(w, WARMUP_PLANS));
    const levels: SizeLevel[] = [];
    for (const level of LEVELS) {
      const projects = await addProjects(w, SIZE_PLANS);
      const before = await snapshot(w.databaseUrl);
      const dbBefore = await databaseSize(w.databaseUrl);
      const start = nowMs();
      const planIds = await startPlans(w, projects, level);
      await withTimeout(
        Promise.all(planIds.map((id) => approveToTheEnd(w, id, 'capacity', 120_000))),
        `${SIZE_PLANS} ${level} plans`,
      );
      const seconds = (nowMs() - start) / 1000;
      for (const id of planIds) {
        const plan = await w.stores.plans.getPlan(id);
        if (plan?.phase !== 'APPLIED') throw new Error(`plan ${id} ended in ${plan?.phase} ${plan?.state}`);
      }
      const after = await snapshot(w.databaseUrl);
      const dbAfter = await databaseSize(w.databaseUrl);
      const perPlan: Record<string, { rows: number; bytes: number }> = {};
      for (const [name, a] of Object.entries(after)) {
        const b = before[name] ?? { rows: 0, bytes: 0 };
        if (a.rows === b.rows && a.bytes === b.bytes) continue;
        perPlan[name] = {
          rows: round((a.rows - b.rows) / SIZE_PLANS, 2),
          bytes: round((a.bytes - b.bytes) / SIZE_PLANS, 0),
        };
      }
      const entry: SizeLevel = {
        level,
        plans: SIZE_PLANS,
        seconds: round(seconds, 1),
        perPlan,
        rowsPerPlan: round(
          Object.values(perPlan).reduce((s, t) => s + t.rows, 0),
          2,
        ),
        bytesPerPlan: Object.values(perPlan).reduce((s, t) => s + t.bytes, 0),
        databaseBytesPerPlan: round((dbAfter - dbBefore) / SIZE_PLANS, 0),
      };
      levels.push(entry);
      console.log(
        `size run ${roundNo}, ${level}: ${entry.rowsPerPlan} rows and ${(entry.bytesPerPlan / 1024).toFixed(1)} KB ` +
          `per plan (${Object.entries(perPlan)
            .map(([n, t]) => `${n} ${t.rows}/${(t.bytes / 1024).toFixed(1)} KB`)
            .join(', ')})`,
      );
    }
    return levels;
  });
}

// ---------------------------------------------------------------------------------------------------------------

function printThroughput(runs: ThroughputRun[]): void {
  const groups = [...new Set(runs.flatMap((r) => Object.keys(r.sampler.meanCpus)))];
  const table = new Table({
    head: ['configuration', 'run', 'plans/s', ...groups.map((g) => `${g} CPUs`), 'machine busy', 'pg active'],
    style: { head: [], border: [] },
  });
  for (const r of runs) {
    table.push([
      r.config,
      String(r.round),
      r.plansPerSecond.toFixed(2),
      ...groups.map((g) =>
        r.sampler.meanCpus[g] === undefined
          ? ''
          : `${(r.sampler.meanCpus[g] ?? 0).toFixed(2)} (peak ${(r.sampler.peakCpus[g] ?? 0).toFixed(2)})`,
      ),
      r.sampler.machineBusy.toFixed(2),
      r.sampler.pgActivity === null
        ? ''
        : `${r.sampler.pgActivity.meanActive} mean, ${r.sampler.pgActivity.maxActive} max`,
    ]);
  }
  console.log(table.toString());
}

function printSizes(runs: SizeLevel[][]): void {
  const tables = [...new Set(runs.flat().flatMap((l) => Object.keys(l.perPlan)))].sort();
  const table = new Table({
    head: ['run', 'level', ...tables, 'rows', 'bytes'],
    style: { head: [], border: [] },
  });
  runs.forEach((levels, i) => {
    for (const l of levels) {
      table.push([
        String(i + 1),
        l.level,
        ...tables.map((t) =>
          l.perPlan[t] === undefined
            ? ''
            : `${l.perPlan[t]?.rows ?? 0} / ${((l.perPlan[t]?.bytes ?? 0) / 1024).toFixed(1)} KB`,
        ),
        String(l.rowsPerPlan),
        `${(l.bytesPerPlan / 1024).toFixed(1)} KB`,
      ]);
    }
  });
  console.log(table.toString());
}

async function main(): Promise<number> {
  const startedAt = new Date().toISOString();
  const start = nowMs();
  const results: Record<string, PartResult | PartFailure> = {};

  const runs: ThroughputRun[] = [];
  let throughputError: string | null = null;
  // Configurations in turn, not each one's runs back to back: a noisy minute then hits one run of one configuration.
  for (let r = 1; r <= ROUNDS; r++) {
    for (const config of CONFIGS) {
      try {
        runs.push(await throughputRun(config, r));
      } catch (err) {
        console.error(`${config.name}, run ${r} failed:`, err);
        throughputError = err instanceof Error ? err.message : String(err);
      }
    }
  }
  const sqlite = median(runs.filter((r) => r.config === CONFIGS[0]?.name).map((r) => r.plansPerSecond));
  results.THROUGHPUT = {
    rows: CONFIGS.map((config) => {
      const mine = runs.filter((r) => r.config === config.name);
      const m = median(mine.map((r) => r.plansPerSecond));
      return {
        id: 'T',
        measure: `plans/s, ${PLANS} FULL at once, ${config.name}`,
        subject: mine.map((r) => r.plansPerSecond.toFixed(2)).join(', '),
        baseline: `${sqlite.toFixed(2)} SQLite, 1 worker`,
        ratio: (m / sqlite).toFixed(2),
        goal: '',
        met: null,
      };
    }),
    data: {
      plansPerBatch: PLANS,
      warmupPlans: WARMUP_PLANS,
      rounds: ROUNDS,
      ...(throughputError === null ? {} : { error: throughputError }),
      runs,
    },
  };

  const sizeRuns: SizeLevel[][] = [];
  for (let r = 1; r <= SIZE_ROUNDS; r++) {
    try {
      sizeRuns.push(await sizeRun(r));
    } catch (err) {
      console.error(`size run ${r} failed:`, err);
      results.SIZE = { error: err instanceof Error ? err.message : String(err) };
    }
  }
  if (sizeRuns.length > 0) {
    results.SIZE = {
      rows: LEVELS.map((level) => {
        const mine = sizeRuns.flatMap((levels) => levels.filter((l) => l.level === level));
        return {
          id: 'S',
          measure: `PostgreSQL rows / KB per ${level} plan`,
          subject: mine.map((l) => `${l.rowsPerPlan} / ${(l.bytesPerPlan / 1024).toFixed(1)} KB`).join(', '),
          baseline: '',
          ratio: '',
          goal: '',
          met: null,
        };
      }),
      data: { plansPerLevel: SIZE_PLANS, runs: sizeRuns },
    };
  }

  console.log();
  printThroughput(runs);
  printSizes(sizeRuns);
  printTable(results);
  const elapsedMs = Math.round(nowMs() - start);
  const file = writeResults(results, { startedAt, elapsedMs, parts: ['capacity'], all: false });
  console.log(`capacity in ${(elapsedMs / 1000).toFixed(0)} s; results in ${file}`);
  return Object.values(results).some((r) => 'error' in r) || throughputError !== null ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
