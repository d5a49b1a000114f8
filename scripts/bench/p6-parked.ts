/**
 * P6: the worker's memory with PARKED plans waiting at a gate, and a burst of ADVANCES sent at once. The engine
 * worker is started as `npm run worker` starts it (scripts/bootstrap.js, with the flags and environment of
 * scripts/worker-process.js, configured by environment and production defaults), and the resident set measured
 * is that of the worker's process, not bootstrap's: /proc/<pid>/status VmRSS, sampled throughout. MANUAL plans are
 * parked at the Strategize gate; then ADVANCES of them are advanced together (Promise.all), each must come back
 * in EXECUTE, and a query of each must agree; the others must still be in STRATEGIZE. Latency is from the burst's
 * start to each update's answer.
 */
import { sharedPrismaClient } from '../../storage/prisma';
import type { Harness } from '../../test/helpers/harness';
import { rssMb, startWorkerProcess } from '../../test/helpers/worker-process';
import type { PartResult } from './report';
import { envNumber, nowMs, percentile, round, sleep } from './stats';
import { createBenchPlan, withWorld } from './world';

const PARKED = envNumber('BENCH_PARKED', 1000);
const ADVANCES = Math.min(PARKED, envNumber('BENCH_ADVANCES', 200));
const CREATE_CONCURRENCY = 50;
const RSS_GOAL_MB = 500;
const PARK_TIMEOUT_MS = 10 * 60_000;

async function createParked(h: Harness): Promise<string[]> {
  const planIds: string[] = [];
  for (let i = 0; i < PARKED; i += CREATE_CONCURRENCY) {
    const chunk = Math.min(CREATE_CONCURRENCY, PARKED - i);
    planIds.push(...(await Promise.all(Array.from({ length: chunk }, () => createBenchPlan(h, 'MANUAL')))));
  }
  const prisma = sharedPrismaClient(h.databaseUrl);
  const deadline = Date.now() + PARK_TIMEOUT_MS;
  for (;;) {
    const parked = await prisma.planEvent.count({ where: { type: 'AWAITING_APPROVAL' } });
    if (parked >= PARKED) return planIds;
    if (Date.now() > deadline) throw new Error(`only ${parked} of ${PARKED} plans reached the gate in time`);
    await sleep(500);
  }
}

export async function p6Parked(): Promise<PartResult> {
  return withWorld(
    async (h) => {
      const worker = await startWorkerProcess(h);
      const samples: Array<{ atMs: number; rssMb: number; stage: string }> = [];
      const t0 = nowMs();
      let stage = 'idle';
      const sample = () =>
        samples.push({ atMs: round(nowMs() - t0, 0), rssMb: round(rssMb(worker.pid), 1), stage });
      const sampler = setInterval(sample, 500);
      try {
        sample();
        const idleMb = rssMb(worker.pid);
        stage = 'parking';
        const parkStart = nowMs();
        const planIds = await createParked(h);
        const parkSeconds = (nowMs() - parkStart) / 1000;
        stage = 'parked';
        await sleep(2_000);
        const parkedMb = rssMb(worker.pid);
        console.log(
          `P6 ${PARKED} plans parked in ${parkSeconds.toFixed(0)} s; worker RSS ${parkedMb.toFixed(0)} MB`,
        );

        stage = 'advancing';
        const burst = planIds.slice(0, ADVANCES);
        const start = nowMs();
        const outcomes = await Promise.all(
          burst.map(async (planId) => {
            try {
              const snapshot = await h.client.advance(planId, { by: 'bench', expectedPhase: 'STRATEGIZE' });
              return { planId, ms: nowMs() - start, phase: snapshot.phase as string };
            } catch (err) {
              return {
                planId,
                ms: nowMs() - start,
                phase: `error: ${err instanceof Error ? err.message : String(err)}`,
              };
            }
          }),
        );
        const latencies = outcomes.map((o) => o.ms);
        stage = 'checking';
        const queried = await Promise.all(
          burst.map(async (planId) => (await h.client.snapshot(planId)).phase as string),
        );
        const lost = outcomes.filter((o, i) => o.phase !== 'EXECUTE' || queried[i] !== 'EXECUTE');
        const prisma = sharedPrismaClient(h.databaseUrl);
        const stillAtGate = await prisma.plan.count({ where: { phase: 'STRATEGIZE' } });
        const others = PARKED - ADVANCES;
        const peakMb = Math.max(...samples.map((s) => s.rssMb), rssMb(worker.pid));
        const p50 = percentile(latencies, 50);
        const p95 = percentile(latencies, 95);
        console.log(
          `P6 ${ADVANCES} advances at once: p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, ${lost.length} lost; ` +
            `${stillAtGate} of ${others} others still at the gate; peak RSS ${peakMb.toFixed(0)} MB`,
        );
        const rssMet = parkedMb < RSS_GOAL_MB && peakMb < RSS_GOAL_MB;
        return {
          rows: [
            {
              id: 'P6',
              measure: `worker RSS, ${PARKED} parked (peak)`,
              subject: `${parkedMb.toFixed(0)} MB (${peakMb.toFixed(0)})`,
              baseline: `${idleMb.toFixed(0)} MB idle`,
              ratio: (parkedMb / idleMb).toFixed(2),
              goal: `< ${RSS_GOAL_MB} MB`,
              met: rssMet,
            },
            {
              id: 'P6',
              measure: `${ADVANCES} advances at once, lost`,
              subject: `${lost.length} lost, p50 ${p50.toFixed(0)} ms`,
              baseline: `p95 ${p95.toFixed(0)} ms`,
              ratio: '',
              goal: '0 lost',
              met: lost.length === 0 && stillAtGate === others,
            },
          ],
          data: {
            parked: PARKED,
            advances: ADVANCES,
            maxCachedWorkflows: worker.maxCachedWorkflows,
            parkSeconds: round(parkSeconds, 1),
            idleRssMb: round(idleMb, 1),
            parkedRssMb: round(parkedMb, 1),
            peakRssMb: round(peakMb, 1),
            advanceLatencyMs: latencies.map((v) => round(v, 0)),
            p50AdvanceMs: round(p50, 0),
            p95AdvanceMs: round(p95, 0),
            lost: lost.map((o) => ({ planId: o.planId, answered: o.phase })),
            othersStillAtGate: stillAtGate,
            rssSamples: samples,
          },
        };
      } finally {
        clearInterval(sampler);
        await worker.stop();
      }
    },
    { commandTimeoutMs: 5 * 60_000 },
  );
}
