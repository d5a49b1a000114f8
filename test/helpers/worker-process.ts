/**
 * A worker in a process of its own, started as `npm run worker` starts it (npm's own shell aside):
 * scripts/bootstrap.js, with the flags and environment of scripts/worker-process.js, configured by environment and
 * production defaults, on a harness's server, task queue, database and sandbox directory. Used by bench P6 (its
 * memory) and by the tests that must see what a plan does to the worker's process itself (a heap it runs out of).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import type { Harness } from './harness';

export interface WorkerProcess {
  child: ChildProcess;
  /** The worker's own process (bootstrap's child). */
  pid: number;
  /** As the worker says when it starts polling. */
  maxCachedWorkflows: number;
  /** Everything the worker printed so far, stdout and stderr together. */
  output(): string;
  /** What it printed on stdout alone (LOG_FORMAT=json's lines). */
  stdout(): string;
  /** Null while bootstrap runs; then how it ended (bootstrap exits as the worker did). */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Resolves when bootstrap has exited. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** The resident set of process `pid`, in MB (/proc/<pid>/status VmRSS). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

/** bootstrap.js runs the worker in one child process (node --import tsx worker/main.ts). */
function onlyChild(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  if (children.length !== 1) throw new Error(`bootstrap (${pid}) has ${children.length} child processes`);
  return Number(children[0]);
}

/** What a worker process is pointed at: a harness, or any server, task queue and database. */
export type WorkerTarget = Pick<Harness, 'taskQueue' | 'databaseUrl' | 'sandboxDir'> & {
  env: { address: string; namespace?: string | undefined };
};

/** Starts the worker and waits until it polls; `env` is added to the environment it is given. */
export async function startWorkerProcess(
  h: WorkerTarget,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'bootstrap.js'), 'worker'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: h.env.address,
      TEMPORAL_NAMESPACE: h.env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      DATABASE_URL: h.databaseUrl,
      SANDBOX_DIR: h.sandboxDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A caller that dies without its finally must not leave a worker behind.
  let workerPid: number | undefined = undefined;
  const killOnExit = () => {
    // Killed outright, bootstrap cannot pass it on.
    if (workerPid !== undefined) process.kill(workerPid, 'SIGKILL');
    child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', killOnExit);
  };
  let output = '';
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the worker did not start polling in 60 s:\n${output}`)),
        60_000,
      );
      child.stdout?.on('data', () => {
        if (output.includes('worker: polling')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited.then(() => reject(new Error(`the worker exited before polling:\n${output}`)));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  if (child.pid === undefined) throw new Error('bootstrap has no pid');
  const cached = /up to (\d+) workflows cached/.exec(output);
  if (cached === null) throw new Error(`the worker did not say its cache size:\n${output}`);
  workerPid = onlyChild(child.pid);
  return {
    child,
    pid: workerPid,
    maxCachedWorkflows: Number(cached[1]),
    output: () => output,
    stdout: () => stdout,
    exit: () => (running() ? null : { code: child.exitCode, signal: child.signalCode }),
    exited,
    stop,
  };
}
