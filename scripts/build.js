#!/usr/bin/env node
/**
 * `npm run build`: compiles the sources into dist/ (tsconfig.build.json) for bin/agents.js, which runs them only
 * while scripts/build-freshness.js finds them fresh.
 *
 * A type error fails the build and leaves no stamp, so the CLI keeps running the sources through tsx, as it does
 * while anyone edits them: tsc would still emit (there is no noEmitOnError), but a half-typed build is not one to
 * run silently, and `npm run typecheck` is where type errors are reported anyway.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { removeStamp, snapshotSources, writeStamp } = require('./build-freshness');

const ROOT = path.resolve(__dirname, '..');

function build() {
  // Taken before tsc reads anything: a file edited during the build then differs from its stamp entry.
  const sources = snapshotSources(ROOT);
  // Removed first: while tsc rewrites dist/, the CLI must not take the files being written for a finished build.
  removeStamp(ROOT);
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.error) {
    process.stderr.write(`build: could not run tsc: ${result.error.message}\n`);
    return 1;
  }
  if (result.status !== 0) return result.status ?? 1;
  writeStamp(ROOT, sources);
  return 0;
}

process.exitCode = build();
