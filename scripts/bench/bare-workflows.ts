/**
 * The baselines' workflows, bundled apart from the engine's and run on a task queue of their own: the least a
 * durable three-phase lifecycle could cost on the same server and worker options.
 */
import { condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type * as activities from './bare-activities';

const { first, second, third } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

/** P1 and P5's baseline: three phases, each one no-op activity. */
export async function bareThreePhases(): Promise<void> {
  await first();
  await second();
  await third();
}

export const bareAdvanceUpdate = defineUpdate<number, []>('bareAdvance');

/** P2's baseline: parked at a gate until an update moves it one phase on; the update answers at once. */
export async function bareGate(): Promise<void> {
  let phase = 0;
  setHandler(bareAdvanceUpdate, () => ++phase);
  await condition(() => phase > 0);
}
