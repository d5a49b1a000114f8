/**
 * isTransientStorageError decides whether Temporal retries an activity, so each shape of error the stack can
 * produce is pinned here. The real SQLITE_BUSY path is covered against a database in plans.test.ts.
 */
import {
  DecisionRuleError,
  isTransientStorageError,
  PlanConflictError,
  PlanNotFoundError,
} from '../../storage/errors';

function withCode(message: string, code: string, meta?: unknown): Error {
  return Object.assign(new Error(message), { code, meta });
}

describe('isTransientStorageError', () => {
  it.each([
    ['timed out (SQLITE_BUSY through the adapter)', withCode('Operation has timed out', 'P1008')],
    ['connection closed', withCode('Server has closed the connection.', 'P1017')],
    ['write conflict', withCode('Transaction failed due to a write conflict or a deadlock', 'P2034')],
    ['expired transaction', withCode('Transaction already closed: expired', 'P2028')],
    [
      'raw query with SQLITE_BUSY in meta',
      withCode('Raw query failed.', 'P2010', {
        driverAdapterError: { cause: { originalCode: 'SQLITE_BUSY', kind: 'SocketTimeout' } },
      }),
    ],
    ['better-sqlite3 busy snapshot', withCode('database is locked', 'SQLITE_BUSY_SNAPSHOT')],
    ['better-sqlite3 locked table', withCode('database table is locked', 'SQLITE_LOCKED_SHAREDCACHE')],
    ['closed database, message only', new TypeError('The database connection is not open')],
    [
      'wrapped in a cause',
      new Error('activity failed', { cause: withCode('database is locked', 'SQLITE_BUSY') }),
    ],
  ])('is true for %s', (_label, err) => {
    expect(isTransientStorageError(err)).toBe(true);
  });

  it.each([
    ['a decision rule violation', new DecisionRuleError('a second root', 'P', 3)],
    ['an unknown plan', new PlanNotFoundError('P')],
    ['a conflicting plan', new PlanConflictError('P', 'different name')],
    ['a unique constraint', withCode('Unique constraint failed', 'P2002')],
    ['a foreign key', withCode('Foreign key constraint violated', 'P2003')],
    ['a missing table (not migrated)', withCode('The table `main.plans` does not exist', 'P2021')],
    ['a plain error', new Error('boom')],
    ['a non-error', 'SQLITE_BUSY as a string is not an error object'],
    ['null', null],
  ])('is false for %s', (_label, err) => {
    expect(isTransientStorageError(err)).toBe(false);
  });

  it('names its errors so they survive serialisation by name', () => {
    expect(new DecisionRuleError('x', 'P').name).toBe('DecisionRuleError');
    expect(new PlanNotFoundError('P').name).toBe('PlanNotFoundError');
    expect(new PlanConflictError('P', 'x').name).toBe('PlanConflictError');
  });
});
