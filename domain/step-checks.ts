/**
 * What can be checked of a plan's steps before Execute, by the rules Execute applies: a step's project resolves
 * (stepProject), its placeholders exist (templateValues), and the commands (each `run` step's and the validation)
 * place them only where their shell quoting holds (commandProblems). A model's proposed steps
 * (actors/model/replies.ts) and a person's corrected step (domain/step-option.ts) meet the same checks, so a step
 * Execute would refuse is refused where it can still be fixed.
 */
import type { PlanSpec } from './schemas';
import { commandProblems } from './shell';
import { renderTemplate, stepProject, templateValues } from './steps';
import type { StepFile } from './steps';

/** The fields of a file step that are templates: the verb's own (its target) and the texts beside it. */
export const TEMPLATED_FIELDS = [
  'create',
  'content',
  'replace',
  'with',
  'move',
  'to',
  'delete',
  'run',
] as const;

export interface StepProblem {
  /** The step's index; null for the validation command. */
  step: number | null;
  /** The file step's field at fault (`project`, a verb for the step's target, `content`, ...). */
  field: string;
  message: string;
}

export function stepProblems(
  plan: PlanSpec,
  steps: readonly StepFile[],
  validation: string | null,
): StepProblem[] {
  const problems: StepProblem[] = [];
  steps.forEach((step, index) => {
    if ('subplan' in step || 'parallel' in step) {
      // A child plan's action and projects are checked against the catalog when Strategize ends (they are not
      // this plan's to tell); its argument templates must name values this plan has.
      const first = plan.projects[0];
      const values = first === undefined ? {} : templateValues(plan, first);
      const children = 'subplan' in step ? [step] : step.parallel;
      for (const child of children) {
        for (const [name, text] of Object.entries(child.arguments ?? {})) {
          try {
            renderTemplate(String(text), values);
          } catch (error) {
            problems.push({ step: index, field: `arguments.${name}`, message: (error as Error).message });
          }
        }
      }
      return;
    }
    const found = stepProject(step.project ?? null, plan.projects);
    if (!found.ok) problems.push({ step: index, field: 'project', message: found.reason });
    // Which names exist does not depend on the project, only their values do; so a step whose project is refused
    // still has its placeholders checked, against the plan's first project (a plan always has one).
    const link = found.ok ? found.link : plan.projects[0];
    if (link === undefined) return;
    const values = templateValues(plan, link);
    for (const field of TEMPLATED_FIELDS) {
      const text = (step as Record<string, unknown>)[field];
      if (typeof text !== 'string') continue;
      try {
        renderTemplate(text, values);
      } catch (error) {
        problems.push({ step: index, field, message: (error as Error).message });
      }
    }
  });
  for (const { step, problem } of commandProblems(steps, validation, plan)) {
    const verb = step === null ? 'validation' : 'run';
    problems.push({ step, field: verb, message: problem });
  }
  return problems;
}
