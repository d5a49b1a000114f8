import type { Phase } from './lifecycle';

/** The 11 decision types of seed 004, each with the phase it nominally belongs to (undefined: any phase). */
export const DECISION_TYPES = {
  prompt_definition: 'STRATEGIZE',
  invariant_enforced: 'STRATEGIZE',
  strategy_choice: 'STRATEGIZE',
  implementation_choice: 'EXECUTE',
  resource_selection: 'EXECUTE',
  subplan_spawn: 'STRATEGIZE',
  subplan_parallel_spawn: 'STRATEGIZE',
  tool_invocation: 'EXECUTE',
  error_recovery: 'EXECUTE',
  validation_response: 'EXECUTE',
  user_intervention: undefined,
} as const satisfies Record<string, Phase | undefined>;

export type DecisionType = keyof typeof DECISION_TYPES;

/**
 * A decision as an actor or the workflow proposes it. Identity (id, sequence number) is assigned on the way in:
 * the sequence number by the workflow, deterministically; the id by storage on first insert.
 * `parentSeq` names the parent by its sequence number so a batch can link to decisions written in the same call.
 */
export interface DecisionDraft {
  type: DecisionType;
  question: string;
  chosenOption: string;
  alternatives: string[];
  confidence: number | null;
  rationale: string;
  parentSeq: number | null;
  phase: Phase;
  actor: string;
}

export interface DecisionRuleInput {
  type: DecisionType;
  parentSeq: number | null;
  confidence: number | null;
}

/** Structural rules of seed 004 that can be checked without storage. */
export function checkDecisionDraft(draft: DecisionRuleInput, seq: number): string | undefined {
  if (!Number.isInteger(seq) || seq < 0) {
    return `sequence number must be a non-negative integer, got ${seq}`;
  }
  if (draft.type === 'prompt_definition' && draft.parentSeq !== null) {
    return 'the prompt_definition decision is the root and has no parent';
  }
  if (draft.type !== 'prompt_definition' && draft.parentSeq === null) {
    return `a ${draft.type} decision needs a parent`;
  }
  if (draft.parentSeq !== null && draft.parentSeq >= seq) {
    return `a decision's parent must come before it (parent ${draft.parentSeq}, decision ${seq})`;
  }
  if (draft.confidence !== null && !(draft.confidence >= 0 && draft.confidence <= 1)) {
    return `confidence must be between 0.0 and 1.0, got ${draft.confidence}`;
  }
  return undefined;
}

/** Where the decisions of each work phase hang: the tree grows one level per phase under the prompt. */
export interface PromptFacts {
  actionName: string;
  projects: ReadonlyArray<{ projectName: string }>;
  arguments: Readonly<Record<string, unknown>>;
  argumentsOrder: readonly string[];
  description: string;
  createdBy: string;
}

/** The root of every plan's tree: the prompt the plan was created with, as seed 004 defines it. */
export function promptDefinitionDraft(prompt: PromptFacts): DecisionDraft {
  const args = prompt.argumentsOrder.map((k) => `${k}=${JSON.stringify(prompt.arguments[k])}`).join(', ');
  const projects = prompt.projects.map((p) => p.projectName).join(', ');
  return {
    type: 'prompt_definition',
    question: 'What is this plan asked to do?',
    chosenOption:
      `Run ${prompt.actionName} on ${projects}` +
      (args === '' ? '' : ` with ${args}`) +
      (prompt.description === '' ? '' : `: ${prompt.description}`),
    alternatives: [],
    confidence: null,
    rationale: `The plan's prompt as given by ${prompt.createdBy} at creation.`,
    parentSeq: null,
    phase: 'STRATEGIZE',
    actor: prompt.createdBy,
  };
}

/** A person moved the plan forward (or retried a phase): recorded as seed 004's user_intervention. */
export function userInterventionDraft(input: {
  by: string;
  question: string;
  chosenOption: string;
  alternatives: string[];
  reason: string | undefined;
  phase: Phase;
  parentSeq: number;
}): DecisionDraft {
  return {
    type: 'user_intervention',
    question: input.question,
    chosenOption: input.chosenOption,
    alternatives: input.alternatives,
    confidence: null,
    rationale: input.reason ?? `${input.by} gave no reason.`,
    parentSeq: input.parentSeq,
    phase: input.phase,
    actor: input.by,
  };
}
