/**
 * The plan as the workflow, the client and the CLI see it. No runtime dependencies: the workflow bundle imports
 * this module, so validation schemas live in ./schemas.
 */
import type { GateView, PauseView } from './gates';
import type { AutomationLevel, Phase, ProcessingState } from './lifecycle';
import type {
  ActorRefs,
  ExecutionPolicy,
  PlanInvariant,
  PlanSpec,
  ProfileSnapshot,
  ProjectLink,
} from './schemas';

export type {
  ActorRefs,
  ExecutionPolicy,
  PlanInvariant,
  PlanSpec,
  ProfileSnapshot,
  ProjectLink,
} from './schemas';

/** What can happen to a plan, in the words of its event log (the `plan_events` table, `agents plan watch`). */
export const PLAN_EVENT_TYPES = [
  'PLAN_CREATED',
  'PHASE_STARTED',
  'PHASE_COMPLETED',
  'PHASE_FAILED',
  'AWAITING_APPROVAL',
  'PHASE_ADVANCED',
  'PHASE_RETRIED',
  'DECISION_CORRECTED',
  'INVARIANT_VIOLATED',
  'PLAN_APPLIED',
  'PLAN_CANCELLED',
  /** A person's command the plan refused (an advance out of turn, an outsider's approval…): who, what and why. */
  'COMMAND_REFUSED',
  /** One approval of several a gate's policy asks for; the gate stays open until the last. */
  'APPROVAL_RECORDED',
  /** A gate waited longer than its profile's approval timeout and the profile says to remind, not cancel. */
  'APPROVAL_REMINDER',
  'PLAN_PAUSED',
  'PLAN_RESUMED',
  'AUTOMATION_CHANGED',
] as const;
export type PlanEventType = (typeof PLAN_EVENT_TYPES)[number];

/**
 * Events that record something about a plan without moving it (a correction can be made at a gate): whether the
 * plan waits for a person is read from the newest event that is not one of these.
 */
export const STATE_NEUTRAL_EVENT_TYPES: readonly PlanEventType[] = [
  'DECISION_CORRECTED',
  'COMMAND_REFUSED',
  'APPROVAL_RECORDED',
  'APPROVAL_REMINDER',
  'PLAN_PAUSED',
  'PLAN_RESUMED',
  'AUTOMATION_CHANGED',
];

/** The name the engine itself goes by: the actor of the decisions it records, and who recorded its own events. */
export const WORKFLOW_ACTOR = 'workflow';

/** The cautious policy of an action (and a plan made before policies existed): no network, commands reviewed. */
export function defaultExecutionPolicy(): ExecutionPolicy {
  return { network: false, unattendedCommands: false, ignore: [] };
}

/** A plan that names no actor for any role: each role falls back to the worker's default actor. */
export function noActorRefs(): ActorRefs {
  return { strategyActor: null, executionActor: null, estimationActor: null, invariantActor: null };
}

export const ARGUMENT_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export interface PlanError {
  type: string;
  message: string;
  details: string | null;
  at: string;
}

/** A plan's durable fields: what the database records and every view of a plan shows. */
export interface PlanFields {
  planId: string;
  workflowId: string;
  name: string;
  actionName: string;
  description: string;
  projects: ProjectLink[];
  automationLevel: AutomationLevel;
  arguments: Record<string, string | number | boolean | null>;
  argumentsOrder: string[];
  definitionOfDone: string | null;
  automationProfileName: string | null;
  effectiveProfileSnapshot: ProfileSnapshot | null;
  invariants: PlanInvariant[];
  actors: ActorRefs;
  tags: string[];
  phase: Phase;
  state: ProcessingState;
  /** Execution fields: set by Execute and Apply (issue 6). */
  changesetId: string | null;
  sandboxRefs: string[];
  validationSummary: string | null;
  decisionRootId: string | null;
  error: PlanError | null;
  parentPlanId: string | null;
  rootPlanId: string | null;
  depth: number;
  childPlanIds: string[];
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** Seed 000's computed `project_names`. */
export function projectNames(plan: Pick<PlanFields, 'projects'>): string[] {
  return plan.projects.map((link) => link.projectName);
}

/** The live view of a plan that the workflow's query returns and the update handlers answer with. */
export interface PlanSnapshot extends PlanFields {
  /** True while the workflow waits at a gate for a person's `advance`. */
  awaitingApproval: boolean;
  /**
   * While the gate into EXECUTE is open because the strategy proposes commands the action does not contain: those
   * commands, for the person approving to see first. Empty otherwise (and absent from plans started before it).
   */
  commandsForReview?: string[];
  /** The open gate: who approved, how many more must, its expiry, a decision too unsure to pass (ADR 0019). */
  gate?: GateView | null;
  /** Set while a person holds the plan before its next phase (`plan pause`). */
  paused?: PauseView | null;
  decisionCount: number;
}

export type CliArgumentError = { ok: false; error: string };

/**
 * Parses repeated `--arg key=value` options. Keys keep their first-seen order (that is `argumentsOrder`);
 * values stay strings until actions declare argument types.
 */
export function parseArgumentPairs(
  pairs: readonly string[],
): { ok: true; arguments: Record<string, string>; order: string[] } | CliArgumentError {
  const values: Record<string, string> = {};
  const order: string[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      return { ok: false, error: `--arg "${pair}" must have the form key=value` };
    }
    const key = pair.slice(0, eq).trim();
    if (!ARGUMENT_KEY_PATTERN.test(key)) {
      return {
        ok: false,
        error: `--arg key "${key}" must start with a letter or _ and contain only letters, digits, _, - and .`,
      };
    }
    if (Object.hasOwn(values, key)) {
      return { ok: false, error: `--arg ${key} is given twice` };
    }
    values[key] = pair.slice(eq + 1);
    order.push(key);
  }
  return { ok: true, arguments: values, order };
}

/**
 * Plans started by an earlier version of the engine carry an earlier input: fields added since are missing, and a
 * replaying worker must still run them. Every field added to PlanSpec after the first release gets its default
 * here (the same default planSpecSchema gives), so the workflow never reads `undefined`.
 */
export function withInputDefaults(input: PlanSpec): PlanSpec {
  const partial = input as Partial<PlanSpec> & Omit<PlanSpec, AddedFields>;
  return {
    ...input,
    definitionOfDone: partial.definitionOfDone ?? null,
    automationProfileName: partial.automationProfileName ?? null,
    effectiveProfileSnapshot: partial.effectiveProfileSnapshot ?? null,
    // Invariants gained an id and a rule after the first release.
    invariants: (partial.invariants ?? []).map((inv) => ({
      ...inv,
      id: inv.id ?? null,
      rule: inv.rule ?? null,
    })),
    actors: partial.actors ?? noActorRefs(),
    execution: partial.execution ?? defaultExecutionPolicy(),
    tags: partial.tags ?? [],
    steps: partial.steps ?? [],
    validation: partial.validation ?? null,
    parentPlanId: partial.parentPlanId ?? null,
    rootPlanId: partial.rootPlanId ?? null,
    depth: partial.depth ?? 0,
  };
}

type AddedFields =
  | 'definitionOfDone'
  | 'automationProfileName'
  | 'effectiveProfileSnapshot'
  | 'invariants'
  | 'actors'
  | 'tags'
  | 'steps'
  | 'validation'
  | 'parentPlanId'
  | 'rootPlanId'
  | 'depth';

/** The snapshot of a plan that has just been created and not yet picked up by a worker. */
export function initialSnapshot(spec: PlanSpec, workflowId: string): PlanSnapshot {
  return {
    planId: spec.planId,
    workflowId,
    name: spec.name,
    actionName: spec.actionName,
    description: spec.description,
    projects: spec.projects,
    automationLevel: spec.automationLevel,
    arguments: spec.arguments,
    argumentsOrder: spec.argumentsOrder,
    definitionOfDone: spec.definitionOfDone,
    automationProfileName: spec.automationProfileName,
    effectiveProfileSnapshot: spec.effectiveProfileSnapshot,
    invariants: spec.invariants,
    actors: spec.actors,
    tags: spec.tags,
    phase: 'STRATEGIZE',
    state: 'QUEUED',
    changesetId: null,
    sandboxRefs: [],
    validationSummary: null,
    awaitingApproval: false,
    commandsForReview: [],
    error: null,
    decisionRootId: null,
    parentPlanId: spec.parentPlanId,
    rootPlanId: spec.rootPlanId,
    depth: spec.depth,
    childPlanIds: [],
    decisionCount: 0,
    createdBy: spec.createdBy,
    createdAt: spec.createdAt,
    updatedAt: spec.createdAt,
  };
}
