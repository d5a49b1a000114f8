/**
 * Changesets: what Execute produced. A changeset is keyed by (plan, Execute run): a
 * retried Execute activity replaces the changeset of its own run and keeps its id, so the plan never points at a
 * changeset that a retry orphaned. Apply's result is stored on the changeset, so a retried Apply returns it.
 */
import { z } from 'zod';
import type {
  ApplyResult,
  Changeset,
  ChangesetProject,
  ChangesetSummary,
  FileChange,
} from '../domain/changeset';
import { CHANGE_OPERATIONS, sortChanges } from '../domain/changeset';
import { ulid } from 'ulid';
import { PlanNotFoundError } from './errors';
import type { PrismaClient } from './generated/prisma/client';
import { claimWriteLock } from './lock';
import { parseTime } from './time';

export interface SaveChangesetInput {
  planId: string;
  attempt: number;
  projects: ChangesetProject[];
  changes: FileChange[];
  createdAt: string;
}

export interface ChangesetStore {
  /** Stores the changeset of one Execute run; a second call for the same run replaces it and keeps the id. */
  save(input: SaveChangesetInput): Promise<string>;
  get(changesetId: string): Promise<Changeset | null>;
  /**
   * The changeset without its files' bytes. A changeset may hold 100 MiB of them: a reader that needs only paths
   * and operations (the invariant checks) must not make the worker hold them.
   */
  getSummary(changesetId: string): Promise<ChangesetSummary | null>;
  /** The changeset of the plan's latest Execute run. */
  latestForPlan(planId: string): Promise<Changeset | null>;
  getApplyResult(changesetId: string): Promise<ApplyResult | null>;
  recordApplyResult(result: ApplyResult): Promise<void>;
}

/** Changesets stored before a linked project had one shape call its name `name`; they read as `projectName`. */
const projectsSchema = z.array(
  z
    .object({
      projectName: z.string().optional(),
      name: z.string().optional(),
      alias: z.string().nullable(),
      root: z.string(),
      readOnly: z.boolean(),
      sandbox: z.string().nullable(),
    })
    .transform(({ name, projectName, ...rest }, ctx) => {
      const resolved = projectName ?? name;
      if (resolved === undefined) {
        ctx.addIssue({ code: 'custom', message: 'a changeset project has no projectName' });
        return z.NEVER;
      }
      return { projectName: resolved, ...rest };
    }),
);
const operationSchema = z.enum(CHANGE_OPERATIONS);
const applyResultSchema = z.object({
  changesetId: z.string(),
  created: z.number().int(),
  modified: z.number().int(),
  deleted: z.number().int(),
  moved: z.number().int(),
  alreadyApplied: z.number().int(),
  appliedAt: z.string(),
});

/** What a changeset is besides its changes, from its row. */
function changesetHeader(row: {
  id: string;
  planId: string;
  attempt: number;
  projects: unknown;
  createdAt: Date;
}): Omit<Changeset, 'changes'> {
  return {
    changesetId: row.id,
    planId: row.planId,
    attempt: row.attempt,
    projects: projectsSchema.parse(row.projects),
    createdAt: row.createdAt.toISOString(),
  };
}

export function createChangesetStore(prisma: PrismaClient): ChangesetStore {
  const load = async (where: { id: string } | { planId: string }): Promise<Changeset | null> => {
    const row =
      'id' in where
        ? await prisma.changeset.findUnique({
            where,
            include: { changes: { orderBy: { index: 'asc' } } },
          })
        : await prisma.changeset.findFirst({
            where,
            orderBy: { attempt: 'desc' },
            include: { changes: { orderBy: { index: 'asc' } } },
          });
    if (row === null) return null;
    return {
      ...changesetHeader(row),
      changes: row.changes.map((c) => ({
        project: c.project,
        operation: operationSchema.parse(c.operation),
        path: c.path,
        fromPath: c.fromPath,
        beforeHash: c.beforeHash,
        afterHash: c.afterHash,
        // The driver's buffers as they are: a copy would double the memory of a large changeset.
        beforeContent: c.beforeContent,
        afterContent: c.afterContent,
      })),
    };
  };

  return {
    async save(input) {
      const createdAt = parseTime(input.createdAt, 'createdAt');
      const changes = sortChanges(input.changes);
      return prisma.$transaction(async (tx) => {
        await claimWriteLock(tx, input.planId);
        const plan = await tx.plan.findUnique({ where: { id: input.planId }, select: { id: true } });
        if (plan === null) throw new PlanNotFoundError(input.planId);
        const existing = await tx.changeset.findUnique({
          where: { planId_attempt: { planId: input.planId, attempt: input.attempt } },
        });
        const id = existing?.id ?? ulid();
        if (existing === null) {
          await tx.changeset.create({
            data: { id, planId: input.planId, attempt: input.attempt, projects: input.projects, createdAt },
          });
        } else {
          await tx.fileChange.deleteMany({ where: { changesetId: id } });
          await tx.changeset.update({ where: { id }, data: { projects: input.projects, createdAt } });
        }
        // One row per change: contents can be large, and createMany keeps it to few statements.
        await tx.fileChange.createMany({
          data: changes.map((c, index) => ({
            changesetId: id,
            index,
            project: c.project,
            operation: c.operation,
            path: c.path,
            fromPath: c.fromPath,
            beforeHash: c.beforeHash,
            afterHash: c.afterHash,
            beforeContent: c.beforeContent === null ? null : Buffer.from(c.beforeContent),
            afterContent: c.afterContent === null ? null : Buffer.from(c.afterContent),
          })),
        });
        return id;
      });
    },

    get: (changesetId) => load({ id: changesetId }),

    async getSummary(changesetId) {
      const row = await prisma.changeset.findUnique({
        where: { id: changesetId },
        include: {
          changes: {
            orderBy: { index: 'asc' },
            select: {
              project: true,
              operation: true,
              path: true,
              fromPath: true,
              beforeHash: true,
              afterHash: true,
            },
          },
        },
      });
      if (row === null) return null;
      return {
        ...changesetHeader(row),
        changes: row.changes.map((c) => ({ ...c, operation: operationSchema.parse(c.operation) })),
      };
    },
    latestForPlan: (planId) => load({ planId }),

    async getApplyResult(changesetId) {
      const row = await prisma.changeset.findUnique({
        where: { id: changesetId },
        select: { applyResult: true },
      });
      return row === null || row.applyResult === null ? null : applyResultSchema.parse(row.applyResult);
    },

    async recordApplyResult(result) {
      await prisma.changeset.update({
        where: { id: result.changesetId },
        data: { applyResult: result, appliedAt: parseTime(result.appliedAt, 'appliedAt') },
      });
    },
  };
}
