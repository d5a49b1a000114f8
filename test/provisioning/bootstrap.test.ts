import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/config';

const BOOTSTRAP = path.join(REPO_ROOT, 'scripts', 'bootstrap.js');

function bootstrap(...args: string[]) {
  return spawnSync(process.execPath, [BOOTSTRAP, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('scripts/bootstrap.js', () => {
  it('refuses an unknown command with its usage', () => {
    const result = bootstrap('deploy');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/usage: node scripts\/bootstrap\.js <start\|worker\|test>/);
  });

  it('runs `test` through tsx and scripts/test.ts, passing arguments to jest and its exit code back', () => {
    const ok = bootstrap('test', '--version');
    // Nothing else on stderr; the CLI's build says when it runs (sources edited since the last build).
    expect(ok.stderr.replace(/^\[test\] building the CLI into dist\/ \(.*\)\.\.\.\n/, '')).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    // A failure that jest reports before running anything (an unknown option would run the whole suite).
    const bad = bootstrap('test', '--config', path.join(REPO_ROOT, 'no-such-jest.config.js'));
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/no-such-jest\.config\.js/);
  });

  it('runs `worker` (npm run worker), which checks its configuration before connecting anywhere', () => {
    const result = spawnSync(process.execPath, [BOOTSTRAP, 'worker'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, WORKER_MAX_CACHED_WORKFLOWS: '-1', TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /worker: invalid worker configuration: WORKER_MAX_CACHED_WORKFLOWS: must be 0/,
    );
  });
});

describe('scripts/bootstrap.js with a linked node_modules', () => {
  it('refuses to reinstall through the link, leaving what it links to alone', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bootstrap-link-'));
    try {
      mkdirSync(path.join(dir, 'scripts'));
      copyFileSync(BOOTSTRAP, path.join(dir, 'scripts', 'bootstrap.js'));
      copyFileSync(
        path.join(REPO_ROOT, 'scripts', 'worker-process.js'),
        path.join(dir, 'scripts', 'worker-process.js'),
      );
      writeFileSync(path.join(dir, 'package.json'), '{}\n');
      const elsewhere = path.join(dir, 'elsewhere');
      mkdirSync(elsewhere);
      writeFileSync(path.join(elsewhere, '.package-lock.json'), '{}\n');
      writeFileSync(path.join(elsewhere, 'sentinel'), 'installed\n');
      // The lock file is newer than the installation: bootstrap would run `npm ci`, which empties node_modules.
      utimesSync(path.join(elsewhere, '.package-lock.json'), new Date(1_000_000), new Date(1_000_000));
      writeFileSync(path.join(dir, 'package-lock.json'), '{}\n');
      symlinkSync(elsewhere, path.join(dir, 'node_modules'));

      const result = spawnSync(process.execPath, [path.join(dir, 'scripts', 'bootstrap.js'), 'test'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/node_modules is a link to .*elsewhere: installing here would replace/);
      expect(readFileSync(path.join(elsewhere, 'sentinel'), 'utf8')).toBe('installed\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
