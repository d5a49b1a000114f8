/**
 * The errors storage throws on purpose, and the one question the activities ask about every other error:
 * will the same call succeed if Temporal retries it? A rule violation never will (retrying would only repeat
 * the refusal), a busy or closed database usually will.
 */

/** A write would break a decision-tree rule of seed 004; the whole write was rolled back. */
export class DecisionRuleError extends Error {
  override readonly name = 'DecisionRuleError';
  constructor(
    message: string,
    readonly planId: string,
    readonly seq: number | null = null,
  ) {
    super(message);
  }
}

export class PlanNotFoundError extends Error {
  override readonly name = 'PlanNotFoundError';
  /** `role` names the missing plan's part in the write, e.g. `parent plan` when a child's parent is missing. */
  constructor(
    readonly planId: string,
    role = 'plan',
  ) {
    super(`${role} ${planId} not found`);
  }
}

/**
 * A write reuses a key (plan id, event or decision sequence number) that is already stored with other content,
 * e.g. a different plan under the same id. Idempotency covers the same input only; anything else is a bug
 * upstream or an id clash, and retrying cannot fix it.
 */
export class PlanConflictError extends Error {
  override readonly name = 'PlanConflictError';
  constructor(
    readonly planId: string,
    detail: string,
  ) {
    super(`plan ${planId}: ${detail}`);
  }
}

/**
 * Prisma codes that mean "the database did not answer this time": P1001 not reachable, P1008 timed out (the
 * better-sqlite3 adapter reports SQLITE_BUSY as this), P1017 connection closed, P1018 transaction already
 * closed, P2024 no connection from the pool in time, P2028 interactive transaction expired or could not start
 * in time, P2034 write conflict or deadlock ("please retry").
 */
const TRANSIENT_PRISMA_CODES = new Set(['P1001', 'P1008', 'P1017', 'P1018', 'P2024', 'P2028', 'P2034']);

/** SQLite result codes, including extended ones such as SQLITE_BUSY_SNAPSHOT and SQLITE_LOCKED_SHAREDCACHE. */
const TRANSIENT_SQLITE_CODE = /^SQLITE_(BUSY|LOCKED)(_|$)/;

/**
 * Messages for the same conditions when they arrive without a code: better-sqlite3 errors the adapter does not
 * map are passed through as they are, and a closed client reports itself in words only.
 */
const TRANSIENT_MESSAGE =
  /database is locked|database table is locked|SQLITE_BUSY|SQLITE_LOCKED|database connection is not open|connection (is |was )?closed|Transaction already closed|expired transaction|Unable to start a transaction/i;

const NEVER_TRANSIENT: readonly (new (...args: never[]) => Error)[] = [
  DecisionRuleError,
  PlanNotFoundError,
  PlanConflictError,
];

/** True when retrying the same storage call later may succeed. Walks `cause` chains and Prisma's `meta`. */
export function isTransientStorageError(err: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    if (NEVER_TRANSIENT.some((type) => current instanceof type)) {
      return false;
    }
    const { code, message, meta, cause } = current as {
      code?: unknown;
      message?: unknown;
      meta?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string' && (TRANSIENT_PRISMA_CODES.has(code) || TRANSIENT_SQLITE_CODE.test(code))) {
      return true;
    }
    if (typeof message === 'string' && TRANSIENT_MESSAGE.test(message)) {
      return true;
    }
    if (driverAdapterOriginalCode(meta)?.match(TRANSIENT_SQLITE_CODE)) {
      return true;
    }
    current = cause;
  }
  return false;
}

/** Prisma puts the driver's own error code at meta.driverAdapterError.cause.originalCode. */
function driverAdapterOriginalCode(meta: unknown): string | undefined {
  const cause = (meta as { driverAdapterError?: { cause?: { originalCode?: unknown } } } | undefined)
    ?.driverAdapterError?.cause;
  return typeof cause?.originalCode === 'string' ? cause.originalCode : undefined;
}
