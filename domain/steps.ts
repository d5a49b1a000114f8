/**
 * The steps an action runs (issue 6): what the built-in actor does with no network, and what a model-backed
 * strategy actor proposes. The action file and a model's structured output use the same snake_case shape, so one
 * parser serves both:
 *
 *   steps:
 *     - create: NOTES.md              # a file from a template (refused if it exists unless overwrite: true)
 *       content: "{{greeting}}\n"
 *     - replace: "src/**\/*.ts"        # a regular expression, in every file matching the glob
 *       pattern: "Copyright \\d+"
 *       with: "Copyright 2026"
 *       require_match: true            # default true: a glob or pattern matching nothing fails the step
 *     - move: old.txt
 *       to: new.txt
 *     - delete: "tmp/**"              # a path or a glob
 *     - run: npm test                 # a shell command in the sandbox; a non-zero exit fails the step
 *       timeout_seconds: 300
 *   validation: npm test              # run in the sandbox after the steps; its outcome is the validation summary
 *
 * Every step may also say `description` and `project` (a linked project's name or alias; default: the first
 * writable project). Texts are templates: `{{name}}` is the plan argument `name`; `{{plan.id}}`, `{{plan.name}}`,
 * `{{project.name}}` and `{{project.alias}}` are the plan's and the step's project's. In `run` (and validation)
 * commands every substituted value is POSIX single-quoted, and a command whose placeholder stands where that
 * quoting would not hold is refused (domain/shell.ts) when an action file or a model's steps are validated, and
 * again by the step runner (actors/steps/run.ts): inside '...' or "..." (`echo "{{msg}}"` with msg `$(id)` would run
 * id), inside `...`, in a comment or a here-document, or right after `\` or `$`. What is
 * guaranteed is only this: a placeholder written as a bare word (or part of one: `--name={{x}}`) reaches the shell
 * as exactly that literal text, one word, never parsed as shell syntax. What the command then does with the word
 * is the action's: `eval {{x}}`, `sh -c {{x}}`, a bare `{{x}}` as the command name, or bash arithmetic run it as
 * code. The arguments are also in the environment as CLEVERAGENTS_ARG_<NAME> (upper-cased, other characters `_`),
 * the plan id as CLEVERAGENTS_PLAN_ID; commands see only those and a few variables such as PATH and HOME.
 * In `replace`'s `with:`, the template may use `$1`, `$&` and the rest of String.prototype.replace, but a value
 * substituted into it is inserted literally (its `$` is never expanded). The pattern runs in a thread of its own,
 * for DEFAULT_REPLACE_TIME_LIMIT_SECONDS at most: a pattern that backtracks catastrophically fails its step.
 *
 * Pure: no fs, no process; the actors in actors/ run the steps.
 */
import { z } from 'zod';
import { AUTOMATION_CHOICES, AUTOMATION_LEVELS, parseAutomationLevel } from './lifecycle';
import type { AutomationLevel } from './lifecycle';
import type { PlanSpec, ProjectLink } from './schemas';

export const STEP_KINDS = ['create', 'replace', 'move', 'delete', 'run', 'subplan', 'parallel'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** The kinds the step runner runs in a sandbox. */
export const FILE_STEP_KINDS = ['create', 'replace', 'move', 'delete', 'run'] as const;

/** The steps that spawn child plans instead of changing files: the workflow runs them, not the step runner. */
export const SUBPLAN_STEP_KINDS = ['subplan', 'parallel'] as const;

/** What the parent does when a child plan ends without reaching APPLIED (cancelled or failed). */
export const CHILD_FAILURE_POLICIES = ['fail', 'continue'] as const;
export type ChildFailurePolicy = (typeof CHILD_FAILURE_POLICIES)[number];

const text = z.string().min(1, 'must not be empty');
const common = {
  description: z.string().optional(),
  project: z.string().min(1).optional(),
};

const createFileSchema = z.strictObject({
  create: text,
  content: z.string(),
  overwrite: z.boolean().optional(),
  ...common,
});
const replaceFileSchema = z.strictObject({
  replace: text,
  pattern: text,
  with: z.string(),
  flags: z
    .string()
    .regex(/^[imsu]*$/, 'may contain only the regular-expression flags i, m, s and u (g is implied)')
    .optional(),
  require_match: z.boolean().optional(),
  ...common,
});
const moveFileSchema = z.strictObject({ move: text, to: text, ...common });
const deleteFileSchema = z.strictObject({ delete: text, require_match: z.boolean().optional(), ...common });
const runFileSchema = z.strictObject({
  run: text,
  timeout_seconds: z.number().int().min(1).max(3600).optional(),
  ...common,
});

const automationFileSchema = z.string().transform((value, ctx) => {
  const level = parseAutomationLevel(value);
  if (level === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `must be one of ${AUTOMATION_CHOICES.join(', ')} (or ${AUTOMATION_LEVELS.join(', ')})`,
    });
    return z.NEVER;
  }
  return level;
});
const onChildFailureSchema = z.enum(CHILD_FAILURE_POLICIES, {
  error: `must be ${CHILD_FAILURE_POLICIES.join(' or ')}`,
});
/**
 * One child plan as a step names it. `projects` are links of the parent's own projects (by name or alias, `:ro` to
 * make a writable one read-only); left out, the child gets the parent's links. `arguments` are the child action's,
 * as `--arg` would give them, and may use the parent's placeholders.
 */
const subplanFields = {
  subplan: text,
  projects: z.array(text).min(1, 'list at least one project, or leave projects out').optional(),
  arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  automation: automationFileSchema.optional(),
  profile: text.optional(),
  description: z.string().optional(),
};
const subplanFileSchema = z.strictObject({
  ...subplanFields,
  on_child_failure: onChildFailureSchema.optional(),
});
const parallelFileSchema = z.strictObject({
  parallel: z.array(z.strictObject(subplanFields)).min(2, 'a parallel group spawns at least two subplans'),
  on_child_failure: onChildFailureSchema.optional(),
  description: z.string().optional(),
});

const FILE_SCHEMAS = {
  create: createFileSchema,
  replace: replaceFileSchema,
  move: moveFileSchema,
  delete: deleteFileSchema,
  run: runFileSchema,
  subplan: subplanFileSchema,
  parallel: parallelFileSchema,
} as const;

type SubplanFile = z.infer<typeof subplanFileSchema>;
type ParallelFile = z.infer<typeof parallelFileSchema>;

export type StepFile =
  | z.infer<typeof createFileSchema>
  | z.infer<typeof replaceFileSchema>
  | z.infer<typeof moveFileSchema>
  | z.infer<typeof deleteFileSchema>
  | z.infer<typeof runFileSchema>
  | SubplanFile
  | ParallelFile;

/**
 * The step as written in an action file or returned by a model: the verb is the key holding the target. The verb
 * picks the schema first, so an error names the field that is wrong (`steps.2.to: ...`) instead of "matches none
 * of five shapes".
 */
export const stepFileSchema: z.ZodType<StepFile> = z.unknown().transform((value, ctx) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    ctx.addIssue({
      code: 'custom',
      message: `a step must be a mapping with one of the keys ${STEP_KINDS.join(', ')}`,
    });
    return z.NEVER;
  }
  const verbs = STEP_KINDS.filter((kind) => kind in value);
  const verb = verbs[0];
  if (verb === undefined || verbs.length > 1) {
    ctx.addIssue({
      code: 'custom',
      message:
        verb === undefined
          ? `a step needs exactly one of the keys ${STEP_KINDS.join(', ')}`
          : `a step has exactly one verb, got ${verbs.join(' and ')}`,
    });
    return z.NEVER;
  }
  const parsed = FILE_SCHEMAS[verb].safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: issue.path } as never);
    return z.NEVER;
  }
  return parsed.data;
});

// A type alias, not an interface: Prisma's Json input accepts object types only without declared interfaces.
type StepBase = {
  description: string | null;
  /** A linked project's name or alias; null means the plan's first writable project. */
  project: string | null;
};
/** One child plan a step spawns (the file's `subplan:` entry in domain form). */
export type SubplanRequest = {
  action: string;
  /** Links of the parent's projects (`name[:alias][:ro]`); null: the parent's links as they are. */
  projects: string[] | null;
  /** Raw argument values, templates over the parent's values, resolved against the child action's definitions. */
  arguments: Record<string, string>;
  /** Null: the parent's automation level. */
  automation: AutomationLevel | null;
  /** Null: the parent's profile. */
  profile: string | null;
  description: string | null;
};

export type Step = StepBase &
  (
    | { kind: 'create'; path: string; content: string; overwrite: boolean }
    | {
        kind: 'replace';
        files: string;
        pattern: string;
        replacement: string;
        flags: string;
        requireMatch: boolean;
      }
    | { kind: 'move'; from: string; to: string }
    | { kind: 'delete'; files: string; requireMatch: boolean }
    | { kind: 'run'; command: string; timeoutSeconds: number }
    | { kind: 'subplan'; child: SubplanRequest; onChildFailure: ChildFailurePolicy }
    | { kind: 'parallel'; children: SubplanRequest[]; onChildFailure: ChildFailurePolicy }
  );

/** The steps the step runner runs in a sandbox: every kind but the subplan ones. */
export type FileStep = Exclude<Step, { kind: 'subplan' | 'parallel' }>;
export type SubplanStep = Extract<Step, { kind: 'subplan' | 'parallel' }>;

export const DEFAULT_RUN_TIMEOUT_SECONDS = 600;

/**
 * How long one `replace` step's regular expression may run, over all its files. Ordinary patterns take
 * milliseconds; one that backtracks catastrophically would run for hours, so past this the step fails instead.
 */
export const DEFAULT_REPLACE_TIME_LIMIT_SECONDS = 10;

/** Domain form of a parsed file step (the parse already checked the shape). */
export function stepFromFile(file: StepFile): Step {
  const base: StepBase = {
    description: file.description ?? null,
    project: 'project' in file ? (file.project ?? null) : null,
  };
  if ('create' in file) {
    return {
      ...base,
      kind: 'create',
      path: file.create,
      content: file.content,
      overwrite: file.overwrite ?? false,
    };
  }
  if ('replace' in file) {
    return {
      ...base,
      kind: 'replace',
      files: file.replace,
      pattern: file.pattern,
      replacement: file.with,
      flags: file.flags ?? '',
      requireMatch: file.require_match ?? true,
    };
  }
  if ('move' in file) return { ...base, kind: 'move', from: file.move, to: file.to };
  if ('delete' in file)
    return { ...base, kind: 'delete', files: file.delete, requireMatch: file.require_match ?? true };
  if ('subplan' in file) {
    return {
      ...base,
      kind: 'subplan',
      child: subplanFromFile(file),
      onChildFailure: file.on_child_failure ?? 'fail',
    };
  }
  if ('parallel' in file) {
    return {
      ...base,
      kind: 'parallel',
      children: file.parallel.map(subplanFromFile),
      onChildFailure: file.on_child_failure ?? 'fail',
    };
  }
  return {
    ...base,
    kind: 'run',
    command: file.run,
    timeoutSeconds: file.timeout_seconds ?? DEFAULT_RUN_TIMEOUT_SECONDS,
  };
}

function subplanFromFile(file: Omit<SubplanFile, 'on_child_failure'>): SubplanRequest {
  return {
    action: file.subplan,
    projects: file.projects ?? null,
    arguments: Object.fromEntries(
      Object.entries(file.arguments ?? {}).map(([name, value]) => [name, String(value)]),
    ),
    automation: file.automation ?? null,
    profile: file.profile ?? null,
    description: file.description ?? null,
  };
}

function subplanToFile(child: SubplanRequest): Omit<SubplanFile, 'on_child_failure'> {
  return {
    subplan: child.action,
    ...(child.projects === null ? {} : { projects: [...child.projects] }),
    ...(Object.keys(child.arguments).length === 0 ? {} : { arguments: { ...child.arguments } }),
    ...(child.automation === null ? {} : { automation: child.automation }),
    ...(child.profile === null ? {} : { profile: child.profile }),
    ...(child.description === null ? {} : { description: child.description }),
  };
}

/** The file form of a step (inverse of stepFromFile; defaults are left out). */
export function stepToFile(step: Step): StepFile {
  const common: { description?: string; project?: string } = {};
  if (step.description !== null) common.description = step.description;
  if (step.project !== null) common.project = step.project;
  switch (step.kind) {
    case 'create':
      return {
        create: step.path,
        content: step.content,
        ...(step.overwrite ? { overwrite: true } : {}),
        ...common,
      };
    case 'replace':
      return {
        replace: step.files,
        pattern: step.pattern,
        with: step.replacement,
        ...(step.flags === '' ? {} : { flags: step.flags }),
        ...(step.requireMatch ? {} : { require_match: false }),
        ...common,
      };
    case 'move':
      return { move: step.from, to: step.to, ...common };
    case 'delete':
      return { delete: step.files, ...(step.requireMatch ? {} : { require_match: false }), ...common };
    case 'run':
      return {
        run: step.command,
        ...(step.timeoutSeconds === DEFAULT_RUN_TIMEOUT_SECONDS
          ? {}
          : { timeout_seconds: step.timeoutSeconds }),
        ...common,
      };
    case 'subplan':
      return {
        ...subplanToFile({ ...step.child, description: step.description }),
        ...(step.onChildFailure === 'fail' ? {} : { on_child_failure: step.onChildFailure }),
      };
    case 'parallel':
      return {
        parallel: step.children.map(subplanToFile),
        ...(step.onChildFailure === 'fail' ? {} : { on_child_failure: step.onChildFailure }),
        ...common,
      };
  }
}

const stepBase = { description: z.string().nullable(), project: z.string().min(1).nullable() };

const subplanRequestSchema: z.ZodType<SubplanRequest> = z.object({
  action: text,
  projects: z.array(text).min(1).nullable(),
  arguments: z.record(z.string(), z.string()),
  automation: z.enum(AUTOMATION_LEVELS).nullable(),
  profile: text.nullable(),
  description: z.string().nullable(),
});

/** The domain step, as stored with an action and pinned in a plan's input (JSON-safe, validated on the way in). */
export const stepSchema: z.ZodType<Step> = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('create'),
    path: text,
    content: z.string(),
    overwrite: z.boolean(),
    ...stepBase,
  }),
  z.object({
    kind: z.literal('replace'),
    files: text,
    pattern: text,
    replacement: z.string(),
    flags: z.string().regex(/^[imsu]*$/),
    requireMatch: z.boolean(),
    ...stepBase,
  }),
  z.object({ kind: z.literal('move'), from: text, to: text, ...stepBase }),
  z.object({ kind: z.literal('delete'), files: text, requireMatch: z.boolean(), ...stepBase }),
  z.object({
    kind: z.literal('run'),
    command: text,
    timeoutSeconds: z.number().int().min(1).max(3600),
    ...stepBase,
  }),
  z.object({
    kind: z.literal('subplan'),
    child: subplanRequestSchema,
    onChildFailure: z.enum(CHILD_FAILURE_POLICIES),
    ...stepBase,
  }),
  z.object({
    kind: z.literal('parallel'),
    children: z.array(subplanRequestSchema).min(2),
    onChildFailure: z.enum(CHILD_FAILURE_POLICIES),
    ...stepBase,
  }),
]);

/** One line naming a step: `create NOTES.md`, `run npm test`. */
export function describeStep(step: Step): string {
  const what = (() => {
    switch (step.kind) {
      case 'create':
        return `create ${step.path}`;
      case 'replace':
        return `replace /${step.pattern}/ in ${step.files}`;
      case 'move':
        return `move ${step.from} to ${step.to}`;
      case 'delete':
        return `delete ${step.files}`;
      case 'run':
        return `run ${step.command}`;
      case 'subplan':
        return `subplan ${step.child.action}`;
      case 'parallel':
        return `parallel subplans ${step.children.map((c) => c.action).join(', ')}`;
    }
  })();
  return step.description === null ? what : `${what} (${step.description})`;
}

/** What the action says to do, pinned with the plan at creation. */
export interface ActionDefinition {
  steps: Step[];
  /** A shell command run in the sandbox after the steps; null: no validation. */
  validation: string | null;
}

/** Strategize's product, pinned for Execute: the steps it will run, and how their result is validated. */
export interface Strategy extends ActionDefinition {
  summary: string;
}

/**
 * The linked project a step works in: the one it names (by name or alias), else the first writable one. Chosen by
 * the link alone (not by whether a sandbox exists yet), so Strategize, a model's proposal and Execute agree on it.
 */
export function stepProject<T extends ProjectLink>(
  project: string | null,
  links: readonly T[],
): { ok: true; link: T } | { ok: false; reason: string } {
  if (project === null) {
    const writable = links.find((link) => !link.readOnly);
    return writable === undefined
      ? { ok: false, reason: 'the plan has no writable project: every linked project is read-only' }
      : { ok: true, link: writable };
  }
  const link = links.find((l) => l.projectName === project || l.alias === project);
  if (link === undefined) {
    const known = links.map((l) =>
      l.alias === null ? l.projectName : `${l.projectName} (alias ${l.alias})`,
    );
    return {
      ok: false,
      reason:
        `the step targets project "${project}", which is not linked to this plan` +
        (known.length > 0 ? ` (linked: ${known.join(', ')})` : ''),
    };
  }
  if (link.readOnly) {
    return {
      ok: false,
      reason: `the step targets project ${link.projectName}, which is linked read-only: steps may only work in writable projects`,
    };
  }
  return { ok: true, link };
}

/**
 * The values a step's templates are filled with: the plan's arguments, then the plan's and the step's project's
 * names. Null arguments (from plans created before arguments were typed) have no value, so they are left out.
 */
export function templateValues(plan: PlanSpec, link: ProjectLink): Record<string, TemplateValue> {
  const values: Record<string, TemplateValue> = {};
  for (const [name, value] of Object.entries(plan.arguments)) {
    if (value !== null) values[name] = value;
  }
  values['plan.id'] = plan.planId;
  values['plan.name'] = plan.name;
  values['project.name'] = link.projectName;
  values['project.alias'] = link.alias ?? link.projectName;
  return values;
}

// ---------------------------------------------------------------------------------------------------------------
// Templates

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** The names a template uses, in order of first use; throws TemplateError for a malformed placeholder. */
export function templateNames(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (!NAME.test(name)) throw new TemplateError(`malformed placeholder "${match[0]}" in "${template}"`);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

export class TemplateError extends Error {
  override name = 'TemplateError';
}

export type TemplateValue = string | number | boolean;

/**
 * Fills `{{name}}` placeholders. An unknown name is an error naming it and the names that exist, never an empty
 * string: a typo must not silently write a wrong file. `quote` is applied to each substituted value (shell quoting
 * for `run`).
 */
export function renderTemplate(
  template: string,
  values: Readonly<Record<string, TemplateValue>>,
  quote: (value: string) => string = (v) => v,
): string {
  templateNames(template);
  return template.replace(PLACEHOLDER, (_whole, raw: string) => {
    const name = raw.trim();
    const value = Object.prototype.hasOwnProperty.call(values, name) ? values[name] : undefined;
    if (value === undefined) {
      const known = Object.keys(values).sort();
      throw new TemplateError(
        `the template refers to "${name}", which this plan does not have` +
          (known.length > 0 ? ` (known: ${known.join(', ')})` : ''),
      );
    }
    return quote(String(value));
  });
}

/**
 * For a value substituted into a `replace` step's `with:`: every `$` doubled, so String.prototype.replace inserts
 * the value as written. Unescaped, an argument `$'` would copy the rest of the file into it, `$&` the match. The
 * template's own text is left alone: its author's `$1` still names a group.
 */
export function regexReplacementLiteral(value: string): string {
  return value.replace(/\$/g, () => '$$');
}

/** POSIX single-quoting: the value reaches the command as one literal word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
