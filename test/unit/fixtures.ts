/** Shared objects for the domain unit tests (not a test file: jest only runs *.test.ts). */
import { actionSchema, automationProfileSchema, projectSchema } from '../../domain/catalog';
import type { Action, AutomationProfile, Project, Stored } from '../../domain/catalog';
import type { GateView } from '../../domain/gates';
import type { PlanFields } from '../../domain/plan';

export const PLAN_ID = '01KB0F5ZQ3S5G9X2N6W8Y4T7RA';
export const PARENT_ID = '01KB0F5ZQ3S5G9X2N6W8Y4T7RB';
export const ROOT_ID = '01KB0F5ZQ3S5G9X2N6W8Y4T7RC';
export const CHILD_ID = '01KB0F5ZQ3S5G9X2N6W8Y4T7RD';
export const DECISION_ID = '01KB0F5ZQ3S5G9X2N6W8Y4T7RE';
export const CREATED_AT = '2026-11-30T00:00:00.000Z';
export const UPDATED_AT = '2026-11-30T00:05:00.000Z';
export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** local/code-review as actions/local-code-review.yaml defines it, with actors and a default profile added. */
export function codeReviewAction(patch: Partial<Action> = {}): Action {
  return actionSchema.parse({
    name: 'local/code-review',
    description: 'Review the code under a path.',
    arguments: [
      { name: 'path', type: 'string', required: true, description: 'what to review' },
      { name: 'depth', type: 'integer', default: 2, allowedValues: [1, 2, 3] },
      { name: 'strict', type: 'boolean', default: false },
    ],
    defaultAutomationLevel: 'REVIEW_BEFORE_APPLY',
    defaultProfile: null,
    actors: { strategyActor: 'local/planner', executionActor: 'local/coder' },
    invariants: ['Do not modify files outside the path.', 'Keep the public API.'],
    definitionOfDone: 'Every file under the path is reviewed.',
    tags: ['review', 'quality'],
    ...patch,
  });
}

export function project(name: string, patch: Partial<Project> = {}): Project {
  return projectSchema.parse({ name, path: `/srv/${name}`, ...patch });
}

export function careful(patch: Partial<AutomationProfile> = {}): AutomationProfile {
  return automationProfileSchema.parse({
    name: 'team/careful',
    description: 'Stops often.',
    automationLevel: 'MANUAL',
    minDecisionConfidence: 0.9,
    maxAutoRetries: 1,
    approvalTimeoutSeconds: 3600,
    ...patch,
  });
}

export function stored<T>(value: T, builtIn = false): Stored<T> {
  return { value, builtIn, createdAt: CREATED_AT, updatedAt: UPDATED_AT };
}

/** A plan with only the required fields: every optional field unset or empty. */
export function minimalPlan(): PlanFields {
  return {
    planId: PLAN_ID,
    workflowId: `plan-${PLAN_ID}`,
    name: 'code-review on acme/api',
    actionName: 'local/code-review',
    description: '',
    projects: [{ projectName: 'acme/api', alias: null, readOnly: false }],
    automationLevel: 'MANUAL',
    arguments: {},
    argumentsOrder: [],
    definitionOfDone: null,
    automationProfileName: null,
    effectiveProfileSnapshot: null,
    invariants: [],
    actors: { strategyActor: null, executionActor: null, estimationActor: null, invariantActor: null },
    tags: [],
    phase: 'STRATEGIZE',
    state: 'QUEUED',
    changesetId: null,
    sandboxRefs: [],
    validationSummary: null,
    decisionRootId: null,
    error: null,
    parentPlanId: null,
    rootPlanId: null,
    depth: 0,
    childPlanIds: [],
    createdBy: 'ada',
    createdAt: CREATED_AT,
    updatedAt: UPDATED_AT,
  };
}

/** A plan with every field set (awaiting approval, started with tracing on). */
export function fullPlan(): PlanFields & { awaitingApproval: boolean; traceId: string | null } {
  return {
    ...minimalPlan(),
    description: 'tidy up',
    projects: [
      { projectName: 'acme/api', alias: 'api', readOnly: false },
      { projectName: 'acme/docs', alias: null, readOnly: true },
    ],
    automationLevel: 'REVIEW_BEFORE_APPLY',
    // Insertion order differs from argumentsOrder on purpose: rendering must follow argumentsOrder.
    arguments: { strict: true, path: 'src', depth: 3 },
    argumentsOrder: ['path', 'depth', 'strict'],
    definitionOfDone: 'All files reviewed.',
    automationProfileName: 'team/careful',
    effectiveProfileSnapshot: {
      name: 'team/careful',
      automationLevel: 'MANUAL',
      minDecisionConfidence: 0.9,
      maxAutoRetries: 1,
      approvalTimeoutSeconds: 3600,
    },
    invariants: [
      { text: 'global rule', scope: 'GLOBAL', sourceName: null, id: null, rule: null },
      { text: 'project rule', scope: 'PROJECT', sourceName: 'acme/api', id: null, rule: null },
      { text: 'plan rule 1', scope: 'PLAN', sourceName: 'local/code-review', id: null, rule: null },
      { text: 'action rule', scope: 'ACTION', sourceName: 'local/code-review', id: null, rule: null },
      { text: 'plan rule 2', scope: 'PLAN', sourceName: null, id: null, rule: null },
    ],
    actors: {
      strategyActor: 'local/planner',
      executionActor: 'local/coder',
      estimationActor: 'local/estimator',
      invariantActor: 'local/guard',
    },
    tags: ['review', 'nightly'],
    phase: 'APPLY',
    state: 'ERRORED',
    awaitingApproval: true,
    traceId: TRACE_ID,
    changesetId: 'cs-1',
    sandboxRefs: ['sandbox-1', 'sandbox-2'],
    validationSummary: '3 checks passed',
    decisionRootId: DECISION_ID,
    error: { type: 'PhaseFailed', message: 'boom', details: 'stack', at: UPDATED_AT },
    parentPlanId: PARENT_ID,
    rootPlanId: ROOT_ID,
    depth: 1,
    childPlanIds: [CHILD_ID],
  };
}

/** A gate into Apply opened this morning that anyone may approve once, never expiring. */
export function gateView(overrides: Partial<GateView> = {}): GateView {
  return {
    to: 'APPLY',
    openedAt: '2026-12-01T10:00:00.000Z',
    approvals: [],
    required: 1,
    approvers: [],
    lowConfidence: null,
    expiresAt: null,
    reminders: 0,
    ...overrides,
  };
}
