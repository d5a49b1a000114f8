/**
 * P2: how long `agents plan advance` takes to show its effect. A MANUAL plan parked at the Strategize gate is
 * advanced the way the CLI does it (PlanClient.advance: describe, then the advancePlan update); the clock stops
 * when the database row, which `plan show` and `plan list` read, shows Execute under way (PROCESSING or later).
 *   baseline: a bare workflow parked on an update handler; the update's round trip
 * Plans and bare workflows are parked first, then advanced alternately; p50 of SAMPLES each.
 */
import type { Harness } from '../../test/helpers/harness';
import type { PartResult } from './report';
import { envNumber, nowMs, percentile, round, sleep } from './stats';
import { createBenchPlan, withWorld } from './world';
import { withWorkers } from './workers';
import { bareAdvanceUpdate } from './bare-workflows';

const SAMPLES = envNumber('BENCH_P2_SAMPLES', 20);
const POLL_MS = 2;
const VISIBLE_TIMEOUT_MS = 60_000;

/** Polls the plan's row until it has left the gate and Execute has started, or later. */
async function waitForExecuteUnderWay(h: Harness, planId: string): Promise<void> {
  const deadline = Date.now() + VISIBLE_TIMEOUT_MS;
  for (;;) {
    const row = await h.plans.getPlan(planId);
    if (row !== null && row.phase !== 'STRATEGIZE' && !(row.phase === 'EXECUTE' && row.state === 'QUEUED'))
      return;
    if (Date.now() > deadline) throw new Error(`plan ${planId} did not show Execute under way within 60 s`);
    await sleep(POLL_MS);
  }
}

export async function p2Advance(): Promise<PartResult> {
  return withWorld((h) =>
    withWorkers(h, async ({ bare }) => {
      const planIds = await Promise.all(Array.from({ length: SAMPLES }, () => createBenchPlan(h, 'MANUAL')));
      for (const planId of planIds) {
        const view = await h.client.waitForInput(planId);
        if (!view.awaitingApproval)
          throw new Error(`plan ${planId} is not at a gate: ${view.phase} ${view.state}`);
      }
      const bareHandles = await Promise.all(
        Array.from({ length: SAMPLES }, (_, i) =>
          h.env.client.workflow.start('bareGate', {
            taskQueue: bare.taskQueue,
            workflowId: `bare-p2-${i}-${Date.now()}`,
          }),
        ),
      );
      // A query is answered only after the first workflow task: each bare workflow is then parked on its handler.
      await Promise.all(bareHandles.map((handle) => handle.describe()));
      await sleep(500);

      const baseline: number[] = [];
      const updateReturned: number[] = [];
      const subject: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const bareHandle = bareHandles[i];
        const planId = planIds[i];
        if (bareHandle === undefined || planId === undefined) break;
        let start = nowMs();
        await bareHandle.executeUpdate(bareAdvanceUpdate);
        baseline.push(nowMs() - start);

        start = nowMs();
        const snapshot = await h.client.advance(planId, { by: 'bench', expectedPhase: 'STRATEGIZE' });
        updateReturned.push(nowMs() - start);
        if (snapshot.phase !== 'EXECUTE') throw new Error(`plan ${planId} advanced to ${snapshot.phase}`);
        await waitForExecuteUnderWay(h, planId);
        subject.push(nowMs() - start);
        // Its Execute would otherwise run during the next sample and slow it: each advance finds an idle worker.
        await h.client.waitForInput(planId);
      }
      const s = percentile(subject, 50);
      const b = percentile(baseline, 50);
      return {
        rows: [
          {
            id: 'P2',
            measure: 'advance → Execute PROCESSING in the db, p50',
            subject: `${s.toFixed(0)} ms`,
            baseline: `${b.toFixed(0)} ms bare update`,
            ratio: (s / b).toFixed(2),
            goal: '≤ 1.5',
            met: s / b <= 1.5,
          },
        ],
        data: {
          samples: SAMPLES,
          baselineMs: baseline.map((v) => round(v, 1)),
          updateReturnedMs: updateReturned.map((v) => round(v, 1)),
          subjectMs: subject.map((v) => round(v, 1)),
          p50BaselineMs: round(b, 1),
          p50UpdateReturnedMs: round(percentile(updateReturned, 50), 1),
          p50SubjectMs: round(s, 1),
          p95SubjectMs: round(percentile(subject, 95), 1),
          ratio: round(s / b, 3),
        },
      };
    }),
  );
}
