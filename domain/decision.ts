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

/** Seed 004's ResourceRef: a resource in scope when the decision was made (a file, a URL, a project, …). */
export interface ResourceRef {
  kind: string;
  uri: string;
  description?: string;
}

/** Seed 004's ArtifactRef: something the decision produced. */
export interface ArtifactRef {
  kind: string;
  uri: string;
  description?: string;
}

/**
 * The context an actor decided in, as it hands it over. `content` is any JSON-serialisable value (the hot context
 * window); storage keeps it once per distinct SHA-256 of its canonical JSON and the decision keeps the hash and a
 * reference to it (seed 004's `hot_context_hash` / `hot_context_ref`).
 */
export interface DecisionContextInput {
  /** The context itself; leave out when `ref` names it. */
  content?: unknown;
  /**
   * `sha256:<hash>` of a context already stored (by the activity that produced it, ADR 0011): the decision keeps
   * the reference, and the context does not travel again. Exactly one of `content` and `ref`.
   */
  ref?: string;
  relevantResources?: ResourceRef[];
  /** LangGraph actor checkpoint reference (seed 004's `actor_state_ref`). */
  actorStateRef?: string | null;
}

/**
 * The model behind a model-backed decision (seed 001's PlanBuild: model name, token count), from the endpoint's
 * reply. Tokens are counted once, on the decision whose question the requests asked (retries of a reply that did
 * not validate included), so adding up a plan's decisions gives what its model calls cost; decisions that follow
 * from the same reply (the steps of a strategy) name the model with null tokens.
 */
export interface ModelUsage {
  /** As the endpoint named the model that answered (its reply's `model`), else as it was asked for. */
  modelName: string;
  /** null: the endpoint did not report usage, or the tokens are counted on another decision. */
  promptTokens: number | null;
  completionTokens: number | null;
}

/**
 * A decision as an actor or the workflow proposes it. Identity (id, sequence number) is assigned on the way in:
 * the sequence number by the workflow, deterministically; the id by storage on first insert.
 * `parentSeq` names the parent by its sequence number so a batch can link to decisions written in the same call.
 * The optional fields are seed 004's context snapshot, raw reasoning and downstream impact; left out, they are
 * stored as "none" (null or an empty list).
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
  context?: DecisionContextInput;
  /** Raw LLM reasoning trace. */
  actorReasoning?: string | null;
  /** Child plans spawned from this decision. */
  downstreamPlanIds?: string[];
  artifactsProduced?: ArtifactRef[];
  /** Set by model-backed actors only; left out, the decision has no model (null model name and tokens). */
  model?: ModelUsage;
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

/** What the root decision states: the plan's prompt as seed 004 defines it. */
export interface PromptFacts {
  actionName: string;
  projects: ReadonlyArray<{ projectName: string }>;
  arguments: Readonly<Record<string, unknown>>;
  argumentsOrder: readonly string[];
  description: string;
  definitionOfDone: string | null;
  createdBy: string;
}

/**
 * The root of every plan's tree: the prompt the plan was created with (action, arguments, definition of done).
 * The prompt is also its context snapshot, so `plan explain --show-context` prints exactly what the plan was given.
 */
export function promptDefinitionDraft(prompt: PromptFacts): DecisionDraft {
  const args = prompt.argumentsOrder.map((k) => `${k}=${JSON.stringify(prompt.arguments[k])}`).join(', ');
  const projects = prompt.projects.map((p) => p.projectName).join(', ');
  return {
    type: 'prompt_definition',
    question: 'What is this plan asked to do?',
    chosenOption:
      `Run ${prompt.actionName} on ${projects}` +
      (args === '' ? '' : ` with ${args}`) +
      (prompt.description === '' ? '' : `: ${prompt.description}`) +
      (prompt.definitionOfDone === null ? '' : ` (done when: ${prompt.definitionOfDone})`),
    alternatives: [],
    confidence: null,
    rationale: `The plan's prompt as given by ${prompt.createdBy} at creation.`,
    parentSeq: null,
    phase: 'STRATEGIZE',
    actor: prompt.createdBy,
    context: {
      content: {
        action_name: prompt.actionName,
        projects: prompt.projects.map((p) => p.projectName),
        arguments: Object.fromEntries(prompt.argumentsOrder.map((k) => [k, prompt.arguments[k]])),
        description: prompt.description,
        definition_of_done: prompt.definitionOfDone,
      },
    },
  };
}

/**
 * Seed 004's `invariant_enforced` decision: the constraint as the chosen option, where it came from (scope and
 * source) first in the rationale, then `outcome` (how it was checked, or that it will be).
 */
export function invariantEnforcedDecision(
  invariant: { text: string; scope: string; sourceName: string | null },
  outcome: string,
): Omit<DecisionDraft, 'parentSeq' | 'phase' | 'actor'> {
  return {
    type: 'invariant_enforced',
    question: 'Which constraint must this plan respect?',
    chosenOption: invariant.text,
    alternatives: [],
    confidence: null,
    rationale:
      `${invariant.scope} invariant` +
      (invariant.sourceName === null ? '' : ` from ${invariant.sourceName}`) +
      outcome,
  };
}

/**
 * One `invariant_enforced` decision per effective invariant, under the root, at the start of Strategize, for plans
 * on the path from before invariant checks (the checkInvariants activity records them, with verdicts, since).
 */
export function invariantEnforcedDrafts(
  invariants: ReadonlyArray<{ text: string; scope: string; sourceName: string | null }>,
  rootSeq: number,
  actor: string,
): DecisionDraft[] {
  return invariants.map((invariant) => ({
    ...invariantEnforcedDecision(invariant, '; checked at every phase transition.'),
    parentSeq: rootSeq,
    phase: 'STRATEGIZE',
    actor,
  }));
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

/** What a correction needs to know about the decision it corrects. */
export interface CorrectedDecision {
  seq: number;
  type: DecisionType;
  phase: Phase;
  question: string;
  chosenOption: string;
  alternatives: string[];
  /** The original's parent's sequence number; null only for the root, which cannot be corrected. */
  parentSeq: number | null;
}

/** What a correction wrote: the person's intervention, the correcting decision, and the decision it replaced. */
export interface CorrectionIds {
  interventionDecisionId: string;
  correctionDecisionId: string;
  supersededDecisionId: string;
}

export interface CorrectionRequest {
  by: string;
  chosenOption: string;
  reason: string | null;
  /** The plan's phase when the person intervenes (the intervention's phase; the correction keeps the original's). */
  phase: Phase;
  interventionSeq: number;
  correctionSeq: number;
}

/**
 * Why a correction cannot be made, or undefined. Rules: the prompt_definition root is the plan's prompt and is
 * not corrected (a different prompt is a different plan); the new numbers are fresh, distinct, and come after the
 * original (the intervention first, then the correcting decision).
 */
export function checkCorrection(original: CorrectedDecision, request: CorrectionRequest): string | undefined {
  if (original.type === 'prompt_definition' || original.parentSeq === null) {
    return 'the prompt_definition root is the plan prompt and cannot be corrected';
  }
  if (request.by.trim() === '') return 'a correction needs the name of the person making it';
  if (request.chosenOption.trim() === '') return 'a correction needs the option chosen instead';
  for (const [what, seq] of [
    ['intervention', request.interventionSeq],
    ['correction', request.correctionSeq],
  ] as const) {
    if (!Number.isInteger(seq) || seq < 0) {
      return `the ${what} sequence number must be a non-negative integer, got ${seq}`;
    }
    if (seq <= original.seq) {
      return `the ${what} sequence number (${seq}) must come after the corrected decision's (${original.seq})`;
    }
  }
  if (request.interventionSeq >= request.correctionSeq) {
    return `the intervention (${request.interventionSeq}) must come before the correction (${request.correctionSeq})`;
  }
  return undefined;
}

/**
 * The two decisions a correction writes, both under the original's parent: the person's `user_intervention`, then
 * the correcting decision, which answers the original's question (same type and question) with the new option and
 * lists the replaced option first among the alternatives. Storage adds the correction metadata (is_correction,
 * corrects_decision_id, correction_reason) and sets the original's superseded_by.
 */
export function correctionDrafts(
  original: CorrectedDecision,
  request: CorrectionRequest,
): { intervention: DecisionDraft; correction: DecisionDraft } {
  const parentSeq = original.parentSeq;
  if (parentSeq === null) throw new Error('the root cannot be corrected');
  const alternatives = [original.chosenOption, ...original.alternatives].filter(
    (option, i, all) => option !== request.chosenOption && all.indexOf(option) === i,
  );
  return {
    intervention: {
      type: 'user_intervention',
      question: `Correct decision ${original.seq} (${original.type}): ${original.question}`,
      chosenOption: `Replace "${original.chosenOption}" with "${request.chosenOption}"`,
      alternatives: [`Keep "${original.chosenOption}"`],
      confidence: null,
      rationale: request.reason ?? `${request.by} gave no reason.`,
      parentSeq,
      phase: request.phase,
      actor: request.by,
    },
    correction: {
      type: original.type,
      question: original.question,
      chosenOption: request.chosenOption,
      alternatives,
      confidence: null,
      rationale: request.reason ?? `Corrected by ${request.by}.`,
      parentSeq,
      phase: original.phase,
      actor: request.by,
    },
  };
}

/** Every field of a recorded decision, in seed 004's groups: what storage returns and the CLI shows. */
export interface DecisionFields {
  // Identity
  decisionId: string;
  planId: string;
  /** Monotonic within the plan, 0-indexed, never reused. */
  seq: number;
  parentDecisionId: string | null;
  // Classification
  type: DecisionType;
  phase: Phase;
  // Content
  question: string;
  chosenOption: string;
  alternatives: string[];
  confidence: number | null;
  // Context snapshot
  /** SHA-256 (lowercase hex) of the context's canonical JSON; null when no context was captured. */
  hotContextHash: string | null;
  /** `sha256:<hotContextHash>`; DecisionStore.getContext(ref) returns the stored context. */
  hotContextRef: string | null;
  relevantResources: ResourceRef[];
  actorStateRef: string | null;
  // Rationale
  rationale: string;
  actorReasoning: string | null;
  // Downstream impact
  /** The decisions recorded with this one as their parent, by sequence number. */
  downstreamDecisionIds: string[];
  downstreamPlanIds: string[];
  artifactsProduced: ArtifactRef[];
  // Correction metadata
  isCorrection: boolean;
  correctsDecisionId: string | null;
  correctionReason: string | null;
  supersededBy: string | null;
  // Model (seed 001's PlanBuild): null for decisions no model made
  modelName: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  // Bookkeeping
  actor: string;
  createdAt: string;
}
