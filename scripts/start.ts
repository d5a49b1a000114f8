/**
 * `npm start`: everything the engine needs on one machine, in the foreground. Ctrl-C stops the worker (which
 * drains), then the dev server if this process started it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateDatabase, ensurePrismaClientGenerated } from '../storage/migrate';
import { loadBuiltInActions, openStores } from '../client/catalog';
import { runWorker } from '../worker/main';
import { ConfigError, loadConfig, REPO_ROOT } from './config';
import { startDevServer } from './dev-server';
import type { DevServer } from './dev-server';
import { ensureCliBuilt } from './cli-build';
import { checkIsolation } from './isolation-check';
import { ensureTemporalCli } from './temporal-cli';
import { redactDatabaseUrl } from '../storage/database-url';

/** Ctrl-C arrives from the terminal and again relayed by npm and bootstrap.js: closer than this is one press. */
const DUPLICATE_SIGNAL_MS = 1_000;

let server: DevServer | undefined;
let workerRunning = false;
let shuttingDown = false;
let lastSignalAt = 0;

function say(line: string): void {
  console.log(`[start] ${line}`);
}

async function stopServerAndExit(code: number): Promise<never> {
  try {
    await server?.stop();
  } finally {
    process.exit(code);
  }
}

function onSignal(signal: NodeJS.Signals): void {
  const now = Date.now();
  const duplicate = now - lastSignalAt < DUPLICATE_SIGNAL_MS;
  lastSignalAt = now;
  if (duplicate) return;
  const code = 128 + (os.constants.signals[signal] ?? 0);
  if (!shuttingDown) {
    shuttingDown = true;
    // Once the worker runs, the Temporal Runtime has its own listener for this signal and drains the worker;
    // runWorker() then resolves and main() stops the server. Before that there is nothing to drain.
    if (workerRunning && process.listenerCount('SIGTERM') > 1) {
      say(`${signal}: stopping the worker (in-flight tasks finish first; press Ctrl-C again to force)...`);
      // The Runtime listens to SIGINT and SIGTERM only; a SIGHUP is passed on to it as SIGTERM (whose echo
      // here is dropped as a duplicate).
      if (process.listenerCount(signal) === 1) process.kill(process.pid, 'SIGTERM');
      return;
    }
    say(`${signal}: stopping...`);
    void stopServerAndExit(code);
    return;
  }
  say(`${signal} again: forcing exit`);
  void stopServerAndExit(code);
}

function agentsCommand(): string {
  // npx runs the package's own bin only if the file is executable; npm does not chmod the root package's bin.
  try {
    fs.accessSync(path.join(REPO_ROOT, 'bin', 'agents.js'), fs.constants.X_OK);
    return 'npx agents';
  } catch {
    return 'npm run agents --';
  }
}

function printUsage(): void {
  const agents = agentsCommand();
  console.log(
    [
      '',
      'From a second shell in this directory:',
      `  ${agents} project add local/demo --path /path/to/a/directory`,
      `  ${agents} action list`,
      `  ${agents} plan use local/example --project local/demo --automation manual`,
      `  ${agents} plan list`,
      `  ${agents} plan show <id>`,
      `  ${agents} plan advance <id>`,
      `  ${agents} plan cancel <id>`,
      '  temporal workflow list --query \'PlanPhase="EXECUTE"\'   (if the Temporal CLI is on your PATH)',
      '',
      'Ctrl-C stops the worker, then the dev server.',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  // SIGHUP: a closed terminal must not leave the dev server (in its own session) running.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  // If whoever started us is killed outright, nobody is left to forward a signal: stop as if told to.
  const parent = process.ppid;
  const parentWatch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(parentWatch);
    process.kill(process.pid, 'SIGTERM');
  }, 1_000);
  parentWatch.unref();

  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`[start] ${err.message}\nSee .env.example for every variable and its default.`);
      process.exit(2);
    }
    throw err;
  }

  const { isolation, advice } = await checkIsolation({
    mode: config.sandboxIsolation,
    cpuSeconds: config.sandboxCpuSeconds,
  });
  // The engine still starts: plans without commands work, and the worker refuses the others with this reason.
  for (const line of advice) say(line);

  const cliPath = await ensureTemporalCli({ log: say });
  say(`Temporal CLI: ${cliPath}`);
  await ensurePrismaClientGenerated();
  ensureCliBuilt(say);
  await migrateDatabase(config.databaseUrl);
  say(`Application database: ${redactDatabaseUrl(config.databaseUrl)}`);
  const builtIns = await loadBuiltInActions(openStores(config).catalog);
  say(
    `Built-in actions: ${builtIns.length > 0 ? builtIns.join(', ') : 'none (user actions of the same names kept)'}`,
  );

  server = await startDevServer({
    cliPath,
    host: config.temporalHost,
    port: config.temporalPort,
    uiPort: config.uiPort,
    dbFile: config.temporalDbFile,
    namespace: config.namespace,
    log: say,
  });

  say(
    server.reused
      ? `Reusing the Temporal server already running at ${server.address} (it is left running on exit)`
      : `Temporal dev server started (state: ${config.temporalDbFile ?? 'in memory'})`,
  );
  console.log(`Temporal Web UI: ${server.uiUrl}`);
  console.log(`Temporal gRPC:   ${server.address} (namespace ${config.namespace})`);
  printUsage();

  workerRunning = true;
  let exitCode = 0;
  try {
    await runWorker({
      temporalAddress: server.address,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      databaseUrl: config.databaseUrl,
      logLevel: config.logLevel,
      sandboxDir: config.sandboxDir,
      sandboxIsolation: config.sandboxIsolation,
      sandboxCpuSeconds: config.sandboxCpuSeconds,
      maxCachedWorkflows: config.maxCachedWorkflows,
      isolation,
      model: config.model,
      tracing: config.tracing,
      ...config.worker,
    });
  } catch (err) {
    console.error(`[start] worker failed: ${err instanceof Error ? err.message : String(err)}`);
    exitCode = 1;
  } finally {
    workerRunning = false;
  }
  if (!server.reused) say('Stopping the Temporal dev server...');
  await server.stop();
  say('Stopped.');
  process.exit(exitCode);
}

main().catch(async (err: unknown) => {
  console.error(`[start] ${err instanceof Error ? err.message : String(err)}`);
  await stopServerAndExit(1);
});
