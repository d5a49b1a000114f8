/**
 * CLI key order for a plan, after seed 000's `as_cli_dict`: groups in a fixed order, optional fields only when set.
 * Fields that later issues add (definition of done, profile, actors, invariants, execution, tags, hierarchy)
 * slot into their group here.
 */
import type { AutomationLevel, Phase, ProcessingState } from './lifecycle';
import type { PlanError, ProjectLink } from './plan';

export interface PlanCliSource {
  planId: string;
  name: string;
  actionName: string;
  phase: Phase;
  state: ProcessingState;
  description: string;
  projects: ProjectLink[];
  automationLevel: AutomationLevel;
  arguments: Record<string, unknown>;
  argumentsOrder: string[];
  decisionRootId: string | null;
  error: PlanError | null;
  createdAt: string;
  updatedAt: string;
  awaitingApproval?: boolean;
}

export function planCliDict(plan: PlanCliSource): Record<string, unknown> {
  const dict: Record<string, unknown> = {
    plan_id: plan.planId,
    name: plan.name,
    action_name: plan.actionName,
    phase: plan.phase,
    state: plan.state,
  };
  if (plan.awaitingApproval) dict.awaiting_approval = true;
  dict.description = plan.description;
  dict.projects = plan.projects.map((p) => p.projectName);
  dict.automation_level = plan.automationLevel;
  if (plan.argumentsOrder.length > 0) {
    dict.arguments = Object.fromEntries(plan.argumentsOrder.map((k) => [k, plan.arguments[k]]));
  }
  if (plan.decisionRootId !== null) dict.decision_root_id = plan.decisionRootId;
  if (plan.error !== null) {
    dict.error_type = plan.error.type;
    dict.error_message = plan.error.message;
    if (plan.error.details !== null) dict.error_details = plan.error.details;
    dict.errored_at = plan.error.at;
  }
  dict.created_at = plan.createdAt;
  dict.updated_at = plan.updatedAt;
  return dict;
}

/** One row of `plan list`. */
export function planListRow(plan: PlanCliSource): Record<string, unknown> {
  return {
    plan_id: plan.planId,
    name: plan.name,
    action_name: plan.actionName,
    phase: plan.phase,
    state: plan.state,
    automation_level: plan.automationLevel,
    projects: plan.projects.map((p) => p.projectName).join(','),
    updated_at: plan.updatedAt,
  };
}

export const PLAN_LIST_COLUMNS = [
  'plan_id',
  'name',
  'action_name',
  'phase',
  'state',
  'automation_level',
  'updated_at',
];
