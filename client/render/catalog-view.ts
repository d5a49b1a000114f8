/**
 * CLI views of the catalog (actions, projects, automation profiles): snake_case keys in a fixed order, optional
 * fields only when set, like a plan's `as_cli_dict`. List rows are flat (scalars only) so every output format,
 * tab-separated plain text included, can show them.
 */
import { actionCliDict } from '../../domain/action-file';
import type { Action, AutomationProfile, Project, Stored } from '../../domain/catalog';
import { profileThresholds } from './plan-view';

export { actionCliDict } from '../../domain/action-file';

/** `built_in` only when true, then the catalog timestamps: shared tail of every catalog document. */
function storedTail(stored: Stored<unknown>): Record<string, unknown> {
  return {
    ...(stored.builtIn ? { built_in: true } : {}),
    created_at: stored.createdAt,
    updated_at: stored.updatedAt,
  };
}

/**
 * `action show` with catalog metadata: actionCliDict (the action file's shape) followed by built_in (when true)
 * and the timestamps. Use actionCliDict alone when the output should be feedable back to `action add`.
 */
export function storedActionCliDict(stored: Stored<Action>): Record<string, unknown> {
  return { ...actionCliDict(stored.value), ...storedTail(stored) };
}

/** `project show`: name, path, description (when non-empty), built_in (when true), created_at, updated_at. */
export function projectCliDict(stored: Stored<Project>): Record<string, unknown> {
  const p = stored.value;
  return {
    name: p.name,
    path: p.path,
    ...(p.description === '' ? {} : { description: p.description }),
    ...storedTail(stored),
  };
}

/**
 * `profile show`: name, description (when non-empty), automation_level, min_decision_confidence,
 * max_auto_retries, approval_timeout_seconds (only when set: unset means a gate waits indefinitely), max_subplan_depth, built_in
 * (when true), created_at, updated_at.
 */
export function profileCliDict(stored: Stored<AutomationProfile>): Record<string, unknown> {
  const p = stored.value;
  return {
    name: p.name,
    ...(p.description === '' ? {} : { description: p.description }),
    ...profileThresholds(p),
    ...storedTail(stored),
  };
}

/** One row of `action list`: arguments and tags as comma-separated names. */
export function actionListRow(stored: Stored<Action>): Record<string, unknown> {
  const a = stored.value;
  return {
    name: a.name,
    default_automation_level: a.defaultAutomationLevel,
    default_profile: a.defaultProfile ?? '',
    arguments: a.arguments.map((d) => (d.required ? `${d.name}*` : d.name)).join(','),
    tags: a.tags.join(','),
    built_in: stored.builtIn,
    description: a.description,
  };
}

/** Columns of `action list` in table/plain formats; `*` after an argument name marks it required. */
export const ACTION_LIST_COLUMNS: readonly string[] = [
  'name',
  'default_automation_level',
  'default_profile',
  'arguments',
  'tags',
  'built_in',
  'description',
];

/** One row of `project list`. */
export function projectListRow(stored: Stored<Project>): Record<string, unknown> {
  const p = stored.value;
  return { name: p.name, path: p.path, built_in: stored.builtIn, description: p.description };
}

export const PROJECT_LIST_COLUMNS: readonly string[] = ['name', 'path', 'built_in', 'description'];

/** One row of `profile list`; approval_timeout_seconds is null (shown empty) when a gate waits indefinitely. */
export function profileListRow(stored: Stored<AutomationProfile>): Record<string, unknown> {
  const p = stored.value;
  return {
    name: p.name,
    automation_level: p.automationLevel,
    min_decision_confidence: p.minDecisionConfidence,
    max_auto_retries: p.maxAutoRetries,
    approval_timeout_seconds: p.approvalTimeoutSeconds,
    max_subplan_depth: p.maxSubplanDepth,
    approvers: p.approvers.join(','),
    required_approvals: p.requiredApprovals,
    on_timeout: p.onTimeout,
    built_in: stored.builtIn,
    description: p.description,
  };
}

export const PROFILE_LIST_COLUMNS: readonly string[] = [
  'name',
  'automation_level',
  'min_decision_confidence',
  'max_auto_retries',
  'approval_timeout_seconds',
  'max_subplan_depth',
  'approvers',
  'required_approvals',
  'on_timeout',
  'built_in',
  'description',
];
