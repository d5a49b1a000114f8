/**
 * One private world per test file: a Temporal dev server on free ports, a migrated database of the jest project's
 * backend (a SQLite file in a temp dir, or a PostgreSQL database: test/helpers/database.ts), the real activities,
 * and the workflows bundled once. Nothing here is shared with `npm start`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { ulid } from 'ulid';
import type { PlanActivities } from '../../activities';
import { PlanClient } from '../../client/plans';
import { runCli } from '../../client/cli/main';
import { createLocalTestEnv } from '../../scripts/test-env';
import { createStores } from '../../storage';
import { loadBuiltInActions } from '../../client/catalog';
import { disconnectSharedPrismaClients, sharedPrismaClient } from '../../storage/prisma';
import type { CatalogStore, PlanStore } from '../../storage/types';
import { WORKFLOWS_PATH, createPlanWorker } from '../../worker/worker';
import { TRACING_WORKFLOW_MODULES } from '../../worker/tracing';
import type { Tracing } from '../../lib/tracing';
import { createActorRegistry } from '../../actors';
import type { ActorRegistry } from '../../actors';
import type { ContextFileStore } from '../../storage/context-files';
import type { InvariantStore } from '../../storage/invariants';
import type { ChangesetStore } from '../../storage/changesets';
import { createActivities } from '../../activities';
import { testIsolation } from './isolation';
import { createTestDatabase } from './database';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Harness {
  env: TestWorkflowEnvironment;
  plans: PlanStore;
  catalog: CatalogStore;
  /** A fresh directory registered as project `local/demo`, and another as `local/docs`. */
  projectDir: string;
  client: PlanClient;
  taskQueue: string;
  /** A worker on this file's task queue; the caller runs and shuts it down (or uses withWorker). */
  createWorker(overrides?: Partial<PlanActivities>): Promise<Worker>;
  /** Runs `fn` while a worker polls, then shuts the worker down. */
  withWorker<T>(fn: () => Promise<T>, overrides?: Partial<PlanActivities>): Promise<T>;
  /** The same, with a worker whose actor registry is `actors` (the default has the built-in actor only). */
  withActors<T>(actors: ActorRegistry, fn: () => Promise<T>): Promise<T>;
  /** The `agents` CLI, in process, pointed at this file's server and database. */
  cli(...argv: string[]): Promise<CliResult>;
  /** The CLI as if a person at a terminal answers every yes/no question with `answer`; records the questions. */
  cliAnswering(answer: boolean, ...argv: string[]): Promise<CliResult & { questions: string[] }>;
  changesets: ChangesetStore;
  contextFiles: ContextFileStore;
  invariants: InvariantStore;
  /** The real activities, for overrides that fail once and then delegate. */
  activities: PlanActivities;
  /** Where this file's workers make their sandboxes. */
  sandboxDir: string;
  /** The file's database, as DATABASE_URL says it. */
  databaseUrl: string;
  /** The file's SQLite database (what a hostile step would like to read); null on PostgreSQL. */
  databaseFile: string | null;
  teardown(): Promise<void>;
}

let cachedBundle: WorkflowBundleWithSourceMap | undefined;
let cachedTracedBundle: WorkflowBundleWithSourceMap | undefined;

export async function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  cachedBundle ??= await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
  return cachedBundle;
}

/** The workflows as a worker with tracing on bundles them: with the OpenTelemetry workflow interceptors. */
export async function tracedWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  cachedTracedBundle ??= await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [...TRACING_WORKFLOW_MODULES],
    logger: quietLogger,
  });
  return cachedTracedBundle;
}

export interface HarnessOptions {
  commandTimeoutMs?: number;
  /**
   * Tracing on (ADR 0013): the workers get the interceptors and the traced bundle, the in-process CLI the client
   * interceptor; each exports to its own tracer (the caller makes them, e.g. on one in-memory exporter, and shuts
   * them down). `h.client` stays untraced. Left out: no interceptors anywhere, as for every other test.
   */
  tracing?: { worker: Tracing; cli: Tracing };
}

/** For bundling in tests: webpack's progress is noise, its errors are not. */
export const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => console.error(message),
};

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agents-test-'));
  const databaseUrl = await createTestDatabase(dir);
  // The CLI run in process below uses this same client (one per database per process, see storage/prisma).
  const stores = createStores(sharedPrismaClient(databaseUrl));
  const { plans, catalog, changesets, contextFiles, invariants } = stores;
  await loadBuiltInActions(catalog);
  const env = await createLocalTestEnv();
  // Tests in one file share the server; a task queue of their own keeps stray workflows from other tests apart.
  const taskQueue = `test-${ulid()}`;
  const projectDir = path.join(dir, 'projects');
  for (const name of ['demo', 'docs']) {
    mkdirSync(path.join(projectDir, name), { recursive: true });
    await catalog.putProject({ name: `local/${name}`, path: path.join(projectDir, name), description: '' });
  }
  const client = new PlanClient(env.client, plans, catalog, invariants, {
    contextFiles,
    taskQueue,
    commandTimeoutMs: options.commandTimeoutMs ?? 20_000,
  });
  const bundle = options.tracing === undefined ? await workflowBundle() : await tracedWorkflowBundle();

  const sandboxDir = path.join(dir, 'sandboxes');
  const dependencies = {
    ...stores,
    actors: createActorRegistry({ model: null }),
    sandboxDir,
    isolation: await testIsolation(),
  };
  const createWorker = (overrides?: Partial<PlanActivities>, actors?: ActorRegistry) =>
    createPlanWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      ...dependencies,
      ...(actors === undefined ? {} : { actors }),
      taskQueue,
      workflowBundle: bundle,
      // A test ends its worker when it has seen what it came for: a phase still running is cancelled at once,
      // as before the grace period existed (test/provisioning/worker-process.test.ts tests the grace itself).
      shutdownGraceSeconds: 0,
      ...(overrides ? { activityOverrides: overrides } : {}),
      ...(options.tracing === undefined ? {} : { tracing: options.tracing.worker }),
    });

  const runInProcess = async (
    argv: string[],
    confirm: ((question: string) => Promise<boolean>) | undefined,
  ): Promise<CliResult> => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      argv,
      {
        stdout: (t) => (stdout += t),
        stderr: (t) => (stderr += t),
        env: {
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_NAMESPACE: env.namespace ?? 'default',
          DATABASE_URL: databaseUrl,
          TEMPORAL_TASK_QUEUE: taskQueue,
          AGENTS_USER: 'tester',
        },
        isTty: false,
        ...(confirm === undefined ? {} : { confirm }),
      },
      options.tracing === undefined ? {} : { tracing: options.tracing.cli },
    );
    return { code, stdout, stderr };
  };

  return {
    env,
    plans,
    catalog,
    changesets,
    contextFiles,
    invariants,
    activities: createActivities(dependencies),
    sandboxDir,
    databaseUrl,
    databaseFile: databaseUrl.startsWith('file:') ? path.join(dir, 'agents.db') : null,
    projectDir,
    client,
    taskQueue,
    createWorker,
    async withActors(actors, fn) {
      const worker = await createWorker(undefined, actors);
      return worker.runUntil(fn);
    },
    async withWorker(fn, overrides) {
      const worker = await createWorker(overrides);
      return worker.runUntil(fn);
    },
    async cli(...argv) {
      return runInProcess(argv, undefined);
    },
    async cliAnswering(answer, ...argv) {
      const questions: string[] = [];
      const result = await runInProcess(argv, async (question) => {
        questions.push(question);
        return answer;
      });
      return { ...result, questions };
    },
    async teardown() {
      await env.teardown();
      await disconnectSharedPrismaClients();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
