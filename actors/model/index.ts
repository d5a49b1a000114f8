/**
 * The model-backed actor: strategy, estimation and invariant judgement by a chat model behind any
 * OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, llama.cpp, a gateway). Execution stays
 * with the built-in actor: the model proposes steps, the engine runs them in the sandbox.
 *
 * Every answer is asked for as JSON against a schema (`response_format: json_schema`, strict) and then validated
 * again with zod, because servers differ in how faithfully they constrain decoding. Output that fails validation
 * is sent back with the problems listed, so a model can correct itself before the phase fails.
 */
import { describeStep, stepFromFile } from '../../domain/steps';
import { isSubplanStep, spawnDecision } from '../../domain/subplans';
import type {
  ActorSet,
  Estimate,
  EstimationActor,
  InvariantActor,
  InvariantVerdict,
  StrategyActor,
  StrategyProposal,
} from '../types';
import { ChatClient } from './chat-client';
import type { ModelConfig } from './config';
import {
  CONTEXT_BUDGET_CHARS,
  ESTIMATE_SYSTEM,
  REVISE_SYSTEM,
  describeCorrection,
  INVARIANT_SYSTEM,
  STRATEGY_SYSTEM,
  describeChanges,
  describePlan,
  describeSteps,
  renderContextFiles,
} from './prompts';
import { estimateReplySchema, strategyReplySchema, verdictReplySchema, wireFromStep } from './replies';
import { askStructured } from './structured';

export { ChatClient, ModelError, ModelHttpError, ModelOutputError } from './chat-client';
export type { ChatMessage, ChatReply, ChatRequest, JsonSchema } from './chat-client';
export { CONTEXT_BUDGET_CHARS, renderContextFiles } from './prompts';
export { askStructured, strictJsonSchema } from './structured';
export type { StructuredAnswer, StructuredQuestion } from './structured';

/** The name the worker registers these actors under; plans select them with it. */
export const MODEL_ACTOR_NAME = 'model';

export interface ModelActorOptions {
  /** For tests and for sharing one client between actor sets. */
  client?: ChatClient;
  contextBudgetChars?: number;
}

export function createModelActors(config: ModelConfig, options: ModelActorOptions = {}): ActorSet {
  const client = options.client ?? new ChatClient(config);
  const budget = options.contextBudgetChars ?? CONTEXT_BUDGET_CHARS;

  const strategy: StrategyActor = {
    name: MODEL_ACTOR_NAME,
    async strategize(call): Promise<StrategyProposal> {
      const { plan, action } = call;
      const suggestions =
        action.steps.length === 0
          ? 'The action suggests no steps.'
          : `The action suggests these steps:\n${JSON.stringify(action.steps.flatMap(wireFromStep), null, 2)}`;
      const user = [
        describePlan(plan),
        suggestions,
        `The action's validation command: ${action.validation ?? '(none)'}`,
        renderContextFiles(call.contextFiles, budget),
      ].join('\n\n');
      const answer = await askStructured(client, {
        system: STRATEGY_SYSTEM,
        user,
        schemaName: 'strategy',
        schema: strategyReplySchema(plan),
        signal: call.signal,
        progress: (message) => call.progress(message),
      });
      const reply = answer.value;
      const steps = reply.steps.map(stepFromFile);
      const validation = validationOf(reply);
      const approach = call.log.record({
        type: 'strategy_choice',
        question: `How should ${plan.actionName} be carried out?`,
        chosenOption: reply.summary,
        alternatives: reply.alternatives,
        confidence: reply.confidence,
        rationale: reply.rationale,
        actorReasoning: answer.reasoning,
        model: answer.usage,
        context: {
          content: { model: config.model, system: STRATEGY_SYSTEM, user, attempts: answer.attempts },
        },
      });
      const stepDecisions: number[] = [];
      for (const [index, step] of steps.entries()) {
        if (isSubplanStep(step)) {
          stepDecisions.push(
            call.log.record({
              ...spawnDecision(plan.planId, index, step, steps.length),
              confidence: null,
              rationale: step.description ?? `Part of the chosen approach: ${reply.summary}`,
              parentSeq: approach,
              model: { modelName: answer.usage.modelName, promptTokens: null, completionTokens: null },
            }),
          );
          continue;
        }
        const seq = call.log.record({
          type: 'strategy_choice',
          question: `Step ${index + 1} of ${steps.length}: what does it do?`,
          chosenOption: describeStep(step),
          alternatives: [],
          // The model states one confidence, for the approach as a whole.
          confidence: null,
          rationale: step.description ?? `Part of the chosen approach: ${reply.summary}`,
          parentSeq: approach,
          // The same reply as the approach, whose decision counts its tokens.
          model: { modelName: answer.usage.modelName, promptTokens: null, completionTokens: null },
        });
        stepDecisions.push(seq);
      }
      return { steps, validation, summary: reply.summary, stepDecisions };
    },

    async revise(call): Promise<StrategyProposal> {
      const { plan, action, revision } = call;
      const kept = revision.keptSteps;
      const user = [
        describePlan(plan),
        kept.length === 0
          ? 'No steps are fixed: the remaining steps are the whole strategy.'
          : `These steps are fixed and run first, in this order:\n${JSON.stringify(kept.flatMap(wireFromStep), null, 2)}`,
        describeCorrection(revision),
        `The action's validation command: ${action.validation ?? '(none)'}`,
        renderContextFiles(call.contextFiles, budget),
      ].join('\n\n');
      const answer = await askStructured(client, {
        system: `${STRATEGY_SYSTEM}\n\n${REVISE_SYSTEM}`,
        user,
        schemaName: 'strategy',
        schema: strategyReplySchema(plan),
        signal: call.signal,
        progress: (message) => call.progress(message),
      });
      const reply = answer.value;
      const steps = reply.steps.map(stepFromFile);
      const total = kept.length + steps.length;
      const stepDecisions: number[] = [];
      for (const [index, step] of steps.entries()) {
        const position = kept.length + index;
        // The first decision carries the reply (its reasoning, prompt and tokens); the others name its model only.
        const first = index === 0;
        const seq = call.log.record({
          ...(isSubplanStep(step)
            ? spawnDecision(plan.planId, position, step, total)
            : {
                type: 'strategy_choice' as const,
                question: `Step ${position + 1} of ${total}: what does it do?`,
                chosenOption: describeStep(step),
                alternatives: [],
              }),
          confidence: reply.confidence,
          rationale:
            step.description ??
            `Re-asked after the correction of step ${revision.correctedStep}: ${reply.summary}`,
          actorReasoning: first ? answer.reasoning : null,
          model: first
            ? answer.usage
            : { modelName: answer.usage.modelName, promptTokens: null, completionTokens: null },
          context: first
            ? { content: { model: config.model, system: REVISE_SYSTEM, user, attempts: answer.attempts } }
            : undefined,
        });
        stepDecisions.push(seq);
      }
      return { steps, validation: validationOf(reply), summary: reply.summary, stepDecisions };
    },
  };

  const estimation: EstimationActor = {
    name: MODEL_ACTOR_NAME,
    async estimate(call): Promise<Estimate> {
      const user = [
        describePlan(call.plan),
        `Strategy: ${call.strategy.summary}`,
        describeSteps(call.strategy.steps, call.strategy.validation),
      ].join('\n\n');
      const answer = await askStructured(client, {
        system: ESTIMATE_SYSTEM,
        user,
        schemaName: 'estimate',
        schema: estimateReplySchema,
        signal: call.signal,
        progress: (message) => call.progress(message),
      });
      return {
        summary: answer.value.summary,
        filesLikelyChanged: answer.value.files_likely_changed,
        risk: answer.value.risk,
      };
    },
  };

  const invariant: InvariantActor = {
    name: MODEL_ACTOR_NAME,
    async check(call): Promise<InvariantVerdict[]> {
      const verdicts: InvariantVerdict[] = [];
      for (const [index, item] of call.invariants.entries()) {
        call.progress(`checking invariant ${index + 1} of ${call.invariants.length} with ${config.model}`);
        const user = [
          `Invariant (${item.scope}${item.sourceName === null ? '' : `, from ${item.sourceName}`}): ${item.text}` +
            (item.description === undefined ? '' : `\nWhat it means: ${item.description}`),
          `Phase: ${call.phase}`,
          describePlan({ ...call.plan, invariants: [] }),
          describeChanges(call.changes),
        ].join('\n\n');
        const answer = await askStructured(client, {
          system: INVARIANT_SYSTEM,
          user,
          schemaName: 'invariant_verdict',
          schema: verdictReplySchema,
          signal: call.signal,
          progress: (message) => call.progress(message),
        });
        verdicts.push({
          invariant: item,
          status: answer.value.status,
          evidence: answer.value.evidence,
          model: answer.usage,
        });
      }
      return verdicts;
    },
  };

  return { strategy, estimation, invariant };
}

/** A reply's validation command; blank means none. */
function validationOf(reply: { validation: string | null }): string | null {
  return reply.validation === null || reply.validation.trim() === '' ? null : reply.validation;
}
