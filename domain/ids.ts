/** Identifier shapes shared by the workflow, the database and the CLI. */

/** Crockford base32, 26 characters, first character at most 7 (48-bit timestamp). */
const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** The task queue plan workflows and their activities run on, unless a deployment names another. */
export const TASK_QUEUE = 'cleveragents-plans';

export const PLAN_WORKFLOW_PREFIX = 'plan-';

export function isUlid(value: string): boolean {
  return ULID_PATTERN.test(value);
}

export function planWorkflowId(planId: string): string {
  return `${PLAN_WORKFLOW_PREFIX}${planId}`;
}

/**
 * Accepts what a user pastes: the bare ULID, the workflow id `plan-<ULID>`, any letter case.
 * Returns the canonical plan id or undefined when the text is not a plan id at all.
 */
export function normalizePlanId(input: string): string | undefined {
  const upper = bareIdText(input);
  return isUlid(upper) ? upper : undefined;
}

/** What a user pasted as a plan id, or the start of one: trimmed, without `plan-` (any case), upper-cased. */
export function bareIdText(input: string): string {
  const trimmed = input.trim();
  const bare = trimmed.toLowerCase().startsWith(PLAN_WORKFLOW_PREFIX)
    ? trimmed.slice(PLAN_WORKFLOW_PREFIX.length)
    : trimmed;
  return bare.toUpperCase();
}

/** The plan id in a plan workflow's id (`plan-<ULID>`, exactly as the engine writes it), or null. */
export function planIdOfWorkflow(workflowId: string): string | null {
  if (!workflowId.startsWith(PLAN_WORKFLOW_PREFIX)) return null;
  const planId = workflowId.slice(PLAN_WORKFLOW_PREFIX.length);
  return isUlid(planId) ? planId : null;
}
