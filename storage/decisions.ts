/**
 * Seed 004's decision tree in storage: the rules checked where decisions are written (also by recordPlanState in
 * storage/plans.ts), content-addressed contexts, the tree reads and corrections. Sequence numbers always come
 * from the caller (the workflow allocates them); every write is keyed by them, so a retried write changes nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import { newUlid } from '../lib/ulid';
import { z } from 'zod';
import { checkCorrection, checkDecisionDraft, correctionDrafts } from '../domain/decision';
import type { DecisionDraft } from '../domain/decision';
import { parseContextRef } from '../domain/decision-context';
import {
  artifactRefListSchema,
  decisionDraftExtrasSchema,
  decisionTypeSchema,
  resourceRefListSchema,
} from '../domain/decision-schemas';
import { buildTree, checkTreeDepth } from '../domain/decision-tree';
import { describeZodError, phaseSchema } from '../domain/schemas';
import { serialiseContext, storeContexts } from './decision-contexts';
import type { SerialisedContext } from './decision-contexts';
import type { DecisionWrite } from './types';
import {
  DecisionNotFoundError,
  DecisionRuleError,
  DecisionSupersededError,
  PlanConflictError,
  PlanNotFoundError,
} from './errors';
import type { Decision, Prisma, PrismaClient } from './generated/prisma/client';
import { inChunks } from './chunks';
import { claimWriteLock } from './lock';
import { decisionIdsBySeq, insertDecisionRows, refreshDownstream } from './recording-sql';
import type { DecisionInsert } from './recording-sql';
import { parseTime } from './time';
import type { CorrectDecisionInput, DecisionRecord, DecisionStore } from './types';

type Tx = Prisma.TransactionClient;

export function createDecisionStore(prisma: PrismaClient): DecisionStore {
  async function assertPlanExists(planId: string): Promise<void> {
    const plan = await prisma.plan.findUnique({ where: { id: planId }, select: { id: true } });
    if (plan === null) throw new PlanNotFoundError(planId);
  }

  /** All of a plan's decisions by sequence number, in one query; PlanNotFoundError for an unknown plan. */
  async function planDecisions(planId: string): Promise<DecisionRecord[]> {
    const rows = await prisma.decision.findMany({ where: { planId }, orderBy: { seq: 'asc' } });
    // A plan with decisions exists; only an empty answer needs the second look.
    if (rows.length === 0) await assertPlanExists(planId);
    return rows.map(toDecisionRecord);
  }

  return {
    async storeContexts(planId, contents) {
      const serialised = contents.map((content, i) => {
        try {
          return serialiseContext(content);
        } catch (err) {
          throw new DecisionRuleError(`context ${i}: ${(err as Error).message}`, planId, null);
        }
      });
      if (serialised.length > 0) {
        await prisma.$transaction((tx) => storeContexts(tx, serialised, new Date()));
      }
      return serialised.map((context) => context.ref);
    },

    async record({ planId, at, decisions }) {
      const time = parseTime(at, 'at');
      return prisma.$transaction(async (tx) => {
        await claimWriteLock(tx, planId);
        const plan = await tx.plan.findUnique({ where: { id: planId }, select: { decisionRootId: true } });
        if (plan === null) throw new PlanNotFoundError(planId);
        const batch = checkWrites(planId, decisions);
        const retried = await retriedWriteDecisionIds(tx, planId, batch, time);
        if (retried !== undefined) return { decisionIds: retried };
        const { ids, rootId } = await insertChecked(tx, planId, batch, plan.decisionRootId, time);
        if (rootId !== undefined) {
          await tx.plan.update({ where: { id: planId }, data: { decisionRootId: rootId } });
        }
        return { decisionIds: ids };
      });
    },

    listDecisions: planDecisions,

    async getDecision(decisionId) {
      const row = await prisma.decision.findUnique({ where: { id: decisionId } });
      if (row === null) throw new DecisionNotFoundError(decisionId);
      return toDecisionRecord(row);
    },

    async getContext(ref) {
      const hash = parseContextRef(ref);
      if (hash === null) return null;
      const row = await prisma.decisionContext.findUnique({ where: { hash }, select: { content: true } });
      return row?.content ?? null;
    },

    async getTree(planId, options = {}) {
      checkTreeDepth(options.depth ?? 0);
      return buildTree(await planDecisions(planId), options);
    },

    async getPathToRoot(decisionId) {
      const path = await ancestry(prisma, decisionId);
      if (path.length === 0) throw new DecisionNotFoundError(decisionId);
      const rows = await inChunks(
        path.map((step) => step.id),
        (ids) => prisma.decision.findMany({ where: { id: { in: ids } } }),
      );
      const byId = new Map(rows.map((row) => [row.id, row]));
      return path.map((step) => toDecisionRecord(byId.get(step.id) ?? missing(step.id)));
    },

    async correct(input) {
      const at = parseTime(input.at, 'at');
      if (input.event !== undefined) checkSeq(input.event.seq, 'event sequence number');
      return prisma.$transaction(async (tx) => correctDecision(tx, input, at));
    },
  };
}

function missing(decisionId: string): never {
  throw new DecisionNotFoundError(decisionId);
}

function checkSeq(seq: number, what: string): void {
  if (!Number.isInteger(seq) || seq < 0) {
    throw new RangeError(`${what} must be a non-negative integer, got ${seq}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Writing decisions

interface CheckedWrite {
  seq: number;
  draft: DecisionDraft;
  extras: z.infer<typeof decisionDraftExtrasSchema>;
  /** A context to store with the decision, or one stored before (`stored`: only its reference travelled). */
  context: (SerialisedContext & { stored: false }) | { hash: string; ref: string; stored: true } | null;
}

/** Every per-decision rule of seed 004 and the optional fields' shapes; nothing is read or written yet. */
function checkWrites(planId: string, writes: readonly DecisionWrite[]): CheckedWrite[] {
  const batch = [...writes].sort((a, b) => a.seq - b.seq);
  const seen = new Set<number>();
  return batch.map(({ seq, draft }) => {
    const fail = (problem: string): never => {
      throw new DecisionRuleError(`decision ${seq}: ${problem}`, planId, Number.isInteger(seq) ? seq : null);
    };
    const problem = checkDecisionDraft(draft, seq);
    if (problem !== undefined) fail(problem);
    if (!decisionTypeSchema.safeParse(draft.type).success) {
      fail(`unknown decision type ${String(draft.type)}`);
    }
    if (seen.has(seq)) {
      throw new DecisionRuleError(`decision sequence number ${seq} appears twice in one write`, planId, seq);
    }
    seen.add(seq);
    const parsed = decisionDraftExtrasSchema.safeParse(draft);
    if (!parsed.success) fail(describeZodError(parsed.error));
    const extras = parsed.data as z.infer<typeof decisionDraftExtrasSchema>;
    let context: CheckedWrite['context'] = null;
    if (extras.context?.ref !== undefined) {
      const { ref } = extras.context;
      const hash = parseContextRef(ref) ?? fail(`context.ref: ${ref} is not a sha256: reference`);
      context = { hash, ref, stored: true };
    } else if (extras.context !== undefined) {
      try {
        context = { ...serialiseContext(extras.context.content), stored: false };
      } catch (err) {
        fail(`context.content: ${(err as Error).message}`);
      }
    }
    return { seq, draft, extras, context };
  });
}

/**
 * Checks the whole batch against the seed 004 tree rules before writing any of it, then inserts parents before
 * children, stores new contexts, and brings the parents' downstream lists up to date. Throws DecisionRuleError;
 * the caller's transaction then rolls back everything else it wrote too. Call with the write lock held.
 * `storedIds`, when given, must be what is stored under seqsNamedBy(writes), read with the lock held; otherwise
 * they are read here.
 */
export async function insertDecisions(
  tx: Tx,
  planId: string,
  writes: readonly DecisionWrite[],
  storedRootId: string | null,
  at: Date,
  storedIds?: ReadonlyMap<number, string>,
): Promise<InsertedDecisions> {
  return insertChecked(tx, planId, checkWrites(planId, writes), storedRootId, at, storedIds);
}

/** Every sequence number a batch names, its decisions' own and their parents'. */
export function seqsNamedBy(writes: readonly DecisionWrite[]): number[] {
  const seqs = new Set<number>();
  for (const { seq, draft } of writes) {
    seqs.add(seq);
    if (draft.parentSeq !== null) seqs.add(draft.parentSeq);
  }
  return [...seqs];
}

interface InsertedDecisions {
  /** Decision ids by sequence number. */
  ids: Record<number, string>;
  /** The prompt_definition root's id when the batch held it. */
  rootId: string | undefined;
}

async function insertChecked(
  tx: Tx,
  planId: string,
  batch: readonly CheckedWrite[],
  storedRootId: string | null,
  at: Date,
  storedIds?: ReadonlyMap<number, string>,
): Promise<InsertedDecisions> {
  if (batch.length === 0) return { ids: {}, rootId: undefined };
  const fail = (message: string, seq: number | null = null): never => {
    throw new DecisionRuleError(message, planId, seq);
  };
  const batchSeqs = new Set(batch.map((w) => w.seq));

  // Parents outside the batch must already be stored *in this plan*: lookups are always scoped by plan id, so a
  // sequence number that only exists in another plan does not resolve.
  const outsideParentSeqs = batch
    .map((w) => w.draft.parentSeq)
    .filter((seq): seq is number => seq !== null && !batchSeqs.has(seq));
  const idBySeq = new Map(
    storedIds ?? (await decisionIdsBySeq(tx, planId, [...batchSeqs, ...new Set(outsideParentSeqs)])),
  );
  for (const seq of batchSeqs) {
    if (idBySeq.has(seq)) {
      fail(
        `decision sequence number ${seq} is already used in plan ${planId}; numbers are never reused`,
        seq,
      );
    }
  }

  const roots = batch.filter((w) => w.draft.type === 'prompt_definition');
  if (roots.length > 1 || (roots.length === 1 && storedRootId !== null)) {
    fail(
      `plan ${planId} already has a prompt_definition root; a plan has exactly one`,
      roots.at(-1)?.seq ?? null,
    );
  }

  const rows: DecisionInsert[] = [];
  const parentIds = new Set<string>();
  for (const write of batch) {
    const { seq, draft } = write;
    let parentId: string | null = null;
    if (draft.parentSeq !== null) {
      parentId =
        idBySeq.get(draft.parentSeq) ??
        fail(`decision ${seq}: parent ${draft.parentSeq} not found in plan ${planId}`, seq);
      parentIds.add(parentId);
    }
    const id = newUlid();
    idBySeq.set(seq, id);
    rows.push(decisionInsert(planId, write, id, parentId, at));
  }

  await storeContexts(
    tx,
    batch.flatMap((w) => (w.context === null || w.context.stored ? [] : [w.context])),
    at,
  );
  // A reference is only as good as the context it names: one that was never stored is refused, not kept dangling.
  const referenced = [...new Set(batch.flatMap((w) => (w.context?.stored === true ? [w.context.hash] : [])))];
  if (referenced.length > 0) {
    const found = new Set(
      (
        await inChunks(referenced, (hashes) =>
          tx.decisionContext.findMany({ where: { hash: { in: hashes } }, select: { hash: true } }),
        )
      ).map((row) => row.hash),
    );
    const missing = batch.find((w) => w.context?.stored === true && !found.has(w.context.hash));
    if (missing !== undefined && missing.context !== null) {
      fail(`decision ${missing.seq}: context ${missing.context.ref} is not stored`, missing.seq);
    }
  }
  // Sorted by seq and parentSeq < seq, so every parent row precedes its children for the foreign-key check.
  await insertDecisionRows(tx, rows);
  await refreshDownstream(tx, [...parentIds]);

  const ids: Record<number, string> = {};
  for (const { seq } of batch) ids[seq] = idBySeq.get(seq) ?? fail(`decision ${seq} lost its id`, seq);
  const rootSeq = roots[0]?.seq;
  return { ids, rootId: rootSeq === undefined ? undefined : ids[rootSeq] };
}

/** The row a new decision is inserted as; decisionRow adds the columns that start empty. */
function decisionInsert(
  planId: string,
  { seq, draft, extras, context }: CheckedWrite,
  id: string,
  parentId: string | null,
  at: Date,
): DecisionInsert {
  return {
    id,
    planId,
    seq,
    parentId,
    type: draft.type,
    phase: draft.phase,
    question: draft.question,
    chosenOption: draft.chosenOption,
    alternatives: draft.alternatives,
    confidence: draft.confidence,
    rationale: draft.rationale,
    actor: draft.actor,
    createdAt: at,
    hotContextHash: context?.hash ?? null,
    hotContextRef: context?.ref ?? null,
    relevantResources: extras.context?.relevantResources ?? [],
    actorStateRef: extras.context?.actorStateRef ?? null,
    actorReasoning: extras.actorReasoning ?? null,
    downstreamPlanIds: extras.downstreamPlanIds ?? [],
    artifactsProduced: extras.artifactsProduced ?? [],
    modelName: extras.model?.modelName ?? null,
    promptTokens: extras.model?.promptTokens ?? null,
    completionTokens: extras.model?.completionTokens ?? null,
  };
}

function decisionRow(
  planId: string,
  write: CheckedWrite,
  id: string,
  parentId: string | null,
  at: Date,
): Prisma.DecisionCreateManyInput {
  return {
    ...decisionInsert(planId, write, id, parentId, at),
    downstreamDecisionIds: [],
    isCorrection: false,
    correctsDecisionId: null,
    correctionReason: null,
    supersededBy: null,
  };
}

/**
 * For DecisionStore.record: when every sequence number of the batch is already stored with the same decision (a
 * retried call), their ids; when none is, undefined (write them). Anything in between reuses numbers.
 */
async function retriedWriteDecisionIds(
  tx: Tx,
  planId: string,
  batch: readonly CheckedWrite[],
  at: Date,
): Promise<Record<number, string> | undefined> {
  if (batch.length === 0) return {};
  const rows = await inChunks(
    batch.map((w) => w.seq),
    (seqs) => tx.decision.findMany({ where: { planId, seq: { in: seqs } } }),
  );
  if (rows.length === 0) return undefined;
  const bySeq = new Map(rows.map((row) => [row.seq, row]));
  const parentIds = [...new Set(rows.flatMap((row) => (row.parentId === null ? [] : [row.parentId])))];
  const parents = await inChunks(parentIds, (ids) =>
    tx.decision.findMany({ where: { id: { in: ids } }, select: { id: true, seq: true } }),
  );
  const parentSeq = new Map(parents.map((p) => [p.id, p.seq]));
  const ids: Record<number, string> = {};
  for (const write of batch) {
    const row = bySeq.get(write.seq);
    if (row === undefined) {
      // Part of the batch is stored and part is not: the stored numbers were used by another write.
      const used = rows.map((r) => r.seq).sort((a, b) => a - b);
      throw new DecisionRuleError(
        `decision sequence number(s) ${used.join(', ')} already used in plan ${planId}; numbers are never reused`,
        planId,
        used[0] ?? null,
      );
    }
    const same = isDeepStrictEqual(
      retriedWriteFields(row, row.parentId === null ? null : (parentSeq.get(row.parentId) ?? -1)),
      retriedWriteFields(decisionRow(planId, write, '', null, at), write.draft.parentSeq),
    );
    if (!same) {
      throw new DecisionRuleError(
        `decision sequence number ${write.seq} is already used in plan ${planId} by a different decision; ` +
          'numbers are never reused',
        planId,
        write.seq,
      );
    }
    ids[write.seq] = row.id;
  }
  return ids;
}

/** What a retried write must repeat exactly. Ids, links made later (downstream, superseded_by) are left out. */
const RETRIED_WRITE_FIELDS = [
  'type',
  'phase',
  'question',
  'chosenOption',
  'alternatives',
  'confidence',
  'rationale',
  'actor',
  'createdAt',
  'hotContextHash',
  'hotContextRef',
  'relevantResources',
  'actorStateRef',
  'actorReasoning',
  'downstreamPlanIds',
  'artifactsProduced',
  'isCorrection',
  'modelName',
  'promptTokens',
  'completionTokens',
] as const satisfies readonly (keyof Decision & keyof Prisma.DecisionCreateManyInput)[];

/** The compared fields as stored: through JSON, so dates become strings and absent optional members drop out. */
function retriedWriteFields(
  row: Pick<Decision | Prisma.DecisionCreateManyInput, (typeof RETRIED_WRITE_FIELDS)[number]>,
  parentSeq: number | null,
): unknown {
  const fields = Object.fromEntries(RETRIED_WRITE_FIELDS.map((name) => [name, row[name]]));
  return JSON.parse(JSON.stringify({ ...fields, parentSeq })) as unknown;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

interface AncestryStep {
  id: string;
  planId: string;
  parentId: string | null;
  seq: number;
  supersededBy: string | null;
}

/** From the decision up to the root, in one recursive query; empty when the decision does not exist. */
async function ancestry(db: Tx | PrismaClient, decisionId: string): Promise<AncestryStep[]> {
  const rows = await db.$queryRaw<
    Array<{
      id: string;
      plan_id: string;
      parent_id: string | null;
      seq: number | bigint;
      superseded_by: string | null;
    }>
  >`
    WITH RECURSIVE path(id, plan_id, parent_id, seq, superseded_by, n) AS (
      SELECT decision_id, plan_id, parent_decision_id, sequence_number, superseded_by, 0
      FROM decisions WHERE decision_id = ${decisionId}
      UNION ALL
      SELECT d.decision_id, d.plan_id, d.parent_decision_id, d.sequence_number, d.superseded_by, path.n + 1
      FROM decisions AS d JOIN path ON d.decision_id = path.parent_id
      WHERE path.n < 1000000
    )
    SELECT id, plan_id, parent_id, seq, superseded_by FROM path ORDER BY n`;
  return rows.map((row) => ({
    id: row.id,
    planId: row.plan_id,
    parentId: row.parent_id,
    seq: Number(row.seq),
    supersededBy: row.superseded_by,
  }));
}

// Rows are read back through the domain's schemas so a hand-edited or corrupt row fails loudly here instead of
// reaching the CLI as a value outside its type.
const stringListSchema = z.array(z.string());

export function toDecisionRecord(row: Decision): DecisionRecord {
  return {
    decisionId: row.id,
    planId: row.planId,
    seq: row.seq,
    parentDecisionId: row.parentId,
    type: decisionTypeSchema.parse(row.type),
    phase: phaseSchema.parse(row.phase),
    question: row.question,
    chosenOption: row.chosenOption,
    alternatives: stringListSchema.parse(row.alternatives),
    confidence: row.confidence,
    hotContextHash: row.hotContextHash,
    hotContextRef: row.hotContextRef,
    relevantResources: resourceRefListSchema.parse(row.relevantResources),
    actorStateRef: row.actorStateRef,
    rationale: row.rationale,
    actorReasoning: row.actorReasoning,
    downstreamDecisionIds: stringListSchema.parse(row.downstreamDecisionIds),
    downstreamPlanIds: stringListSchema.parse(row.downstreamPlanIds),
    artifactsProduced: artifactRefListSchema.parse(row.artifactsProduced),
    isCorrection: row.isCorrection,
    correctsDecisionId: row.correctsDecisionId,
    correctionReason: row.correctionReason,
    supersededBy: row.supersededBy,
    modelName: row.modelName,
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    actor: row.actor,
    createdAt: row.createdAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Corrections

async function correctDecision(tx: Tx, input: CorrectDecisionInput, at: Date) {
  const { planId, decisionId, interventionSeq, correctionSeq } = input;
  await claimWriteLock(tx, planId);
  const plan = await tx.plan.findUnique({ where: { id: planId }, select: { phase: true, state: true } });
  if (plan === null) throw new PlanNotFoundError(planId);

  // A retry of a correction whose first attempt committed finds both decisions; anything else at those numbers
  // means they were reused.
  const taken = await tx.decision.findMany({
    where: { planId, seq: { in: [interventionSeq, correctionSeq] } },
  });
  if (taken.length > 0) {
    const intervention = taken.find((row) => row.seq === interventionSeq);
    const correction = taken.find((row) => row.seq === correctionSeq);
    const original = await tx.decision.findUnique({ where: { id: decisionId } });
    if (
      intervention?.type === 'user_intervention' &&
      intervention.actor === input.by &&
      correction?.isCorrection === true &&
      correction.correctsDecisionId === decisionId &&
      correction.chosenOption === input.chosenOption &&
      original?.supersededBy === correction.id
    ) {
      return {
        intervention: toDecisionRecord(intervention),
        correction: toDecisionRecord(correction),
        original: toDecisionRecord(original),
      };
    }
    const seq = (intervention ?? correction ?? taken[0])?.seq ?? interventionSeq;
    throw new DecisionRuleError(
      `decision sequence number ${seq} is already used in plan ${planId}; numbers are never reused`,
      planId,
      seq,
    );
  }

  const path = await ancestry(tx, decisionId);
  const [self, parent] = path;
  if (self === undefined || self.planId !== planId) throw new DecisionNotFoundError(decisionId, planId);
  // The decision itself, or one above it: either way it is not part of the current tree any more.
  const superseded = path.find((step) => step.supersededBy !== null);
  if (superseded !== undefined && superseded.supersededBy !== null) {
    throw new DecisionSupersededError(planId, decisionId, superseded.id, superseded.supersededBy);
  }
  const original = await tx.decision.findUniqueOrThrow({ where: { id: decisionId } });
  const originalRecord = toDecisionRecord(original);
  const correctedDecision = { ...originalRecord, parentSeq: parent?.seq ?? null };
  const request = {
    by: input.by,
    chosenOption: input.chosenOption,
    reason: input.reason,
    phase: phaseSchema.parse(plan.phase),
    interventionSeq,
    correctionSeq,
  };
  const problem = checkCorrection(correctedDecision, request);
  if (problem !== undefined) throw new DecisionRuleError(problem, planId, correctionSeq);
  if (input.event !== undefined) {
    const event = await tx.planEvent.findUnique({
      where: { planId_seq: { planId, seq: input.event.seq } },
      select: { seq: true },
    });
    if (event !== null) throw new PlanConflictError(planId, `event ${input.event.seq} is already recorded`);
  }

  const drafts = correctionDrafts(correctedDecision, request);
  const parentId = original.parentId;
  const interventionId = newUlid();
  const correctionId = newUlid();
  const none = { extras: {}, context: null };
  await tx.decision.createMany({
    data: [
      decisionRow(
        planId,
        { seq: interventionSeq, draft: drafts.intervention, ...none },
        interventionId,
        parentId,
        at,
      ),
      {
        ...decisionRow(
          planId,
          { seq: correctionSeq, draft: drafts.correction, ...none },
          correctionId,
          parentId,
          at,
        ),
        // The same question in the same context, answered differently: the snapshot stays with it for replay.
        hotContextHash: original.hotContextHash,
        hotContextRef: original.hotContextRef,
        relevantResources: resourceRefListSchema.parse(original.relevantResources),
        isCorrection: true,
        correctsDecisionId: decisionId,
        correctionReason: input.reason,
      },
    ],
  });
  await tx.decision.update({ where: { id: decisionId }, data: { supersededBy: correctionId } });
  if (parentId !== null) await refreshDownstream(tx, [parentId]);

  if (input.event !== undefined) {
    // A refusal moves nothing, so it is not the event the row follows.
    const latest = await tx.planEvent.aggregate({
      where: { planId, type: { not: 'COMMAND_REFUSED' } },
      _max: { seq: true },
    });
    await tx.planEvent.create({
      data: {
        planId,
        seq: input.event.seq,
        type: input.event.type,
        phase: plan.phase,
        state: plan.state,
        recordedBy: input.by,
        message: input.event.message ?? null,
        at,
      },
    });
    // The plan row follows the newest event (see recordPlanState); phase and state do not change here.
    if ((latest._max.seq ?? -1) < input.event.seq) {
      await tx.plan.update({ where: { id: planId }, data: { updatedAt: at } });
    }
  }

  const written = await tx.decision.findMany({
    where: { id: { in: [interventionId, correctionId, decisionId] } },
  });
  const byId = new Map(written.map((row) => [row.id, toDecisionRecord(row)]));
  return {
    intervention: byId.get(interventionId) ?? missing(interventionId),
    correction: byId.get(correctionId) ?? missing(correctionId),
    original: byId.get(decisionId) ?? missing(decisionId),
  };
}
