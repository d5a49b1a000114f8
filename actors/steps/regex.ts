/**
 * A `replace` step's regular expression, run in a worker thread. The pattern is untrusted (a model may propose it)
 * and JavaScript's engine backtracks: `^(a+)+$` against `aaaa…b` runs for hours. On the worker's event loop that
 * would stop everything else the process does (heartbeats, cancellations, other plans' activities), so the
 * matching and replacing happen in a thread of their own, stopped when the step's time is up or it is cancelled.
 * Only strings cross: the files are still read and written on the main thread, under the runner's path rules.
 */
import { Worker } from 'node:worker_threads';
import { StepError } from './errors';

/**
 * The thread's whole program, plain JavaScript evaluated as is: no file to resolve and nothing to compile, so it
 * runs the same under tsx (production) and ts-jest (tests). It answers each text with null when the pattern does
 * not occur in it, else the text with every match replaced.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const regex = new RegExp(workerData.pattern, workerData.flags);
parentPort.on('message', (text) => {
  parentPort.postMessage(text.search(regex) === -1 ? null : text.replace(regex, workerData.replacement));
});
`;

/**
 * A replacement that keeps growing (`$&` a thousand times) runs out of this much heap and fails the step instead
 * of the worker process, whose own heap limit would be fatal to every plan it runs.
 */
const THREAD_HEAP_MB = 1024;

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

/** One thread per `replace` step, used for its files one at a time; close() ends it. */
export class RegexThread {
  private readonly worker: Worker;
  private readonly deadline: number;
  /** An error the thread raised while no text was pending: the next replace reports it. */
  private idleError: Error | null = null;

  constructor(private readonly options: RegexThreadOptions) {
    this.deadline = Date.now() + options.timeLimitSeconds * 1000;
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { pattern: options.pattern, flags: options.flags, replacement: options.replacement },
      // The program needs no loader: the worker process's own flags (tsx's loader) would only slow its start.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    // Without a listener an 'error' event would crash the process; one between two files is reported by the next.
    this.worker.on('error', (error) => {
      this.idleError ??= error;
    });
  }

  /**
   * `text` (the content of `file`) with every match replaced, or null when the pattern does not occur in it. A
   * step past its time limit is a StepError naming the file; a cancelled step rejects with the signal's reason.
   * Either way the thread is stopped, whatever the expression was doing.
   */
  replace(file: string, text: string): Promise<string | null> {
    const { what, signal, timeLimitSeconds } = this.options;
    signal.throwIfAborted();
    if (this.idleError !== null) return Promise.reject(this.failed(file, this.idleError));
    return new Promise<string | null>((resolve, reject) => {
      const settle = (done: () => void): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.worker.off('message', onMessage);
        this.worker.off('error', onError);
        this.worker.off('exit', onExit);
        done();
      };
      const onMessage = (result: string | null): void => settle(() => resolve(result));
      const onError = (error: Error): void => settle(() => reject(this.failed(file, error)));
      const onExit = (code: number): void =>
        settle(() =>
          reject(new StepError(`${what}: the regular-expression thread stopped (exit ${code}) on ${file}`)),
        );
      const onAbort = (): void => {
        void this.worker.terminate();
        settle(() => reject(signal.reason));
      };
      const timer = setTimeout(
        () => {
          void this.worker.terminate();
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
      this.worker.on('message', onMessage);
      this.worker.on('error', onError);
      this.worker.on('exit', onExit);
      this.worker.postMessage(text);
    });
  }

  /** Stops the thread; safe to call after a timeout or cancellation already did. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private failed(file: string, error: Error): StepError {
    return new StepError(`${this.options.what}: the regular expression failed on ${file} (${error.message})`);
  }
}
