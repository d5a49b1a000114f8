/**
 * The files a person added to a plan as background (`agents plan context add|list|clear`, seed 001's context
 * add/clear). Keyed by (plan, path): adding a path again replaces its content. The actors read them with the plan.
 */
import type { PlanContextFile, PrismaClient } from './generated/prisma/client';
import { ContextTooLargeError, PlanNotFoundError } from './errors';
import { claimWriteLock } from './lock';
import { parseTime } from './time';

export interface ContextFileInput {
  path: string;
  sha256: string;
  content: Uint8Array;
}

export interface StoredContextFile {
  path: string;
  sha256: string;
  size: number;
  binary: boolean;
  addedBy: string;
  addedAt: string;
}

export interface ContextFileStore {
  /**
   * Adds (or replaces, by path) files in a plan's context; returns how many were new. With `maxTotalBytes`, throws
   * ContextTooLargeError and stores nothing when the context would then hold more than that.
   */
  add(
    planId: string,
    files: ContextFileInput[],
    by: string,
    at: string,
    options?: { maxTotalBytes?: number },
  ): Promise<number>;
  list(planId: string): Promise<StoredContextFile[]>;
  /** The files with their content, for the actors. */
  read(planId: string): Promise<Array<StoredContextFile & { content: Uint8Array }>>;
  clear(planId: string): Promise<number>;
}

/** Strict UTF-8: a file that does not decode is binary for the actors. */
const utf8 = new TextDecoder('utf-8', { fatal: true });
export function isBinary(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return true;
  try {
    utf8.decode(bytes);
    return false;
  } catch {
    return true;
  }
}

export function createContextFileStore(prisma: PrismaClient): ContextFileStore {
  const requirePlan = async (planId: string): Promise<void> => {
    const plan = await prisma.plan.findUnique({ where: { id: planId }, select: { id: true } });
    if (plan === null) throw new PlanNotFoundError(planId);
  };

  return {
    async add(planId, files, by, at, options = {}) {
      const addedAt = parseTime(at, 'at');
      return prisma.$transaction(async (tx) => {
        await claimWriteLock(tx, planId);
        const plan = await tx.plan.findUnique({ where: { id: planId }, select: { id: true } });
        if (plan === null) throw new PlanNotFoundError(planId);
        const stored = await tx.planContextFile.findMany({
          where: { planId },
          select: { path: true, size: true },
        });
        const adding = new Set(files.map((f) => f.path));
        const known = new Set(stored.filter((row) => adding.has(row.path)).map((row) => row.path));
        if (options.maxTotalBytes !== undefined) {
          // A re-added path replaces its old content, so only the files it does not replace are kept.
          const keptBytes = stored
            .filter((row) => !adding.has(row.path))
            .reduce((sum, row) => sum + row.size, 0);
          const totalBytes = files.reduce((sum, f) => sum + f.content.byteLength, keptBytes);
          if (totalBytes > options.maxTotalBytes) {
            throw new ContextTooLargeError(planId, totalBytes, keptBytes, options.maxTotalBytes);
          }
        }
        for (const file of files) {
          const content = Buffer.from(file.content);
          const data = {
            sha256: file.sha256,
            size: content.length,
            content,
            binary: isBinary(file.content),
            addedBy: by,
            addedAt,
          };
          await tx.planContextFile.upsert({
            where: { planId_path: { planId, path: file.path } },
            create: { planId, path: file.path, ...data },
            update: data,
          });
        }
        return files.filter((f) => !known.has(f.path)).length;
      });
    },

    async list(planId) {
      await requirePlan(planId);
      const rows = await prisma.planContextFile.findMany({
        where: { planId },
        orderBy: { path: 'asc' },
        omit: { content: true },
      });
      return rows.map(toStoredContextFile);
    },

    async read(planId) {
      const rows = await prisma.planContextFile.findMany({ where: { planId }, orderBy: { path: 'asc' } });
      return rows.map((r) => ({ ...toStoredContextFile(r), content: new Uint8Array(r.content) }));
    },

    async clear(planId) {
      await requirePlan(planId);
      const { count } = await prisma.planContextFile.deleteMany({ where: { planId } });
      return count;
    },
  };
}

function toStoredContextFile(row: Omit<PlanContextFile, 'content'>): StoredContextFile {
  return {
    path: row.path,
    sha256: row.sha256,
    size: row.size,
    binary: row.binary,
    addedBy: row.addedBy,
    addedAt: row.addedAt.toISOString(),
  };
}
