/**
 * The activities that write the plan's record: its creation, every state change, and corrections. Each write is
 * keyed by sequence numbers the workflow allocated, so a retried write finds its own earlier row and changes nothing.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ERROR_TYPES } from '../domain/errors';
import { describeZodError, planSpecSchema } from '../domain/schemas';
import { parseStepOption } from '../domain/step-option';
import { DecisionNotFoundError, DecisionRuleError, PlanNotFoundError } from '../storage/errors';
import type { DecisionStore, PlanStore } from '../storage/types';
import type {
  CheckCorrectionInput,
  CheckCorrectionResult,
  CorrectDecisionActivityInput,
  CorrectDecisionActivityResult,
  RecordPlanCreatedInput,
  RecordPlanStateInput,
  RecordPlanStateResult,
  RecordRefusalInput,
} from './contracts';

export function createRecordingActivities(deps: { plans: PlanStore; decisions: DecisionStore }) {
  const { plans, decisions } = deps;
  return {
    async recordPlanCreated(input: RecordPlanCreatedInput): Promise<void> {
      // A workflow started by another client (say `temporal workflow start`) gets the same validation as ours.
      const parsed = planSpecSchema.safeParse(input.spec);
      if (!parsed.success) {
        throw ApplicationFailure.nonRetryable(
          `invalid plan: ${describeZodError(parsed.error)}`,
          ERROR_TYPES.InvalidInput,
        );
      }
      await plans.recordPlanCreated({ ...input, spec: parsed.data });
    },

    async recordPlanState(input: RecordPlanStateInput): Promise<RecordPlanStateResult> {
      return plans.recordPlanState(input);
    },

    /** A command the plan refused, as its COMMAND_REFUSED event (ADR 0021); a retry finds its row. */
    async recordRefusal(input: RecordRefusalInput): Promise<void> {
      await plans.recordRefusal(input);
    },

    /** Read-only: refuses before the workflow spends sequence numbers on a correction that cannot be made. */
    async checkCorrection(input: CheckCorrectionInput): Promise<CheckCorrectionResult> {
      const original = await decisions.getDecision(input.decisionId);
      if (original.planId !== input.planId) throw new DecisionNotFoundError(input.decisionId, input.planId);
      if (original.type === 'prompt_definition') {
        throw new DecisionRuleError(
          'the prompt_definition root is the plan prompt and cannot be corrected',
          input.planId,
        );
      }
      if (original.supersededBy !== null) {
        throw new DecisionRuleError(
          `decision ${original.decisionId} was already corrected by ${original.supersededBy}; correct that one`,
          input.planId,
        );
      }
      if (input.stepOption === undefined) return { correctedSeq: original.seq };
      const spec = await plans.getSpec(input.planId);
      if (spec === null) throw new PlanNotFoundError(input.planId);
      const parsed = parseStepOption(input.stepOption, spec);
      if (!parsed.ok) {
        throw ApplicationFailure.nonRetryable(
          `decision ${original.decisionId} is a step of the strategy Execute will run: ${parsed.reason}`,
          ERROR_TYPES.InvalidInput,
        );
      }
      return { correctedSeq: original.seq, step: parsed.option.skip ? null : parsed.option.step };
    },

    async correctDecision(input: CorrectDecisionActivityInput): Promise<CorrectDecisionActivityResult> {
      const result = await decisions.correct({
        planId: input.planId,
        decisionId: input.decisionId,
        interventionSeq: input.interventionSeq,
        correctionSeq: input.correctionSeq,
        event: { seq: input.eventSeq, type: 'DECISION_CORRECTED', message: input.reason },
        by: input.by,
        chosenOption: input.chosenOption,
        reason: input.reason,
        at: input.at,
      });
      return {
        interventionDecisionId: result.intervention.decisionId,
        correctionDecisionId: result.correction.decisionId,
        supersededDecisionId: result.original.decisionId,
      };
    },
  };
}
