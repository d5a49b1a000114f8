import { ApplicationFailure } from '@temporalio/activity';
import { describeZodError, planSpecSchema } from '../domain/schemas';
import { ERROR_TYPES } from '../workflows/definitions';
import { DecisionRuleError, PlanNotFoundError, isTransientStorageError } from '../storage/errors';
import type { PlanStore } from '../storage/types';
import type {
  RecordPlanCreatedInput,
  RecordPlanStateInput,
  RecordPlanStateResult,
  RunPhaseInput,
  RunPhaseResult,
} from './contracts';
import { runBuiltinPhase } from './phases';

export interface ActivityDependencies {
  plans: PlanStore;
}

/**
 * Maps storage failures onto the engine's error types: rule violations and unknown plans cannot be fixed by a
 * retry; a busy or locked database can.
 */
function toFailure(err: unknown): unknown {
  if (err instanceof DecisionRuleError) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.DecisionRuleViolated);
  }
  if (err instanceof PlanNotFoundError) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.PlanNotFound);
  }
  if (isTransientStorageError(err)) {
    return ApplicationFailure.retryable(
      err instanceof Error ? err.message : String(err),
      ERROR_TYPES.StorageUnavailable,
    );
  }
  return err;
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toFailure(err);
  }
}

export function createActivities({ plans }: ActivityDependencies) {
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
      await guarded(() => plans.recordPlanCreated({ ...input, spec: parsed.data }));
    },

    async recordPlanState(input: RecordPlanStateInput): Promise<RecordPlanStateResult> {
      return guarded(() => plans.recordPlanState(input));
    },

    async runPhase(input: RunPhaseInput): Promise<RunPhaseResult> {
      return runBuiltinPhase(input);
    },
  };
}

export type PlanActivities = ReturnType<typeof createActivities>;
