/**
 * The objects a plan is made from (issue 4): actions, projects and automation profiles. These schemas are the
 * single source of validation; helper functions that apply them (argument resolution, file parsing, CLI views)
 * live next to them in domain/.
 */
import { z } from 'zod';
import { ARGUMENT_KEY_PATTERN, defaultExecutionPolicy, noActorRefs } from './plan';
import { AUTOMATION_LEVELS } from './lifecycle';
import { ON_TIMEOUT_CHOICES } from './gates';
import {
  MAX_APPROVERS,
  actorRefsSchema,
  approverSchema,
  checkApprovalPolicy,
  executionPolicySchema,
  namespacedNameSchema,
  profileThresholdsSchema,
  tagSchema,
} from './schemas';
import type { ProfileSnapshot } from './schemas';
import { stepSchema } from './steps';
import { MAX_SUBPLAN_DEPTH, MAX_SUBPLAN_DEPTH_LIMIT } from './subplans';

export const ARGUMENT_TYPES = ['string', 'integer', 'number', 'boolean'] as const;
export type ArgumentType = (typeof ARGUMENT_TYPES)[number];

const scalarSchema = z.union([z.string(), z.number(), z.boolean()]);

export const argumentDefinitionSchema = z.object({
  name: z
    .string()
    .regex(
      ARGUMENT_KEY_PATTERN,
      'must start with a letter or _ and contain only letters, digits, _, - and .',
    ),
  type: z.enum(ARGUMENT_TYPES).default('string'),
  required: z.boolean().default(false),
  /** Must have the declared type and be one of `allowedValues` when those are given. */
  default: scalarSchema.nullable().default(null),
  description: z.string().default(''),
  /** Empty means any value of the type. */
  allowedValues: z.array(scalarSchema).default([]),
});
export type ArgumentDefinition = z.infer<typeof argumentDefinitionSchema>;

export const actionSchema = z.object({
  name: namespacedNameSchema,
  description: z.string().default(''),
  /** In the order `arguments_order` follows. */
  arguments: z.array(argumentDefinitionSchema).default([]),
  defaultAutomationLevel: z.enum(AUTOMATION_LEVELS).default('MANUAL'),
  defaultProfile: namespacedNameSchema.nullable().default(null),
  actors: actorRefsSchema.default(noActorRefs),
  execution: executionPolicySchema.default(defaultExecutionPolicy),
  /** Promoted to PLAN scope, with `source_name` = the action, at `plan use`. */
  invariants: z.array(z.string().trim().min(1, 'must not be empty')).default([]),
  definitionOfDone: z.string().trim().min(1).nullable().default(null),
  tags: z.array(tagSchema).default([]),
  /** What the built-in actor does, in order (domain/steps.ts); pinned into each plan at `plan use`. */
  steps: z.array(stepSchema).default([]),
  /** A command run in the sandbox after the steps; its outcome is the plan's validation summary. */
  validation: z.string().trim().min(1, 'must not be empty').nullable().default(null),
});
export type Action = z.infer<typeof actionSchema>;

export const projectSchema = z.object({
  name: namespacedNameSchema,
  /** Absolute path of the project's root: Apply writes under it and nowhere else. */
  path: z
    .string()
    .min(1)
    .refine((p) => p.startsWith('/'), 'must be an absolute path'),
  description: z.string().default(''),
});
export type Project = z.infer<typeof projectSchema>;

/** Automatic retries of a failed Execute step when no profile says otherwise (a plan without a profile too). */
export const DEFAULT_MAX_AUTO_RETRIES = 2;

export const automationProfileSchema = z
  .object({
    name: namespacedNameSchema,
    description: z.string().default(''),
    automationLevel: z.enum(AUTOMATION_LEVELS),
    minDecisionConfidence: profileThresholdsSchema.shape.minDecisionConfidence.default(0.8),
    maxAutoRetries: profileThresholdsSchema.shape.maxAutoRetries.default(DEFAULT_MAX_AUTO_RETRIES),
    approvalTimeoutSeconds: profileThresholdsSchema.shape.approvalTimeoutSeconds.default(null),
    maxSubplanDepth: z.number().int().min(0).max(MAX_SUBPLAN_DEPTH_LIMIT).default(MAX_SUBPLAN_DEPTH),
    onTimeout: z.enum(ON_TIMEOUT_CHOICES).default('cancel'),
    approvers: z.array(approverSchema).max(MAX_APPROVERS).default([]),
    requiredApprovals: z.number().int().min(1).max(MAX_APPROVERS).default(1),
  })
  .superRefine(checkApprovalPolicy);
export type AutomationProfile = z.infer<typeof automationProfileSchema>;
/** A profile as written: the fields with defaults may be left out. */
export type AutomationProfileInput = z.input<typeof automationProfileSchema>;

/** Stored objects carry their timestamps; the domain objects above do not need them. */
export interface Stored<T> {
  value: T;
  builtIn: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * The `effective_profile_snapshot` a plan freezes at creation (seed 000): the profile's name, level and
 * thresholds, as a fresh object sharing nothing with the profile, so later edits of the profile (or of the object
 * passed in) never reach an existing plan.
 */
export function profileSnapshot(profile: AutomationProfile): ProfileSnapshot {
  return {
    name: profile.name,
    automationLevel: profile.automationLevel,
    minDecisionConfidence: profile.minDecisionConfidence,
    maxAutoRetries: profile.maxAutoRetries,
    approvalTimeoutSeconds: profile.approvalTimeoutSeconds,
    maxSubplanDepth: profile.maxSubplanDepth,
    // Only a profile that sets them freezes the gate policy's fields: a snapshot without them means the defaults,
    // and plans under older profiles keep the snapshot (and the workflow input) they always had.
    ...(profile.onTimeout === 'cancel' ? {} : { onTimeout: profile.onTimeout }),
    ...(profile.approvers.length === 0 ? {} : { approvers: [...profile.approvers] }),
    ...(profile.requiredApprovals === 1 ? {} : { requiredApprovals: profile.requiredApprovals }),
  };
}
