/**
 * The box every command of a plan runs in: a `run` step, a validation command, an invariant rule's command. Such a
 * command may be a model's proposal, so it is treated as hostile: it must not read the worker's secrets (its
 * environment, its database), nor touch anything but its own sandbox copy (docs/decisions/0009-command-isolation.md).
 *
 * The box is bubblewrap (`bwrap`): new user, mount, PID, IPC, UTS, cgroup and network namespaces; a root that
 * shows only what is listed here (the system, read-only; a private /tmp; the sandbox, the one place writable); an
 * environment made of the listed variables only; no capabilities; a CPU-time limit per process. Whether bwrap
 * works is found out once, when the worker starts (detectIsolation); where it does not, commands are refused with
 * the reason, never run unisolated, unless SANDBOX_ISOLATION=none asked for exactly that.
 */
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxIsolationMode } from '../config/env';
import { errorCode, isInside, lstatOrNull } from './paths';

/** How to get bubblewrap, for every message that says it is missing. */
export const INSTALL_BUBBLEWRAP =
  'install bubblewrap (`apt-get install bubblewrap` on Debian and Ubuntu, `dnf install bubblewrap` on Fedora)';

/** How commands run on this worker, decided once at its start. */
export type Isolation = BoxIsolation | { mode: 'none' } | { mode: 'unavailable'; reason: string };

export interface BoxIsolation {
  mode: 'bwrap';
  /** Absolute path of the bwrap binary. */
  bwrap: string;
  /** CPU seconds each process may use: SIGXCPU then, SIGKILL a second later should it ignore that. */
  cpuSeconds: number;
  /** bwrap arguments for the read-only view of the system, worked out from this machine's layout at start. */
  system: readonly string[];
  /** More of the system to show when a plan may use the network (where /etc/resolv.conf really is). */
  network: readonly string[];
  /** PATH inside the box: the worker's directories that the box shows, in the worker's order. */
  path: string;
}

/** A command refused because the box cannot be made here; the message says why and what to do. */
export class IsolationUnavailableError extends Error {
  override name = 'IsolationUnavailableError';

  constructor(readonly reason: string) {
    super(
      `commands run in an isolated box (bubblewrap), which is not available on this worker: ${reason}. ` +
        `To run them, ${INSTALL_BUBBLEWRAP} and restart the worker, or set SANDBOX_ISOLATION=none to run them ` +
        'unisolated',
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What the box shows

/**
 * The system, read-only: programs, libraries and configuration. An allow-list, so what is not named (the engine's
 * checkout and database, other sandboxes, /root, /home, /var, /run, /opt, /mnt) does not exist in the box at all.
 * On a merged-/usr system the top-level directories are links into /usr, recreated as such.
 */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
/** The only writable place besides the sandbox: a tmpfs of the box's own, gone when the command ends. */
const BOX_TMP = '/tmp';
/** HOME in the box: on its tmpfs, so tools' caches and dotfiles never land in the sandbox (and the changeset). */
export const BOX_HOME = '/tmp/home';
/** Where PATH lookups still find something in the box. */
const PATH_ROOTS = ['/usr', '/bin', '/sbin'];
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The worker's variables a boxed command still sees: none of them holds a secret. */
const BOX_INHERITED_ENV = ['LANG', 'LC_ALL', 'TERM', 'CI'] as const;
/** What an unisolated command sees of the worker, as before the box existed. */
const UNISOLATED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TERM', 'CI'] as const;

/**
 * The arguments of /bin/sh setting the CPU limit, then running the command in a shell of its own (so `$0` and
 * line numbers are the command's). `ulimit -t` sets both limits, `-St` lowers the soft one: one second between
 * SIGXCPU and SIGKILL. In the shell rather than `prlimit`, because the shell is there whatever else is installed.
 */
const CPU_LIMITED = 'ulimit -t "$2" && ulimit -St "$1" && exec /bin/sh -c "$3"';

/**
 * /etc as every local user sees it: whatever in it is not readable by others (shadow, gshadow, private TLS keys,
 * a database's host-based auth) is hidden. The box keeps the worker's user id, and a worker running as root would
 * otherwise read them through the box as their owner.
 */
async function hiddenInEtc(dir = '/etc'): Promise<string[]> {
  const args: string[] = [];
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    // What the worker itself cannot list, it cannot vouch for: hidden whole.
    if (errorCode(error) === 'EACCES' && dir !== '/etc') return ['--tmpfs', dir, '--remount-ro', dir];
    throw error;
  }
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const stat = await lstatOrNull(file);
    if (stat === null) continue;
    if (stat.isDirectory()) {
      const searchable = constants.S_IROTH | constants.S_IXOTH;
      if ((stat.mode & searchable) !== searchable) args.push('--tmpfs', file, '--remount-ro', file);
      else args.push(...(await hiddenInEtc(file)));
    } else if ((stat.mode & constants.S_IROTH) === 0) {
      args.push('--ro-bind', '/dev/null', file);
    }
  }
  return args;
}

async function systemView(): Promise<string[]> {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const stat = await lstatOrNull(dir);
    if (stat === null) continue;
    if (stat.isSymbolicLink()) args.push('--symlink', await fs.readlink(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  args.push(...(await hiddenInEtc()));
  return args;
}

/** A resolver configuration that is a link out of /etc (systemd-resolved's, in /run) must be shown too. */
async function networkView(): Promise<string[]> {
  let real: string;
  try {
    real = await fs.realpath('/etc/resolv.conf');
  } catch {
    return [];
  }
  if (SYSTEM_DIRS.some((dir) => isInside(dir, real))) return [];
  const dir = path.dirname(real);
  return ['--ro-bind', dir, dir];
}

function boxPath(workerPath: string | undefined): string {
  const dirs = (workerPath ?? '')
    .split(':')
    .filter((dir) => path.isAbsolute(dir) && PATH_ROOTS.some((root) => isInside(root, path.normalize(dir))));
  return dirs.length === 0 ? DEFAULT_PATH : [...new Set(dirs)].join(':');
}

function inherited(env: NodeJS.ProcessEnv, names: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

// ---------------------------------------------------------------------------------------------------------------
// Running a command

export interface CommandRequest {
  command: string;
  /** The sandbox's real path: the command's working directory and, boxed, the only place it can write. */
  sandbox: string;
  /** The plan's `execution.network`: without it the box has a network namespace of its own, with no way out. */
  network: boolean;
  /** The plan's variables (actors/steps/command.ts), added to what the worker's environment lends. */
  variables: Readonly<Record<string, string>>;
}

/** What to spawn for a command. */
export interface CommandSpawn {
  file: string;
  args: string[];
  /** The spawned process's whole environment. */
  env: Record<string, string>;
  cwd: string;
}

/**
 * How to spawn `request` under `isolation`. Throws IsolationUnavailableError when the box cannot be made: there is
 * no path from here to an unisolated command except SANDBOX_ISOLATION=none.
 */
export function commandSpawn(
  isolation: Isolation,
  request: CommandRequest,
  workerEnv: NodeJS.ProcessEnv = process.env,
): CommandSpawn {
  switch (isolation.mode) {
    case 'unavailable':
      throw new IsolationUnavailableError(isolation.reason);
    case 'none':
      return {
        file: '/bin/sh',
        args: ['-c', request.command],
        env: { ...inherited(workerEnv, UNISOLATED_ENV), ...request.variables },
        cwd: request.sandbox,
      };
    case 'bwrap':
      // bwrap itself gets an empty environment: it is the box's PID 1, and its /proc/1/environ is readable inside.
      return { file: isolation.bwrap, args: boxArguments(isolation, request, workerEnv), env: {}, cwd: '/' };
  }
}

/**
 * The bwrap command line, in order (bwrap applies its options in order: the sandbox is bound after /tmp's tmpfs,
 * which may hold it, and the root is made read-only last).
 */
export function boxArguments(
  box: BoxIsolation,
  request: CommandRequest,
  workerEnv: NodeJS.ProcessEnv = process.env,
): string[] {
  const env: Record<string, string> = {
    PATH: box.path,
    HOME: BOX_HOME,
    TMPDIR: BOX_TMP,
    ...inherited(workerEnv, BOX_INHERITED_ENV),
    ...request.variables,
  };
  return [
    // Every namespace: the box sees no process, mount, host name or network of the machine.
    '--unshare-all',
    ...(request.network ? ['--share-net', ...box.network] : []),
    // Nothing outlives the worker, and the command cannot push input into the worker's terminal (TIOCSTI).
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...box.system,
    // A procfs of the box's own PID namespace: /proc/$PPID and /proc/1 are the box's processes, not the worker.
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    BOX_TMP,
    '--dir',
    BOX_HOME,
    '--bind',
    request.sandbox,
    request.sandbox,
    '--chdir',
    request.sandbox,
    '--remount-ro',
    '/',
    '--clearenv',
    ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--',
    '/bin/sh',
    '-c',
    CPU_LIMITED,
    'cleveragents-box',
    String(box.cpuSeconds),
    String(box.cpuSeconds + 1),
    request.command,
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Detection

export interface DetectOptions {
  mode: SandboxIsolationMode;
  cpuSeconds: number;
  /** The bwrap binary: a name looked up on PATH (default `bwrap`) or a path. */
  bwrap?: string;
  /** The worker's environment: its PATH finds bwrap and becomes the box's. */
  env?: NodeJS.ProcessEnv;
}

const PROBE_TIMEOUT_MS = 15_000;

/**
 * How this worker will run commands. `none` only when asked for; otherwise the real box, tried once on an empty
 * directory, or `unavailable` with the reason (bwrap missing, or failing here: no user namespaces, say).
 */
export async function detectIsolation(options: DetectOptions): Promise<Isolation> {
  if (options.mode === 'none') return { mode: 'none' };
  const env = options.env ?? process.env;
  const name = options.bwrap ?? 'bwrap';
  const bwrap = await findExecutable(name, env.PATH);
  if (bwrap === null) return { mode: 'unavailable', reason: `${name} is not installed (not found)` };
  const box: BoxIsolation = {
    mode: 'bwrap',
    bwrap,
    cpuSeconds: options.cpuSeconds,
    system: await systemView(),
    network: await networkView(),
    path: boxPath(env.PATH),
  };
  const problem = await probe(box, env);
  return problem === null ? box : { mode: 'unavailable', reason: problem };
}

async function findExecutable(name: string, searchPath: string | undefined): Promise<string | null> {
  const candidates = name.includes('/')
    ? [path.resolve(name)]
    : (searchPath ?? '')
        .split(':')
        .filter((dir) => path.isAbsolute(dir))
        .map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      await fs.access(candidate, constants.X_OK);
      if ((await fs.stat(candidate)).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** Null when the box runs `true` in an empty sandbox; else bwrap's own complaint. */
async function probe(box: BoxIsolation, env: NodeJS.ProcessEnv): Promise<string | null> {
  const sandbox = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'cleveragents-probe-')));
  try {
    const spawn = commandSpawn(box, { command: 'true', sandbox, network: false, variables: {} }, env);
    return await new Promise<string | null>((resolve) => {
      execFile(
        spawn.file,
        spawn.args,
        { env: spawn.env, cwd: spawn.cwd, timeout: PROBE_TIMEOUT_MS },
        (error, _stdout, stderr) => {
          if (error === null) return resolve(null);
          const said = stderr.trim().split('\n')[0] ?? '';
          resolve(`${box.bwrap} does not work here: ${said === '' ? error.message : said}`);
        },
      );
    });
  } finally {
    await fs.rm(sandbox, { recursive: true, force: true });
  }
}

/** One line for the worker's start: how its commands will run. */
export function describeIsolation(isolation: Isolation): string {
  switch (isolation.mode) {
    case 'bwrap':
      return (
        `commands run isolated (${isolation.bwrap}): only their sandbox writable, no network unless the plan's ` +
        `execution.network allows it, ${isolation.cpuSeconds}s of CPU per process`
      );
    case 'none':
      return (
        'WARNING: SANDBOX_ISOLATION=none: run steps, validation commands and command rules run unisolated, as ' +
        "the worker's user: they can read and write whatever it can, and reach the network"
      );
    case 'unavailable':
      return (
        `commands cannot be isolated: ${isolation.reason}. Run steps, validation commands and command rules ` +
        `will be refused until you ${INSTALL_BUBBLEWRAP} and restart the worker (or set SANDBOX_ISOLATION=none ` +
        'to run them unisolated)'
      );
  }
}
