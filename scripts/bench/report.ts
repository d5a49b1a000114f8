/**
 * What a part hands back, the table printed at the end and the JSON file kept in bench/results/. Rows carry
 * formatted text (a ratio of latencies and a ratio of rates read differently); `data` keeps every raw sample so a
 * later reader can recompute anything the table summarises.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Table from 'cli-table3';
import { REPO_ROOT } from '../../config/paths';

export interface Row {
  id: string;
  measure: string;
  subject: string;
  baseline: string;
  ratio: string;
  goal: string;
  /** null when the part has no goal for this row (context rows such as a growth step). */
  met: boolean | null;
}

export interface PartResult {
  rows: Row[];
  data: Record<string, unknown>;
}

export interface PartFailure {
  error: string;
}

export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

export function printTable(results: Record<string, PartResult | PartFailure>): void {
  const table = new Table({
    head: ['id', 'measure', 'subject', 'baseline', 'ratio', 'goal', 'met?'],
    // Plain text: the table is pasted into issues and logs, where colour codes are noise.
    style: { head: [], border: [] },
  });
  for (const [id, result] of Object.entries(results)) {
    if ('error' in result) {
      table.push([id, 'FAILED', { colSpan: 5, content: result.error.split('\n')[0] ?? '' }]);
      continue;
    }
    for (const row of result.rows) {
      const met = row.met === null ? '' : row.met ? 'yes' : 'NO';
      table.push([row.id, row.measure, row.subject, row.baseline, row.ratio, row.goal, met]);
    }
  }
  console.log(table.toString());
}

function commitSha(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
    return dirty === '' ? sha : `${sha}+dirty`;
  } catch {
    return 'unknown';
  }
}

/** bench/results/<YYYY-MM-DD>.json (UTC date); a second run on the same day replaces the first. */
export function writeResults(
  results: Record<string, PartResult | PartFailure>,
  run: { startedAt: string; elapsedMs: number; parts: string[]; all: boolean },
): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  // A run of some parts only is named after them, so it never replaces the day's full results.
  const partial = run.all ? '' : `-${run.parts.join('-')}`;
  const file = path.join(RESULTS_DIR, `${run.startedAt.slice(0, 10)}${partial}.json`);
  const cpus = os.cpus();
  const document = {
    ...run,
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      totalMemoryMb: Math.round(os.totalmem() / 2 ** 20),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      node: process.version,
    },
    commit: commitSha(),
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_'))),
    results,
  };
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  return file;
}
