/**
 * What the CLI can tell about a plan without Temporal: its id as a person types it, and whether it waits for a
 * person. Apart from client/plans.ts so that commands that read only the database (`plan list`, `plan show`, the
 * catalog) never load the Temporal client, its protobufs or the workflow code.
 */
import { normalizePlanId } from '../domain/ids';
import { isFinished } from '../domain/lifecycle';
import { PlanClientError } from './errors';
import type { PlanView } from './plans';

export function parsePlanId(input: string): string {
  const planId = normalizePlanId(input);
  if (planId === undefined) {
    throw new PlanClientError(
      'usage',
      `"${input}" is not a plan id (expected a 26-character ULID or plan-<ULID>)`,
    );
  }
  return planId;
}

/** The plan waits for a person (a gate or an error) or has ended: what `plan wait` and `plan watch` stop at. */
export function needsPersonOrEnded(view: PlanView): boolean {
  return (
    view.awaitingApproval || view.state === 'ERRORED' || isFinished(view) || view.workflowStatus !== 'RUNNING'
  );
}
