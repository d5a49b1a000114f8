/**
 * Which commands of a strategy a person must see before Execute runs them. Its own module, with type-only imports:
 * the workflow decides the gate with it, and the workflow bundle must not pull in zod (domain/steps.ts has schemas).
 */
import type { ActionDefinition } from './steps';

/**
 * The shell commands of `proposed` (its `run` steps, then its validation) that `action` does not contain word for
 * word, in order and without repeats: what a strategy actor other than the action's author wants to run. The
 * action's own commands were reviewed when the action was added; these were not.
 */
export function unreviewedCommands(proposed: ActionDefinition, action: ActionDefinition): string[] {
  const commandsOf = (definition: ActionDefinition): string[] => [
    ...definition.steps.flatMap((step) => (step.kind === 'run' ? [step.command] : [])),
    ...(definition.validation === null ? [] : [definition.validation]),
  ];
  const reviewed = new Set(commandsOf(action));
  return [...new Set(commandsOf(proposed).filter((command) => !reviewed.has(command)))];
}
