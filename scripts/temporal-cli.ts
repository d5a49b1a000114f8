/**
 * Finds, or as a last resort builds, the Temporal CLI that runs the dev server for `npm start` and the tests.
 * The order and the cache location are explained in docs/decisions/0003-temporal-cli-provisioning.md.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { engineCacheDir } from '../config/paths';

const execFileAsync = promisify(execFile);

/** Newest tag `go install` accepts: later go.mod files carry a `replace` directive, which `go install` refuses. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const GO_PACKAGE = `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`;
const BINARY_NAME = process.platform === 'win32' ? 'temporal.exe' : 'temporal';
const PROGRESS_EVERY_MS = 15_000;
/** A build takes about 3.5 min on 2 cores; a lock older than this belongs to a process that died long ago. */
const STALE_LOCK_MS = 30 * 60_000;

export interface EnsureTemporalCliOptions {
  log?: (line: string) => void;
}

const defaultLog = (line: string): void => {
  process.stderr.write(`[temporal-cli] ${line}\n`);
};

/** Root of this project's machine-wide cache: outside the clone, so fresh clones and `git clean` keep it. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(engineCacheDir(env), 'temporal-cli');
}

/** Directory holding the CLI built (or placed) for {@link TEMPORAL_CLI_VERSION}. */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRoot(env), TEMPORAL_CLI_VERSION);
}

/** Where {@link ensureTemporalCli} looks for, and builds, the cached binary. */
export function cachedTemporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(temporalCliCacheDir(env), BINARY_NAME);
}

function sdkDownloadDir(env: NodeJS.ProcessEnv): string {
  return path.join(cacheRoot(env), 'sdk-download');
}

export class TemporalCliNotFoundError extends Error {
  override name = 'TemporalCliNotFoundError';
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A file named `temporal` is not proof: a half-written or foreign binary must not get as far as `start-dev`. */
async function probeVersion(file: string): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync(file, ['--version'], { timeout: 20_000 });
    const line = stdout.trim().split('\n')[0] ?? '';
    return line.startsWith('temporal version') ? line : undefined;
  } catch {
    return undefined;
  }
}

async function usable(file: string): Promise<boolean> {
  return isExecutableFile(file) && (await probeVersion(file)) !== undefined;
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string[] {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
  return dirs.map((d) => path.resolve(d, name)).filter(isExecutableFile);
}

/**
 * Returns an absolute path to a working Temporal CLI: env TEMPORAL_CLI, then `temporal` on PATH, then the cached
 * build, then the SDK's own download, then a `go install` into the cache. Only the last two write anything, and
 * they do so under a lock so concurrent callers (npm start + npm test, parallel CI steps) build once.
 */
export async function ensureTemporalCli(opts: EnsureTemporalCliOptions = {}): Promise<string> {
  const log = opts.log ?? defaultLog;
  const env = process.env;

  const explicit = env.TEMPORAL_CLI;
  if (explicit !== undefined && explicit !== '') {
    const file = path.resolve(explicit);
    if (!fs.existsSync(file)) {
      throw new TemporalCliNotFoundError(
        `TEMPORAL_CLI=${explicit} does not exist; point it at a Temporal CLI binary or unset it.`,
      );
    }
    if (!isExecutableFile(file)) {
      throw new TemporalCliNotFoundError(
        `TEMPORAL_CLI=${explicit} is not an executable file (try \`chmod +x ${file}\`), or unset it.`,
      );
    }
    if ((await probeVersion(file)) === undefined) {
      throw new TemporalCliNotFoundError(
        `TEMPORAL_CLI=${explicit} did not answer \`--version\` like the Temporal CLI; point it at a Temporal CLI binary or unset it.`,
      );
    }
    return file;
  }

  for (const candidate of findOnPath(BINARY_NAME, env)) {
    if ((await probeVersion(candidate)) !== undefined) return candidate;
  }

  const found = await findCached(env);
  if (found) return found;

  return withBuildLock(env, log, async () => {
    // Whoever held the lock before us may have just finished the job.
    const again = await findCached(env);
    if (again) return again;
    const downloaded = await trySdkDownload(env, log);
    if (downloaded) return downloaded;
    return buildWithGo(env, log);
  });
}

async function findCached(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const built = cachedTemporalCliPath(env);
  if (await usable(built)) return built;
  const downloaded = sdkDownloadedBinary(env);
  if (downloaded && (await usable(downloaded))) return downloaded;
  return undefined;
}

function testingPackageDir(): string {
  return path.dirname(require.resolve('@temporalio/testing/package.json'));
}

/** The SDK core names its download `temporal-sdk-typescript-<sdk version>` in the download dir. */
function sdkDownloadedBinary(env: NodeJS.ProcessEnv): string | undefined {
  let version: string;
  try {
    version = (
      JSON.parse(fs.readFileSync(path.join(testingPackageDir(), 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return undefined;
  }
  const ext = process.platform === 'win32' ? '.exe' : '';
  return path.join(sdkDownloadDir(env), `temporal-sdk-typescript-${version}${ext}`);
}

/**
 * The SDK downloads a release binary from temporal.download; where that host is unreachable it fails within a
 * second (ENOTFOUND). It runs in a child process because creating the SDK's Runtime in this one would install
 * SIGINT/SIGTERM handlers that stop Ctrl-C from ending a later `go install`.
 */
async function trySdkDownload(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<string | undefined> {
  const dir = sdkDownloadDir(env);
  fs.mkdirSync(dir, { recursive: true });
  const script = `
    const [testing, dir] = process.argv.slice(1);
    const { TestWorkflowEnvironment } = require(testing);
    TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'cached-download', downloadDir: dir } } })
      .then((env) => env.teardown())
      .then(() => process.exit(0), (err) => { console.error(String((err && err.message) || err)); process.exit(1); });
  `;
  log('Temporal CLI not found; trying the Temporal SDK download (needs temporal.download)...');
  const started = Date.now();
  try {
    await execFileAsync(process.execPath, ['-e', script, testingPackageDir(), dir], { timeout: 10 * 60_000 });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    const reason = /ENOTFOUND|dns error|Name or service not known/i.test(stderr)
      ? 'temporal.download is unreachable from this machine'
      : lastLines(stderr, 3) || String(err);
    log(`SDK download failed after ${formatElapsed(Date.now() - started)}: ${reason}`);
    return undefined;
  }
  const file = sdkDownloadedBinary(env);
  if (file && (await usable(file))) {
    log(`Downloaded the Temporal CLI to ${file}`);
    return file;
  }
  log(`SDK download reported success but no usable binary was found in ${dir}`);
  return undefined;
}

async function buildWithGo(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<string> {
  const go = findOnPath(process.platform === 'win32' ? 'go.exe' : 'go', env)[0];
  if (!go) {
    throw new TemporalCliNotFoundError(
      [
        'No Temporal CLI found and it cannot be built here (Go is not on PATH). Do one of:',
        '  - install the Temporal CLI: `brew install temporal` or `curl -sSf https://temporal.download/cli.sh | sh`, and put it on PATH;',
        '  - set TEMPORAL_CLI=/absolute/path/to/temporal;',
        `  - install Go (https://go.dev/dl/) and rerun: the CLI is then built once into ${temporalCliCacheDir(env)}.`,
      ].join('\n'),
    );
  }

  const dir = temporalCliCacheDir(env);
  fs.mkdirSync(dir, { recursive: true });
  // GOBIN inside the cache dir keeps the final rename on one filesystem, hence atomic: an interrupted build leaves
  // only a `.build-*` directory (swept below), never a half-written `temporal`.
  removeStaleBuildDirs(dir);
  const gobin = fs.mkdtempSync(path.join(dir, '.build-'));
  const started = Date.now();
  log(
    `Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with ${go} (once per machine; ~3-4 min and ~1.8 GB RAM on 2 cores)...`,
  );
  log(`  go install ${GO_PACKAGE}  (GOBIN=${gobin})`);

  const child = spawn(go, ['install', GO_PACKAGE], {
    env: { ...env, GOBIN: gobin },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killChild = (): void => {
    child.kill('SIGKILL');
    fs.rmSync(gobin, { recursive: true, force: true });
  };
  // If this process is told to exit mid-build, the build must not go on behind the user's back.
  process.on('exit', killChild);
  const ticker = setInterval(() => {
    log(`  still building... ${formatElapsed(Date.now() - started)} elapsed`);
  }, PROGRESS_EVERY_MS);
  const output: string[] = [];
  const onLine = (line: string): void => {
    output.push(line);
    if (output.length > 200) output.shift();
    log(`  [go] ${line}`);
  };
  forwardLines(child, onLine);

  try {
    const { code, signal } = await waitForExit(child);
    if (code !== 0) {
      throw new Error(
        `\`go install ${GO_PACKAGE}\` failed (${signal ? `signal ${signal}` : `exit code ${String(code)}`}) after ` +
          `${formatElapsed(Date.now() - started)}:\n${output.slice(-30).join('\n')}`,
      );
    }
    const built = path.join(gobin, BINARY_NAME);
    const version = await probeVersion(built);
    if (version === undefined) throw new Error(`go install finished but ${built} does not run`);
    const target = cachedTemporalCliPath(env);
    fs.renameSync(built, target);
    log(`Built ${version} in ${formatElapsed(Date.now() - started)}: ${target}`);
    return target;
  } finally {
    clearInterval(ticker);
    process.off('exit', killChild);
    fs.rmSync(gobin, { recursive: true, force: true });
  }
}

function removeStaleBuildDirs(dir: string): void {
  for (const entry of fs.readdirSync(dir)) {
    if (entry.startsWith('.build-')) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

interface LockOwner {
  pid: number;
  host: string;
  since: number;
}

function readLock(file: string): LockOwner | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

function ownerAlive(owner: LockOwner | undefined): boolean {
  if (!owner) return false;
  if (Date.now() - owner.since > STALE_LOCK_MS) return false;
  // A lock from another host (shared home directory) cannot be checked: trust it until it goes stale.
  if (owner.host !== os.hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * O_EXCL creation is atomic on local filesystems, so exactly one process wins; the others poll until the winner
 * finishes (then find its binary) or dies (then take over its stale lock).
 */
async function withBuildLock(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  fn: () => Promise<string>,
): Promise<string> {
  const root = cacheRoot(env);
  fs.mkdirSync(root, { recursive: true });
  const lockFile = path.join(root, `${TEMPORAL_CLI_VERSION}.lock`);
  const waitStarted = Date.now();
  let lastNotice = 0;
  for (;;) {
    try {
      const fd = fs.openSync(lockFile, 'wx');
      fs.writeSync(
        fd,
        JSON.stringify({ pid: process.pid, host: os.hostname(), since: Date.now() } satisfies LockOwner),
      );
      fs.closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readLock(lockFile);
    if (!ownerAlive(owner)) {
      // A lock file still being written reads as undefined: give its writer a moment before calling it stale.
      if (owner || Date.now() - fileMtime(lockFile) > 2_000) {
        log(`Removing a stale lock left by pid ${owner ? String(owner.pid) : '?'}: ${lockFile}`);
        fs.rmSync(lockFile, { force: true });
        continue;
      }
    }
    const found = await findCached(env);
    if (found) return found;
    if (Date.now() - lastNotice >= PROGRESS_EVERY_MS) {
      lastNotice = Date.now();
      log(
        `Waiting for pid ${owner ? String(owner.pid) : '?'} to finish providing the Temporal CLI ` +
          `(${formatElapsed(Date.now() - waitStarted)} so far; lock ${lockFile})`,
      );
    }
    await sleep(1_000);
  }
  const release = (): void => {
    // Only remove a lock that is still ours.
    if (readLock(lockFile)?.pid === process.pid) fs.rmSync(lockFile, { force: true });
  };
  process.on('exit', release);
  try {
    return await fn();
  } finally {
    process.off('exit', release);
    release();
  }
}

function fileMtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function forwardLines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') onLine(line);
    });
    stream.on('end', () => {
      if (buffer.trim() !== '') onLine(buffer);
    });
  }
}

function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join(' | ');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function formatElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
