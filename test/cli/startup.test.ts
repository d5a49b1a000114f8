/**
 * What the `agents` CLI loads before it knows the command: not the Temporal client, its protobufs or the workflow
 * code (half of a database-only command's start-up), which client/cli/runtime.ts loads on first use. Checked in a
 * fresh Node process, as `bin/agents.js` starts one, since jest's module registry is not Node's.
 */
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../../config/paths';

function modulesLoadedBy(script: string): string[] {
  const result = spawnSync(
    process.execPath,
    [
      '-e',
      `require('tsx/cjs'); ${script}; ` +
        "process.stdout.write(JSON.stringify(Object.keys(require.cache).map((k) => k.replace(process.cwd() + '/', ''))))",
    ],
    { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  if (result.status !== 0) throw new Error(`node exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}

it('loads neither the Temporal client nor the workflow code until a command needs them', () => {
  const loaded = modulesLoadedBy(
    "require('./client/cli/main.ts').buildProgram({ stdout() {}, stderr() {}, env: {}, isTty: false })",
  );
  expect(loaded.filter((m) => /@temporalio\/|client\/plans\.ts|workflows\//.test(m))).toEqual([]);
  // The probe sees what it should: the CLI and the stores were loaded.
  expect(loaded).toEqual(expect.arrayContaining(['client/cli/main.ts', 'client/catalog.ts']));
});

it('loads them for a command that talks to Temporal', () => {
  const loaded = modulesLoadedBy("require('./client/plans.ts')");
  expect(loaded.some((m) => m.includes('node_modules/@temporalio/client/'))).toBe(true);
});

it('loads no OpenTelemetry where tracing is off, in the CLI or the worker (ADR 0013)', () => {
  const loaded = modulesLoadedBy("require('./client/plans.ts'); require('./worker/worker.ts')");
  expect(loaded.some((m) => m.includes('node_modules/@temporalio/worker/'))).toBe(true);
  expect(
    loaded.filter((m) => /@opentelemetry\/|interceptors-opentelemetry|lib\/tracing\.ts/.test(m)),
  ).toEqual([]);
});
