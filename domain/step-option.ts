/**
 * The option of a correction that replaces a strategy step (`agents plan correct <decision> --option <text>`): one
 * step in the action-file syntax, as YAML or JSON (`{create: NOTES.md, content: "hi\n"}`), or `skip` to drop the
 * step. The text is a person's, but it runs like a model's steps: it is parsed by the same schema as action files
 * (stepFileSchema) and checked by the same rules as a model's proposals (domain/step-checks.ts), and its paths by
 * the changeset's textual rule, so a step the runner or Apply would refuse is refused before anything is recorded.
 */
import YAML from 'yaml';
import { checkRelativePath } from './changeset';
import { describeZodError } from './schemas';
import type { PlanSpec } from './schemas';
import { stepProblems } from './step-checks';
import { renderTemplate, stepFileSchema, stepFromFile, stepProject, templateValues } from './steps';
import type { Step, StepFile } from './steps';

/** The option that drops the corrected step from the strategy. */
export const SKIP_OPTION = 'skip';

export type StepOption = { skip: true } | { skip: false; step: Step };

/** Longer than any sensible step; a bigger text is refused before it is parsed. */
export const MAX_STEP_OPTION_CHARS = 256 * 1024;

export function parseStepOption(
  text: string,
  plan: PlanSpec,
): { ok: true; option: StepOption } | { ok: false; reason: string } {
  const refuse = (why: string) => ({
    ok: false as const,
    reason: `the option must be one step in the action step syntax (YAML or JSON, e.g. '{create: NOTES.md, content: "hi"}') or "${SKIP_OPTION}": ${why}`,
  });
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === SKIP_OPTION) return { ok: true, option: { skip: true } };
  if (trimmed === '') return refuse('it is empty');
  if (text.length > MAX_STEP_OPTION_CHARS)
    return refuse(`it is longer than ${MAX_STEP_OPTION_CHARS} characters`);
  let value: unknown;
  try {
    // One document, no custom tags, no aliases expanded past a small budget: a person's text, not a config file.
    value = YAML.parse(text, { maxAliasCount: 10, prettyErrors: false });
  } catch (err) {
    return refuse(
      `it is not valid YAML or JSON (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`,
    );
  }
  const parsed = stepFileSchema.safeParse(value);
  if (!parsed.success) return refuse(describeZodError(parsed.error));
  // A child plan is named by Strategize's spawn decision and checked against the catalog there; a correction
  // cannot do either, so it replaces a step with a file step only.
  if ('subplan' in parsed.data || 'parallel' in parsed.data) {
    return refuse('a correction cannot spawn subplans; correct the action, or amend the plan, instead');
  }
  const problems = stepProblems(plan, [parsed.data], null);
  const pathProblem = problems.length === 0 ? pathProblemOf(parsed.data, plan) : undefined;
  if (problems.length > 0) return refuse(problems.map((p) => `${p.field}: ${p.message}`).join('; '));
  if (pathProblem !== undefined) return refuse(pathProblem);
  return { ok: true, option: { skip: false, step: stepFromFile(parsed.data) } };
}

/**
 * The first path of the step that is unsafe as text once its placeholders are filled: absolute, with a `..`, into
 * `.git`. Globs are held to the same rule (a glob is a path with wildcards). The runner resolves every path inside
 * the sandbox again, on disk; this refuses what can never be right before it is recorded.
 */
function pathProblemOf(step: StepFile, plan: PlanSpec): string | undefined {
  const found = stepProject('project' in step ? (step.project ?? null) : null, plan.projects);
  if (!found.ok) return found.reason;
  const values = templateValues(plan, found.link);
  const paths: Array<[string, string]> = [];
  if ('create' in step) paths.push(['create', step.create]);
  if ('replace' in step) paths.push(['replace', step.replace]);
  if ('move' in step) paths.push(['move', step.move], ['to', step.to]);
  if ('delete' in step) paths.push(['delete', step.delete]);
  for (const [field, template] of paths) {
    const problem = checkRelativePath(renderTemplate(template, values));
    if (problem !== undefined) return `${field}: ${problem}; a step works inside its project`;
  }
  return undefined;
}
