/**
 * `npm start` and `npm test` compile the CLI when its build is stale, so that `agents` in a second shell starts
 * from dist/. Run after the Prisma client is generated: the build compiles it too.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { checkBuild } from './build-freshness';
import { REPO_ROOT } from './config';

/**
 * A failed build warns rather than stops: the CLI still runs, from the sources through tsx, and the type errors
 * are `npm run typecheck`'s to report.
 */
export function ensureCliBuilt(log: (line: string) => void): void {
  const check = checkBuild(REPO_ROOT);
  if (check.fresh) return;
  log(`building the CLI into dist/ (${check.reason})...`);
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    log(
      'the CLI build failed: `agents` runs from the sources (slower to start) until `npm run build` succeeds',
    );
  }
}
