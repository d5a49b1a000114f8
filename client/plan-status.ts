/**
 * What the CLI can tell about a plan without Temporal: whether it waits for a person. Apart from client/plans.ts so
 * that commands that read only the database (`plan list`, `plan show`, the catalog) never load the Temporal
 * client, its protobufs or the workflow code. A plan as a person names it is client/plan-ref.ts.
 */
import { isFinished } from '../domain/lifecycle';
import type { PlanView } from './plans';

/** The plan waits for a person (a gate or an error) or has ended: what `plan wait` and `plan watch` stop at. */
export function needsPersonOrEnded(view: PlanView): boolean {
  return (
    view.awaitingApproval || view.state === 'ERRORED' || isFinished(view) || view.workflowStatus !== 'RUNNING'
  );
}
