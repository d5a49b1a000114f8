/**
 * One mapping from what activities throw to the engine's failure types, so every activity fails the same way:
 * what a retry cannot fix (rule violations, unknown plans, a missing or misbehaving actor) is non-retryable; a busy
 * or locked database is retryable; anything else is left to the activity's retry policy.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ModelHttpError, ModelOutputError } from '../actors/model';
import { UnknownActorError } from '../actors/types';
import {
  DecisionNotFoundError,
  DecisionRuleError,
  PlanNotFoundError,
  isTransientStorageError,
} from '../storage/errors';
import { ERROR_TYPES } from '../workflows/definitions';

export function toFailure(err: unknown): unknown {
  if (err instanceof DecisionRuleError) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.DecisionRuleViolated);
  }
  if (err instanceof DecisionNotFoundError) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.DecisionNotFound);
  }
  if (err instanceof PlanNotFoundError) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.PlanNotFound);
  }
  if (err instanceof UnknownActorError) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.ActorUnavailable);
  }
  // A model that keeps answering out of shape, or refuses the request (4xx), will not do better on a retry.
  if (
    err instanceof ModelOutputError ||
    (err instanceof ModelHttpError && err.status < 500 && err.status !== 429)
  ) {
    return ApplicationFailure.nonRetryable(err.message, ERROR_TYPES.ActorFailed);
  }
  if (isTransientStorageError(err)) {
    return ApplicationFailure.retryable(
      err instanceof Error ? err.message : String(err),
      ERROR_TYPES.StorageUnavailable,
    );
  }
  return err;
}

export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toFailure(err);
  }
}
