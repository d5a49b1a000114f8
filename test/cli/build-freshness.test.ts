/**
 * bin/agents.js runs the compiled dist/ only while it was built from exactly the sources in the checkout. Checked
 * on a small copy of the layout rather than a real build (tsc takes seconds): the rule, then bin/agents.js itself
 * choosing between a stand-in compiled entry and a stand-in TypeScript one.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import * as freshness from '../../scripts/build-freshness';

let root: string;

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

/** What `npm run build` leaves behind, for the sources as they are now. */
function build(): void {
  write(freshness.ENTRY, "exports.main = async () => process.stdout.write('dist');\n");
  freshness.writeStamp(root, freshness.snapshotSources(root));
}

/** Moves a file's mtime by `seconds`, as an editor saving it (or a checkout restoring it) would. */
function shiftMtime(rel: string, seconds: number): void {
  const file = path.join(root, rel);
  const { atime, mtime } = fs.statSync(file);
  fs.utimesSync(file, atime, new Date(mtime.getTime() + seconds * 1000));
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-build-'));
  write(
    'client/cli/main.ts',
    "export async function main(): Promise<void> { process.stdout.write('tsx'); }\n",
  );
  write('storage/generated/prisma/client.ts', 'export const generated: boolean = true;\n');
  write('tsconfig.json', '{}\n');
  write('package-lock.json', '{}\n');
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('the freshness rule', () => {
  it('finds a build of the current sources fresh', () => {
    build();
    expect(freshness.checkBuild(root)).toEqual({ fresh: true });
  });

  it('finds nothing fresh before the first build', () => {
    expect(freshness.checkBuild(root)).toEqual({ fresh: false, reason: 'no completed build in dist/' });
  });

  it('finds the build stale when a source was edited, even to the same size', () => {
    build();
    write(
      'client/cli/main.ts',
      "export async function main(): Promise<void> { process.stdout.write('TSX'); }\n",
    );
    shiftMtime('client/cli/main.ts', 5);
    expect(freshness.checkBuild(root)).toMatchObject({
      fresh: false,
      reason: expect.stringContaining('main.ts'),
    });
  });

  it('finds the build stale when a source is restored with an older mtime', () => {
    build();
    shiftMtime('client/cli/main.ts', -3600);
    expect(freshness.checkBuild(root).fresh).toBe(false);
  });

  it('finds the build stale when a source is added or removed', () => {
    build();
    write('domain/new.ts', 'export {};\n');
    expect(freshness.checkBuild(root)).toEqual({
      fresh: false,
      reason: 'domain/new.ts is new since the build',
    });
    fs.rmSync(path.join(root, 'domain/new.ts'));
    expect(freshness.checkBuild(root).fresh).toBe(true);
    fs.rmSync(path.join(root, 'storage/generated/prisma/client.ts'));
    expect(freshness.checkBuild(root)).toEqual({
      fresh: false,
      reason: 'storage/generated/prisma/client.ts was removed since the build',
    });
  });

  it('finds the build stale when the compiler settings or the installed packages changed', () => {
    build();
    write('package-lock.json', '{"lockfileVersion": 3}\n');
    expect(freshness.checkBuild(root)).toEqual({
      fresh: false,
      reason: 'package-lock.json changed since the build',
    });
  });

  it('ignores files the build does not read', () => {
    build();
    write('client/notes.md', 'not compiled\n');
    write('test/cli/extra.test.ts', 'export {};\n');
    expect(freshness.checkBuild(root)).toEqual({ fresh: true });
  });

  it('finds the build stale when the compiled entry is gone', () => {
    build();
    fs.rmSync(path.join(root, freshness.ENTRY));
    expect(freshness.checkBuild(root).fresh).toBe(false);
  });

  it('watches the directories the build compiles', () => {
    const include = (
      JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] }
    ).include;
    const exclude = (
      JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as {
        exclude: string[];
      }
    ).exclude;
    const compiledDirs = include.filter((entry) => !exclude.includes(entry) && !entry.endsWith('.ts'));
    expect([...freshness.SOURCE_DIRS].sort()).toEqual([...compiledDirs].sort());
  });
});

describe('bin/agents.js', () => {
  /** Runs a copy of bin/agents.js in the small layout: it prints which entry it ran. */
  function runAgents(): string {
    const result = spawnSync(process.execPath, [path.join(root, 'bin', 'agents.js')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (result.status !== 0) throw new Error(`agents exited ${result.status}: ${result.stderr}`);
    return result.stdout;
  }

  beforeEach(() => {
    for (const file of ['bin/agents.js', 'scripts/build-freshness.js']) {
      write(file, fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'));
    }
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
  });

  it('runs the compiled entry while the build is fresh, and tsx once a source changes', () => {
    build();
    expect(runAgents()).toBe('dist');
    shiftMtime('client/cli/main.ts', 5);
    expect(runAgents()).toBe('tsx');
  });

  it('runs tsx when a source was added after the build', () => {
    build();
    write('lib/added.ts', 'export {};\n');
    expect(runAgents()).toBe('tsx');
  });

  it('runs tsx before any build', () => {
    expect(runAgents()).toBe('tsx');
  });
});
