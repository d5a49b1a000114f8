/**
 * Running a shell command for a plan (a `run` step, a validation command, an invariant rule's command): what it
 * sees of the worker, and that nothing it starts outlives it. The command may be a model's proposal, so it is
 * treated as untrusted whatever the caller checked about its text.
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { PlanSpec } from '../../domain/plan';
import { argumentVariableName } from '../../domain/shell';

export interface CommandResult {
  /** The command as it ran, after template substitution. */
  command: string;
  /** null when the command was killed (timeout) rather than exiting. */
  exitCode: number | null;
  timedOut: boolean;
  /** The last OUTPUT_TAIL_CHARS characters of stdout and stderr, interleaved as they arrived. */
  output: string;
}

export interface CommandOptions {
  cwd: string;
  timeoutSeconds: number;
  /** The whole environment of the command; see commandEnv. */
  env: NodeJS.ProcessEnv;
  /** Kills the command when aborted. */
  signal: AbortSignal;
  /** Called while the command runs, so the activity keeps heartbeating. */
  progress(message: string): void;
}

/** Enough of a failing command's output to diagnose it without flooding the decision tree. */
export const OUTPUT_TAIL_CHARS = 4000;
const PROGRESS_INTERVAL_MS = 5000;

/** The worker's variables a command still sees: what tools need to run, nothing the worker holds (keys, URLs). */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TERM', 'CI'] as const;

/**
 * A command's whole environment: a few of the worker's variables (INHERITED_ENV, those set), the plan id, and the
 * plan's arguments, so a script can read them without any quoting at all. Never the rest of process.env: a command
 * may be a model's proposal, and the worker's environment holds secrets (the model API key, DATABASE_URL).
 */
export function commandEnv(plan: PlanSpec): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env['CLEVERAGENTS_PLAN_ID'] = plan.planId;
  for (const [name, value] of Object.entries(plan.arguments)) {
    if (value === null) continue;
    env[argumentVariableName(name)] = String(value);
  }
  return env;
}

/**
 * Runs `/bin/sh -c command` in its own process group, so a timeout or a cancellation kills everything it started
 * (a test runner's workers included), and whatever it left running in the background once it exits: nothing a
 * command starts may outlive it. Resolves for any exit; rejects with the signal's reason when cancelled, and with
 * the spawn error when /bin/sh could not be started.
 */
export function runCommand(command: string, options: CommandOptions): Promise<CommandResult> {
  const { signal } = options;
  signal.throwIfAborted();
  return new Promise<CommandResult>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    let exitCode: number | null = null;
    const started = Date.now();
    const append = (text: string): void => {
      output += text;
      if (output.length > 2 * OUTPUT_TAIL_CHARS) output = output.slice(-OUTPUT_TAIL_CHARS);
    };
    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => append(decoder.write(chunk)));
      stream.on('end', () => append(decoder.end()));
    }
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = (): void => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutSeconds * 1000);
    const ticker = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      options.progress(`running \`${command}\` (${seconds}s)`);
    }, PROGRESS_INTERVAL_MS);
    const finish = (): void => {
      clearTimeout(timer);
      clearInterval(ticker);
      signal.removeEventListener('abort', onAbort);
    };
    child.on('exit', (code) => {
      exitCode = code;
      killGroup();
    });
    child.on('error', (error) => {
      finish();
      reject(error);
    });
    child.on('close', () => {
      finish();
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      resolve({ command, exitCode, timedOut, output: output.slice(-OUTPUT_TAIL_CHARS) });
    });
  });
}
