/**
 * `DATABASE_URL=postgresql://… npm start`, as a person runs it: the engine migrates the database, starts its dev
 * server and worker, a plan made with the CLI runs end to end, the worker's metrics show it, and Ctrl-C (SIGINT)
 * stops everything.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../client/cli/main';
import { REPO_ROOT } from '../../config/paths';
import { freePort } from '../../lib/net';
import { createPostgresTestDatabase } from '../helpers/database';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'start-pg-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(env: Record<string, string>, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env: { ...env, AGENTS_USER: 'starter' },
    isTty: false,
  });
  return { code, stdout, stderr };
}

it('runs a plan end to end on PostgreSQL, with its counters on the metrics port', async () => {
  // A password the server does not need (trust), to see that it never reaches the output.
  const databaseUrl = (await createPostgresTestDatabase()).replace('agents@', 'agents:s3cret@');
  const port = await freePort();
  const metricsPort = await freePort();
  const env = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
  };
  const start = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'bootstrap.js'), 'start'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...env,
      TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_DB_FILE: path.join(dir, 'temporal.db'),
      SANDBOX_DIR: path.join(dir, 'sandboxes'),
      WORKER_METRICS_PORT: String(metricsPort),
      WORKER_METRICS_HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  start.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  start.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 240_000;
    while (!output.includes('worker: polling')) {
      if (Date.now() > deadline || start.exitCode !== null)
        throw new Error(`npm start did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(output).toContain(`Application database: ${databaseUrl.replace('s3cret', '***')}`);

    const project = path.join(dir, 'project');
    mkdirSync(project);
    expect((await cli(env, 'project', 'add', 'local/pg', '--path', project)).code).toBe(0);
    const used = await cli(
      env,
      'plan',
      'use',
      'local/example',
      '-p',
      'local/pg',
      '--automation',
      'full',
      '--arg',
      'greeting=hello from PostgreSQL',
      '--format',
      'json',
    );
    expect(used.code).toBe(0);
    const planId = (JSON.parse(used.stdout) as { plan_id: string }).plan_id;
    const waited = await cli(env, 'plan', 'wait', planId, '--format', 'json');
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE' });
    expect(readFileSync(path.join(project, 'GREETING.md'), 'utf8')).toContain('hello from PostgreSQL');

    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^agents_plans_started\{action="local\/example"[^}]*\} 1$/m);
    expect(metrics).toMatch(
      /^agents_plans_finished\{action="local\/example",[^}]*phase="APPLIED",state="COMPLETE"[^}]*\} 1$/m,
    );
    expect(metrics).toMatch(/^temporal_/m);
  } finally {
    start.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  expect(output).toContain('worker: stopped');
  expect(output).not.toContain('s3cret');
}, 300_000);
