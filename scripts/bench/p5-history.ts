/**
 * P5: history events per plan, by how the plan was driven: the three automation levels run to APPLIED, a MANUAL
 * plan corrected at its first gate, and a REVIEW_BEFORE_APPLY plan stopped once by an invariant and retried.
 *   baseline: the bare three-activity workflow's history
 * Event counts are deterministic for a given engine, so one run of each is enough; what the engine's workflows
 * do (activities, local activities, search attribute upserts) is whatever they do today.
 */
import { planWorkflowId } from '../../domain/ids';
import * as drives from '../../test/helpers/drives';
import type { Harness } from '../../test/helpers/harness';
import type { PartResult, Row } from './report';
import { createBenchPlan, withWorld } from './world';
import { withWorkers } from './workers';

const approveToTheEnd = (h: Harness, planId: string) => drives.approveToTheEnd(h, planId, 'bench');

interface Scenario {
  name: string;
  level: 'MANUAL' | 'REVIEW_BEFORE_APPLY' | 'FULL_AUTOMATION';
  drive(h: Harness, planId: string): Promise<void>;
}

const SCENARIOS: Scenario[] = [
  { name: 'MANUAL', level: 'MANUAL', drive: approveToTheEnd },
  { name: 'REVIEW_BEFORE_APPLY', level: 'REVIEW_BEFORE_APPLY', drive: approveToTheEnd },
  { name: 'FULL_AUTOMATION', level: 'FULL_AUTOMATION', drive: async () => undefined },
  {
    name: 'MANUAL + 1 correction',
    level: 'MANUAL',
    drive: (h, planId) =>
      drives.correctThenApprove(
        h,
        planId,
        'bench',
        '{create: NOTES.md, content: "written by hand\\n", overwrite: true}',
      ),
  },
  {
    // An invariant added at the gate before Apply stops the approved transition; removed, a retry goes on.
    name: 'REVIEW + 1 invariant retry',
    level: 'REVIEW_BEFORE_APPLY',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const guard = await h.invariants.add({
        text: 'Leave the bench files alone',
        scope: 'PLAN',
        target: planId,
        rule: { protected_paths: ['bench/**'] },
        author: 'bench',
        at: new Date().toISOString(),
      });
      const stopped = await h.client.advance(planId, { by: 'bench', expectedPhase: 'EXECUTE' });
      if (stopped.state !== 'ERRORED') throw new Error(`the invariant did not stop plan ${planId}`);
      await h.invariants.remove(guard.id);
      await h.client.retry(planId, { by: 'bench', reason: 'invariant removed' });
      await approveToTheEnd(h, planId);
    },
  },
];

export async function p5History(): Promise<PartResult> {
  return withWorld((h) =>
    withWorkers(h, async ({ bare }) => {
      const bareHandle = await h.env.client.workflow.start('bareThreePhases', {
        taskQueue: bare.taskQueue,
        workflowId: `bare-p5-${Date.now()}`,
      });
      await bareHandle.result();
      const bareEvents = (await bareHandle.fetchHistory()).events?.length ?? 0;
      const counts: Record<string, number> = {};
      for (const scenario of SCENARIOS) {
        const planId = await createBenchPlan(h, scenario.level);
        await scenario.drive(h, planId);
        const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));
        const result = await handle.result();
        if (result.phase !== 'APPLIED') throw new Error(`${scenario.name}: plan ended in ${result.phase}`);
        counts[scenario.name] = (await handle.fetchHistory()).events?.length ?? 0;
      }
      const rows: Row[] = SCENARIOS.map(({ name }) => {
        const events = counts[name] ?? 0;
        const full = name === 'FULL_AUTOMATION';
        return {
          id: 'P5',
          measure: `history events, ${name}`,
          subject: String(events),
          baseline: `${bareEvents} bare`,
          ratio: (events / bareEvents).toFixed(2),
          goal: full ? '≤ 60 events' : '',
          met: full ? events <= 60 : null,
        };
      });
      return { rows, data: { bareEvents, planEvents: counts } };
    }),
  );
}
