/** zod schemas: the single source of validation for what enters the engine. */
import { z } from 'zod';
import { AUTOMATION_LEVELS, PHASES, PROCESSING_STATES } from './lifecycle';
import { isUlid } from './ids';
import { ARGUMENT_KEY_PATTERN } from './plan';

/** `namespace/name`, e.g. `local/code-review`. */
const NAMESPACED = /^[a-z0-9][a-z0-9_-]*\/[a-z0-9][a-z0-9._-]*$/;

export const namespacedNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(NAMESPACED, 'must look like namespace/name (lowercase letters, digits, - and _)');

export const projectLinkSchema = z.object({
  projectName: namespacedNameSchema,
  alias: z.string().nullable().default(null),
  readOnly: z.boolean().default(false),
});
export type ProjectLink = z.infer<typeof projectLinkSchema>;

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
