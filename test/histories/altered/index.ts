/**
 * A deliberately incompatible version of planWorkflow: it waits one second before doing anything, as a careless
 * "small tweak" would. Replaying a checked-in history against it must fail; replay.test.ts proves that it does.
 */
import { sleep } from '@temporalio/workflow';
import { planWorkflow as currentPlanWorkflow } from '../../../workflows/plan';
import type { PlanWorkflowInput, PlanWorkflowResult } from '../../../workflows/definitions';

export async function planWorkflow(spec: PlanWorkflowInput): Promise<PlanWorkflowResult> {
  await sleep('1 second');
  return currentPlanWorkflow(spec);
}
