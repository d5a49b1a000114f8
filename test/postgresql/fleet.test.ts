/**
 * A fleet on one task queue: two worker processes started as `npm run worker` starts them, one PostgreSQL
 * database, one Temporal server keeping its state in a file. It is docker-compose.yml's `--scale worker=2`, run
 * natively. Each test breaks one part while plans run (a worker, the Temporal server, the database), then reads
 * what every plan left behind:
 * - it finished: APPLIED, with its project changed;
 * - its decisions are numbered exactly 0..N-1 and its events 0..M-1;
 * - its events are the same as those of every other plan of its automation level. A retried write that landed
 *   twice would show up as an extra event, a lost one as a gap. Refused commands are left out of that comparison:
 *   a driver's advance that raced its own earlier one is refused and logged (COMMAND_REFUSED, ADR 0021), and how
 *   often that happens depends on timing, not on the plan.
 *
 * Each test gets its own cluster and server: it stops or kills them, so it shares them with nobody.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadBuiltInActions } from '../../client/catalog';
import { PlanClient } from '../../client/plans';
import { planWorkflowId } from '../../domain/ids';
import type { AutomationLevel } from '../../domain/lifecycle';
import { freePort } from '../../lib/net';
import { startPostgresCluster } from '../../scripts/postgres-cluster';
import type { PostgresCluster } from '../../scripts/postgres-cluster';
import { startDevServer } from '../../scripts/dev-server';
import type { DevServer, DevServerOptions } from '../../scripts/dev-server';
import { createStores } from '../../storage';
import type { Stores } from '../../storage';
import { migrateDatabase } from '../../storage/migrate';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import { startWorkerProcess } from '../helpers/worker-process';
import type { WorkerProcess, WorkerTarget } from '../helpers/worker-process';

const LEVELS: readonly AutomationLevel[] = ['FULL_AUTOMATION', 'REVIEW_BEFORE_APPLY', 'MANUAL'];

/** How long any plan may take, breakdowns included (a killed worker's phase waits out its 1-minute heartbeat). */
const PLAN_DEADLINE_MS = 8 * 60_000;

interface Fleet {
  dir: string;
  cluster: PostgresCluster;
  serverOptions: DevServerOptions;
  server: DevServer;
  prisma: PrismaClient;
  stores: Stores;
  connection: Connection;
  client: PlanClient;
  target: WorkerTarget;
  workers: WorkerProcess[];
}

const fleets: Fleet[] = [];

afterEach(async () => {
  for (const fleet of fleets.splice(0)) {
    await Promise.allSettled(fleet.workers.map((w) => w.stop()));
    await fleet.connection.close().catch(() => undefined);
    await fleet.prisma.$disconnect().catch(() => undefined);
    await fleet.server.stop().catch(() => undefined);
    fleet.cluster.destroy();
    rmSync(fleet.dir, { recursive: true, force: true });
  }
});

/** A cluster, a server and `workerCount` worker processes, each with a sandbox directory of its own. */
async function startFleet(projects: number, workerCount = 2): Promise<Fleet> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-'));
  const cluster = await startPostgresCluster();
  const databaseUrl = await cluster.createDatabase('agents');
  await migrateDatabase(databaseUrl);
  const prisma = createPrismaClient(databaseUrl);
  const stores = createStores(prisma);
  await loadBuiltInActions(stores.catalog);
  for (let i = 0; i < projects; i++) {
    const root = path.join(dir, 'projects', `p${i}`);
    mkdirSync(root, { recursive: true });
    await stores.catalog.putProject({ name: `local/p${i}`, path: root, description: '' });
  }
  const cliPath = process.env.TEMPORAL_CLI_PATH;
  if (!cliPath) throw new Error('TEMPORAL_CLI_PATH is not set (test/global-setup.ts sets it)');
  const serverOptions: DevServerOptions = {
    cliPath,
    host: '127.0.0.1',
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(dir, 'temporal.db'),
    namespace: 'default',
    log: () => undefined,
  };
  const server = await startDevServer(serverOptions);
  const connection = await Connection.connect({ address: server.address });
  const taskQueue = 'fleet';
  const client = new PlanClient(
    new Client({ connection, namespace: 'default' }),
    stores.plans,
    stores.catalog,
    stores.invariants,
    { taskQueue, commandTimeoutMs: 30_000 },
  );
  const target: WorkerTarget = {
    env: { address: server.address, namespace: 'default' },
    taskQueue,
    databaseUrl,
    sandboxDir: path.join(dir, 'sandboxes'),
  };
  const fleet: Fleet = {
    dir,
    cluster,
    serverOptions,
    server,
    prisma,
    stores,
    connection,
    client,
    target,
    workers: [],
  };
  fleets.push(fleet);
  for (let i = 0; i < workerCount; i++) {
    // A sandbox directory each: two machines share no disk.
    fleet.workers.push(await startWorkerProcess(target, { SANDBOX_DIR: path.join(dir, `sandboxes-${i}`) }));
  }
  return fleet;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Drives one plan to its end as a person would, approving every gate, and keeps at it while the server or the
 * database is away: a failed look or a refused advance (its earlier attempt went through, and the plan moved on)
 * is simply followed by another look.
 */
async function drive(fleet: Fleet, planId: string): Promise<void> {
  const deadline = Date.now() + PLAN_DEADLINE_MS;
  let lastProblem = '';
  while (Date.now() < deadline) {
    try {
      const view = await fleet.client.get(planId);
      if (view.phase === 'APPLIED' && view.state === 'COMPLETE') return;
      if (view.state === 'ERRORED' || view.state === 'CANCELLED') {
        throw new Error(`plan ${planId} stopped: ${view.phase} ${view.state} ${view.error?.message ?? ''}`);
      }
      if (view.awaitingApproval) {
        await fleet.client
          .advance(planId, { by: 'fleet', reason: `approve ${view.phase}`, expectedPhase: view.phase })
          .catch((err: unknown) => (lastProblem = String(err)));
      }
    } catch (err) {
      if (err instanceof Error && err.message.startsWith(`plan ${planId} stopped`)) throw err;
      lastProblem = String(err);
    }
    await sleep(300);
  }
  throw new Error(
    `plan ${planId} did not finish in ${PLAN_DEADLINE_MS / 1000} s; last problem: ${lastProblem}`,
  );
}

interface Started {
  planId: string;
  level: AutomationLevel;
  project: number;
}

/** Starts `count` plans, the automation levels in turn, each on a project of its own; drives them all. */
async function runPlans(fleet: Fleet, count: number, finished: Set<string>) {
  const started: Started[] = [];
  for (let i = 0; i < count; i++) {
    const level = LEVELS[i % LEVELS.length] as AutomationLevel;
    const { planId } = await fleet.client.create({
      actionName: 'local/example',
      projects: [`local/p${i}`],
      automationLevel: level,
      arguments: { greeting: `hello from plan ${i}` },
      createdBy: 'fleet',
    });
    started.push({ planId, level, project: i });
  }
  const done = Promise.all(
    started.map(async ({ planId }) => {
      await drive(fleet, planId);
      finished.add(planId);
    }),
  );
  return { started, done };
}

async function until(condition: () => boolean, what: string, ms = 5 * 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

/** The record every plan left, checked as the file's header says. */
async function expectCleanRecords(fleet: Fleet, started: readonly Started[]): Promise<void> {
  const signatures = new Map<AutomationLevel, Set<string>>();
  for (const { planId, level, project } of started) {
    expect(await fleet.stores.plans.getPlan(planId)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
    const decisions = await fleet.stores.plans.listDecisions(planId);
    expect(decisions.map((d) => d.seq)).toEqual(decisions.map((_, i) => i));
    const events = await fleet.stores.plans.listEvents(planId);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    const signature = [
      events
        .filter((e) => e.type !== 'COMMAND_REFUSED')
        .map((e) => `${e.type}/${e.phase}/${e.state}`)
        .join(' '),
      decisions.map((d) => `${d.type}/${d.phase}`).join(' '),
    ].join(' | ');
    if (!signatures.has(level)) signatures.set(level, new Set());
    signatures.get(level)?.add(signature);
    const greeting = readFileSync(path.join(fleet.dir, 'projects', `p${project}`, 'GREETING.md'), 'utf8');
    expect(greeting).toContain(`hello from plan ${project}`);
  }
  for (const [level, seen] of signatures) {
    expect({ level, records: seen.size }).toEqual({ level, records: 1 });
  }
}

/** Activity completions by worker identity (`<pid>@<host>`, the SDK's default). */
async function completionsByWorker(fleet: Fleet, started: readonly Started[]): Promise<Map<number, number>> {
  const byPid = new Map<number, number>();
  for (const { planId } of started) {
    const history = await fleet.client.temporal.workflow.getHandle(planWorkflowId(planId)).fetchHistory();
    for (const event of history.events ?? []) {
      const identity = event.activityTaskCompletedEventAttributes?.identity;
      if (!identity) continue;
      const pid = Number(identity.split('@')[0]);
      byPid.set(pid, (byPid.get(pid) ?? 0) + 1);
    }
  }
  return byPid;
}

/** The highest attempt any of the plans' (scheduled) activities started with. */
async function maxActivityAttempt(fleet: Fleet, started: readonly Started[]): Promise<number> {
  let max = 0;
  for (const { planId } of started) {
    const history = await fleet.client.temporal.workflow.getHandle(planWorkflowId(planId)).fetchHistory();
    for (const event of history.events ?? []) {
      max = Math.max(max, event.activityTaskStartedEventAttributes?.attempt ?? 0);
    }
  }
  return max;
}

/** How many plans had workflow tasks completed by `from` and, later, their last ones by `to`. */
async function plansHandedOver(fleet: Fleet, started: readonly Started[], from: number, to: number) {
  let count = 0;
  for (const { planId } of started) {
    const history = await fleet.client.temporal.workflow.getHandle(planWorkflowId(planId)).fetchHistory();
    const pids = (history.events ?? []).flatMap((event) => {
      const identity = event.workflowTaskCompletedEventAttributes?.identity;
      return identity ? [Number(identity.split('@')[0])] : [];
    });
    if (pids.includes(from) && pids.at(-1) === to) count++;
  }
  return count;
}

describe('a fleet of workers on one PostgreSQL database', () => {
  it(
    'finishes 100 plans of every automation level when one of two workers is killed mid-run',
    async () => {
      const fleet = await startFleet(100);
      const [doomed, survivor] = fleet.workers as [WorkerProcess, WorkerProcess];
      const finished = new Set<string>();
      const { started, done } = await runPlans(fleet, 100, finished);
      await until(() => finished.size >= 20, '20 plans finished');
      process.kill(doomed.pid, 'SIGKILL');
      await doomed.exited;
      const unfinishedAtKill = started.length - finished.size;
      expect(unfinishedAtKill).toBeGreaterThan(0);
      await done;

      await expectCleanRecords(fleet, started);
      // Both worked, and plans the killed worker had been running were finished by the survivor alone.
      const byWorker = await completionsByWorker(fleet, started);
      expect(byWorker.get(doomed.pid) ?? 0).toBeGreaterThan(0);
      expect(byWorker.get(survivor.pid) ?? 0).toBeGreaterThan(0);
      expect(await plansHandedOver(fleet, started, doomed.pid, survivor.pid)).toBeGreaterThan(0);
      expect(survivor.exit()).toBeNull();
    },
    15 * 60_000,
  );

  it(
    'resumes every plan when the Temporal server is killed mid-run and restarted on its state file',
    async () => {
      const fleet = await startFleet(24);
      const finished = new Set<string>();
      const { started, done } = await runPlans(fleet, 24, finished);
      await until(() => finished.size >= 4, '4 plans finished');
      await fleet.server.crash();
      const unfinishedAtCrash = started.length - finished.size;
      await sleep(3_000);
      fleet.server = await startDevServer(fleet.serverOptions);
      expect(fleet.server.reused).toBe(false);
      expect(unfinishedAtCrash).toBeGreaterThan(0);
      await done;

      await expectCleanRecords(fleet, started);
      // The workers rode it out: still the same two processes.
      expect(fleet.workers.map((w) => w.exit())).toEqual([null, null]);
    },
    15 * 60_000,
  );

  it(
    'continues every plan when PostgreSQL is down for a while, writing nothing twice',
    async () => {
      const fleet = await startFleet(24);
      const finished = new Set<string>();
      const { started, done } = await runPlans(fleet, 24, finished);
      await until(() => finished.size >= 4, '4 plans finished');
      fleet.cluster.stop();
      const unfinishedAtOutage = started.length - finished.size;
      await sleep(10_000);
      fleet.cluster.start();
      expect(unfinishedAtOutage).toBeGreaterThan(0);
      await done;

      await expectCleanRecords(fleet, started);
      expect(fleet.workers.map((w) => w.exit())).toEqual([null, null]);
      // The outage reached the plans' work, which was tried again until the database answered.
      expect(await maxActivityAttempt(fleet, started)).toBeGreaterThan(1);
    },
    15 * 60_000,
  );
});
