/**
 * P4: `plan tree --format json` at growing sizes (issue 5 set 10k under a second; issue 13 asks for linear).
 *   baseline: read the plan's decision rows and JSON.stringify them as they are
 *   subject:  read them through the decision store, build the tree breadth-first, render the json rows
 * Both in one process against one database, interleaved, median of RUNS; the growth factor is each size's subject
 * time over the size before it.
 */
import { treeRows } from '../../client/render/tree-view';
import { createDecisionStore } from '../../storage/decisions';
import { recordDecisions, withStorage } from './decisions-fixture';
import type { PartResult, Row } from './report';
import { envNumber, median, nowMs, round, timeMs } from './stats';

const SIZES = (process.env.BENCH_TREE_SIZES ?? '1000,10000,100000').split(',').map(Number);
const RUNS = envNumber('BENCH_RUNS', 5);
const BATCH = 500;
/** Linear is ×10 per ×10; allow half as much again for caches and the sort's log factor. */
const MAX_GROWTH_PER_10X = 15;

export async function p4Tree(): Promise<PartResult> {
  return withStorage(async ({ prisma, plans, newPlan }) => {
    const decisions = createDecisionStore(prisma);
    const sizes: Array<Record<string, unknown>> = [];
    const rows: Row[] = [];
    let previous: { size: number; ms: number } | undefined;
    for (const size of SIZES) {
      const planId = await newPlan(`tree-${size}`);
      const writeStart = nowMs();
      await recordDecisions(plans, planId, size, BATCH);
      const writeMs = nowMs() - writeStart;
      const baseline: number[] = [];
      const subject: number[] = [];
      let bytes = 0;
      for (let i = 0; i < RUNS; i++) {
        baseline.push(
          await timeMs(async () => {
            const found = await prisma.decision.findMany({ where: { planId }, orderBy: { seq: 'asc' } });
            JSON.stringify(found);
          }),
        );
        subject.push(
          await timeMs(async () => {
            const tree = await decisions.getTree(planId);
            bytes = JSON.stringify({ plan_id: planId, nodes: treeRows(tree) }, null, 2).length;
          }),
        );
      }
      const s = median(subject);
      const b = median(baseline);
      // Normalised to a tenfold step, so sizes that are not powers of ten compare too.
      const growth =
        previous === undefined ? null : (s / previous.ms) ** (1 / Math.log10(size / previous.size));
      const linear = growth === null || growth <= MAX_GROWTH_PER_10X;
      const fast = size !== 10_000 || s < 500;
      const goal = [
        size === 10_000 ? '< 500 ms' : '',
        growth === null ? '' : `×${MAX_GROWTH_PER_10X} max per ×10`,
      ]
        .filter((g) => g !== '')
        .join(', ');
      rows.push({
        id: 'P4',
        measure: `plan tree json, ${size.toLocaleString('en')} decisions`,
        subject: `${s.toFixed(0)} ms${growth === null ? '' : ` (×${growth.toFixed(1)} per ×10)`}`,
        baseline: `${b.toFixed(0)} ms rows+stringify`,
        ratio: (s / b).toFixed(2),
        goal,
        met: goal === '' ? null : linear && fast,
      });
      sizes.push({
        decisions: size,
        writeMs: round(writeMs, 0),
        jsonBytes: bytes,
        baselineMs: baseline.map((v) => round(v, 1)),
        subjectMs: subject.map((v) => round(v, 1)),
        medianBaselineMs: round(b, 1),
        medianSubjectMs: round(s, 1),
        growthPer10x: growth === null ? null : round(growth, 2),
      });
      console.log(
        `P4 ${size} decisions: written in ${(writeMs / 1000).toFixed(1)} s; tree ${s.toFixed(0)} ms, rows ${b.toFixed(0)} ms`,
      );
      previous = { size, ms: s };
    }
    return { rows, data: { runs: RUNS, batch: BATCH, sizes } };
  });
}
