import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  cachedTemporalCliPath,
  ensureTemporalCli,
  TEMPORAL_CLI_VERSION,
  temporalCliCacheDir,
} from '../../scripts/temporal-cli';
import { waitUntil } from '../helpers/wait';
import { realTemporalCli } from './helpers';

const quiet = { log: () => {} };

describe('ensureTemporalCli', () => {
  const savedEnv = { ...process.env };
  let tmp: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-cli-test-'));
    // An empty cache and a PATH with neither `temporal` nor `go`, unless a test puts them there.
    process.env.XDG_CACHE_HOME = path.join(tmp, 'cache');
    process.env.PATH = path.join(tmp, 'empty-path');
    delete process.env.TEMPORAL_CLI;
  });

  afterEach(() => {
    process.env = { ...savedEnv };
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('rejects a TEMPORAL_CLI that does not exist, naming the variable', async () => {
    process.env.TEMPORAL_CLI = path.join(tmp, 'no-such-temporal');
    await expect(ensureTemporalCli(quiet)).rejects.toThrow(/TEMPORAL_CLI=.*no-such-temporal does not exist/);
  });

  it('rejects a TEMPORAL_CLI that is not executable', async () => {
    const file = path.join(tmp, 'temporal');
    fs.writeFileSync(file, 'not a program', { mode: 0o644 });
    process.env.TEMPORAL_CLI = file;
    await expect(ensureTemporalCli(quiet)).rejects.toThrow(/is not an executable file/);
  });

  it('rejects a TEMPORAL_CLI that is a program but not the Temporal CLI', async () => {
    process.env.TEMPORAL_CLI = '/bin/true';
    await expect(ensureTemporalCli(quiet)).rejects.toThrow(
      /did not answer `--version` like the Temporal CLI/,
    );
  });

  it('returns TEMPORAL_CLI when it is the real CLI, ahead of everything else', async () => {
    process.env.TEMPORAL_CLI = realTemporalCli();
    await expect(ensureTemporalCli(quiet)).resolves.toBe(path.resolve(realTemporalCli()));
  });

  it('finds `temporal` on PATH', async () => {
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(realTemporalCli(), path.join(bin, 'temporal'));
    process.env.PATH = bin;
    await expect(ensureTemporalCli(quiet)).resolves.toBe(path.join(bin, 'temporal'));
  });

  it('finds the cached binary under XDG_CACHE_HOME', async () => {
    const cached = cachedTemporalCliPath();
    expect(cached).toBe(
      path.join(tmp, 'cache', 'cleveragents', 'temporal-cli', TEMPORAL_CLI_VERSION, 'temporal'),
    );
    fs.mkdirSync(temporalCliCacheDir(), { recursive: true });
    fs.symlinkSync(realTemporalCli(), cached);
    await expect(ensureTemporalCli(quiet)).resolves.toBe(cached);
  });

  it('falls back to ~/.cache when XDG_CACHE_HOME is unset or relative', () => {
    delete process.env.XDG_CACHE_HOME;
    const expected = path.join(
      os.homedir(),
      '.cache',
      'cleveragents',
      'temporal-cli',
      TEMPORAL_CLI_VERSION,
      'temporal',
    );
    expect(cachedTemporalCliPath()).toBe(expected);
    process.env.XDG_CACHE_HOME = 'relative/dir';
    expect(cachedTemporalCliPath()).toBe(expected);
  });

  it('waits for the process holding the build lock and takes the binary it produced', async () => {
    const lock = path.join(tmp, 'cache', 'cleveragents', 'temporal-cli', `${TEMPORAL_CLI_VERSION}.lock`);
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    // This test process stands in for a live builder.
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, host: os.hostname(), since: Date.now() }));
    const lines: string[] = [];
    const pending = ensureTemporalCli({ log: (l) => lines.push(l) });
    let settled = false;
    const markSettled = (): void => {
      settled = true;
    };
    void pending.then(markSettled, markSettled);
    // The binary appears only once the caller has found the lock held and said whom it waits for: taking it then
    // shows that it polls for the holder's binary rather than building its own or giving up.
    await waitUntil(`ensureTemporalCli to say it waits for pid ${process.pid}`, () => {
      if (lines.some((l) => l.startsWith(`Waiting for pid ${process.pid} `))) return true;
      if (settled)
        throw new Error(`ensureTemporalCli settled without waiting for the lock:\n${lines.join('\n')}`);
      return false;
    });
    fs.mkdirSync(temporalCliCacheDir(), { recursive: true });
    fs.symlinkSync(realTemporalCli(), cachedTemporalCliPath());
    await expect(pending).resolves.toBe(cachedTemporalCliPath());
    // The lock belongs to the other process: the waiter must not remove it.
    expect(fs.existsSync(lock)).toBe(true);
  });

  it('takes over a stale lock, then explains how to install the CLI when it cannot be built', async () => {
    const lock = path.join(tmp, 'cache', 'cleveragents', 'temporal-cli', `${TEMPORAL_CLI_VERSION}.lock`);
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    fs.writeFileSync(
      lock,
      JSON.stringify({ pid: Number(dead.stdout), host: os.hostname(), since: Date.now() }),
    );
    const lines: string[] = [];
    // These machines cannot reach temporal.download (the SDK's download fails at once) and PATH has no `go`.
    const error = await ensureTemporalCli({ log: (l) => lines.push(l) }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(error?.message).toMatch(/Go is not on PATH/);
    expect(error?.message).toMatch(/brew install temporal/);
    expect(error?.message).toMatch(/TEMPORAL_CLI=/);
    expect(lines.join('\n')).toMatch(/Removing a stale lock/);
    expect(lines.join('\n')).toMatch(/SDK download failed/);
    expect(fs.existsSync(lock)).toBe(false);
  });
});
