/**
 * Commands that try to get past the box (sandbox/isolation.ts): real bubblewrap, real files, real processes, a
 * real server. Each test runs a `run` step the way Execute does, in a sandbox copy made by createSandbox, and looks
 * from outside the box at what the command could see or change.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createBuiltinActors } from '../../actors/builtin';
import { checkInvariantRule } from '../../actors/invariant-rules';
import { runStep, runValidation, StepError } from '../../actors/steps';
import type { StepEnv, StepReport } from '../../actors/steps';
import type { ExecutionActor } from '../../actors/types';
import { REPO_ROOT } from '../../config/paths';
import { DecisionLog } from '../../domain/decision-log';
import type { PlanSpec } from '../../domain/plan';
import type { Workspace } from '../../domain/project-link';
import { planSpecSchema } from '../../domain/schemas';
import { stepFromFile } from '../../domain/steps';
import type { Isolation } from '../../sandbox/isolation';
import { describeIsolation, detectIsolation } from '../../sandbox/isolation';
import { createSandbox } from '../../sandbox/workspace';
import { allEnded, processesWith, uniqueSeconds } from '../helpers/processes';
import { CREATED_AT, PLAN_ID } from '../unit/fixtures';

/**
 * Whether bubblewrap works here at all. Only a developer who said SANDBOX_ISOLATION=none (as `npm test` advises on
 * a machine without it) skips these tests; everywhere else a missing bwrap fails them, naming the reason.
 */
const probe = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', 'true'], { encoding: 'utf8' });
const bwrapProblem =
  probe.error !== undefined ? probe.error.message : probe.status === 0 ? null : probe.stderr.trim();
const skipAll = bwrapProblem !== null && process.env.SANDBOX_ISOLATION === 'none';
if (skipAll) {
  console.warn(
    `isolation tests skipped: bubblewrap does not work here (${bwrapProblem}); SANDBOX_ISOLATION=none`,
  );
}
const describeBox = skipAll ? describe.skip : describe;

const CPU_SECONDS = 60;

let box: Isolation;
let base: string;
let root: string;
let sandbox: string;

beforeAll(async () => {
  box = await detectIsolation({ mode: 'bwrap', cpuSeconds: CPU_SECONDS });
  if (box.mode !== 'bwrap' && !skipAll) throw new Error(describeIsolation(box));
});

beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'isolation-test-')));
  root = path.join(base, 'project');
  // Laid out as Execute lays it out: SANDBOX_DIR/<plan>/execute-<run>/<n>-<project>.
  sandbox = path.join(base, 'sandboxes', PLAN_ID, 'execute-1.1', '1-api');
  await fs.mkdir(root, { recursive: true });
  await fs.writeFile(path.join(root, 'README.md'), '# api\n');
});

afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function plan(network = false): PlanSpec {
  return planSpecSchema.parse({
    planId: PLAN_ID,
    name: 'isolation test',
    actionName: 'local/demo',
    projects: [{ projectName: 'acme/api', alias: 'api' }],
    automationLevel: 'MANUAL',
    execution: { network },
    createdAt: CREATED_AT,
  });
}

function workspaces(): Workspace[] {
  return [{ projectName: 'acme/api', alias: 'api', readOnly: false, root, sandbox }];
}

function stepEnv(options: { network?: boolean; isolation?: Isolation } = {}): StepEnv {
  return {
    plan: plan(options.network),
    workspaces: workspaces(),
    signal: new AbortController().signal,
    progress: () => undefined,
    isolation: options.isolation ?? box,
  };
}

/** Runs `command` as a `run` step in a fresh copy of the project: its output, or the StepError it failed with. */
async function run(
  command: string,
  options: { network?: boolean; isolation?: Isolation; timeoutSeconds?: number } = {},
): Promise<{ ok: true; output: string } | { ok: false; error: StepError }> {
  await createSandbox(root, sandbox);
  try {
    const report: StepReport = await runStep(
      stepFromFile({ run: command, timeout_seconds: options.timeoutSeconds ?? 60 }),
      stepEnv(options),
    );
    return { ok: true, output: report.command?.output ?? '' };
  } catch (error) {
    if (error instanceof StepError) return { ok: false, error };
    throw error;
  }
}

async function output(command: string, options: { network?: boolean } = {}): Promise<string> {
  const result = await run(command, options);
  if (!result.ok) throw result.error;
  return result.output;
}

/** This process's descriptors above 2 without close-on-exec: what any child, boxed or not, inherits. */
async function inheritedDescriptors(): Promise<number[]> {
  const O_CLOEXEC = 0o2000000;
  const fds: number[] = [];
  for (const entry of await fs.readdir('/proc/self/fd')) {
    const info = await fs.readFile(`/proc/self/fdinfo/${entry}`, 'utf8').catch(() => null);
    const flags = info === null ? null : /^flags:\s+(\d+)/m.exec(info)?.[1];
    if (flags !== undefined && flags !== null && (parseInt(flags, 8) & O_CLOEXEC) === 0)
      fds.push(Number(entry));
  }
  return fds.filter((fd) => fd > 2);
}

async function exists(file: string): Promise<boolean> {
  return fs.lstat(file).then(
    () => true,
    () => false,
  );
}

describeBox('a boxed command', () => {
  const canary = `canary-${process.pid}-${Date.now()}`;
  const saved: Record<string, string | undefined> = {};
  beforeEach(() => {
    for (const name of ['CANARY_SECRET', 'DATABASE_URL', 'CLEVERAGENTS_MODEL_API_KEY']) {
      saved[name] = process.env[name];
      process.env[name] = `${name}=${canary}`;
    }
  });
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("sees none of the worker's environment, through /proc or otherwise", async () => {
    const seen = await output(
      'echo "ppid=$PPID"; env; cat /proc/$PPID/environ /proc/1/environ /proc/self/environ; ' +
        'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; done; ls /proc; true',
    );
    expect(seen).toContain(`CLEVERAGENTS_PLAN_ID=${PLAN_ID}`);
    expect(seen).not.toContain(canary);
    // Its own PID namespace: the worker (and everything else on the machine) is not there to be read.
    const pids = seen.split(/\s+/).filter((word) => /^\d+$/.test(word));
    expect(pids).not.toContain(String(process.pid));
    expect(seen).toMatch(/^ppid=1$/m);
  });

  it('cannot read the engine, its database, other sandboxes, /root or /tmp outside its sandbox', async () => {
    const secretInTmp = path.join(base, 'canary.txt');
    await fs.writeFile(secretInTmp, canary);
    const otherSandbox = path.join(base, 'sandboxes', PLAN_ID, 'execute-1.1', '2-web');
    await fs.mkdir(otherSandbox, { recursive: true });
    await fs.writeFile(path.join(otherSandbox, 'secret.txt'), canary);
    const home = os.homedir();
    const secretInHome = path.join(home, `.isolation-test-${canary}`);
    await fs.writeFile(secretInHome, canary);
    try {
      for (const file of [
        path.join(REPO_ROOT, 'package.json'),
        path.join(REPO_ROOT, '.data', 'agents.db'),
        secretInTmp,
        path.join(otherSandbox, 'secret.txt'),
        secretInHome,
      ]) {
        const result = await run(`cat ${file}`);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error.details).toMatch(/No such file or directory/);
      }
      expect(await run(`ls ${REPO_ROOT}`)).toMatchObject({ ok: false });
      // What it can read is the sandbox copy and the system.
      expect(await output('cat README.md && test -x /bin/sh && node --version')).toMatch(/^# api\nv\d+/);
    } finally {
      await fs.rm(secretInHome, { force: true });
    }
  });

  it('sees /etc as any local user does: files only their owner may read are hidden', async () => {
    const hidden = await fs
      .stat('/etc/shadow')
      .then((stat) => (stat.mode & 0o004) === 0)
      .catch(() => false);
    if (!hidden) return;
    const result = await run('cat /etc/shadow');
    expect(result).toMatchObject({
      ok: false,
      error: { details: expect.stringMatching(/Permission denied/) },
    });
    if (!result.ok) expect(result.error.details).not.toMatch(/root:/);
    expect(await output('grep -c "^root:" /etc/passwd')).toBe('1\n');
  });

  it('writes only its sandbox: elsewhere the write fails or lands in the box and is gone', async () => {
    const outsideTmp = path.join('/tmp', `canary-outside-${canary}`);
    const outsideBase = path.join(base, 'outside.txt');
    const targets = [
      outsideTmp,
      outsideBase,
      path.join(REPO_ROOT, 'pwned'),
      '/usr/pwned',
      '/etc/pwned',
      path.join(os.homedir(), 'pwned'),
      '$HOME/dotfile',
    ];
    const said = await output(
      `for f in ${targets.join(' ')}; do touch "$f" 2>/dev/null && echo "wrote $f"; done; echo inside > inside.txt`,
    );
    // The box's /tmp (and HOME in it) is a tmpfs of its own: writes there succeed and vanish with the box.
    expect(said).toBe(`wrote ${outsideTmp}\nwrote ${outsideBase}\nwrote /tmp/home/dotfile\n`);
    for (const target of targets.slice(0, -1)) expect(await exists(target)).toBe(false);
    expect(await fs.readFile(path.join(sandbox, 'inside.txt'), 'utf8')).toBe('inside\n');
    // Tools' dotfiles never land in the sandbox, and so never in the changeset.
    expect(await fs.readdir(sandbox)).toEqual(['README.md', 'inside.txt']);
  });

  it('holds no descriptor the worker opened', async () => {
    const held = await fs.open(path.join(base, 'held.txt'), 'w');
    try {
      const listing = await output('ls -l /proc/self/fd');
      expect(listing).not.toMatch(/held\.txt|agents\.db/);
      // Beyond its three streams and the directory `ls` lists, only what this process itself was handed by its
      // launcher without close-on-exec (a descriptor Node or SQLite opens is always close-on-exec).
      const extra = [...listing.matchAll(/ (\d+) -> (.*)$/gm)]
        .filter(([, fd, target]) => Number(fd) > 2 && !/^\/proc\/\d+\/fd$/.test(target ?? ''))
        .map(([, fd]) => Number(fd));
      const inheritedHere = await inheritedDescriptors();
      expect(extra.filter((fd) => !inheritedHere.includes(fd))).toEqual([]);
    } finally {
      await held.close();
    }
  });

  it('reaches no network, not even the host loopback, unless the plan allows it', async () => {
    const server = net.createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const connect =
      `node -e "require('net').connect(${port}, '127.0.0.1')` +
      `.on('data', (d) => { process.stdout.write('got ' + d); process.exit(0); })` +
      `.on('error', (e) => { console.log(e.code); process.exit(1); })"`;
    try {
      const closed = await run(connect);
      expect(closed.ok).toBe(false);
      if (!closed.ok) expect(closed.error.details).toMatch(/ECONNREFUSED|ENETUNREACH/);
      expect(await output(connect, { network: true })).toBe('got hello\n');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('leaves nothing running: a background child dies with the step', async () => {
    const seconds = uniqueSeconds();
    const started = Date.now();
    expect(await output(`sleep ${seconds} & echo started`)).toBe('started\n');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await allEnded(seconds)).toBe(true);
    // Not even one that leaves the step's session and process group.
    const escaped = uniqueSeconds();
    expect(await output(`setsid sleep ${escaped} > /dev/null 2>&1 & echo started`)).toBe('started\n');
    expect(await allEnded(escaped)).toBe(true);
    expect(await processesWith(escaped)).toEqual([]);
  });

  it('is stopped by the CPU limit when it loops, long before its wall-clock timeout', async () => {
    const tight = await detectIsolation({ mode: 'bwrap', cpuSeconds: 1 });
    const started = Date.now();
    const result = await run('while :; do :; done', { isolation: tight, timeoutSeconds: 60 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.message).toMatch(
        /exited with code 152 \(SIGXCPU: a process reached the CPU time limit of 1s\)/,
      );
    }
  });

  it('finds no git repository above its sandbox', async () => {
    // The sandbox lies inside a repository, as it did when sandboxes lived in the engine's checkout.
    expect(spawnSync('git', ['init', '-q', base]).status).toBe(0);
    const result = await run('git rev-parse --show-toplevel');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.details).toMatch(/not a git repository/);
    // A repository the step makes itself is its own business.
    expect(await output('git init -q . && git rev-parse --show-toplevel')).toBe(`${sandbox}\n`);
  });

  it("writes through an absolute link in the project only to the sandbox's copy", async () => {
    await fs.writeFile(path.join(root, 'data.txt'), 'original\n');
    await fs.symlink(path.join(root, 'data.txt'), path.join(root, 'abs-link'));
    expect(await output('echo changed > abs-link; readlink abs-link')).toBe('data.txt\n');
    expect(await fs.readFile(path.join(root, 'data.txt'), 'utf8')).toBe('original\n');
    expect(await fs.readFile(path.join(sandbox, 'data.txt'), 'utf8')).toBe('changed\n');
  });
});

describe('unisolated commands (SANDBOX_ISOLATION=none, on purpose)', () => {
  const none: Isolation = { mode: 'none' };

  it('still find no git repository above the sandbox (GIT_CEILING_DIRECTORIES)', async () => {
    expect(spawnSync('git', ['init', '-q', base]).status).toBe(0);
    const result = await run('git rev-parse --show-toplevel', { isolation: none });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.details).toMatch(/not a git repository/);
  });

  it("still write through an absolute link in the project only to the sandbox's copy", async () => {
    await fs.writeFile(path.join(root, 'data.txt'), 'original\n');
    await fs.symlink(path.join(root, 'data.txt'), path.join(root, 'abs-link'));
    const result = await run('echo changed > abs-link', { isolation: none });
    expect(result.ok).toBe(true);
    expect(await fs.readFile(path.join(root, 'data.txt'), 'utf8')).toBe('original\n');
    expect(await fs.readFile(path.join(sandbox, 'data.txt'), 'utf8')).toBe('changed\n');
  });
});

describe('a worker where bubblewrap does not work', () => {
  let unavailable: Isolation;
  const refusal =
    /was not run: commands run in an isolated box \(bubblewrap\), which is not available on this worker: .*\/nonexistent\/bwrap is not installed.*apt-get install bubblewrap.*SANDBOX_ISOLATION=none/;

  beforeAll(async () => {
    // SANDBOX_ISOLATION unset means `bwrap`; a missing binary stands for any machine where it does not work.
    unavailable = await detectIsolation({ mode: 'bwrap', cpuSeconds: 60, bwrap: '/nonexistent/bwrap' });
  });

  it('says so at start, naming the package to install', () => {
    expect(unavailable).toEqual({
      mode: 'unavailable',
      reason: '/nonexistent/bwrap is not installed (not found)',
    });
    expect(describeIsolation(unavailable)).toMatch(
      /^commands cannot be isolated: .*will be refused until you install bubblewrap \(`apt-get install bubblewrap`/,
    );
  });

  it('refuses a run step for good, running nothing', async () => {
    const result = await run('touch ran.txt', { isolation: unavailable });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.message).toMatch(refusal);
      expect(result.error.retryable).toBe(false);
    }
    expect(await exists(path.join(sandbox, 'ran.txt'))).toBe(false);
  });

  it('refuses the validation command and a command rule, and the plan stops without retrying', async () => {
    await createSandbox(root, sandbox);
    const env = stepEnv({ isolation: unavailable });
    await expect(runValidation('touch ran.txt', env)).rejects.toThrow(refusal);

    const verdict = await checkInvariantRule(
      { command: 'touch ran.txt' },
      {
        changes: [],
        workspaces: workspaces(),
        plan: plan(),
        signal: env.signal,
        progress: () => undefined,
        isolation: unavailable,
      },
    );
    expect(verdict.status).toBe('violated');
    expect(verdict.evidence).toMatch(refusal);

    const execution = createBuiltinActors().execution as ExecutionActor;
    const log = new DecisionLog({ firstSeq: 1, parentSeq: 0, phase: 'EXECUTE', actor: 'builtin' });
    const call = { ...env, contextFiles: [], log };
    const outcome = await execution.execute({
      ...call,
      strategy: { steps: [stepFromFile({ run: 'touch ran.txt' })], validation: null, summary: 'test' },
      maxAutoRetries: 2,
    });
    expect(outcome.ok).toBe(false);
    const recoveries = log.drafts().filter((d) => d.type === 'error_recovery');
    expect(recoveries.map((d) => d.chosenOption)).toEqual(['Stop: mark the plan ERRORED']);

    const validated = await execution.execute({
      ...call,
      log: new DecisionLog({ firstSeq: 1, parentSeq: 0, phase: 'EXECUTE', actor: 'builtin' }),
      strategy: { steps: [], validation: 'touch ran.txt', summary: 'test' },
      maxAutoRetries: 2,
    });
    expect(validated).toMatchObject({ ok: false, error: { step: null, attempts: 1 } });
    if (!validated.ok)
      expect(validated.error.message).toMatch(/^Validation could not run: .*apt-get install bubblewrap/);
    expect(await exists(path.join(sandbox, 'ran.txt'))).toBe(false);
  });
});
