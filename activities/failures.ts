/**
 * One mapping from what activities throw to the engine's failure types, so every activity fails the same way:
 * what a retry cannot fix (rule violations, unknown plans, a conflicting write, a missing or misbehaving actor) is
 * non-retryable; a busy or locked database is retryable; anything else is left to the activity's retry policy.
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { ActorFailedError, UnknownActorError } from '../actors/types';
import { ERROR_TYPES } from '../domain/errors';
import type { ErrorType } from '../domain/errors';
import {
  DecisionNotFoundError,
  DecisionRuleError,
  PlanConflictError,
  PlanNotFoundError,
  isTransientStorageError,
} from '../storage/errors';

/** Errors whose class alone says a retry cannot help, with the failure type each becomes. */
const NON_RETRYABLE: ReadonlyArray<readonly [new (...args: never[]) => Error, ErrorType]> = [
  [DecisionRuleError, ERROR_TYPES.DecisionRuleViolated],
  [DecisionNotFoundError, ERROR_TYPES.DecisionNotFound],
  [PlanNotFoundError, ERROR_TYPES.PlanNotFound],
  [PlanConflictError, ERROR_TYPES.PlanConflict],
  [UnknownActorError, ERROR_TYPES.ActorUnavailable],
];

export function toFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  for (const [type, failureType] of NON_RETRYABLE) {
    if (err instanceof type) return ApplicationFailure.nonRetryable(err.message, failureType);
  }
  // A model that keeps answering out of shape, or refuses the request (4xx), will not do better on a retry.
  if (err instanceof ActorFailedError && !err.retryable) {
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

/**
 * Wraps every activity of an object in the one mapping, so no activity can forget it: each throws only what
 * toFailure makes of its errors.
 */
export function guardActivities<T extends Record<string, (input: never) => Promise<unknown>>>(
  activities: T,
): T {
  const guarded: Record<string, (input: never) => Promise<unknown>> = {};
  for (const [name, activity] of Object.entries(activities)) {
    guarded[name] = async (input) => {
      try {
        return await activity(input);
      } catch (err) {
        throw toFailure(err);
      }
    };
  }
  return guarded as T;
}

/**
 * How many times a phase's work or an invariant check is tried when it fails with anything but an unreachable
 * database. Their retry policy (workflows/plan.ts) sets no limit, so that a database down for minutes (a restart, a
 * failover) only delays the plans; every other failure is given up after this many attempts, as the policy's own
 * limit did before, and the plan stops at ERRORED for a person to look at.
 */
export const PHASE_ATTEMPTS = 3;

/** The activity with its failures mapped by toFailure, and given up as PHASE_ATTEMPTS says. */
export function withAttemptLimit<I, R>(activity: (input: I) => Promise<R>): (input: I) => Promise<R> {
  return async (input) => {
    try {
      return await activity(input);
    } catch (err) {
      throw giveUpAfterAttempts(toFailure(err), Context.current().info.attempt);
    }
  };
}

export function giveUpAfterAttempts(failure: unknown, attempt: number): unknown {
  if (failure instanceof CancelledFailure || attempt < PHASE_ATTEMPTS) return failure;
  if (failure instanceof ApplicationFailure) {
    if (failure.nonRetryable || failure.type === ERROR_TYPES.StorageUnavailable) return failure;
    return ApplicationFailure.create({
      message: failure.message,
      type: failure.type ?? undefined,
      details: failure.details ?? undefined,
      nonRetryable: true,
      cause: failure,
    });
  }
  const error = failure instanceof Error ? failure : new Error(String(failure));
  return ApplicationFailure.create({
    message: `${error.message} (given up after ${attempt} attempts)`,
    type: error.name,
    nonRetryable: true,
    cause: error,
  });
}
