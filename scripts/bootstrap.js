#!/usr/bin/env node
/**
 * Entry point of `npm start`, `npm run worker` and `npm test`. Plain CommonJS on Node built-ins only: it runs on a
 * fresh clone, before node_modules exists, and installs it.
 */
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { clearInterval, setInterval } = require('node:timers');
const { WORKER_NODE_FLAGS, workerEnv } = require('./worker-process');

const ROOT = path.resolve(__dirname, '..');
const MIN_NODE = [20, 19];
const COMMANDS = {
  start: 'scripts/start.ts',
  worker: 'worker/main.ts',
  test: 'scripts/test.ts',
};
/** The commands whose process runs the worker: started with its flags and environment (worker-process.js). */
const RUNS_WORKER = new Set(['start', 'worker']);

function fail(message) {
  process.stderr.write(`bootstrap: ${message}\n`);
  process.exit(1);
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    fail(
      `Node ${MIN_NODE.join('.')} or newer is required, this is ${process.versions.node}. ` +
        'Install a newer Node (https://nodejs.org, or `nvm install 20`) and retry.',
    );
  }
}

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** npm writes node_modules/.package-lock.json on every install: older than the lock file means out of date. */
function installIfNeeded() {
  const lock = path.join(ROOT, 'package-lock.json');
  const installed = mtime(path.join(ROOT, 'node_modules', '.package-lock.json'));
  const lockTime = mtime(lock);
  let reason;
  if (installed === undefined) reason = 'node_modules is missing';
  else if (lockTime !== undefined && lockTime > installed)
    reason = 'package-lock.json changed since the last install';
  if (!reason) return;
  // `npm ci` empties node_modules before installing: through a link, that is another checkout's installation.
  const modules = path.join(ROOT, 'node_modules');
  if (fs.lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) {
    fail(
      `${reason}, but node_modules is a link to ${fs.readlinkSync(modules)}: installing here would replace what ` +
        'it links to. Run `npm ci` where it leads, or replace the link with a directory.',
    );
  }

  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = lockTime === undefined ? ['install'] : ['ci'];
  process.stderr.write(`bootstrap: ${reason}; running npm ${args.join(' ')}...\n`);
  const result = spawnSync(npm, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.error) fail(`could not run npm: ${result.error.message}`);
  if (result.status !== 0)
    fail(`npm ${args.join(' ')} failed (exit code ${result.status ?? result.signal}).`);
}

function run(command, extraArgs) {
  const script = COMMANDS[command];
  if (!fs.existsSync(path.join(ROOT, 'node_modules', 'tsx')))
    fail('node_modules/tsx is missing; run `npm ci`.');

  // tsx as a loader in one node process, not the tsx CLI: the CLI sits between us and the script and SIGKILLs
  // its child when a relayed signal is not acknowledged within 30 ms, which can orphan the dev server that
  // `start` is in the middle of stopping.
  const runsWorker = RUNS_WORKER.has(command);
  const flags = runsWorker ? WORKER_NODE_FLAGS : [];
  const child = spawn(
    process.execPath,
    [...flags, '--import', 'tsx', path.join(ROOT, script), ...extraArgs],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: runsWorker ? workerEnv(process.env) : process.env,
    },
  );
  // A terminal Ctrl-C reaches the child directly too; it treats a duplicate that arrives at once as one.
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  // `kill <npm pid>` reaches only npm's `sh -c`, which dies without passing it on: losing our parent is the
  // only sign we get, and it means the same as SIGTERM.
  const parent = process.ppid;
  const parentWatch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(parentWatch);
    forward('SIGTERM');
  }, 1_000);
  parentWatch.unref();
  child.on('error', (err) => fail(`could not run ${script}: ${err.message}`));
  child.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0));
  });
}

checkNode();
const [command, ...rest] = process.argv.slice(2);
if (!command || !Object.hasOwn(COMMANDS, command)) {
  fail(`usage: node scripts/bootstrap.js <${Object.keys(COMMANDS).join('|')}> [args...]`);
}
installIfNeeded();
run(command, rest);
