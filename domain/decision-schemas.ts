/**
 * zod schemas for seed 004's decision fields, used where decisions enter storage and where stored rows are read
 * back. Kept apart from domain/decision.ts, which the workflow bundle imports and which must not pull in zod.
 */
import { z } from 'zod';
import { DECISION_TYPES } from './decision';
import type { DecisionType } from './decision';
import { isUlid } from './ids';

export const DECISION_TYPE_NAMES = Object.keys(DECISION_TYPES) as [DecisionType, ...DecisionType[]];

export const decisionTypeSchema = z.enum(DECISION_TYPE_NAMES);

/** ResourceRef and ArtifactRef have the same shape: what kind of thing, where it is, optionally what it is. */
const refSchema = z.object({
  kind: z.string().min(1, 'must not be empty'),
  uri: z.string().min(1, 'must not be empty'),
  description: z.string().optional(),
});

export const resourceRefSchema = refSchema;
export const artifactRefSchema = refSchema;

const ulidSchema = z.string().refine(isUlid, 'must be a ULID');

/** The optional parts of a DecisionDraft, as they must be when written. `content` is checked by canonicalJson. */
export const decisionDraftExtrasSchema = z.object({
  context: z
    .object({
      content: z.unknown().optional(),
      ref: z.string().optional(),
      relevantResources: z.array(resourceRefSchema).optional(),
      actorStateRef: z.string().min(1, 'must not be empty').nullable().optional(),
    })
    .refine((c) => (c.ref === undefined) !== (c.content === undefined), {
      message: 'a context has either its content or the ref of a stored one',
    })
    .optional(),
  actorReasoning: z.string().nullable().optional(),
  downstreamPlanIds: z.array(ulidSchema).optional(),
  artifactsProduced: z.array(artifactRefSchema).optional(),
  model: z
    .object({
      modelName: z.string().trim().min(1, 'must not be empty'),
      promptTokens: z.number().int().nonnegative().nullable(),
      completionTokens: z.number().int().nonnegative().nullable(),
    })
    .optional(),
});

export const resourceRefListSchema = z.array(resourceRefSchema);
export const artifactRefListSchema = z.array(artifactRefSchema);
