/**
 * A plan as the CLI shows it: seed 000's `Plan.as_cli_dict()`. Keys are snake_case and come in the seed's 11
 * groups, in order; optional fields appear only when set (non-null) or non-empty. JSON and YAML output keep this
 * key order, so scripts and people see the same stable document.
 */
import type { ApplyStatistics } from '../../domain/changeset';
import { approvalsLeft, pendingApprovers, waitingFor } from '../../domain/gates';
import type { GateView, PauseView } from '../../domain/gates';
import { orderInvariants } from '../../domain/invariant';
import type { PlanFields, ProfileSnapshot, ProjectLink } from '../../domain/plan';
import { MAX_SUBPLAN_DEPTH } from '../../domain/subplans';

/**
 * A project link for display. Decision: an object, not a `name:alias:ro` string, so JSON/YAML readers get named
 * fields: `project_name`, `alias` (only when set) and `read_only` (always, true or false, so a writable link is
 * visibly writable).
 */
export function projectLinkCliDict(link: ProjectLink): Record<string, unknown> {
  return {
    project_name: link.projectName,
    ...(link.alias === null ? {} : { alias: link.alias }),
    read_only: link.readOnly,
  };
}

/**
 * The thresholds of a profile or of a plan's frozen snapshot, in CLI keys. `approval_timeout_seconds` appears
 * only when set (unset: a gate waits indefinitely).
 */
export function profileThresholds(
  p: Pick<
    ProfileSnapshot,
    | 'automationLevel'
    | 'minDecisionConfidence'
    | 'maxAutoRetries'
    | 'approvalTimeoutSeconds'
    | 'maxSubplanDepth'
    | 'onTimeout'
    | 'approvers'
    | 'requiredApprovals'
  >,
): Record<string, unknown> {
  return {
    automation_level: p.automationLevel,
    min_decision_confidence: p.minDecisionConfidence,
    max_auto_retries: p.maxAutoRetries,
    ...(p.approvalTimeoutSeconds === null ? {} : { approval_timeout_seconds: p.approvalTimeoutSeconds }),
    // A snapshot frozen before subplans has none: such a plan runs with the default, so that is what is shown.
    max_subplan_depth: p.maxSubplanDepth ?? MAX_SUBPLAN_DEPTH,
    // The gate policy (ADR 0019), each only when it differs from "anyone may approve once; an expired gate cancels".
    ...(p.approvalTimeoutSeconds === null || (p.onTimeout ?? 'cancel') === 'cancel'
      ? {}
      : { on_timeout: p.onTimeout }),
    ...(p.approvers === undefined || p.approvers.length === 0 ? {} : { approvers: [...p.approvers] }),
    ...((p.requiredApprovals ?? 1) === 1 ? {} : { required_approvals: p.requiredApprovals }),
  };
}

/**
 * The `automation_profile` value of a plan. Decision: one key (the seed's group 4 has one), holding the frozen
 * `effective_profile_snapshot` with its name first: `{ name, automation_level, min_decision_confidence,
 * max_auto_retries, approval_timeout_seconds?, max_subplan_depth }`. What governs the plan is the snapshot, not the profile as the
 * catalog holds it today, so the snapshot is what is shown. (Its `automation_level` is the profile's; the plan's own
 * `automation_level`, which an explicit --automation may override, follows in the same group.)
 */
function automationProfileCliValue(
  name: string | null,
  snapshot: ProfileSnapshot | null,
): Record<string, unknown> | undefined {
  if (snapshot !== null) return { name: name ?? snapshot.name, ...profileThresholds(snapshot) };
  if (name !== null) return { name };
  return undefined;
}

/**
 * Seed 000's `as_cli_dict`, group by group:
 *  1. plan_id, name, action_name
 *  2. phase, state, [awaiting_approval], [waiting_for], [gate], [paused_by, paused_at, pause_reason], description
 *  3. definition_of_done (if set)
 *  4. projects, automation_profile (if set), automation_level
 *  5. strategy_actor, execution_actor, estimation_actor, invariant_actor (each if set)
 *  6. arguments (if non-empty, in arguments_order), invariants (if non-empty; by precedence PLAN > ACTION >
 *     PROJECT > GLOBAL, insertion order within a scope; each {text, scope, source_name, id, rule, description},
 *     the last four only if set)
 *  7. changeset_id, sandbox_refs (if non-empty), validation_summary, files_created, files_modified,
 *     files_deleted, files_moved (once Apply has written the changeset), decision_root_id, [trace_id] (each if set)
 *  8. error_type, error_message, error_details (if set), errored_at (all only when the plan has an error)
 *  9. tags (if non-empty)
 * 10. created_at, updated_at
 * 11. parent_plan_id, root_plan_id (each if set), depth (if > 0), child_plan_ids (if non-empty)
 * `awaiting_approval` is not a seed field: it is live workflow state (a gate is waiting for `plan advance`). It is
 * shown right after `state`, which it qualifies, and only when true. `trace_id` is not one either: the OpenTelemetry
 * trace of the plan's run (ADR 0013, from the workflow's memo), shown with the other places the run can be inspected,
 * and only for a plan started with tracing on: an untraced plan has no trace to name. The `files_*` counts are seed
 * 001's PlanResult statistics, flat beside the summary line that says the same in words, so a script reads
 * `.files_created` and a table shows one value per key; the record has them, the workflow's live snapshot does not.
 */
export function asCliDict(
  plan: PlanFields & {
    awaitingApproval?: boolean;
    traceId?: string | null;
    applyStatistics?: ApplyStatistics | null;
    gate?: GateView | null;
    paused?: PauseView | null;
  },
): Record<string, unknown> {
  const dict: Record<string, unknown> = {};
  // 1. identity
  dict.plan_id = plan.planId;
  dict.name = plan.name;
  dict.action_name = plan.actionName;
  // 2. where it is
  dict.phase = plan.phase;
  dict.state = plan.state;
  if (plan.awaitingApproval === true) dict.awaiting_approval = true;
  const needs = waitingFor({ ...plan, awaitingApproval: plan.awaitingApproval === true });
  if (needs !== null) dict.waiting_for = needs;
  if (plan.awaitingApproval === true && plan.gate !== undefined && plan.gate !== null) {
    dict.gate = gateCliDict(plan.gate);
  }
  if (plan.paused !== undefined && plan.paused !== null) {
    dict.paused_by = plan.paused.by;
    dict.paused_at = plan.paused.at;
    if (plan.paused.reason !== null) dict.pause_reason = plan.paused.reason;
  }
  dict.description = plan.description;
  // 3.
  if (plan.definitionOfDone !== null) dict.definition_of_done = plan.definitionOfDone;
  // 4. targets and automation
  dict.projects = plan.projects.map(projectLinkCliDict);
  const profile = automationProfileCliValue(plan.automationProfileName, plan.effectiveProfileSnapshot);
  if (profile !== undefined) dict.automation_profile = profile;
  dict.automation_level = plan.automationLevel;
  // 5. actors
  if (plan.actors.strategyActor !== null) dict.strategy_actor = plan.actors.strategyActor;
  if (plan.actors.executionActor !== null) dict.execution_actor = plan.actors.executionActor;
  if (plan.actors.estimationActor !== null) dict.estimation_actor = plan.actors.estimationActor;
  if (plan.actors.invariantActor !== null) dict.invariant_actor = plan.actors.invariantActor;
  // 6. arguments (arguments_order first; any key it misses follows, so nothing is hidden) and invariants
  const argNames = [
    ...plan.argumentsOrder.filter((k) => Object.hasOwn(plan.arguments, k)),
    ...Object.keys(plan.arguments).filter((k) => !plan.argumentsOrder.includes(k)),
  ];
  if (argNames.length > 0) {
    dict.arguments = Object.fromEntries(argNames.map((k) => [k, plan.arguments[k]]));
  }
  if (plan.invariants.length > 0) {
    dict.invariants = orderInvariants(plan.invariants).map((inv) => ({
      text: inv.text,
      scope: inv.scope,
      ...(inv.sourceName === null ? {} : { source_name: inv.sourceName }),
      ...(inv.id === null ? {} : { id: inv.id }),
      ...(inv.rule === null ? {} : { rule: inv.rule }),
      ...(inv.description === undefined ? {} : { description: inv.description }),
    }));
  }
  // 7. execution
  if (plan.changesetId !== null) dict.changeset_id = plan.changesetId;
  if (plan.sandboxRefs.length > 0) dict.sandbox_refs = [...plan.sandboxRefs];
  if (plan.validationSummary !== null) dict.validation_summary = plan.validationSummary;
  if (plan.applyStatistics !== undefined && plan.applyStatistics !== null) {
    dict.files_created = plan.applyStatistics.filesCreated;
    dict.files_modified = plan.applyStatistics.filesModified;
    dict.files_deleted = plan.applyStatistics.filesDeleted;
    dict.files_moved = plan.applyStatistics.filesMoved;
  }
  if (plan.decisionRootId !== null) dict.decision_root_id = plan.decisionRootId;
  if (plan.traceId !== undefined && plan.traceId !== null) dict.trace_id = plan.traceId;
  // 8. error
  if (plan.error !== null) {
    dict.error_type = plan.error.type;
    dict.error_message = plan.error.message;
    if (plan.error.details !== null) dict.error_details = plan.error.details;
    dict.errored_at = plan.error.at;
  }
  // 9.
  if (plan.tags.length > 0) dict.tags = [...plan.tags];
  // 10.
  dict.created_at = plan.createdAt;
  dict.updated_at = plan.updatedAt;
  // 11. hierarchy
  if (plan.parentPlanId !== null) dict.parent_plan_id = plan.parentPlanId;
  if (plan.rootPlanId !== null) dict.root_plan_id = plan.rootPlanId;
  if (plan.depth > 0) dict.depth = plan.depth;
  if (plan.childPlanIds.length > 0) dict.child_plan_ids = [...plan.childPlanIds];
  return dict;
}

/**
 * An open gate in CLI keys: where it leads, who approved (in order) and how many more must, who still may, the
 * decision too unsure to pass unattended, and when it expires.
 */
export function gateCliDict(gate: GateView): Record<string, unknown> {
  return {
    to: gate.to,
    opened_at: gate.openedAt,
    approvals: gate.approvals.map((a) => ({
      by: a.by,
      at: a.at,
      ...(a.reason === null ? {} : { reason: a.reason }),
    })),
    approvals_required: gate.required,
    approvals_left: approvalsLeft(gate),
    ...(gate.approvers.length === 0
      ? {}
      : { approvers: [...gate.approvers], pending_approvers: pendingApprovers(gate) }),
    ...(gate.lowConfidence === null
      ? {}
      : {
          low_confidence_decision: {
            decision_id: gate.lowConfidence.decisionId,
            sequence_number: gate.lowConfidence.sequenceNumber,
            phase: gate.lowConfidence.phase,
            question: gate.lowConfidence.question,
            chosen_option: gate.lowConfidence.chosenOption,
            confidence: gate.lowConfidence.confidence,
            min_decision_confidence: gate.lowConfidence.minimum,
          },
        }),
    ...(gate.expiresAt === null ? {} : { expires_at: gate.expiresAt }),
    ...(gate.reminders === 0 ? {} : { reminders: gate.reminders }),
  };
}

/** A subplan as `plan show` lists it under its parent: where it is, so a waiting parent says what it waits for. */
export function childRow(
  plan: Pick<PlanFields, 'planId' | 'name' | 'actionName' | 'phase' | 'state'>,
): Record<string, unknown> {
  return {
    plan_id: plan.planId,
    name: plan.name,
    action_name: plan.actionName,
    phase: plan.phase,
    state: plan.state,
  };
}

/** The same in one line, for the formats that show a value per line: `<id> <action> (<phase>, <state>)`. */
export function childLine(plan: Pick<PlanFields, 'planId' | 'actionName' | 'phase' | 'state'>): string {
  return `${plan.planId} ${plan.actionName} (${plan.phase}, ${plan.state})`;
}

/** The fields a `plan list` row needs. */
export type PlanListSource = Pick<
  PlanFields,
  'planId' | 'name' | 'actionName' | 'phase' | 'state' | 'automationLevel' | 'projects' | 'updatedAt'
>;

/**
 * One row of `plan list`: flat scalars; projects as comma-separated names. `shortId` is the id's shortest prefix
 * unique among the plans listed (domain/plan-ref.ts shortIds): the column people read and type (ADR 0020); json and
 * yaml keep the whole `plan_id` beside it for scripts.
 */
export function planListRow(plan: PlanListSource, shortId: string = plan.planId): Record<string, unknown> {
  const { plan_id: planId, ...rest } = childRow(plan);
  return {
    plan_id: planId,
    short_id: shortId,
    ...rest,
    automation_level: plan.automationLevel,
    projects: plan.projects.map((p) => p.projectName).join(','),
    updated_at: plan.updatedAt,
  };
}

export const PLAN_LIST_COLUMNS: readonly string[] = [
  'short_id',
  'name',
  'action_name',
  'phase',
  'state',
  'automation_level',
  'projects',
  'updated_at',
];
