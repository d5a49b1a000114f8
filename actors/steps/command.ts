/**
 * Running a shell command for a plan (a `run` step, a validation command, an invariant rule's command): in the box
 * of sandbox/isolation.ts, with the plan's variables, and so that nothing it starts outlives it. The command may be
 * a model's proposal, so it is treated as untrusted whatever the caller checked about its text.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { PlanSpec } from '../../domain/plan';
import { argumentVariableName } from '../../domain/shell';
import type { Isolation } from '../../sandbox/isolation';
import { commandSpawn } from '../../sandbox/isolation';

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
  /** The sandbox's real path: where the command runs and, boxed, the only place it can write. */
  sandbox: string;
  timeoutSeconds: number;
  /** How commands run on this worker (found at its start). */
  isolation: Isolation;
  /** The plan's `execution.network`. */
  network: boolean;
  /** The plan's variables; see commandVariables. */
  variables: Readonly<Record<string, string>>;
  /** Kills the command when aborted. */
  signal: AbortSignal;
  /** Called while the command runs, so the activity keeps heartbeating. */
  progress(message: string): void;
}

/** Enough of a failing command's output to diagnose it without flooding the decision tree. */
export const OUTPUT_TAIL_CHARS = 4000;
const PROGRESS_INTERVAL_MS = 5000;

/**
 * What the plan gives a command on top of what the box lends from the worker (sandbox/isolation.ts, never a
 * secret): the plan id and the plan's arguments, so a script can read them without any quoting at all, and
 * GIT_CEILING_DIRECTORIES, so `git` never looks above the sandbox for a repository (unboxed, it would find whatever
 * repository holds the sandbox directory).
 */
export function commandVariables(plan: PlanSpec, sandbox: string): Record<string, string> {
  const env: Record<string, string> = {
    CLEVERAGENTS_PLAN_ID: plan.planId,
    GIT_CEILING_DIRECTORIES: path.dirname(sandbox),
  };
  for (const [name, value] of Object.entries(plan.arguments)) {
    if (value === null) continue;
    env[argumentVariableName(name)] = String(value);
  }
  return env;
}

/**
 * Runs `/bin/sh -c command` in the sandbox, boxed as `options.isolation` says, in its own process group, so a
 * timeout or a cancellation kills everything it started (a test runner's workers included), and whatever it left
 * running in the background once it exits: nothing a command starts may outlive it (boxed, its PID namespace ends
 * with it as well). Resolves for any exit; rejects with the signal's reason when cancelled, with
 * IsolationUnavailableError when the box cannot be made, and with the spawn error when nothing could be started.
 */
export async function runCommand(command: string, options: CommandOptions): Promise<CommandResult> {
  const { signal } = options;
  signal.throwIfAborted();
  const how = commandSpawn(options.isolation, {
    command,
    sandbox: options.sandbox,
    network: options.network,
    variables: options.variables,
  });
  return new Promise<CommandResult>((resolve, reject) => {
    const child = spawn(how.file, how.args, {
      cwd: how.cwd,
      env: how.env,
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
