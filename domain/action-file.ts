/**
 * The action file `agents action add -f <file.yaml|json>` reads (issue item 5), and its inverse for `action show`.
 *
 * The file uses snake_case keys:
 *   name, description,
 *   arguments: [{ name, type, required, default, description, allowed_values }],
 *   default_automation_level (manual | review | full, or the enum names), default_profile,
 *   actors: { strategy, execution, estimation, invariant },
 *   execution: { network, unattended_commands, ignore: [glob] }  (what its commands may do; every default cautious),
 *   invariants: [text], definition_of_done, tags: [tag],
 *   steps: [step] (domain/steps.ts), validation: command
 * Every field but `name` is optional. Unknown keys are refused (a typo must not silently drop a setting). The field
 * rules and defaults are catalog.ts's (the file schema below only renames keys), so a file and the API accept
 * exactly the same actions.
 */
import YAML from 'yaml';
import { z } from 'zod';
import { checkArgumentDefinitions } from './arguments';
import { actionSchema, argumentDefinitionSchema } from './catalog';
import type { Action, ArgumentDefinition } from './catalog';
import { AUTOMATION_CHOICES, AUTOMATION_LEVELS, parseAutomationLevel } from './lifecycle';
import { actorRefsSchema, executionPolicySchema } from './schemas';
import { commandProblems } from './shell';
import { stepFileSchema, stepFromFile, stepToFile } from './steps';

export type ActionFileResult = { ok: true; action: Action } | { ok: false; error: string };

const argumentFileSchema = z.strictObject({
  name: argumentDefinitionSchema.shape.name,
  type: argumentDefinitionSchema.shape.type,
  required: argumentDefinitionSchema.shape.required,
  default: argumentDefinitionSchema.shape.default,
  description: argumentDefinitionSchema.shape.description,
  allowed_values: argumentDefinitionSchema.shape.allowedValues,
});

const actorsFileSchema = z.strictObject({
  strategy: actorRefsSchema.shape.strategyActor,
  execution: actorRefsSchema.shape.executionActor,
  estimation: actorRefsSchema.shape.estimationActor,
  invariant: actorRefsSchema.shape.invariantActor,
});

const executionFileSchema = z.strictObject({
  network: executionPolicySchema.shape.network,
  unattended_commands: executionPolicySchema.shape.unattendedCommands,
  ignore: executionPolicySchema.shape.ignore,
});

const AUTOMATION_RULE =
  `must be one of ${AUTOMATION_CHOICES.join(', ')} ` + `(or ${AUTOMATION_LEVELS.join(', ')}), in any case`;

const automationFileSchema = z.string().transform((value, ctx) => {
  const level = parseAutomationLevel(value);
  if (level === undefined) {
    ctx.addIssue({ code: 'custom', message: `${AUTOMATION_RULE}, got ${JSON.stringify(value)}` });
    return z.NEVER;
  }
  return level;
});

/**
 * The file's shape: snake_case keys, strict, with catalog.ts's field rules; and its commands place placeholders
 * only where their shell quoting holds (domain/shell.ts), so an action the step runner would refuse is never added.
 */
export const actionFileSchema = z
  .strictObject({
    name: actionSchema.shape.name,
    description: actionSchema.shape.description,
    arguments: z.array(argumentFileSchema).default([]),
    default_automation_level: automationFileSchema.optional(),
    default_profile: actionSchema.shape.defaultProfile,
    actors: actorsFileSchema.optional(),
    execution: executionFileSchema.optional(),
    invariants: actionSchema.shape.invariants,
    definition_of_done: actionSchema.shape.definitionOfDone,
    tags: actionSchema.shape.tags,
    steps: z.array(stepFileSchema).default([]),
    validation: actionSchema.shape.validation.optional(),
  })
  .superRefine((file, ctx) => {
    for (const { step, problem } of commandProblems(file.steps, file.validation ?? null, null)) {
      ctx.addIssue({
        code: 'custom',
        path: step === null ? ['validation'] : ['steps', step, 'run'],
        message: problem,
      });
    }
  });

/** The keys each level of the file accepts, for the "unknown key" message. */
function allowedKeysAt(path: readonly PropertyKey[]): readonly string[] {
  if (path.length === 0) return Object.keys(actionFileSchema.shape);
  if (path[0] === 'actors') return Object.keys(actorsFileSchema.shape);
  if (path[0] === 'execution') return Object.keys(executionFileSchema.shape);
  if (path[0] === 'arguments') return Object.keys(argumentFileSchema.shape);
  return [];
}

/** zod issues as one line, in the file's terms: `field.path: rule; ...`, unknown keys named with their path. */
function describeFileIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => [...issue.path, k].join('.')).join(', ');
        return `${keys}: unknown key (allowed: ${allowedKeysAt(issue.path).join(', ')})`;
      }
      return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

type Parsed = { ok: true; data: unknown } | { ok: false; error: string };

function parseJson(text: string): Parsed {
  try {
    return { ok: true, data: JSON.parse(text) as unknown };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const position = /at position (\d+)/.exec(message);
    const reason = message
      .replace(/\s*in JSON at position \d+.*$/, '')
      .replace(/\s*\(line \d+ column \d+\)$/, '');
    if (position?.[1] === undefined) {
      return { ok: false, error: `JSON syntax error: ${reason}` };
    }
    const before = text.slice(0, Number(position[1]));
    const line = before.split('\n').length;
    const column = before.length - before.lastIndexOf('\n');
    return { ok: false, error: `JSON syntax error at line ${line}, column ${column}: ${reason}` };
  }
}

function parseYaml(text: string): Parsed {
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const where = first.linePos?.[0];
    const reason = (first.message.split('\n')[0] ?? '').replace(/\s*at line \d+, column \d+:?\s*$/, '');
    return {
      ok: false,
      error:
        where === undefined
          ? `YAML syntax error: ${reason}`
          : `YAML syntax error at line ${where.line}, column ${where.col}: ${reason}`,
    };
  }
  try {
    return { ok: true, data: doc.toJS() as unknown };
  } catch (err) {
    return { ok: false, error: `YAML error: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Which parser a file name asks for: by extension (any case); anything else tries JSON, then YAML. */
export function actionFileFormat(fileName: string): 'json' | 'yaml' | 'unknown' {
  const ext = /\.([^./\\]+)$/.exec(fileName)?.[1]?.toLowerCase();
  if (ext === 'json') return 'json';
  if (ext === 'yaml' || ext === 'yml') return 'yaml';
  return 'unknown';
}

function describeTopLevel(data: unknown): string {
  if (Array.isArray(data)) return 'a list';
  if (data === null || data === undefined) return 'nothing';
  return `a ${typeof data}`;
}

/**
 * Parses and validates an action file. The format follows the extension (.yaml/.yml/.json); any other name is
 * tried as JSON, then as YAML. Errors are one line starting with the file name: syntax errors give the line and
 * column, validation errors the field path (`arguments.1.default: ...`) and the rule. Argument definitions are
 * checked with checkArgumentDefinitions too, so an added action's defaults always fit their arguments.
 */
export function parseActionFile(text: string, fileName: string): ActionFileResult {
  const fail = (error: string): ActionFileResult => ({ ok: false, error: `${fileName}: ${error}` });
  if (text.trim() === '') {
    return fail('the file is empty; an action needs at least a name');
  }
  const format = actionFileFormat(fileName);
  let parsed: Parsed;
  if (format === 'json') {
    parsed = parseJson(text);
  } else if (format === 'yaml') {
    parsed = parseYaml(text);
  } else {
    const asJson = parseJson(text);
    parsed = asJson.ok ? asJson : parseYaml(text);
    if (!parsed.ok) parsed = { ok: false, error: `neither JSON nor YAML: ${parsed.error}` };
  }
  if (!parsed.ok) {
    return fail(parsed.error);
  }
  const data = parsed.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return fail(
      `the top level must be a mapping of action fields (name, description, ...), got ${describeTopLevel(data)}`,
    );
  }

  const file = actionFileSchema.safeParse(data);
  if (!file.success) {
    return fail(describeFileIssues(file.error));
  }
  const f = file.data;
  const args: ArgumentDefinition[] = f.arguments.map((a) => ({
    name: a.name,
    type: a.type,
    required: a.required,
    default: a.default,
    description: a.description,
    allowedValues: a.allowed_values,
  }));
  const check = checkArgumentDefinitions(args);
  if (!check.ok) {
    return fail(check.error);
  }
  const action: Action = {
    name: f.name,
    description: f.description,
    arguments: args,
    defaultAutomationLevel:
      f.default_automation_level ?? actionSchema.shape.defaultAutomationLevel.parse(undefined),
    defaultProfile: f.default_profile,
    actors: {
      strategyActor: f.actors?.strategy ?? null,
      executionActor: f.actors?.execution ?? null,
      estimationActor: f.actors?.estimation ?? null,
      invariantActor: f.actors?.invariant ?? null,
    },
    execution: {
      network: f.execution?.network ?? false,
      unattendedCommands: f.execution?.unattended_commands ?? false,
      ignore: f.execution?.ignore ?? [],
    },
    invariants: f.invariants,
    definitionOfDone: f.definition_of_done,
    tags: f.tags,
    steps: f.steps.map(stepFromFile),
    validation: f.validation ?? null,
  };
  return { ok: true, action };
}

/**
 * An action in the file's shape (snake_case keys, same nesting), for `action add` / `action show` output.
 * Optional fields are left out when empty: description, an argument's default / description / allowed_values,
 * default_profile, actors (and each unset actor), invariants, definition_of_done, tags. `type` and `required`
 * of each argument and `default_automation_level` (as the enum name) are always shown. Feeding the YAML or JSON
 * of this dict back to parseActionFile gives an equal action.
 */
export function actionCliDict(action: Action): Record<string, unknown> {
  const dict: Record<string, unknown> = { name: action.name };
  if (action.description !== '') dict.description = action.description;
  if (action.arguments.length > 0) {
    dict.arguments = action.arguments.map((a) => {
      const arg: Record<string, unknown> = { name: a.name, type: a.type, required: a.required };
      if (a.default !== null) arg.default = a.default;
      if (a.description !== '') arg.description = a.description;
      if (a.allowedValues.length > 0) arg.allowed_values = [...a.allowedValues];
      return arg;
    });
  }
  dict.default_automation_level = action.defaultAutomationLevel;
  if (action.defaultProfile !== null) dict.default_profile = action.defaultProfile;
  const actors: Record<string, string> = {};
  if (action.actors.strategyActor !== null) actors.strategy = action.actors.strategyActor;
  if (action.actors.executionActor !== null) actors.execution = action.actors.executionActor;
  if (action.actors.estimationActor !== null) actors.estimation = action.actors.estimationActor;
  if (action.actors.invariantActor !== null) actors.invariant = action.actors.invariantActor;
  if (Object.keys(actors).length > 0) dict.actors = actors;
  const execution: Record<string, unknown> = {};
  if (action.execution.network) execution.network = true;
  if (action.execution.unattendedCommands) execution.unattended_commands = true;
  if (action.execution.ignore.length > 0) execution.ignore = [...action.execution.ignore];
  if (Object.keys(execution).length > 0) dict.execution = execution;
  if (action.invariants.length > 0) dict.invariants = [...action.invariants];
  if (action.definitionOfDone !== null) dict.definition_of_done = action.definitionOfDone;
  if (action.tags.length > 0) dict.tags = [...action.tags];
  if (action.steps.length > 0) dict.steps = action.steps.map(stepToFile);
  if (action.validation !== null) dict.validation = action.validation;
  return dict;
}
