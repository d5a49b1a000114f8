/**
 * Whether dist/ holds the compiled CLI of exactly the sources in this checkout. Plain CommonJS on Node built-ins
 * only: bin/agents.js asks it on every start, before it knows whether tsx will be needed, and the build asks it
 * before tsc exists to be loaded.
 *
 * The build records every TypeScript source (and the files that decide how they compile) with its mtime and
 * size, as they were before tsc read them. The build is fresh when the same files are there with the same mtimes
 * and sizes: an edit, a new file, a deleted one or a checkout of an older version all differ. Comparing for
 * equality rather than "older than the build" also catches a file restored with its old mtime.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** tsconfig.json's include without test/, which tsconfig.build.json excludes (a test checks they agree). */
const SOURCE_DIRS = [
  'activities',
  'actors',
  'client',
  'config',
  'domain',
  'lib',
  'sandbox',
  'scripts',
  'storage',
  'workflows',
  'worker',
];
const SOURCE_FILES = ['prisma.config.ts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const STAMP = path.join('dist', '.build-stamp.json');
const ENTRY = path.join('dist', 'client', 'cli', 'main.js');

function addFile(files, root, rel) {
  const stat = fs.statSync(path.join(root, rel), { throwIfNoEntry: false });
  if (stat !== undefined) files[rel] = [stat.mtimeMs, stat.size];
}

function walk(files, root, rel) {
  let entries;
  try {
    entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) walk(files, root, child);
    else if (entry.name.endsWith('.ts')) addFile(files, root, child);
  }
}

/** Every input of the build under `root`, as `{ relative path: [mtimeMs, size] }`. */
function snapshotSources(root) {
  const files = {};
  for (const dir of SOURCE_DIRS) walk(files, root, dir);
  for (const file of SOURCE_FILES) addFile(files, root, file);
  return files;
}

/** `{ fresh: true }`, or `{ fresh: false, reason }` saying the first difference found. */
function checkBuild(root) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(root, STAMP), 'utf8')).files;
  } catch {
    return { fresh: false, reason: 'no completed build in dist/' };
  }
  if (!fs.existsSync(path.join(root, ENTRY))) return { fresh: false, reason: `${ENTRY} is missing` };
  const now = snapshotSources(root);
  for (const [file, [mtime, size]] of Object.entries(now)) {
    const built = stamp[file];
    if (built === undefined) return { fresh: false, reason: `${file} is new since the build` };
    if (built[0] !== mtime || built[1] !== size)
      return { fresh: false, reason: `${file} changed since the build` };
  }
  for (const file of Object.keys(stamp)) {
    if (!Object.hasOwn(now, file)) return { fresh: false, reason: `${file} was removed since the build` };
  }
  return { fresh: true };
}

function writeStamp(root, files) {
  fs.writeFileSync(path.join(root, STAMP), `${JSON.stringify({ files })}\n`);
}

function removeStamp(root) {
  fs.rmSync(path.join(root, STAMP), { force: true });
}

module.exports = { ENTRY, SOURCE_DIRS, checkBuild, removeStamp, snapshotSources, writeStamp };
