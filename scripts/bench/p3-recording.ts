/**
 * P3: decisions per second through the engine's recording path against raw inserts of the same rows.
 *   subject:  storage/plans recordPlanState, BATCH decisions per call as a phase's completion writes them (with
 *             its event, the plan row and the parents' downstream links, in one transaction)
 *   baseline: better-sqlite3 INSERTs of the same decision rows into the same table, BATCH per transaction, ids
 *             minted as the engine mints them (lib/ulid.ts)
 * Interleaved rounds, each on fresh plans in one database; the medians are compared.
 */
import Database from 'better-sqlite3';
import { newUlid } from '../../lib/ulid';
import { decisionBatch, recordDecisions, withStorage } from './decisions-fixture';
import type { PartResult } from './report';
import { envNumber, median, round, timeMs } from './stats';

const BATCH = 10;
const BATCHES = envNumber('BENCH_P3_BATCHES', 100);
const ROUNDS = envNumber('BENCH_ROUNDS', 3) + 2;

const INSERT = `INSERT INTO decisions (
  decision_id, plan_id, sequence_number, parent_decision_id, decision_type, phase, question, chosen_option,
  alternatives_considered, confidence_score, rationale, actor, created_at, relevant_resources,
  downstream_decision_ids, downstream_plan_ids, artifacts_produced, is_correction
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', '[]', '[]', '[]', 0)`;

function rawInserts(db: Database.Database, planId: string, count: number): void {
  const insert = db.prepare(INSERT);
  const ids = new Map<number, string>();
  const writeBatch = db.transaction((first: number) => {
    const at = Date.now();
    for (const { seq, draft } of decisionBatch(first, Math.min(BATCH, count - first))) {
      // The engine's own id source: the baseline measures the inserts, not a slower way of minting ids.
      const id = newUlid();
      ids.set(seq, id);
      insert.run(
        id,
        planId,
        seq,
        draft.parentSeq === null ? null : (ids.get(draft.parentSeq) ?? null),
        draft.type,
        draft.phase,
        draft.question,
        draft.chosenOption,
        JSON.stringify(draft.alternatives),
        draft.confidence,
        draft.rationale,
        draft.actor,
        at,
      );
    }
  });
  for (let first = 0; first < count; first += BATCH) writeBatch(first);
}

export async function p3Recording(): Promise<PartResult> {
  return withStorage(async ({ file, plans, newPlan }) => {
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('foreign_keys = ON');
      const count = BATCH * BATCHES;
      const baseline: number[] = [];
      const subject: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const rawPlan = await newPlan(`raw-${round}`);
        baseline.push(count / ((await timeMs(async () => rawInserts(db, rawPlan, count))) / 1000));
        const enginePlan = await newPlan(`engine-${round}`);
        subject.push(count / ((await timeMs(() => recordDecisions(plans, enginePlan, count, BATCH))) / 1000));
      }
      const s = median(subject);
      const b = median(baseline);
      return {
        rows: [
          {
            id: 'P3',
            measure: `decisions/s recorded, ${BATCH} per call`,
            subject: `${s.toFixed(0)} /s`,
            baseline: `${b.toFixed(0)} /s raw SQL`,
            ratio: (s / b).toFixed(2),
            goal: '≥ 0.2',
            met: s / b >= 0.2,
          },
        ],
        data: {
          batch: BATCH,
          decisionsPerRound: count,
          rounds: ROUNDS,
          baselinePerSecond: baseline.map((v) => round(v, 0)),
          subjectPerSecond: subject.map((v) => round(v, 0)),
          medianBaseline: round(b, 0),
          medianSubject: round(s, 0),
          ratio: round(s / b, 3),
        },
      };
    } finally {
      db.close();
    }
  });
}
