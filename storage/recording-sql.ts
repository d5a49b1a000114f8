/**
 * The recording path's statements (recordPlanState, DecisionStore.record), as raw SQL. Prisma 6's query compiler
 * compiles every model query in WebAssembly on every call (it keeps no plan cache) and the driver adapter prepares
 * every statement anew; that was most of a recording's time (issue 13, P3). A raw statement skips the compiler's
 * query building. Reads elsewhere, and the rare paths (a retried write, a correction), stay on the model API.
 *
 * The SQL is standard (multi-row VALUES, EXISTS, ON CONFLICT DO NOTHING) except where a function says otherwise:
 * JSON functions differ between SQLite and PostgreSQL, and Json columns are bound as JSON text, which PostgreSQL's
 * jsonb columns take only with a cast (jsonValue). Each such place asks the transaction's dialect.
 */
import { Prisma } from './generated/prisma/client';
import { inChunks } from './chunks';
import { dialectOf } from './database-url';
import { claimWriteLock } from './lock';

type Tx = Prisma.TransactionClient;

/** The plan row's columns that follow its newest event. */
export interface PlanStateColumns {
  phase: string;
  state: string;
  errorType: string | null;
  errorMessage: string | null;
  errorDetails: string | null;
  errorAt: Date | null;
  updatedAt: Date;
  /** JSON text; undefined: the column keeps its value. */
  gateStatus?: string | null;
  paused?: string | null;
  automationLevel?: string;
}

const STATE_COLUMNS: Record<keyof PlanStateColumns, string> = {
  phase: 'phase',
  state: 'state',
  errorType: 'error_type',
  errorMessage: 'error_message',
  errorDetails: 'error_details',
  errorAt: 'error_at',
  updatedAt: 'updated_at',
  gateStatus: 'gate_status',
  paused: 'paused',
  automationLevel: 'automation_level',
};

/** What recordPlanState needs to know before it writes the rest. */
export interface PlanForRecording {
  decisionRootId: string | null;
  /** The event with this sequence number is already stored: the write is a retry, and nothing was changed. */
  recorded: boolean;
  /** Ids of the plan's decisions stored under the sequence numbers asked about. */
  storedDecisionIds: Map<number, string>;
}

/**
 * recordPlanState's first statement: takes the write lock, moves the plan row to the event's state when the event
 * is new and the newest, and reads what the rest of the recording needs. Null when the plan does not exist.
 *
 * - Lock: an UPDATE is a write, so SQLite takes the write lock before the statement reads anything, as
 *   claimWriteLock does (storage/lock.ts says why that must come first); RETURNING then answers from the latest
 *   committed state. (On PostgreSQL the UPDATE locks the plan's row, which serialises recordings of a plan there.)
 * - Plan row: it mirrors the event with the highest sequence number (refusals left out: they move nothing).
 *   Events normally arrive in order, but a retried activity can land after a later one and must not roll the row
 *   back; a retry of this very event must change nothing. Hence each column changes only when no event numbered
 *   eventSeq or higher is stored (checked before this recording's own event is inserted). Everything later in the
 *   transaction may still refuse the write, which rolls this back with the rest.
 * - Reads: the decision root, whether this event is stored, and the ids stored under `decisionSeqs` (one JSON
 *   parameter, so a batch of any size is one statement).
 *
 * One statement for what took five (two on PostgreSQL: the plan's advisory lock first, which every other write
 * to the plan takes too, since a row lock alone would not keep out the writers that lock the plan before its row
 * exists). The sequence numbers travel as one JSON parameter, unpacked by json_each (SQLite) or
 * json_array_elements_text (PostgreSQL); the stored pairs come back as JSON text from either.
 */
export async function lockAndAdvancePlan(
  tx: Tx,
  planId: string,
  eventSeq: number,
  columns: PlanStateColumns,
  decisionSeqs: readonly number[],
): Promise<PlanForRecording | null> {
  // A refusal (COMMAND_REFUSED) may take a number while a state change is being written and land first; it
  // changed nothing, so it must not keep the row from following the change.
  const isNewest = Prisma.sql`NOT EXISTS (SELECT 1 FROM plan_events e
    WHERE e.plan_id = plans.plan_id AND e.sequence_number >= ${eventSeq}
      AND e.event_type <> 'COMMAND_REFUSED')`;
  const fields = (Object.keys(STATE_COLUMNS) as (keyof PlanStateColumns)[]).filter(
    (field) => columns[field] !== undefined,
  );
  const sets = fields.map((field) => {
    // Column names come from STATE_COLUMNS, never from input.
    const column = Prisma.raw(STATE_COLUMNS[field]);
    return Prisma.sql`${column} = CASE WHEN ${isNewest} THEN ${columns[field]} ELSE ${column} END`;
  });
  const postgres = dialectOf(tx) === 'postgresql';
  if (postgres) await claimWriteLock(tx, planId);
  const seqs = JSON.stringify(decisionSeqs);
  const storedPairs = postgres
    ? Prisma.sql`(SELECT COALESCE(json_agg(json_build_array(d.sequence_number, d.decision_id)), '[]')::text
        FROM decisions d WHERE d.plan_id = plans.plan_id
          AND d.sequence_number IN (SELECT value::int FROM json_array_elements_text(${seqs}::json)))`
    : Prisma.sql`(SELECT json_group_array(json_array(d.sequence_number, d.decision_id)) FROM decisions d
        WHERE d.plan_id = plans.plan_id AND d.sequence_number IN (SELECT value FROM json_each(${seqs})))`;
  const rows = await tx.$queryRaw<{ root_id: string | null; recorded: unknown; stored: string }[]>`
    UPDATE plans SET ${Prisma.join(sets)} WHERE plan_id = ${planId}
    RETURNING decision_root_id AS root_id,
      EXISTS (SELECT 1 FROM plan_events e WHERE e.plan_id = plans.plan_id AND e.sequence_number = ${eventSeq})
        AS recorded,
      ${storedPairs} AS stored`;
  const row = rows[0];
  if (row === undefined) return null;
  const stored = JSON.parse(row.stored) as [number, string][];
  return { decisionRootId: row.root_id, recorded: isTrue(row.recorded), storedDecisionIds: new Map(stored) };
}

/** Once per plan: when the batch that holds its prompt_definition root is written. */
export async function setDecisionRoot(tx: Tx, planId: string, rootId: string): Promise<void> {
  await tx.$executeRaw`UPDATE plans SET decision_root_id = ${rootId} WHERE plan_id = ${planId}`;
}

/** SQLite answers a boolean expression as an integer (a bigint through the adapter); PostgreSQL as a boolean. */
function isTrue(value: unknown): boolean {
  return value === true || Number(value) === 1;
}

/** Ids of the plan's decisions stored under these sequence numbers (absent ones are simply missing). */
export async function decisionIdsBySeq(
  tx: Tx,
  planId: string,
  seqs: readonly number[],
): Promise<Map<number, string>> {
  const rows = await inChunks(
    seqs,
    (chunk) => tx.$queryRaw<{ seq: number | bigint; id: string }[]>`
      SELECT sequence_number AS seq, decision_id AS id FROM decisions
      WHERE plan_id = ${planId} AND sequence_number IN (${Prisma.join(chunk)})`,
  );
  return new Map(rows.map((row) => [Number(row.seq), row.id]));
}

/** A decisions row as the recording path writes it; Json columns as values (serialised here). */
export interface DecisionInsert {
  id: string;
  planId: string;
  seq: number;
  parentId: string | null;
  type: string;
  phase: string;
  question: string;
  chosenOption: string;
  alternatives: Prisma.InputJsonValue;
  confidence: number | null;
  rationale: string;
  actor: string;
  createdAt: Date;
  hotContextHash: string | null;
  hotContextRef: string | null;
  relevantResources: Prisma.InputJsonValue;
  actorStateRef: string | null;
  actorReasoning: string | null;
  downstreamPlanIds: Prisma.InputJsonValue;
  artifactsProduced: Prisma.InputJsonValue;
  modelName: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
}

/** At most 23 bound values a row: 200 rows stay far below SQLite's 32,766 and PostgreSQL's 65,535 a statement. */
const ROWS_PER_INSERT = 200;

// Nulls and empty lists are written as literals, not bound: most decisions leave most optional fields empty, and
// every bound value costs Prisma's request handling and the driver's binding time (a fifth of the insert).
const NULL = Prisma.sql`NULL`;
const EMPTY_LIST = Prisma.sql`'[]'`;

function value(v: string | number | Date | null): string | number | Date | Prisma.Sql {
  return v === null ? NULL : v;
}

/**
 * Json columns hold the value's JSON text, as Prisma writes them. PostgreSQL's jsonb takes a bound text value only
 * with a cast; an unbound literal such as EMPTY_LIST it converts by itself.
 */
function jsonValue(postgres: boolean, v: Prisma.InputJsonValue): string | Prisma.Sql {
  if (Array.isArray(v) && v.length === 0) return EMPTY_LIST;
  const text = JSON.stringify(v);
  return postgres ? Prisma.sql`${text}::jsonb` : text;
}

/**
 * Inserts the rows in the given order, ROWS_PER_INSERT per statement; the caller orders parents before children
 * (the parent foreign key is checked per row). New decisions have no children, no corrections and are not
 * superseded, so those columns are written empty.
 */
export async function insertDecisionRows(tx: Tx, rows: readonly DecisionInsert[]): Promise<void> {
  const postgres = dialectOf(tx) === 'postgresql';
  const json = (v: Prisma.InputJsonValue) => jsonValue(postgres, v);
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const values = rows.slice(i, i + ROWS_PER_INSERT).map(
      (r) => Prisma.sql`(${r.id}, ${r.planId}, ${r.seq}, ${value(r.parentId)}, ${r.type}, ${r.phase},
        ${r.question}, ${r.chosenOption}, ${json(r.alternatives)}, ${value(r.confidence)}, ${r.rationale},
        ${r.actor}, ${r.createdAt}, ${value(r.hotContextHash)}, ${value(r.hotContextRef)},
        ${json(r.relevantResources)}, ${value(r.actorStateRef)}, ${value(r.actorReasoning)}, '[]',
        ${json(r.downstreamPlanIds)}, ${json(r.artifactsProduced)}, FALSE, NULL, NULL, NULL,
        ${value(r.modelName)}, ${value(r.promptTokens)}, ${value(r.completionTokens)})`,
    );
    await tx.$executeRaw`
      INSERT INTO decisions (decision_id, plan_id, sequence_number, parent_decision_id, decision_type, phase,
        question, chosen_option, alternatives_considered, confidence_score, rationale, actor, created_at,
        hot_context_hash, hot_context_ref, relevant_resources, actor_state_ref, actor_reasoning,
        downstream_decision_ids, downstream_plan_ids, artifacts_produced, is_correction, corrects_decision_id,
        correction_reason, superseded_by, model_name, prompt_tokens, completion_tokens)
      VALUES ${Prisma.join(values)}`;
  }
}

/**
 * downstream_decision_ids of each given decision := its children's ids by sequence number. Recomputed from the
 * children rather than appended to, so it is idempotent and always agrees with parent_decision_id. One statement
 * per 500 parents; each parent's children are found through the parent_decision_id index. SQLite's
 * json_group_array (with an aggregate ORDER BY, SQLite 3.44), PostgreSQL's jsonb_agg (NULL over no rows).
 */
export async function refreshDownstream(tx: Tx, decisionIds: readonly string[]): Promise<void> {
  const children =
    dialectOf(tx) === 'postgresql'
      ? Prisma.sql`COALESCE(jsonb_agg(c.decision_id ORDER BY c.sequence_number), '[]'::jsonb)`
      : Prisma.sql`json_group_array(c.decision_id ORDER BY c.sequence_number)`;
  await inChunks(decisionIds, async (chunk) => [
    await tx.$executeRaw`
      UPDATE decisions SET downstream_decision_ids = (
        SELECT ${children} FROM decisions AS c WHERE c.parent_decision_id = decisions.decision_id)
      WHERE decision_id IN (${Prisma.join(chunk)})`,
  ]);
}

export interface ContextInsert {
  hash: string;
  content: string;
  size: number;
}

/**
 * Insert-if-absent by hash. Content-addressed: a stored row with the same hash holds the same content, so keeping
 * it is right.
 */
export async function insertContexts(tx: Tx, contexts: readonly ContextInsert[], at: Date): Promise<void> {
  for (let i = 0; i < contexts.length; i += ROWS_PER_INSERT) {
    const values = contexts
      .slice(i, i + ROWS_PER_INSERT)
      .map(({ hash, content, size }) => Prisma.sql`(${hash}, ${content}, ${size}, ${at})`);
    await tx.$executeRaw`
      INSERT INTO decision_contexts (hash, content, size, created_at) VALUES ${Prisma.join(values)}
      ON CONFLICT (hash) DO NOTHING`;
  }
}

export interface EventInsert {
  planId: string;
  seq: number;
  type: string;
  phase: string;
  state: string;
  recordedBy: string;
  message: string | null;
  at: Date;
}

export async function insertPlanEvent(tx: Tx, e: EventInsert): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO plan_events (plan_id, sequence_number, event_type, phase, state, actor, message, at)
    VALUES (${e.planId}, ${e.seq}, ${e.type}, ${e.phase}, ${e.state}, ${e.recordedBy}, ${e.message}, ${e.at})`;
}
