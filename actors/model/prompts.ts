/**
 * What the model is told: the system prompt of each role, and the plan, its context files, its steps and its
 * changes as text.
 */
import type { StrategyRevision } from '../../domain/correction';
import type { PlanSpec } from '../../domain/plan';
import { describeStep } from '../../domain/steps';
import type { Step } from '../../domain/steps';
import type { ChangeSummary, ContextFile } from '../types';

/** How much context-file text one strategy request carries: enough to ground the plan, small enough for any model. */
export const CONTEXT_BUDGET_CHARS = 20_000;

export const STRATEGY_SYSTEM = `You plan code changes for CleverAgents, an engine that runs your steps in a sandbox copy \
of each writable project, shows the resulting changeset to a person, and applies it only when approved.

Answer with one JSON object matching the schema. Each step is one of:
- create: write the file \`target\` with \`content\` (refused if it exists unless \`overwrite\` is true)
- replace: in every file matching the glob \`target\`, replace the regular expression \`pattern\` with \`with\`
- move: move the file \`target\` to \`to\`
- delete: delete the path or glob \`target\`
- run: run the shell command \`target\` in the project (a non-zero exit fails the step)
Every field is present in every step; use null for the fields a step's kind does not use.
Paths are relative to the project root. \`project\` names a linked project (null: the first writable one); \
read-only projects may be read for context but never changed.
Texts may use {{name}} for a plan argument and {{plan.id}}, {{plan.name}}, {{project.name}}, {{project.alias}}; \
write "{{" nowhere else. In a \`run\` or validation command, write each {{name}} as a bare word (its value is \
shell-quoted for you): never inside quotes, backquotes, a comment or a here-document, nor right after \\ or $.
Prefer the fewest steps that meet the definition of done and respect every invariant. The action's own steps are \
suggestions: keep, change or replace them. Give a validation command when the project has one (e.g. its tests).`;

/** Added to STRATEGY_SYSTEM when a person corrected a step and the steps after it are asked again. */
export const REVISE_SYSTEM = `A person corrected one step of your earlier strategy. The steps listed as fixed \
(ending with the person's replacement, if any) run first, unchanged. Answer with only the steps that come AFTER \
them, written with the correction as a constraint: never undo or contradict it. An empty list is a fine answer.`;

/** The person's correction, as the model is told it. */
export function describeCorrection(revision: StrategyRevision): string {
  const what =
    revision.replacement === null
      ? `A person removed step ${revision.correctedStep}; it must not be done.`
      : `A person replaced step ${revision.correctedStep} with: ${describeStep(revision.replacement)}.`;
  return `${what}${revision.reason === null ? '' : ` Their reason: ${revision.reason}`}`;
}

export const ESTIMATE_SYSTEM = `You estimate the size and risk of a planned code change for CleverAgents before it runs. \
Answer with one JSON object matching the schema.`;

export const INVARIANT_SYSTEM = `You check one invariant (a constraint a plan must respect) for CleverAgents. \
You see the plan and the files its changeset touches (operations and paths, not contents). \
Answer "held" when the changes respect the invariant, "violated" when they break it, and "acknowledged" when it \
cannot be judged from this information (say what would be needed). Answer with one JSON object matching the schema.`;

export function describePlan(plan: PlanSpec): string {
  const lines = [
    `Action: ${plan.actionName}`,
    `Plan: ${plan.name}`,
    `Description: ${plan.description === '' ? '(none)' : plan.description}`,
    `Definition of done: ${plan.definitionOfDone ?? '(none given)'}`,
  ];
  lines.push(
    plan.argumentsOrder.length === 0
      ? 'Arguments: (none)'
      : `Arguments:\n${plan.argumentsOrder.map((k) => `  ${k} = ${JSON.stringify(plan.arguments[k] ?? null)}`).join('\n')}`,
  );
  lines.push(
    `Projects:\n${plan.projects
      .map(
        (p) =>
          `  - ${p.projectName}${p.alias === null ? '' : ` (alias ${p.alias})`}: ` +
          (p.readOnly ? 'read-only (may be read, never changed)' : 'writable'),
      )
      .join('\n')}`,
  );
  if (plan.invariants.length > 0) {
    lines.push(
      `Invariants (must hold):\n${plan.invariants.map((i) => `  - ${i.text} [${i.scope}]`).join('\n')}`,
    );
  }
  return lines.join('\n');
}

/**
 * Shares the budget fairly: small files are shown whole, and what they leave is split among the larger ones, so
 * one big file cannot crowd out the rest.
 */
export function renderContextFiles(
  files: readonly ContextFile[],
  budget: number = CONTEXT_BUDGET_CHARS,
): string {
  if (files.length === 0) return 'Context files: (none)';
  const allowance = new Map<ContextFile, number>();
  const texts = files
    .filter((f) => f.content !== null)
    .sort((a, b) => (a.content ?? '').length - (b.content ?? '').length);
  let left = budget;
  texts.forEach((file, index) => {
    const share = Math.floor(left / (texts.length - index));
    const shown = Math.min((file.content ?? '').length, share);
    allowance.set(file, shown);
    left -= shown;
  });
  const parts = files.map((file) => {
    if (file.content === null) return `--- ${file.path} (binary, ${file.size} bytes: not shown) ---`;
    const shown = allowance.get(file) ?? 0;
    if (shown >= file.content.length) return `--- ${file.path} ---\n${file.content}`;
    return (
      `--- ${file.path} (first ${shown} of ${file.content.length} characters: the rest is left out) ---\n` +
      file.content.slice(0, shown)
    );
  });
  return `Context files (added by a person as background):\n${parts.join('\n')}`;
}

export function describeSteps(steps: readonly Step[], validation: string | null): string {
  const list =
    steps.length === 0 ? '  (none)' : steps.map((s, i) => `  ${i + 1}. ${describeStep(s)}`).join('\n');
  return `Steps:\n${list}\nValidation: ${validation ?? '(none)'}`;
}

export function describeChanges(changes: readonly ChangeSummary[] | null): string {
  if (changes === null) {
    return 'Changes: none yet (the plan has not been executed). Judge what is known so far; answer acknowledged when the invariant can only be judged on the changes.';
  }
  if (changes.length === 0) return 'Changes: (the changeset is empty)';
  const lines = changes.map(
    (c) => `  ${c.operation} ${c.project}:${c.fromPath === null ? c.path : `${c.fromPath} -> ${c.path}`}`,
  );
  return `Changes:\n${lines.join('\n')}`;
}
