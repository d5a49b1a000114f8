/**
 * `npm run bench [-- P1 P5 ...]`: issue 13's performance figures, each measured against a baseline in the same
 * run, so a noisy, shared machine changes both sides alike. Absolute figures are printed for the record, never
 * asserted; the goals are checked as ratios where the issue sets them as ratios. Never part of `npm test`.
 *
 * One module per part in scripts/bench/; this file picks the parts, prints the table and writes
 * bench/results/<YYYY-MM-DD>.json with the machine, the commit, every raw sample and the medians. A part that
 * fails is reported as failed and the others still run (each cleans up after itself).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { p1Throughput } from './bench/p1-throughput';
import { p2Advance } from './bench/p2-advance';
import { p3Recording } from './bench/p3-recording';
import { p4Tree } from './bench/p4-tree';
import { p5History } from './bench/p5-history';
import { p6Parked } from './bench/p6-parked';
import { p7CliColdStart } from './bench/p7-cli-cold-start';
import { printTable, writeResults } from './bench/report';
import type { PartFailure, PartResult } from './bench/report';
import { nowMs } from './bench/stats';

const PARTS: Record<string, () => Promise<PartResult>> = {
  P1: p1Throughput,
  P2: p2Advance,
  P3: p3Recording,
  P4: p4Tree,
  P5: p5History,
  P6: p6Parked,
  P7: p7CliColdStart,
};

async function main(argv: string[]): Promise<number> {
  const chosen = argv.length === 0 ? Object.keys(PARTS) : argv.map((a) => a.toUpperCase());
  const unknown = chosen.filter((id) => !(id in PARTS));
  if (unknown.length > 0) {
    console.error(`unknown part(s) ${unknown.join(', ')}; choose from ${Object.keys(PARTS).join(' ')}`);
    return 2;
  }
  // Before the first connection (the runtime is made once per process): the SDK's per-worker INFO lines and the
  // warnings of plans parked on purpose would drown the figures.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
  const startedAt = new Date().toISOString();
  const start = nowMs();
  const results: Record<string, PartResult | PartFailure> = {};
  for (const id of chosen) {
    const partStart = nowMs();
    console.log(`\n== ${id}`);
    try {
      results[id] = await (PARTS[id] as () => Promise<PartResult>)();
    } catch (err) {
      console.error(`${id} failed:`, err);
      results[id] = { error: err instanceof Error ? err.message : String(err) };
    }
    console.log(`== ${id} took ${((nowMs() - partStart) / 1000).toFixed(0)} s`);
  }
  const elapsedMs = Math.round(nowMs() - start);
  console.log();
  printTable(results);
  const file = writeResults(results, {
    startedAt,
    elapsedMs,
    parts: chosen,
    all: chosen.length === Object.keys(PARTS).length,
  });
  console.log(`${chosen.length} part(s) in ${(elapsedMs / 1000).toFixed(0)} s; results in ${file}`);
  return Object.values(results).some((r) => 'error' in r) ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
