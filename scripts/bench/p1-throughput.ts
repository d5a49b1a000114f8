/**
 * P1: plans per second. A batch of N FULL_AUTOMATION plans of the bench action (three phases, ~10 decisions, three
 * invariants, one with a rule) against a batch of N bare three-activity workflows, on the same dev server and
 * worker options. Batches alternate, bare first, for ROUNDS rounds; the medians are compared. The last engine
 * batch's histories say which activities and workflow tasks its time went to.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Harness } from '../../test/helpers/harness';
import { planWorkflowId } from '../../domain/ids';
import { collectTimings, printTimings, summarise } from './history';
import type { PartResult } from './report';
import { envNumber, median, nowMs, round } from './stats';
import { createBenchPlan, withWorld } from './world';
import { withWorkers } from './workers';

const PLANS = envNumber('BENCH_PLANS', 50);
const ROUNDS = envNumber('BENCH_ROUNDS', 3);
/** A plan that stops (ERRORED waits for a person) would otherwise hang the bench forever. */
const BATCH_TIMEOUT_MS = 5 * 60_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish in ${BATCH_TIMEOUT_MS / 1000} s`)),
      BATCH_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** CPU time (user + system, every thread) this process spent since `since`, in ms. */
function cpuMsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

async function bareBatch(
  h: Harness,
  taskQueue: string,
  round: number,
): Promise<{ rate: number; cpuMsEach: number }> {
  const cpu = process.cpuUsage();
  const start = nowMs();
  await withTimeout(
    Promise.all(
      Array.from({ length: PLANS }, async (_, i) => {
        const handle = await h.env.client.workflow.start('bareThreePhases', {
          taskQueue,
          workflowId: `bare-p1-${round}-${i}-${Date.now()}`,
        });
        await handle.result();
      }),
    ),
    'the bare batch',
  );
  return { rate: PLANS / ((nowMs() - start) / 1000), cpuMsEach: cpuMsSince(cpu) / PLANS };
}

async function engineBatch(h: Harness): Promise<{ rate: number; cpuMsEach: number; planIds: string[] }> {
  const cpu = process.cpuUsage();
  const start = nowMs();
  const planIds = await withTimeout(
    Promise.all(
      Array.from({ length: PLANS }, async () => {
        const planId = await createBenchPlan(h, 'FULL_AUTOMATION');
        const result = await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
        if (result.phase !== 'APPLIED') throw new Error(`plan ${planId} ended in ${result.phase}`);
        return planId;
      }),
    ),
    'the engine batch',
  );
  return { rate: PLANS / ((nowMs() - start) / 1000), cpuMsEach: cpuMsSince(cpu) / PLANS, planIds };
}

export async function p1Throughput(): Promise<PartResult> {
  return withWorld((h) =>
    withWorkers(h, async ({ engine, bare }) => {
      const baseline: number[] = [];
      const subject: number[] = [];
      // The bench process runs the client, both workers and their SDK threads (not the dev server): its CPU per
      // plan says what one plan costs the worker, whatever else loads the machine.
      const baselineCpu: number[] = [];
      const subjectCpu: number[] = [];
      let lastPlans: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const bareRun = await bareBatch(h, bare.taskQueue, round);
        baseline.push(bareRun.rate);
        baselineCpu.push(bareRun.cpuMsEach);
        const batch = await engineBatch(h);
        subject.push(batch.rate);
        subjectCpu.push(batch.cpuMsEach);
        // Execute copies the project into its sandbox: left in place, each round's files would slow the next.
        rmSync(path.join(h.projectDir, 'demo', 'bench'), { recursive: true, force: true });
        lastPlans = batch.planIds;
        console.log(
          `P1 round ${round + 1}/${ROUNDS}: bare ${bareRun.rate.toFixed(1)} /s (${bareRun.cpuMsEach.toFixed(0)} ms CPU ` +
            `each), engine ${batch.rate.toFixed(1)} plans/s (${batch.cpuMsEach.toFixed(0)} ms CPU each)`,
        );
      }
      const histories = await Promise.all(
        lastPlans.map((id) => h.env.client.workflow.getHandle(planWorkflowId(id)).fetchHistory()),
      );
      const breakdown = summarise(collectTimings(histories), histories.length);
      printTimings(`P1 where an engine plan's time goes (last batch of ${PLANS}):`, breakdown);
      const decisions = (await h.plans.listDecisions(lastPlans[0] ?? '')).length;
      const s = median(subject);
      const b = median(baseline);
      return {
        rows: [
          {
            id: 'P1',
            measure: `plans/s, ${PLANS} FULL_AUTOMATION at once`,
            subject: `${s.toFixed(1)} /s`,
            baseline: `${b.toFixed(1)} /s bare`,
            ratio: (s / b).toFixed(2),
            goal: '≥ 0.9',
            met: s / b >= 0.9,
          },
        ],
        data: {
          plansPerBatch: PLANS,
          rounds: ROUNDS,
          decisionsPerPlan: decisions,
          maxCachedWorkflows: engine.options.maxCachedWorkflows,
          baselinePerSecond: baseline.map((v) => round(v)),
          subjectPerSecond: subject.map((v) => round(v)),
          baselineCpuMsEach: baselineCpu.map((v) => round(v, 1)),
          subjectCpuMsEach: subjectCpu.map((v) => round(v, 1)),
          medianBaseline: round(b),
          medianSubject: round(s),
          ratio: round(s / b, 3),
          engineTimeBreakdown: breakdown,
        },
      };
    }),
  );
}
