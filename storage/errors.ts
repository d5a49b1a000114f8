/**
 * The errors storage throws on purpose, and the one question the activities ask about every other error:
 * will the same call succeed if Temporal retries it? A rule violation never will (retrying would only repeat
 * the refusal), a busy or closed database usually will.
 */
import { redactDatabaseUrl } from './database-url';

/** A write would break a decision-tree rule of seed 004; the whole write was rolled back. */
export class DecisionRuleError extends Error {
  override readonly name: string = 'DecisionRuleError';
  constructor(
    message: string,
    readonly planId: string,
    readonly seq: number | null = null,
  ) {
    super(message);
  }
}

/**
 * A correction names a decision that is no longer part of the current tree: it was replaced by a correction
 * (`supersededDecisionId` is the decision itself), or one of the decisions above it was. A DecisionRuleError, so
 * everything that handles rule violations handles this one too.
 */
export class DecisionSupersededError extends DecisionRuleError {
  override readonly name: string = 'DecisionSupersededError';
  constructor(
    planId: string,
    readonly decisionId: string,
    /** The superseded decision: `decisionId` itself or one of its ancestors. */
    readonly supersededDecisionId: string,
    /** The correction that replaced `supersededDecisionId`. */
    readonly supersededBy: string,
  ) {
    super(
      supersededDecisionId === decisionId
        ? `decision ${decisionId} is already superseded by ${supersededBy}; correct that one instead`
        : `decision ${decisionId} is not in the current tree: decision ${supersededDecisionId} above it was ` +
            `superseded by ${supersededBy}`,
      planId,
      null,
    );
  }
}

/** No decision with this id (in this plan, when `planId` is given). */
export class DecisionNotFoundError extends Error {
  override readonly name = 'DecisionNotFoundError';
  constructor(
    readonly decisionId: string,
    readonly planId: string | null = null,
  ) {
    super(`decision ${decisionId} not found${planId === null ? '' : ` in plan ${planId}`}`);
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

/**
 * Driver codes: SQLite result codes, including extended ones such as SQLITE_BUSY_SNAPSHOT and
 * SQLITE_LOCKED_SHAREDCACHE; and PostgreSQL SQLSTATEs the pg adapter passes through as they are: class 08 connection exceptions, 40001
 * serialization failure, 40P01 deadlock, 53xxx out of resources (too many connections, out of memory, disk
 * full), 57P01-57P03 the server shutting down, crashed, or not accepting connections yet (a restart or failover),
 * 55P03 lock not available. Node's socket errors (ECONNREFUSED and the like) arrive on pg's own errors.
 */
const TRANSIENT_DRIVER_CODE =
  /^(SQLITE_(BUSY|LOCKED)(_|$)|08[0-9A-Z]{3}$|40001$|40P01$|53[0-9A-Z]{3}$|57P0[123]$|55P03$|E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|AI_AGAIN)$)/;

/**
 * Messages for the same conditions when they arrive without a code: better-sqlite3 errors the adapter does not
 * map are passed through as they are, and a closed client reports itself in words only.
 */
const TRANSIENT_MESSAGE =
  /database is locked|database table is locked|SQLITE_BUSY|SQLITE_LOCKED|database connection is not open|connection (is |was )?closed|Transaction already closed|expired transaction|Unable to start a transaction|Connection terminated|timeout exceeded when trying to connect|terminating connection due to administrator command|the database system is (starting up|shutting down|in recovery mode)|Can't reach database server/i;

const NEVER_TRANSIENT: readonly (new (...args: never[]) => Error)[] = [
  DecisionRuleError,
  DecisionNotFoundError,
  PlanNotFoundError,
  PlanConflictError,
];

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  meta?: unknown;
  cause?: unknown;
}

/** An error and its `cause`s, outermost first, each once (a cause chain may loop). */
function* causeChain(err: unknown): Generator<object & ErrorFields> {
  const seen = new Set<unknown>();
  for (let current: unknown = err; typeof current === 'object' && current !== null;) {
    if (seen.has(current)) return;
    seen.add(current);
    yield current;
    current = (current as ErrorFields).cause;
  }
}

/** The driver adapter's own error, which Prisma puts at meta.driverAdapterError.cause. */
function driverAdapterCause(meta: unknown): {
  originalCode?: unknown;
  originalMessage?: unknown;
  column?: unknown;
  table?: unknown;
} {
  return (meta as { driverAdapterError?: { cause?: object } } | undefined)?.driverAdapterError?.cause ?? {};
}

/** True when retrying the same storage call later may succeed. Walks `cause` chains and Prisma's `meta`. */
export function isTransientStorageError(err: unknown): boolean {
  for (const current of causeChain(err)) {
    if (NEVER_TRANSIENT.some((type) => current instanceof type)) return false;
    const { code, message, meta } = current;
    if (typeof code === 'string' && (TRANSIENT_PRISMA_CODES.has(code) || TRANSIENT_DRIVER_CODE.test(code))) {
      return true;
    }
    if (typeof message === 'string' && TRANSIENT_MESSAGE.test(message)) return true;
    const originalCode = driverAdapterCause(meta).originalCode;
    if (typeof originalCode === 'string' && TRANSIENT_DRIVER_CODE.test(originalCode)) return true;
  }
  return false;
}

/**
 * Adding context files would take a plan's context over the size its caller allows; nothing was stored. Checked
 * inside the write, so two adds at once cannot both squeeze under the limit.
 */
export class ContextTooLargeError extends Error {
  override readonly name = 'ContextTooLargeError';
  constructor(
    readonly planId: string,
    /** What the context would hold: the files kept plus the ones added (a re-added path counts once, new size). */
    readonly totalBytes: number,
    /** Of `totalBytes`, what was already stored and stays. */
    readonly keptBytes: number,
    readonly maxTotalBytes: number,
  ) {
    super(
      `plan ${planId}'s context would hold ${totalBytes} bytes (${keptBytes} already stored); ` +
        `a plan's context is limited to ${maxTotalBytes} bytes`,
    );
  }
}

/**
 * Prisma's codes for a database older than the schema: P2021 a table, P2022 a column that does not exist. The
 * engine was upgraded and its database was not (the CLI does not migrate; `npm start` and `npm run db:migrate`
 * do).
 */
const OUTDATED_SCHEMA_CODES = new Set(['P2021', 'P2022']);

/**
 * One line for a database that predates this engine's schema, naming what is missing and the command that
 * upgrades it; null for any other error. Walks `cause` chains like isTransientStorageError.
 */
export function describeOutdatedSchema(err: unknown): string | null {
  for (const { code, meta } of causeChain(err)) {
    if (typeof code !== 'string' || !OUTDATED_SCHEMA_CODES.has(code)) continue;
    // The driver adapter names what is missing in its cause; Prisma's own engines put it on meta.
    // PostgreSQL's adapter says it only in words: `column plans.tags does not exist`, `relation "x" does not exist`.
    const cause = driverAdapterCause(meta);
    const said = typeof cause.originalMessage === 'string' ? cause.originalMessage : '';
    const onMeta = (meta ?? {}) as { column?: unknown; table?: unknown };
    const text = (...candidates: unknown[]) => candidates.find((c): c is string => typeof c === 'string');
    const named = {
      column: text(onMeta.column, cause.column, /^column (\S+) does not exist/.exec(said)?.[1]),
      table: text(onMeta.table, cause.table, /^relation "([^"]+)" does not exist/.exec(said)?.[1]),
    };
    const bare = (name: string) => name.replace(/^(main|public)\./, '');
    const missing =
      typeof named.column === 'string'
        ? `column ${bare(named.column)}`
        : typeof named.table === 'string'
          ? `table ${bare(named.table)}`
          : code === 'P2022'
            ? 'column it needs'
            : 'table it needs';
    return (
      `the database is older than this engine (it has no ${missing}): upgrade it with ` +
      '`npm run db:migrate` (`npm start` does it too), then try again'
    );
  }
  return null;
}

/**
 * One line for a database that did not answer (not running, wrong host or port, refusing connections), naming
 * where the engine looked without its password; null for any other error. Prisma's own message for it starts with
 * a code frame of the query that failed, which says nothing to the person at the CLI.
 */
export function describeUnreachableDatabase(err: unknown, databaseUrl: string): string | null {
  if (!isTransientStorageError(err)) return null;
  const message = err instanceof Error ? err.message : String(err);
  const reason = message.trim().split('\n').at(-1)?.trim() ?? message;
  return (
    `the database ${redactDatabaseUrl(databaseUrl)} did not answer: ${reason}; check that it runs and that ` +
    'DATABASE_URL points at it (nothing was changed)'
  );
}
