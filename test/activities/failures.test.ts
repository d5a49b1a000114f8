/**
 * The one mapping from what activities throw to the failures Temporal sees. Whether a failure is retryable decides
 * whether a plan stops at once with a reason or spends its whole retry policy (or, before PlanConflict was mapped,
 * retried forever) on an error that cannot go away, so every class the engine throws is pinned here.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ModelHttpError, ModelOutputError } from '../../actors/model';
import { UnknownActorError } from '../../actors/types';
import { CancelledFailure } from '@temporalio/common';
import { PHASE_ATTEMPTS, giveUpAfterAttempts, guardActivities, toFailure } from '../../activities/failures';
import { ERROR_TYPES, NON_RETRYABLE_ERROR_TYPES } from '../../domain/errors';
import type { ErrorType } from '../../domain/errors';
import {
  DecisionNotFoundError,
  DecisionRuleError,
  DecisionSupersededError,
  PlanConflictError,
  PlanNotFoundError,
} from '../../storage/errors';

/** What toFailure must make of an error: a failure of this type and retryability, or the error itself. */
type Expected = { type: ErrorType; nonRetryable: boolean } | 'unchanged';

const sqliteBusy = (): Error => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

const TABLE: Array<[string, () => unknown, Expected]> = [
  [
    'DecisionRuleError',
    () => new DecisionRuleError('a prompt_definition must be the root', 'plan-1', 3),
    { type: ERROR_TYPES.DecisionRuleViolated, nonRetryable: true },
  ],
  [
    'DecisionSupersededError',
    () => new DecisionSupersededError('plan-1', 'dec-2', 'dec-2', 'dec-5'),
    { type: ERROR_TYPES.DecisionRuleViolated, nonRetryable: true },
  ],
  [
    'DecisionNotFoundError',
    () => new DecisionNotFoundError('dec-9', 'plan-1'),
    { type: ERROR_TYPES.DecisionNotFound, nonRetryable: true },
  ],
  [
    'PlanNotFoundError',
    () => new PlanNotFoundError('plan-1'),
    { type: ERROR_TYPES.PlanNotFound, nonRetryable: true },
  ],
  [
    'PlanConflictError',
    () => new PlanConflictError('plan-1', 'event 4 is stored with other content'),
    { type: ERROR_TYPES.PlanConflict, nonRetryable: true },
  ],
  [
    'UnknownActorError',
    () => new UnknownActorError('this worker has no actor "model"'),
    { type: ERROR_TYPES.ActorUnavailable, nonRetryable: true },
  ],
  [
    'ModelOutputError',
    () => new ModelOutputError('the model answered out of shape 3 times', [], '{"steps": 1}'),
    { type: ERROR_TYPES.ActorFailed, nonRetryable: true },
  ],
  [
    'ModelHttpError 400',
    () => new ModelHttpError('the endpoint answered 400 Bad Request', 400, '{"error":"bad schema"}'),
    { type: ERROR_TYPES.ActorFailed, nonRetryable: true },
  ],
  // An outage and a rate limit may be over by the next attempt: left to the activity's retry policy.
  ['ModelHttpError 503', () => new ModelHttpError('the endpoint answered 503', 503, ''), 'unchanged'],
  ['ModelHttpError 429', () => new ModelHttpError('the endpoint answered 429', 429, ''), 'unchanged'],
  ['a busy SQLite database', sqliteBusy, { type: ERROR_TYPES.StorageUnavailable, nonRetryable: false }],
  [
    'PostgreSQL going down (57P01)',
    () =>
      Object.assign(new Error('terminating connection due to administrator command'), {
        code: 'P2010',
        meta: { driverAdapterError: { cause: { originalCode: '57P01', kind: 'postgres' } } },
      }),
    { type: ERROR_TYPES.StorageUnavailable, nonRetryable: false },
  ],
  [
    'PostgreSQL not reachable (P1001)',
    () => Object.assign(new Error("Can't reach database server"), { code: 'P1001' }),
    { type: ERROR_TYPES.StorageUnavailable, nonRetryable: false },
  ],
  [
    'a PostgreSQL unique violation (not transient)',
    () =>
      Object.assign(new Error('Unique constraint failed'), {
        code: 'P2002',
        meta: { driverAdapterError: { cause: { originalCode: '23505', kind: 'UniqueConstraintViolation' } } },
      }),
    'unchanged',
  ],
  [
    'an ApplicationFailure',
    () => ApplicationFailure.nonRetryable('already classified', ERROR_TYPES.ChangesetRefused),
    'unchanged',
  ],
  ['a plain Error', () => new Error('something else went wrong'), 'unchanged'],
];

describe('toFailure', () => {
  it.each(TABLE)('maps %s', (_name, make, expected) => {
    const err = make();
    const failure = toFailure(err);
    if (expected === 'unchanged') {
      expect(failure).toBe(err);
      return;
    }
    expect(failure).toBeInstanceOf(ApplicationFailure);
    const { type, nonRetryable, message } = failure as ApplicationFailure;
    expect({ type, nonRetryable }).toEqual(expected);
    // The failure keeps the error's own words: they are what the plan records and a person reads.
    expect(message).toBe((err as Error).message);
  });

  it('gives only non-retryable types the activity retry policies also stop at', () => {
    const nonRetryable = TABLE.flatMap(([, , expected]) =>
      expected !== 'unchanged' && expected.nonRetryable ? [expected.type] : [],
    );
    expect(nonRetryable.length).toBeGreaterThan(0);
    for (const type of nonRetryable) expect(NON_RETRYABLE_ERROR_TYPES).toContain(type);
  });
});

describe('NON_RETRYABLE_ERROR_TYPES', () => {
  it('names only failure types the engine has', () => {
    const known: string[] = Object.values(ERROR_TYPES);
    expect(NON_RETRYABLE_ERROR_TYPES.length).toBeGreaterThan(0);
    for (const type of NON_RETRYABLE_ERROR_TYPES) expect(known).toContain(type);
  });
});

describe('guardActivities', () => {
  const plain = new Error('not classified');
  const guarded = guardActivities({
    double: async (n: number) => n * 2,
    conflict: async (planId: string): Promise<never> => {
      throw new PlanConflictError(planId, 'decision 2 is stored with other content');
    },
    busy: async (_: void): Promise<never> => {
      throw sqliteBusy();
    },
    plain: async (_: void): Promise<never> => {
      throw plain;
    },
  });

  it('wraps every activity of the object, and only those', () => {
    expect(Object.keys(guarded).sort()).toEqual(['busy', 'conflict', 'double', 'plain']);
  });

  it('resolves with what a resolving activity resolves with, given its input', async () => {
    await expect(guarded.double(21)).resolves.toBe(42);
  });

  it('rejects with the mapped failure when an activity throws', async () => {
    const conflict = await guarded.conflict('plan-7').catch((err: unknown) => err);
    expect(conflict).toBeInstanceOf(ApplicationFailure);
    expect(conflict).toMatchObject({
      type: ERROR_TYPES.PlanConflict,
      nonRetryable: true,
      message: 'plan plan-7: decision 2 is stored with other content',
    });

    const busy = await guarded.busy().catch((err: unknown) => err);
    expect(busy).toBeInstanceOf(ApplicationFailure);
    expect(busy).toMatchObject({ type: ERROR_TYPES.StorageUnavailable, nonRetryable: false });

    await expect(guarded.plain()).rejects.toBe(plain);
  });
});

describe('giveUpAfterAttempts (phase activities, whose retry policy has no limit)', () => {
  const storage = () => toFailure(sqliteBusy()) as ApplicationFailure;

  it('lets every failure retry before the last attempt', () => {
    const plain = new Error('flaky');
    for (let attempt = 1; attempt < PHASE_ATTEMPTS; attempt++) {
      expect(giveUpAfterAttempts(plain, attempt)).toBe(plain);
    }
  });

  it('gives up on anything but an unreachable database at the last attempt, keeping its type and message', () => {
    const plain = giveUpAfterAttempts(new Error('flaky'), PHASE_ATTEMPTS) as ApplicationFailure;
    expect(plain).toBeInstanceOf(ApplicationFailure);
    expect(plain).toMatchObject({ nonRetryable: true, type: 'Error' });
    expect(plain.message).toBe(`flaky (given up after ${PHASE_ATTEMPTS} attempts)`);
    const retryable = ApplicationFailure.retryable('model said 503', ERROR_TYPES.ActorFailed);
    expect(giveUpAfterAttempts(retryable, PHASE_ATTEMPTS + 4)).toMatchObject({
      nonRetryable: true,
      type: ERROR_TYPES.ActorFailed,
      message: 'model said 503',
    });
  });

  it('keeps retrying an unreachable database, however many attempts it took', () => {
    const failure = storage();
    expect(giveUpAfterAttempts(failure, 500)).toBe(failure);
    expect(failure.nonRetryable).toBe(false);
  });

  it('passes a cancellation and an already non-retryable failure through unchanged', () => {
    const cancelled = new CancelledFailure('the plan was cancelled');
    expect(giveUpAfterAttempts(cancelled, 10)).toBe(cancelled);
    const refused = ApplicationFailure.nonRetryable('refused', ERROR_TYPES.ChangesetRefused);
    expect(giveUpAfterAttempts(refused, 10)).toBe(refused);
  });
});
