/**
 * Execute's subplan steps: each child plan is a child workflow (`plan-<id>`, the same planWorkflow, parent close
 * policy REQUEST_CANCEL) that the parent waits for until it reaches APPLIED; a `parallel:` group's children run at
 * once and the group ends when all of them have. The steps run in strategy order before Execute's activity copies
 * the projects, so the parent's own steps see what its children applied. Cancelling the parent cancels the children
 * it waits for (the cancellation reaches them through this scope); a child that ends otherwise (cancelled by a
 * person, terminated) is the step's failure, handled as its `on_child_failure` says.
 */
import {
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import type { PlanActivities } from '../activities';
import type { PhaseFailure } from '../activities/contracts';
import type { DecisionDraft } from '../domain/decision';
import { ERROR_TYPES, NON_RETRYABLE_ERROR_TYPES } from '../domain/errors';
import { planWorkflowId } from '../domain/ids';
import type { Phase } from '../domain/lifecycle';
import { initialSnapshot, WORKFLOW_ACTOR } from '../domain/plan';
import type { PlanSpec } from '../domain/plan';
import { childPlanId, childRequests, splitStrategySteps } from '../domain/subplans';
import type { SpawnStep } from '../domain/subplans';
import { PLAN_NAME_MEMO, startSearchAttributes } from './definitions';
import { planSummary } from '../domain/gates';
import type { ChildPlanRun } from './definitions';
import type { PlanRun, PhaseWork } from './plan-run';
import { now } from './plan-run';

/** Resolving and writing a child's row is a short storage call; an unreachable database is waited out. */
const { prepareSubplans } = proxyActivities<PlanActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

/** The workflow type children run: planWorkflow, named rather than imported (plan.ts imports this module). */
const PLAN_WORKFLOW_TYPE = 'planWorkflow';

export type SubplansOutcome =
  | { ok: true; summary: string | null; decisions: DecisionDraft[] }
  | { ok: false; failure: PhaseFailure; decisions: DecisionDraft[] };

/**
 * Runs the strategy's subplan steps, in order. A plan without any returns at once, scheduling nothing: histories
 * of plans without subplans replay unchanged. On a retry of Execute, a child that reached APPLIED is not run again,
 * and one that failed under `fail` is replaced by a new child (the next generation), recorded as its own spawn.
 */
export async function runSubplans(run: PlanRun, work: PhaseWork): Promise<SubplansOutcome> {
  const { state } = run;
  const { spawns } = splitStrategySteps(state.strategy?.steps ?? []);
  if (spawns.length === 0) return { ok: true, summary: null, decisions: [] };
  const children = (state.children ??= []);
  const decisions: DecisionDraft[] = [];
  let applied = 0;
  let failedAndContinued = 0;
  for (const spawn of spawns) {
    const todo = childrenToRun(spawn, children, run.spec.planId);
    for (const replacement of todo.filter((c) => c.generation > 0)) {
      decisions.push(replacementDecision(spawn, replacement, run.plan.phase, work.parentDecisionSeq));
    }
    if (todo.length > 0) {
      const { specs } = await prepareSubplans({
        planId: run.spec.planId,
        stepIndex: spawn.stepIndex,
        step: spawn.step,
        children: todo.map(({ childIndex, generation }) => ({ childIndex, generation })),
        at: now(),
      });
      const records = specs.map((spec, i): ChildPlanRun => {
        const { childIndex, generation } = todo[i] as (typeof todo)[number];
        return {
          stepIndex: spawn.stepIndex,
          childIndex,
          generation,
          planId: spec.planId,
          actionName: spec.actionName,
          outcome: 'running',
          message: null,
        };
      });
      children.push(...records);
      await Promise.all(specs.map((spec, i) => runChild(spec, records[i] as ChildPlanRun)));
    }
    const latest = latestOfStep(children, spawn);
    const failed = latest.filter((c) => c.outcome === 'failed');
    applied += latest.filter((c) => c.outcome === 'applied').length;
    if (failed.length === 0) continue;
    const lines = failed.map((c) => `subplan ${c.planId} (${c.actionName}) ${c.message ?? 'failed'}`);
    if (spawn.onChildFailure === 'fail') {
      return {
        ok: false,
        decisions,
        failure: {
          type: ERROR_TYPES.SubplanFailed,
          message:
            `step ${spawn.stepIndex + 1}: ${lines.join('; ')}; ` +
            '`agents plan retry` spawns a replacement for each failed child, `agents plan cancel` gives up',
          details: JSON.stringify({ stepIndex: spawn.stepIndex, failed }),
        },
      };
    }
    failedAndContinued += failed.length;
    // Only failures seen in this run are recorded; an earlier run's were recorded with it.
    for (const child of failed.filter((c) => todo.some((t) => t.childIndex === c.childIndex))) {
      decisions.push({
        type: 'error_recovery',
        question: `Subplan ${child.planId} (${child.actionName}) ended without being applied: go on?`,
        chosenOption: 'Go on without it (on_child_failure: continue)',
        alternatives: ['Fail Execute'],
        confidence: 1,
        rationale: `The step says on_child_failure: continue; the child ${child.message ?? 'failed'}.`,
        parentSeq: work.parentDecisionSeq,
        phase: run.plan.phase,
        actor: WORKFLOW_ACTOR,
        downstreamPlanIds: [child.planId],
      });
    }
  }
  const summary =
    `${applied} subplan${applied === 1 ? '' : 's'} applied` +
    (failedAndContinued === 0
      ? ''
      : `, ${failedAndContinued} failed and left behind (on_child_failure: continue)`);
  return { ok: true, summary, decisions };
}

/** The children of a step to run now: those never run, and a replacement for each that failed under `fail`. */
function childrenToRun(
  spawn: SpawnStep,
  children: readonly ChildPlanRun[],
  parentPlanId: string,
): Array<{ childIndex: number; generation: number; replaces: string | null; planId: string }> {
  const todo: Array<{ childIndex: number; generation: number; replaces: string | null; planId: string }> = [];
  childRequests(spawn.step).forEach((_, childIndex) => {
    const last = latestChild(children, spawn.stepIndex, childIndex);
    if (last === undefined) {
      todo.push({
        childIndex,
        generation: 0,
        replaces: null,
        planId: childPlanId(parentPlanId, { stepIndex: spawn.stepIndex, childIndex }),
      });
    } else if (last.outcome === 'failed' && spawn.onChildFailure === 'fail') {
      const generation = last.generation + 1;
      todo.push({
        childIndex,
        generation,
        replaces: last.planId,
        planId: childPlanId(parentPlanId, { stepIndex: spawn.stepIndex, childIndex }, generation),
      });
    }
  });
  return todo;
}

function latestChild(
  children: readonly ChildPlanRun[],
  stepIndex: number,
  childIndex: number,
): ChildPlanRun | undefined {
  let latest: ChildPlanRun | undefined;
  for (const child of children) {
    if (child.stepIndex === stepIndex && child.childIndex === childIndex) latest = child;
  }
  return latest;
}

function latestOfStep(children: readonly ChildPlanRun[], spawn: SpawnStep): ChildPlanRun[] {
  return childRequests(spawn.step).flatMap((_, childIndex) => {
    const latest = latestChild(children, spawn.stepIndex, childIndex);
    return latest === undefined ? [] : [latest];
  });
}

function replacementDecision(
  spawn: SpawnStep,
  child: { childIndex: number; replaces: string | null; planId: string },
  phase: Phase,
  parentSeq: number,
): DecisionDraft {
  const request = childRequests(spawn.step)[child.childIndex];
  return {
    type: 'subplan_spawn',
    question: `Subplan ${child.replaces ?? ''} of step ${spawn.stepIndex + 1} failed: spawn a replacement?`,
    chosenOption: `Spawn ${request?.action ?? 'the same action'} again as plan ${child.planId}`,
    alternatives: ['Cancel the plan'],
    confidence: 1,
    rationale:
      'A person retried Execute after the child failed; a finished plan never runs again, so a new one does.',
    parentSeq,
    phase,
    actor: WORKFLOW_ACTOR,
    downstreamPlanIds: [child.planId],
  };
}

/**
 * Starts one child and waits for it. Its end is recorded in `record` (kept in the workflow's state, so a retry
 * knows it); only the parent's own cancellation is thrown on.
 */
async function runChild(spec: PlanSpec, record: ChildPlanRun): Promise<void> {
  const workflowId = planWorkflowId(spec.planId);
  try {
    const handle = await startChild(PLAN_WORKFLOW_TYPE, {
      workflowId,
      args: [spec],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      memo: { [PLAN_NAME_MEMO]: spec.name },
      typedSearchAttributes: startSearchAttributes(initialSnapshot(spec, workflowId)),
      staticSummary: planSummary(spec),
    });
    await handle.result();
    record.outcome = 'applied';
  } catch (err) {
    // The parent being cancelled cancels its children too; that is the parent's cancellation, not the child's
    // failure, and the parent's frame records it.
    if (CancellationScope.current().consideredCancelled) throw err;
    if (!(err instanceof ChildWorkflowFailure)) throw err;
    record.outcome = 'failed';
    record.message = describeChildFailure(err);
  }
}

function describeChildFailure(err: ChildWorkflowFailure): string {
  const { cause } = err;
  if (cause instanceof CancelledFailure) return 'was cancelled';
  if (cause instanceof TerminatedFailure) return 'was terminated';
  if (cause instanceof TimeoutFailure) return 'timed out';
  return `failed: ${cause?.message ?? err.message}`;
}
