/**
 * The Plan aggregate's repository: the plan row, its events and its decision tree. Every write is keyed by
 * numbers the workflow allocated (event and decision sequence numbers), so a retried activity finds its own
 * earlier write and changes nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { planWorkflowId } from '../domain/ids';
import {
  actorRefsSchema,
  argumentsSchema,
  automationLevelSchema,
  namespacedNameSchema,
  phaseSchema,
  planInvariantSchema,
  planSpecSchema,
  describeZodError,
  processingStateSchema,
  profileSnapshotSchema,
  projectLinkSchema,
  tagSchema,
} from '../domain/schemas';
import { PLAN_EVENT_TYPES, STATE_NEUTRAL_EVENT_TYPES } from '../domain/plan';
import { refusalMessage } from '../domain/refusals';
import type { ApplyStatistics } from '../domain/changeset';
import type { PlanError, PlanSpec } from '../domain/plan';
import { inChunks } from './chunks';
import type { GateView, PauseView } from '../domain/gates';
import { insertDecisions, seqsNamedBy, toDecisionRecord } from './decisions';
import { PlanConflictError, PlanNotFoundError } from './errors';
import { Prisma } from './generated/prisma/client';
import type { PrismaClient } from './generated/prisma/client';
import type { Plan, PlanEvent } from './generated/prisma/client';
import { dialectOf } from './database-url';
import { claimWriteLock } from './lock';
import { insertPlanEvent, lockAndAdvancePlan, setDecisionRoot } from './recording-sql';
import { parseTime } from './time';
import { isIdPrefix } from '../domain/plan-ref';
import type { PlanRefCandidate } from '../domain/plan-ref';
import type {
  PlanEventRecord,
  PlanFilter,
  PlanRecord,
  PlanRefLookup,
  PlanStateWrite,
  PlanStore,
} from './types';

type Tx = Prisma.TransactionClient;

/** `childPlanIds` is not a column: every plan read brings its children's ids along, oldest child first. */
const withChildren = {
  children: { select: { id: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
} satisfies Prisma.PlanInclude;
type PlanRow = Prisma.PlanGetPayload<{ include: typeof withChildren }>;

export function createPlanStore(prisma: PrismaClient): PlanStore {
  return {
    async recordPlanCreated({ spec, eventSeq }) {
      checkEventSeq(eventSeq);
      const row = creationRow(spec);
      const { createdAt } = row;

      await prisma.$transaction(async (tx) => {
        await claimWriteLock(tx, spec.planId);
        const existing = await tx.plan.findUnique({ where: { id: spec.planId } });
        if (existing !== null) {
          // Both the client and the workflow's first activity may create the plan from the same spec; the second
          // caller finds it and stops. Only a *different* plan under the same id is an error.
          await assertSameCreation(tx, existing, row, eventSeq);
          return;
        }
        if (row.parentPlanId !== null) {
          // The foreign key would refuse it too, but as an anonymous constraint failure.
          const parent = await tx.plan.findUnique({ where: { id: row.parentPlanId }, select: { id: true } });
          if (parent === null) throw new PlanNotFoundError(row.parentPlanId, 'parent plan');
        }
        await tx.plan.create({ data: row });
        await tx.planEvent.create({
          data: {
            planId: spec.planId,
            seq: eventSeq,
            type: 'PLAN_CREATED',
            phase: row.phase,
            state: row.state,
            recordedBy: spec.createdBy,
            message: null,
            at: createdAt,
          },
        });
      });
    },

    async recordPlanState(input) {
      checkEventSeq(input.eventSeq);
      const at = parseTime(input.at, 'at');
      const columns = {
        phase: input.phase,
        state: input.state,
        ...errorColumns(input.error),
        updatedAt: at,
        ...(input.gate === undefined
          ? {}
          : { gateStatus: input.gate === null ? null : JSON.stringify(input.gate) }),
        ...(input.paused === undefined
          ? {}
          : { paused: input.paused === null ? null : JSON.stringify(input.paused) }),
        ...(input.automationLevel === undefined ? {} : { automationLevel: input.automationLevel }),
      };
      return prisma.$transaction(async (tx) => {
        // One statement takes the write lock, moves the plan row when this event is new and the newest (a late
        // or retried event must not roll it back), and reads the rest: see lockAndAdvancePlan.
        const plan = await lockAndAdvancePlan(
          tx,
          input.planId,
          input.eventSeq,
          columns,
          seqsNamedBy(input.decisions),
        );
        if (plan === null) {
          throw new PlanNotFoundError(input.planId);
        }
        if (plan.recorded) {
          // A retry of an activity whose first attempt committed (and whose reply was lost): the event, the plan
          // row and the decisions are already there. Answer with the ids the first attempt created.
          return { decisionIds: await existingDecisionIds(tx, input) };
        }

        const { ids: decisionIds, rootId } = await insertDecisions(
          tx,
          input.planId,
          input.decisions,
          plan.decisionRootId,
          at,
          plan.storedDecisionIds,
        );
        await insertPlanEvent(tx, {
          planId: input.planId,
          seq: input.eventSeq,
          type: input.event,
          phase: input.phase,
          state: input.state,
          recordedBy: input.recordedBy,
          message: input.message,
          at,
        });
        if (rootId !== undefined) await setDecisionRoot(tx, input.planId, rootId);
        if (input.supersede !== undefined) await supersede(tx, input.planId, input.supersede);
        return { decisionIds };
      });
    },

    async recordRefusal(input) {
      if (input.eventSeq !== null) checkEventSeq(input.eventSeq);
      const at = parseTime(input.at, 'at');
      return prisma.$transaction(async (tx) => {
        await claimWriteLock(tx, input.planId);
        const plan = await tx.plan.findUnique({
          where: { id: input.planId },
          select: { phase: true, state: true },
        });
        if (plan === null) throw new PlanNotFoundError(input.planId);
        let seq = input.eventSeq;
        if (seq === null) {
          // The workflow has ended: nothing else numbers this plan's events now, and the lock keeps two refused
          // clients from taking the same number.
          seq = (await lastEventSeq(tx, input.planId)) + 1;
        } else {
          const existing = await tx.planEvent.findUnique({
            where: { planId_seq: { planId: input.planId, seq } },
            select: { type: true },
          });
          if (existing !== null) {
            // A retry of this very write: done already. Anything else under the number is a bug worth stopping on.
            if (existing.type === 'COMMAND_REFUSED') return seq;
            throw new PlanConflictError(
              input.planId,
              `event ${seq} is already recorded as ${existing.type}, not as the refusal`,
            );
          }
        }
        // Only the event: a refusal changes neither the plan row nor its updatedAt (lockAndAdvancePlan skips it
        // when it asks whether a state change is the newest).
        await insertPlanEvent(tx, {
          planId: input.planId,
          seq,
          type: 'COMMAND_REFUSED',
          phase: input.phase ?? plan.phase,
          state: input.state ?? plan.state,
          recordedBy: input.by,
          message: refusalMessage(input),
          at,
        });
        return seq;
      });
    },

    async getPlan(planId) {
      const row = await prisma.plan.findUnique({ where: { id: planId }, include: withChildren });
      return row === null ? null : toPlanRecord(row);
    },

    async getSpec(planId) {
      const row = await prisma.plan.findUnique({ where: { id: planId } });
      return row === null ? null : toPlanSpec(row);
    },

    async listPlans(filter: PlanFilter = {}) {
      const where: Prisma.PlanWhereInput = {};
      if (filter.phase !== undefined) where.phase = filter.phase;
      if (filter.state !== undefined) where.state = filter.state;
      if (filter.actionName !== undefined) where.actionName = filter.actionName;
      if (filter.parentPlanId !== undefined) where.parentPlanId = filter.parentPlanId;
      if (filter.projectName !== undefined) {
        const ids = await planIdsForProject(prisma, filter.projectName);
        if (ids.length === 0) return [];
        where.id = { in: ids };
      }
      if (filter.limit !== undefined && !(Number.isInteger(filter.limit) && filter.limit >= 0)) {
        // Prisma reads a negative `take` as "from the end", which would silently return the oldest plans.
        throw new RangeError(`limit must be a non-negative integer, got ${filter.limit}`);
      }
      const rows = await prisma.plan.findMany({
        where,
        include: withChildren,
        // Plan ids are ULIDs: within the same createdAt millisecond they still order by creation.
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        ...(filter.limit !== undefined ? { take: filter.limit } : {}),
      });
      return rows.map(toPlanRecord);
    },

    async findPlanRefs(lookup) {
      return findPlanRefs(prisma, lookup);
    },

    async lastEventSeq(planId) {
      return lastEventSeq(prisma, planId);
    },

    async listEvents(planId, afterSeq = -1) {
      const rows = await prisma.planEvent.findMany({
        where: { planId, seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
      });
      return rows.map(toPlanEventRecord);
    },

    async lastStateEvent(planId) {
      const row = await prisma.planEvent.findFirst({
        where: { planId, type: { notIn: [...STATE_NEUTRAL_EVENT_TYPES] } },
        orderBy: { seq: 'desc' },
      });
      return row === null ? null : toPlanEventRecord(row);
    },

    // Unlike DecisionStore.listDecisions, an unknown plan simply has no decisions here.
    async recordExecution(planId, { applyStatistics, ...fields }) {
      const data: Prisma.PlanUpdateManyMutationInput = { ...fields };
      if (applyStatistics !== undefined) {
        data.filesCreated = applyStatistics?.filesCreated ?? null;
        data.filesModified = applyStatistics?.filesModified ?? null;
        data.filesDeleted = applyStatistics?.filesDeleted ?? null;
        data.filesMoved = applyStatistics?.filesMoved ?? null;
      }
      const { count } = await prisma.plan.updateMany({ where: { id: planId }, data });
      if (count === 0) throw new PlanNotFoundError(planId);
    },

    async discardUnstarted(planId) {
      return prisma.$transaction(async (tx) => {
        await claimWriteLock(tx, planId);
        const [events, decisions] = await Promise.all([
          tx.planEvent.count({ where: { planId, seq: { gt: 0 } } }),
          tx.decision.count({ where: { planId } }),
        ]);
        // Anything past the creation means a workflow ran: its record is never thrown away.
        if (events > 0 || decisions > 0) return false;
        await tx.planContextFile.deleteMany({ where: { planId } });
        await tx.planEvent.deleteMany({ where: { planId } });
        return (await tx.plan.deleteMany({ where: { id: planId } })).count > 0;
      });
    },

    async listDecisions(planId, afterSeq = -1) {
      const rows = await prisma.decision.findMany({
        where: { planId, seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
      });
      return rows.map(toDecisionRecord);
    },
  };
}

type CreationRow = ReturnType<typeof creationRow>;

function creationRow(spec: PlanSpec) {
  const createdAt = parseTime(spec.createdAt, 'spec.createdAt');
  return {
    id: spec.planId,
    workflowId: planWorkflowId(spec.planId),
    name: spec.name,
    actionName: spec.actionName,
    description: spec.description,
    automationLevel: spec.automationLevel,
    phase: 'STRATEGIZE',
    state: 'QUEUED',
    projects: spec.projects,
    arguments: spec.arguments,
    argumentsOrder: spec.argumentsOrder,
    definitionOfDone: spec.definitionOfDone,
    automationProfileName: spec.automationProfileName,
    // A nullable Json column needs Prisma's marker: a plain null would be ambiguous with the JSON value null.
    effectiveProfileSnapshot: spec.effectiveProfileSnapshot ?? Prisma.DbNull,
    invariants: spec.invariants,
    strategyActor: spec.actors.strategyActor,
    executionActor: spec.actors.executionActor,
    estimationActor: spec.actors.estimationActor,
    invariantActor: spec.actors.invariantActor,
    execution: spec.execution,
    tags: spec.tags,
    steps: spec.steps,
    validation: spec.validation,
    changesetId: null,
    sandboxRefs: [],
    validationSummary: null,
    parentPlanId: spec.parentPlanId,
    rootPlanId: spec.rootPlanId,
    depth: spec.depth,
    createdBy: spec.createdBy,
    createdAt,
    updatedAt: createdAt,
  } satisfies Prisma.PlanUncheckedCreateInput;
}

/**
 * What a second creation of the same plan must repeat exactly. Phase, state and the execution fields are left out:
 * they may have moved on by the time a retried creation arrives.
 */
const CREATION_COLUMNS = [
  'workflowId',
  'name',
  'actionName',
  'description',
  'automationLevel',
  'projects',
  'arguments',
  'argumentsOrder',
  'definitionOfDone',
  'automationProfileName',
  'effectiveProfileSnapshot',
  'invariants',
  'strategyActor',
  'executionActor',
  'estimationActor',
  'invariantActor',
  'execution',
  'tags',
  'steps',
  'validation',
  'parentPlanId',
  'rootPlanId',
  'depth',
  'createdBy',
  'createdAt',
] as const satisfies readonly (keyof Plan & keyof CreationRow)[];

/** Through JSON, as the stored copy went: drops `undefined` members the same way, and dates become strings. */
function asStored(value: unknown): unknown {
  return value === Prisma.DbNull || value === undefined
    ? null
    : (JSON.parse(JSON.stringify(value)) as unknown);
}

async function assertSameCreation(tx: Tx, existing: Plan, row: CreationRow, eventSeq: number): Promise<void> {
  const differing = CREATION_COLUMNS.filter(
    (column) => !isDeepStrictEqual(asStored(existing[column]), asStored(row[column])),
  );
  if (differing.length > 0) {
    throw new PlanConflictError(existing.id, `already stored with a different ${differing.join(', ')}`);
  }
  const created = await tx.planEvent.findFirst({
    where: { planId: existing.id, type: 'PLAN_CREATED' },
    select: { seq: true },
  });
  if (created !== null && created.seq !== eventSeq) {
    throw new PlanConflictError(existing.id, `already created by event ${created.seq}, not ${eventSeq}`);
  }
}

/** On a retried write: the ids stored for the input's decision sequence numbers, which must all be there. */
async function existingDecisionIds(tx: Tx, input: PlanStateWrite): Promise<Record<number, string>> {
  const seqs = input.decisions.map((d) => d.seq);
  const rows = await inChunks(seqs, (chunk) =>
    tx.decision.findMany({
      where: { planId: input.planId, seq: { in: chunk } },
      select: { seq: true, id: true },
    }),
  );
  const ids: Record<number, string> = {};
  for (const row of rows) ids[row.seq] = row.id;
  const missing = seqs.filter((seq) => ids[seq] === undefined);
  if (missing.length > 0) {
    // Same event number, different decisions: the caller reused a sequence number, which is a bug upstream.
    throw new PlanConflictError(
      input.planId,
      `event ${input.eventSeq} is already recorded without decision(s) ${missing.join(', ')}`,
    );
  }
  return ids;
}

function errorColumns(error: PlanError | null) {
  return {
    errorType: error?.type ?? null,
    errorMessage: error?.message ?? null,
    errorDetails: error?.details ?? null,
    errorAt: error === null ? null : parseTime(error.at, 'error.at'),
  };
}

/**
 * Ids of plans linked to the project. Project links are a JSON array, so this is one SQL query over its elements
 * rather than loading every plan; the name is normalised the way PlanSpec stores it.
 */
async function planIdsForProject(prisma: PrismaClient, projectName: string): Promise<string[]> {
  const name = namespacedNameSchema.safeParse(projectName);
  if (!name.success) return [];
  const link =
    dialectOf(prisma) === 'postgresql'
      ? Prisma.sql`SELECT 1 FROM jsonb_array_elements(p.project_links) link
          WHERE link->>'projectName' = ${name.data}`
      : Prisma.sql`SELECT 1 FROM json_each(p.project_links) link
          WHERE json_extract(link.value, '$.projectName') = ${name.data}`;
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    SELECT p.plan_id AS id FROM plans p WHERE EXISTS (${link})`;
  return rows.map((r) => r.id);
}

function checkEventSeq(eventSeq: number): void {
  if (!Number.isInteger(eventSeq) || eventSeq < 0) {
    throw new RangeError(`event sequence number must be a non-negative integer, got ${eventSeq}`);
  }
}

// Rows are read back through the domain's schemas so a hand-edited or corrupt row fails loudly here instead of
// reaching the CLI as a value outside its type.
const stringListSchema = z.array(z.string());
const planEventTypeSchema = z.enum(PLAN_EVENT_TYPES);

/**
 * Aliases were free text before seed 000's alias rule reached the domain; links stored then must stay readable,
 * so the rule is enforced where links are made (PlanSpec) and not when they are read back.
 */
const storedProjectLinksSchema = z.array(
  projectLinkSchema.extend({ alias: z.string().nullable().default(null) }),
);

/**
 * The spec a plan was created with, read back from the columns creationRow wrote it into. The same schema that
 * validated it at creation validates it here: a row that no longer makes a valid spec is reported, not guessed at.
 */
function toPlanSpec(row: Plan): PlanSpec {
  const parsed = planSpecSchema.safeParse({
    planId: row.id,
    name: row.name,
    actionName: row.actionName,
    description: row.description,
    projects: row.projects,
    automationLevel: row.automationLevel,
    arguments: row.arguments,
    argumentsOrder: row.argumentsOrder,
    definitionOfDone: row.definitionOfDone,
    automationProfileName: row.automationProfileName,
    effectiveProfileSnapshot: row.effectiveProfileSnapshot,
    invariants: row.invariants,
    actors: {
      strategyActor: row.strategyActor,
      executionActor: row.executionActor,
      estimationActor: row.estimationActor,
      invariantActor: row.invariantActor,
    },
    execution: row.execution,
    tags: row.tags,
    steps: row.steps,
    validation: row.validation,
    parentPlanId: row.parentPlanId,
    rootPlanId: row.rootPlanId,
    depth: row.depth,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
  });
  if (!parsed.success) {
    throw new Error(`plan ${row.id}: its stored spec is not valid: ${describeZodError(parsed.error)}`);
  }
  return parsed.data;
}

function toPlanRecord(row: PlanRow): PlanRecord {
  return {
    planId: row.id,
    workflowId: row.workflowId,
    name: row.name,
    actionName: row.actionName,
    description: row.description,
    projects: storedProjectLinksSchema.parse(row.projects),
    automationLevel: automationLevelSchema.parse(row.automationLevel),
    arguments: argumentsSchema.parse(row.arguments),
    argumentsOrder: stringListSchema.parse(row.argumentsOrder),
    definitionOfDone: row.definitionOfDone,
    automationProfileName: row.automationProfileName,
    effectiveProfileSnapshot:
      row.effectiveProfileSnapshot === null
        ? null
        : profileSnapshotSchema.parse(row.effectiveProfileSnapshot),
    invariants: z.array(planInvariantSchema).parse(row.invariants),
    actors: actorRefsSchema.parse({
      strategyActor: row.strategyActor,
      executionActor: row.executionActor,
      estimationActor: row.estimationActor,
      invariantActor: row.invariantActor,
    }),
    tags: z.array(tagSchema).parse(row.tags),
    phase: phaseSchema.parse(row.phase),
    state: processingStateSchema.parse(row.state),
    changesetId: row.changesetId,
    sandboxRefs: stringListSchema.parse(row.sandboxRefs),
    validationSummary: row.validationSummary,
    error:
      row.errorType === null
        ? null
        : {
            type: row.errorType,
            message: row.errorMessage ?? '',
            details: row.errorDetails,
            at: (row.errorAt ?? row.updatedAt).toISOString(),
          },
    decisionRootId: row.decisionRootId,
    parentPlanId: row.parentPlanId,
    rootPlanId: row.rootPlanId,
    depth: row.depth,
    childPlanIds: row.children.map((child) => child.id),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    applyStatistics: toApplyStatistics(row),
    gate: row.gateStatus === null ? null : (JSON.parse(row.gateStatus) as GateView),
    paused: row.paused === null ? null : (JSON.parse(row.paused) as PauseView),
  };
}

/** All four counts or none: Apply writes them together, so a row with only some of them is reported, not guessed. */
function toApplyStatistics(row: Plan): ApplyStatistics | null {
  const counts = [row.filesCreated, row.filesModified, row.filesDeleted, row.filesMoved];
  if (counts.every((c) => c === null)) return null;
  const [filesCreated, filesModified, filesDeleted, filesMoved] = counts.map((c) => {
    if (c === null || !Number.isInteger(c) || c < 0) {
      throw new Error(
        `plan ${row.id}: its stored Apply statistics are incomplete or invalid (${counts.join(', ')})`,
      );
    }
    return c;
  }) as [number, number, number, number];
  return { filesCreated, filesModified, filesDeleted, filesMoved };
}

function toPlanEventRecord(row: PlanEvent): PlanEventRecord {
  return {
    planId: row.planId,
    seq: row.seq,
    type: planEventTypeSchema.parse(row.type),
    phase: phaseSchema.parse(row.phase),
    state: processingStateSchema.parse(row.state),
    recordedBy: row.recordedBy,
    message: row.message,
    at: row.at.toISOString(),
  };
}

/**
 * Marks a re-run phase's earlier decisions superseded by the decision that caused the re-run. Only decisions still
 * current are marked: one superseded earlier keeps the decision that replaced it first.
 */
async function supersede(
  tx: Prisma.TransactionClient,
  planId: string,
  request: { decisionIds: string[]; bySeq: number },
): Promise<void> {
  if (request.decisionIds.length === 0) return;
  const by = await tx.decision.findUnique({
    where: { planId_seq: { planId, seq: request.bySeq } },
    select: { id: true },
  });
  if (by === null) {
    throw new PlanConflictError(planId, `decision ${request.bySeq} to supersede others with is not recorded`);
  }
  await inChunks(request.decisionIds, async (ids) => [
    await tx.decision.updateMany({
      where: { planId, id: { in: ids.filter((id) => id !== by.id) }, supersededBy: null },
      data: { supersededBy: by.id },
    }),
  ]);
}

async function lastEventSeq(db: Tx | PrismaClient, planId: string): Promise<number> {
  const latest = await db.planEvent.aggregate({ where: { planId }, _max: { seq: true } });
  return latest._max.seq ?? -1;
}

/** A ULID's characters in Crockford base32 all sort at or below this one, in ASCII and in any collation of A–Z. */
const HIGHEST_ID_CHARACTER = 'Z';
const refSelect = {
  id: true,
  name: true,
  phase: true,
  state: true,
  createdAt: true,
} satisfies Prisma.PlanSelect;

async function findPlanRefs(prisma: PrismaClient, lookup: PlanRefLookup): Promise<PlanRefCandidate[]> {
  const { id, idPrefix, name, limit } = lookup;
  if (!(Number.isInteger(limit) && limit > 0))
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  // The prefix becomes a range of the primary key rather than LIKE: SQLite's LIKE ignores case and so skips the
  // index, and a range has no wildcard a hostile prefix could smuggle in. Checked here too, so no caller can
  // widen the range with characters outside the id alphabet.
  if (idPrefix !== undefined && idPrefix !== null && !isIdPrefix(idPrefix)) {
    throw new RangeError(`not an id prefix: ${JSON.stringify(idPrefix.slice(0, 40))}`);
  }
  const order = [{ createdAt: 'asc' }, { id: 'asc' }] satisfies Prisma.PlanOrderByWithRelationInput[];
  const [byId, byPrefix, byName] = await Promise.all([
    id === undefined || id === null
      ? []
      : prisma.plan.findMany({ where: { id }, select: refSelect, take: 1 }),
    idPrefix === undefined || idPrefix === null
      ? []
      : prisma.plan.findMany({
          where: { id: { gte: idPrefix, lte: idPrefix.padEnd(26, HIGHEST_ID_CHARACTER) } },
          select: refSelect,
          orderBy: { id: 'asc' },
          take: limit,
        }),
    name === undefined || name === null
      ? []
      : prisma.plan.findMany({ where: { name }, select: refSelect, orderBy: order, take: limit }),
  ]);
  const found = new Map<string, PlanRefCandidate>();
  for (const row of [...byId, ...byPrefix, ...byName]) {
    found.set(row.id, {
      planId: row.id,
      name: row.name,
      phase: row.phase,
      state: row.state,
      createdAt: row.createdAt.toISOString(),
    });
  }
  return [...found.values()];
}
