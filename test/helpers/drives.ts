/**
 * How a person drives a plan through its gates, for the history recorder (test/histories/record.ts) and the
 * bench (scripts/bench/p5-history.ts), which must drive plans the same way for their histories to compare.
 */
import type { Harness } from './harness';

/** Approves every gate until the plan finishes; `by` is who approves. Waits up to `timeoutMs` at each step. */
export async function approveToTheEnd(
  h: Pick<Harness, 'client'>,
  planId: string,
  by: string,
  timeoutMs?: number,
): Promise<void> {
  for (;;) {
    const view = await h.client.waitForInput(planId, timeoutMs);
    if (view.phase === 'APPLIED' || view.state === 'CANCELLED') return;
    if (!view.awaitingApproval) throw new Error(`plan ${planId} needs a person: ${view.phase} ${view.state}`);
    await h.client.advance(planId, { by, reason: `approve ${view.phase}`, expectedPhase: view.phase });
  }
}

/** At the first gate, corrects the plan's first strategy_choice to `chosenOption`, then approves to the end. */
export async function correctThenApprove(
  h: Harness,
  planId: string,
  by: string,
  chosenOption: string,
): Promise<void> {
  await h.client.waitForInput(planId);
  const choice = (await h.plans.listDecisions(planId)).find((d) => d.type === 'strategy_choice');
  if (choice === undefined) throw new Error(`plan ${planId} recorded no strategy_choice to correct`);
  await h.client.correct(planId, {
    by,
    decisionId: choice.decisionId,
    chosenOption,
    reason: `${by} correction`,
  });
  await approveToTheEnd(h, planId, by);
}
