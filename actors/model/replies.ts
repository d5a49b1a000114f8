/**
 * What the model answers with: the zod schemas of the strategy, estimate and invariant-verdict replies. A strategy
 * reply's steps meet the rules an action file's steps meet, plus what only a plan can tell (its projects and
 * arguments), so a step the engine would refuse in Execute is refused here, where the model can still fix it.
 */
import { z } from 'zod';
import type { PlanSpec } from '../../domain/plan';
import { AUTOMATION_CHOICES, AUTOMATION_LEVELS } from '../../domain/lifecycle';
import type { AutomationLevel } from '../../domain/lifecycle';
import { stepProblems } from '../../domain/step-checks';
import {
  CHILD_FAILURE_POLICIES,
  FILE_STEP_KINDS,
  STEP_KINDS,
  stepFileSchema,
  stepToFile,
} from '../../domain/steps';
import type { Step, StepFile } from '../../domain/steps';

/**
 * A step as the model writes it. Action files name the verb by the key that holds the target (`run: npm test`),
 * a union strict mode cannot express; so the model fills one flat object (`kind`, `target`, every other field
 * present, null when it does not apply) and it is turned into the action-file shape before `stepFileSchema`
 * judges it, so action files and models meet the same rules.
 */
/** What a model may propose: the file steps, and single child plans (a group is for action authors). */
const MODEL_STEP_KINDS = [...FILE_STEP_KINDS, 'subplan'] as const;

const wireStepSchema = z.object({
  kind: z
    .enum(MODEL_STEP_KINDS)
    .describe(
      'create a file, replace text, move a file, delete files, run a command, or hand part of the work to a ' +
        'child plan of another action (subplan)',
    ),
  target: z
    .string()
    .describe(
      'create: the file path; replace and delete: a path or glob; move: the path to move; run: the command; ' +
        'subplan: the action the child plan runs (namespace/name)',
    ),
  content: nullableField(z.string(), 'create: the whole file content'),
  overwrite: nullableField(z.boolean(), 'create: whether an existing file may be replaced (default false)'),
  pattern: nullableField(z.string(), 'replace: a JavaScript regular expression'),
  with: nullableField(z.string(), 'replace: the replacement text ($1 for a group)'),
  flags: nullableField(z.string(), 'replace: any of the flags i, m, s, u (g is implied)'),
  require_match: nullableField(z.boolean(), 'replace and delete: fail when nothing matches (default true)'),
  to: nullableField(z.string(), 'move: the destination path'),
  timeout_seconds: nullableField(
    z.int(),
    'run: seconds before the command is stopped, 1 to 3600 (default 600)',
  ),
  description: nullableField(z.string(), 'why the step is needed, in a few words', 'null for none'),
  project: nullableField(
    z.string(),
    "a linked project's name or alias",
    'null for the first writable project',
  ),
  projects: nullableField(
    z.array(z.string()),
    'subplan: the projects of this plan the child works on, by name or alias (name::ro to make one read-only)',
    "null for all of this plan's projects",
  ),
  arguments: nullableField(
    z.array(z.object({ name: z.string(), value: z.string() })),
    "subplan: the child action's arguments",
    'null for none',
  ),
  automation: nullableField(
    z.enum(AUTOMATION_CHOICES),
    'subplan: how much the child runs without a person (manual, review, full)',
    "null for this plan's level",
  ),
  on_child_failure: nullableField(
    z.enum(CHILD_FAILURE_POLICIES),
    'subplan: fail this plan when the child fails, or continue without it',
    'null for fail',
  ),
});
type WireStep = z.input<typeof wireStepSchema>;

function nullableField<T extends z.ZodType>(
  schema: T,
  use: string,
  whenNull = 'null when it does not apply',
) {
  return schema.nullable().default(null).describe(`${use}; ${whenNull}`);
}

/**
 * The model's step in the action-file shape, judged by `stepFileSchema`. Its issues are renamed to the fields the
 * model wrote (`target`, not the verb; a stray field "must be null"), so a re-ask tells it what to change.
 */
const modelStepSchema = wireStepSchema.transform((wire, ctx): StepFile => {
  const { kind, target, ...rest } = wire;
  const file: Record<string, unknown> = { [kind]: target };
  for (const [key, value] of Object.entries(rest)) {
    if (value !== null && value !== undefined) file[key] = value;
  }
  // Strict structured output has no free-form maps: the child's arguments come as name/value pairs.
  if (Array.isArray(rest.arguments)) {
    file.arguments = Object.fromEntries(rest.arguments.map(({ name, value }) => [name, value]));
  }
  const parsed = stepFileSchema.safeParse(file);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        ctx.addIssue({ code: 'custom', path: [key], message: `must be null for a ${kind} step` });
      }
    } else {
      const path = issue.path.map((part) => (part === kind ? 'target' : part));
      ctx.addIssue({ code: 'custom', path, message: issue.message });
    }
  }
  return z.NEVER;
});

/** The shared checks (domain/step-checks.ts), as issues on the fields the model wrote (`target`, not the verb). */
function checkStrategy(
  plan: PlanSpec,
  reply: { steps: StepFile[]; validation: string | null },
  ctx: z.RefinementCtx,
): void {
  for (const { step, field, message } of stepProblems(plan, reply.steps, reply.validation)) {
    ctx.addIssue({
      code: 'custom',
      path:
        step === null
          ? ['validation']
          : ['steps', step, (STEP_KINDS as readonly string[]).includes(field) ? 'target' : field],
      message,
    });
  }
}

export function strategyReplySchema(plan: PlanSpec) {
  return z
    .object({
      summary: z.string().trim().min(1, 'must not be empty').describe('the approach, in one sentence'),
      rationale: z
        .string()
        .trim()
        .min(1, 'must not be empty')
        .describe('why this approach over the alternatives'),
      confidence: z
        .number()
        .min(0, 'must be between 0 and 1')
        .max(1, 'must be between 0 and 1')
        .describe('how likely the steps meet the definition of done, from 0 to 1'),
      alternatives: z.array(z.string()).describe('other approaches considered and not chosen, one line each'),
      steps: z.array(modelStepSchema).describe('the steps, in the order they run'),
      validation: z
        .string()
        .nullable()
        .describe('a shell command run in the sandbox after the steps to check the result; null for none'),
    })
    .superRefine((reply, ctx) => checkStrategy(plan, reply, ctx));
}

export const estimateReplySchema = z.object({
  summary: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .describe('what the plan will do and cost, in a sentence or two'),
  files_likely_changed: z
    .int()
    .min(0, 'must not be negative')
    .nullable()
    .describe('how many files the steps will likely touch; null when it cannot be told'),
  risk: z.enum(['low', 'medium', 'high']).describe('how likely the change breaks something'),
});

export const verdictReplySchema = z.object({
  status: z
    .enum(['held', 'violated', 'acknowledged'])
    .describe(
      'held: the changes respect it; violated: they break it; acknowledged: it cannot be judged from this',
    ),
  evidence: z.string().trim().min(1, 'must not be empty').describe('the facts the status rests on, briefly'),
});

/**
 * An action's step in the shape the model answers with, minus the nulls, so suggestions read like the expected
 * answer. A parallel group has no such shape (a model proposes single child plans): it is shown as its children.
 */
export function wireFromStep(step: Step): Array<Partial<WireStep>> {
  if (step.kind === 'parallel') {
    return step.children.flatMap((child) =>
      wireFromStep({
        kind: 'subplan',
        child,
        onChildFailure: step.onChildFailure,
        description: child.description,
        project: null,
      }),
    );
  }
  const file = stepToFile(step) as Record<string, unknown>;
  const { kind } = step;
  const { [kind]: target, ...rest } = file;
  if (step.kind === 'subplan') {
    const { arguments: args, automation, ...others } = rest;
    return [
      {
        kind,
        target: target as string,
        ...others,
        ...(args === undefined
          ? {}
          : {
              arguments: Object.entries(args as Record<string, string>).map(([name, value]) => ({
                name,
                value,
              })),
            }),
        ...(automation === undefined
          ? {}
          : { automation: AUTOMATION_CHOICES[AUTOMATION_LEVELS.indexOf(automation as AutomationLevel)] }),
      },
    ];
  }
  return [{ kind, target: target as string, ...rest }];
}
