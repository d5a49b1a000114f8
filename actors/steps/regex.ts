/**
 * A `replace` step's regular expression, run in a worker thread. The pattern is untrusted (a model may propose it)
 * and JavaScript's engine backtracks: `^(a+)+$` against `aaaa…b` runs for hours. On the worker's event loop that
 * would stop everything else the process does (heartbeats, cancellations, other plans' activities), so the
 * matching and replacing happen in a thread of their own, stopped when the step's time is up or it is cancelled.
 * Only strings cross: the files are still read and written on the main thread, under the runner's path rules.
 *
 * Starting a thread costs a new V8 isolate and Node's bootstrap (some 20-25 ms of CPU, more than the rest of a
 * small step), so a thread a step finished with cleanly is kept idle for the next step instead of being stopped. It
 * keeps nothing of the step: the pattern, flags and replacement travel with each text, and the thread's only state
 * is the last expression it compiled. A thread that was stopped (time limit, cancellation), failed or died is never
 * reused; an idle thread does not keep the process alive and is stopped after IDLE_MS.
 */
import { Worker } from 'node:worker_threads';
import { StepError } from './errors';

/**
 * The thread's whole program, plain JavaScript evaluated as is: no file to resolve and nothing to compile, so it
 * runs the same under tsx (production) and ts-jest (tests). It answers each text with null when the pattern does
 * not occur in it, else the text with every match replaced. The expression is compiled again only when the
 * pattern or flags change: a step sends its files one after another with the same ones.
 */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
let compiled = null;
parentPort.on('message', ({ pattern, flags, replacement, text }) => {
  if (compiled === null || compiled.source !== pattern || compiled.flags !== flags) {
    compiled = { source: pattern, flags, regex: new RegExp(pattern, flags) };
  }
  const { regex } = compiled;
  regex.lastIndex = 0;
  parentPort.postMessage(text.search(regex) === -1 ? null : text.replace(regex, replacement));
});
`;

/**
 * A replacement that keeps growing (`$&` a thousand times) runs out of this much heap and fails the step instead
 * of the worker process, whose own heap limit would be fatal to every plan it runs.
 */
const THREAD_HEAP_MB = 1024;

/** At most this many threads wait idle for a next step (a worker rarely runs more replace steps at once). */
const MAX_IDLE_THREADS = 4;
/** An idle thread is stopped after this long unused. */
const IDLE_MS = 30_000;

/** A thread and what is known of its health. */
interface PooledThread {
  worker: Worker;
  /** Stopped, exited or failed: never used again. */
  dead: boolean;
  /** The first error the thread raised, for its current user to report. */
  error: Error | null;
  /** While idle: the timer that stops it. */
  idleTimer: NodeJS.Timeout | null;
}

const idleThreads: PooledThread[] = [];

function startThread(): PooledThread {
  const thread: PooledThread = {
    worker: new Worker(THREAD_SOURCE, {
      eval: true,
      // The program needs no loader: the worker process's own flags (tsx's loader) would only slow its start.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    }),
    dead: false,
    error: null,
    idleTimer: null,
  };
  // Without a listener an 'error' event would crash the process; one between two files is reported by the next.
  thread.worker.on('error', (error) => {
    thread.error ??= error;
    thread.dead = true;
  });
  thread.worker.on('exit', () => {
    thread.dead = true;
    forgetIdle(thread);
  });
  return thread;
}

function forgetIdle(thread: PooledThread): void {
  const index = idleThreads.indexOf(thread);
  if (index !== -1) idleThreads.splice(index, 1);
  if (thread.idleTimer !== null) clearTimeout(thread.idleTimer);
  thread.idleTimer = null;
}

/** An idle healthy thread, else a new one. */
function takeThread(): PooledThread {
  for (let thread = idleThreads.pop(); thread !== undefined; thread = idleThreads.pop()) {
    forgetIdle(thread);
    if (!thread.dead) {
      thread.worker.ref();
      return thread;
    }
  }
  return startThread();
}

function stopThread(thread: PooledThread): Promise<number> {
  thread.dead = true;
  forgetIdle(thread);
  return thread.worker.terminate();
}

/** Keeps a thread its step is done with for the next step, or stops it when it cannot or need not be kept. */
async function releaseThread(thread: PooledThread): Promise<void> {
  if (thread.dead || thread.error !== null || idleThreads.length >= MAX_IDLE_THREADS) {
    await stopThread(thread);
    return;
  }
  thread.worker.unref();
  thread.idleTimer = setTimeout(() => void stopThread(thread), IDLE_MS);
  thread.idleTimer.unref();
  idleThreads.push(thread);
}

export interface RegexThreadOptions {
  /** The step as described in messages: `replace /pattern/ in glob`. */
  what: string;
  pattern: string;
  /** Must include `g`: every match is replaced. */
  flags: string;
  /** As String.prototype.replace takes it: `$1`, `$&` and `$$` are expanded. */
  replacement: string;
  /** For the whole step, however many files it reads, counted from start. */
  timeLimitSeconds: number;
  signal: AbortSignal;
}

/** One thread per `replace` step at a time, used for its files one at a time; close() releases it. */
export class RegexThread {
  private readonly thread: PooledThread;
  private readonly deadline: number;
  /** A text was sent and its answer has not come: the thread must not serve another step. */
  private pending = false;
  private closed = false;

  constructor(private readonly options: RegexThreadOptions) {
    this.deadline = Date.now() + options.timeLimitSeconds * 1000;
    this.thread = takeThread();
  }

  /**
   * `text` (the content of `file`) with every match replaced, or null when the pattern does not occur in it. A
   * step past its time limit is a StepError naming the file; a cancelled step rejects with the signal's reason.
   * Either way the thread is stopped, whatever the expression was doing.
   */
  replace(file: string, text: string): Promise<string | null> {
    const { what, signal, timeLimitSeconds, pattern, flags, replacement } = this.options;
    const { worker } = this.thread;
    signal.throwIfAborted();
    if (this.closed) return Promise.reject(new Error(`${what}: the regular-expression thread was closed`));
    if (this.thread.error !== null) return Promise.reject(this.failed(file, this.thread.error));
    if (this.thread.dead) {
      return Promise.reject(new StepError(`${what}: the regular-expression thread stopped on ${file}`));
    }
    return new Promise<string | null>((resolve, reject) => {
      const settle = (done: () => void): void => {
        this.pending = false;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        done();
      };
      const onMessage = (result: string | null): void => settle(() => resolve(result));
      const onError = (error: Error): void => settle(() => reject(this.failed(file, error)));
      const onExit = (code: number): void =>
        settle(() =>
          reject(new StepError(`${what}: the regular-expression thread stopped (exit ${code}) on ${file}`)),
        );
      const onAbort = (): void => {
        void stopThread(this.thread);
        settle(() => reject(signal.reason));
      };
      const timer = setTimeout(
        () => {
          void stopThread(this.thread);
          settle(() =>
            reject(
              new StepError(
                `${what}: the pattern took too long (over the limit of ${timeLimitSeconds} s for the step) on ` +
                  `${file}; it was stopped. A pattern with nested repetition such as (a+)+ can backtrack for ` +
                  'hours on a text it does not match: make it more specific.',
              ),
            ),
          );
        },
        Math.max(0, this.deadline - Date.now()),
      );
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      this.pending = true;
      worker.postMessage({ pattern, flags, replacement, text });
    });
  }

  /**
   * Done with the thread: it waits idle for another step if it is healthy and answered everything it was sent,
   * else it is stopped. Safe to call after a timeout or cancellation already stopped it, and more than once.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pending) {
      await stopThread(this.thread);
      return;
    }
    await releaseThread(this.thread);
  }

  private failed(file: string, error: Error): StepError {
    return new StepError(`${this.options.what}: the regular expression failed on ${file} (${error.message})`);
  }
}
