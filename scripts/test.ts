/**
 * `npm test`: provisions before jest starts, so that on a fresh machine the one-off Temporal CLI build shows its
 * progress here instead of running silently inside jest's global setup.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ensurePrismaClientGenerated } from '../storage/migrate';
import { sharedEnvFields } from '../config/env';
import { REPO_ROOT } from './config';
import { ensureCliBuilt } from './cli-build';
import { checkIsolation } from './isolation-check';
import { ensureTemporalCli } from './temporal-cli';

let jestProcess: ChildProcess | undefined;

// A terminal Ctrl-C reaches jest directly; a signal sent to this process alone must reach it too. Before jest
// runs, exiting (rather than dying of the signal) lets the Temporal CLI build kill `go` and release its lock.
function onSignal(signal: NodeJS.Signals): void {
  if (!jestProcess) process.exit(128 + (os.constants.signals[signal] ?? 0));
  if (jestProcess.exitCode === null && jestProcess.signalCode === null) jestProcess.kill(signal);
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

async function main(): Promise<number> {
  // Tests run plans' commands in the box, as a worker does: without it they would fail one by one, each with the
  // refusal. SANDBOX_ISOLATION=none runs them unisolated (and skips the tests of the box itself).
  const mode = sharedEnvFields.SANDBOX_ISOLATION.safeParse(process.env.SANDBOX_ISOLATION || undefined);
  if (!mode.success) {
    console.error(
      `SANDBOX_ISOLATION must be bwrap or none (got ${JSON.stringify(process.env.SANDBOX_ISOLATION)})`,
    );
    return 2;
  }
  const { isolation, advice } = await checkIsolation({ mode: mode.data, cpuSeconds: 60 });
  for (const line of advice) console.error(`[test] ${line}`);
  if (isolation.mode === 'unavailable') {
    console.error('[test] npm test needs bubblewrap (or SANDBOX_ISOLATION=none): stopping before jest.');
    return 1;
  }

  const cliPath = await ensureTemporalCli();
  await ensurePrismaClientGenerated();
  ensureCliBuilt((line) => console.error(`[test] ${line}`));

  const jest = path.join(REPO_ROOT, 'node_modules', '.bin', 'jest');
  const child = (jestProcess = spawn(jest, process.argv.slice(2), {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, TEMPORAL_CLI_PATH: cliPath },
  }));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      resolve(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)),
    );
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
