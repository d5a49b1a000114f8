import { spawnSync } from 'node:child_process';
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
    expect(result.stderr).toMatch(/usage: node scripts\/bootstrap\.js <start\|test>/);
  });

  it('runs `test` through tsx and scripts/test.ts, passing arguments to jest and its exit code back', () => {
    const ok = bootstrap('test', '--version');
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    // A failure that jest reports before running anything (an unknown option would run the whole suite).
    const bad = bootstrap('test', '--config', path.join(REPO_ROOT, 'no-such-jest.config.js'));
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/no-such-jest\.config\.js/);
  });
});
