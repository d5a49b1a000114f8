/** zod schemas: the single source of validation for what enters the engine. */
import { z } from 'zod';
import { AUTOMATION_LEVELS, PHASES, PROCESSING_STATES } from './lifecycle';
import { isUlid } from './ids';
import { ARGUMENT_KEY_PATTERN, defaultExecutionPolicy, noActorRefs } from './plan';
import { stepSchema } from './steps';
import { invariantRuleSchema } from './invariant-rule';
import { MAX_SUBPLAN_DEPTH_LIMIT } from './subplans';
import { ON_TIMEOUT_CHOICES } from './gates';

/** `namespace/name`, e.g. `local/code-review`. */
const NAMESPACED = /^[a-z0-9][a-z0-9_-]*\/[a-z0-9][a-z0-9._-]*$/;

export const namespacedNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(NAMESPACED, 'must look like namespace/name (lowercase letters, digits, - and _)');

/**
 * Seed 000's alias rule: lowercase alphanumerics, `-` and `_`, starting with a letter or digit. Aliases are
 * lowercased before the rule is checked.
 */
export const ALIAS_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

export const aliasSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(ALIAS_PATTERN, 'must be lowercase letters, digits, - and _, starting with a letter or digit');

export const projectLinkSchema = z.object({
  projectName: namespacedNameSchema,
  alias: aliasSchema.nullable().default(null),
  readOnly: z.boolean().default(false),
});
export type ProjectLink = z.infer<typeof projectLinkSchema>;

export const INVARIANT_SCOPES = ['GLOBAL', 'PROJECT', 'ACTION', 'PLAN'] as const;
export type InvariantScope = (typeof INVARIANT_SCOPES)[number];

export const planInvariantSchema = z.object({
  text: z.string().trim().min(1, 'must not be empty'),
  scope: z.enum(INVARIANT_SCOPES),
  sourceName: z.string().nullable().default(null),
  /** The stored invariant's id (`agents invariant add`); null for one written in an action file. */
  id: z.string().nullable().default(null),
  /** The machine-checkable rule, enforced exactly by the built-in check; null: free text only. */
  rule: invariantRuleSchema.nullable().default(null),
  /** The stored invariant's --description (seed 004), when it has one; absent from plans pinned before it. */
  description: z.string().trim().min(1, 'must not be empty').optional(),
});
export type PlanInvariant = z.infer<typeof planInvariantSchema>;

export const tagSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/,
    'must be letters, digits, _ . : and -, starting with a letter or digit',
  );

/** The four actor roles of seed 000; null means "the engine's default for that role". */
export const actorRefsSchema = z.object({
  strategyActor: z.string().min(1).nullable().default(null),
  executionActor: z.string().min(1).nullable().default(null),
  estimationActor: z.string().min(1).nullable().default(null),
  invariantActor: z.string().min(1).nullable().default(null),
});
export type ActorRefs = z.infer<typeof actorRefsSchema>;

/**
 * What an action lets its commands do, and what its changesets leave out: pinned into each plan at `plan use`,
 * so editing the action later changes no running plan. Every default is the cautious one.
 */
export const executionPolicySchema = z.strictObject({
  /** `run` steps and the validation command may reach the network; off, they run without one. */
  network: z.boolean().default(false),
  /**
   * A model's `run` steps and validation command may run without a person's review before Execute, whatever the
   * automation level. Off, a plan whose model-proposed strategy has commands stops for approval first.
   */
  unattendedCommands: z.boolean().default(false),
  /** Globs (relative to a project root) left out of changesets, besides the engine's own (domain/ignore.ts). */
  ignore: z.array(z.string().trim().min(1, 'must not be empty')).default([]),
});
export type ExecutionPolicy = z.infer<typeof executionPolicySchema>;

/** The most people one gate can ask: enough for any review board, small enough to show in a line. */
export const MAX_APPROVERS = 20;

/**
 * An approver's name, as `--by` (or the CLI's user) says it: one word people and the inbox's `--as` type alike, so
 * no spaces, commas or control characters can make two names look the same.
 */
export const approverSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.@+-]*$/,
    'must be letters, digits, _ . @ + and -, starting with a letter or digit',
  );

/** An automation profile's thresholds and their limits: the profile (domain/catalog.ts) adds its defaults. */
export const profileThresholdsSchema = z.object({
  /** A decision below this confidence stops automatic advance and waits for a person. */
  minDecisionConfidence: z.number().min(0).max(1),
  /** How many times a failed Execute step is retried automatically (auto-debug) before the plan is ERRORED. */
  maxAutoRetries: z.number().int().min(0).max(20),
  /** How long a gate waits for approval before the plan is flagged; null waits indefinitely. */
  approvalTimeoutSeconds: z.number().int().positive().nullable(),
  /**
   * How many levels of subplans may hang below a plan's root (0: none). Absent from snapshots frozen before
   * subplans: those plans get the default, MAX_SUBPLAN_DEPTH.
   */
  maxSubplanDepth: z.number().int().min(0).max(MAX_SUBPLAN_DEPTH_LIMIT).optional(),
  /**
   * What an expired gate does: cancel the plan (approval_expired) or record a reminder and keep waiting. Absent
   * from snapshots frozen before gates expired: cancel.
   */
  onTimeout: z.enum(ON_TIMEOUT_CHOICES).optional(),
  /** Who may approve a gate; absent or empty: anyone. */
  approvers: z.array(approverSchema).max(MAX_APPROVERS).optional(),
  /** How many distinct approvers a gate needs; absent: 1. */
  requiredApprovals: z.number().int().min(1).max(MAX_APPROVERS).optional(),
});

/** The thresholds of an automation profile, frozen into a plan at creation (`effective_profile_snapshot`). */
export const profileSnapshotSchema = z
  .object({
    name: namespacedNameSchema,
    automationLevel: z.enum(AUTOMATION_LEVELS),
    ...profileThresholdsSchema.shape,
  })
  .superRefine(checkApprovalPolicy);

/** A policy that could never be met, or lists a person twice, is refused where it is written. */
export function checkApprovalPolicy(
  policy: { approvers?: string[] | undefined; requiredApprovals?: number | undefined },
  ctx: z.RefinementCtx,
): void {
  const approvers = policy.approvers ?? [];
  const twice = approvers.find((a, i) => approvers.indexOf(a) !== i);
  if (twice !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['approvers'], message: `${twice} is listed twice` });
  }
  const required = policy.requiredApprovals ?? 1;
  if (approvers.length > 0 && required > approvers.length) {
    ctx.addIssue({
      code: 'custom',
      path: ['requiredApprovals'],
      message: `${required} approvals can never come from ${approvers.length} approver(s)`,
    });
  }
}
export type ProfileSnapshot = z.infer<typeof profileSnapshotSchema>;

const argumentValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const argumentsSchema = z.record(z.string().regex(ARGUMENT_KEY_PATTERN), argumentValueSchema);
export const automationLevelSchema = z.enum(AUTOMATION_LEVELS);

/**
 * Everything the workflow needs to run a plan, validated once in the client. The plan row and the workflow input
 * are made from this same object, so they cannot disagree.
 */
export const planSpecSchema = z
  .object({
    planId: z.string().refine(isUlid, 'must be a 26-character ULID'),
    name: z.string().trim().min(1, 'must not be empty').max(200),
    actionName: namespacedNameSchema,
    description: z.string().default(''),
    projects: z.array(projectLinkSchema).min(1, 'a plan targets at least one project'),
    automationLevel: automationLevelSchema,
    arguments: argumentsSchema.default({}),
    argumentsOrder: z.array(z.string()).default([]),
    definitionOfDone: z.string().trim().min(1).nullable().default(null),
    automationProfileName: namespacedNameSchema.nullable().default(null),
    effectiveProfileSnapshot: profileSnapshotSchema.nullable().default(null),
    invariants: z.array(planInvariantSchema).default([]),
    actors: actorRefsSchema.default(noActorRefs),
    execution: executionPolicySchema.default(defaultExecutionPolicy),
    tags: z.array(tagSchema).default([]),
    /** The action's steps and validation command, pinned at creation: editing the action later changes no plan. */
    steps: z.array(stepSchema).default([]),
    validation: z.string().min(1).nullable().default(null),
    parentPlanId: z.string().refine(isUlid, 'must be a 26-character ULID').nullable().default(null),
    rootPlanId: z.string().refine(isUlid, 'must be a 26-character ULID').nullable().default(null),
    depth: z.number().int().min(0).default(0),
    createdBy: z.string().min(1).default('unknown'),
    createdAt: z.iso.datetime(),
  })
  .superRefine((spec, ctx) => {
    const keys = Object.keys(spec.arguments);
    if (keys.length !== spec.argumentsOrder.length || !keys.every((k) => spec.argumentsOrder.includes(k))) {
      ctx.addIssue({
        code: 'custom',
        path: ['argumentsOrder'],
        message: 'must list every argument exactly once',
      });
    }
    const names = spec.projects.map((p) => p.projectName);
    const duplicate = names.find((n, i) => names.indexOf(n) !== i);
    if (duplicate !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['projects'], message: `project ${duplicate} is listed twice` });
    }
    const aliases = spec.projects.flatMap((p) => (p.alias === null ? [] : [p.alias]));
    const duplicateAlias = aliases.find((a, i) => aliases.indexOf(a) !== i);
    if (duplicateAlias !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['projects'], message: `alias ${duplicateAlias} is used twice` });
    }
    if ((spec.parentPlanId === null) !== (spec.depth === 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['depth'],
        message: 'a plan has a parent exactly when its depth is > 0',
      });
    }
  });
export type PlanSpec = z.infer<typeof planSpecSchema>;

export const phaseSchema = z.enum(PHASES);
export const processingStateSchema = z.enum(PROCESSING_STATES);

/** Formats zod issues as one line: `field: rule; field: rule`. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}
