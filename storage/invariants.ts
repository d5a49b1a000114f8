/**
 * Stored invariants (issue 7). Rows are read back through the domain's schemas, so a hand-edited rule that no
 * longer parses fails loudly here instead of being enforced as something else.
 */
import { ulid } from 'ulid';
import { z } from 'zod';
import { invariantRuleSchema } from '../domain/invariant-rule';
import type { InvariantRule } from '../domain/invariant-rule';
import type { StoredInvariant } from '../domain/invariant';
import { INVARIANT_SCOPES } from '../domain/schemas';
import type { InvariantScope } from '../domain/schemas';
import { Prisma } from './generated/prisma/client';
import type { Invariant, PrismaClient } from './generated/prisma/client';
import { parseTime } from './time';

export interface AddInvariantInput {
  text: string;
  /** Seed 004's --description; null or left out for none. */
  description?: string | null;
  scope: InvariantScope;
  target: string | null;
  rule: InvariantRule | null;
  author: string;
  at: string;
}

export interface InvariantFilter {
  scope?: InvariantScope;
  target?: string;
}

export interface InvariantStore {
  add(input: AddInvariantInput): Promise<StoredInvariant>;
  get(id: string): Promise<StoredInvariant | null>;
  /** Oldest first: the order they were added is their order within a scope. */
  list(filter?: InvariantFilter): Promise<StoredInvariant[]>;
  remove(id: string): Promise<boolean>;
  /** What a new plan on these projects from this action inherits: GLOBAL, its projects' and its action's. */
  inherited(projects: readonly string[], actionName: string): Promise<StoredInvariant[]>;
}

const scopeSchema = z.enum(INVARIANT_SCOPES);

function toStored(row: Invariant): StoredInvariant {
  return {
    id: row.id,
    text: row.text,
    description: row.description,
    scope: scopeSchema.parse(row.scope),
    target: row.target,
    rule: row.rule === null ? null : invariantRuleSchema.parse(row.rule),
    author: row.author,
    createdAt: row.createdAt.toISOString(),
  };
}

const OLDEST_FIRST = [
  { createdAt: 'asc' },
  { id: 'asc' },
] satisfies Prisma.InvariantOrderByWithRelationInput[];

export function createInvariantStore(prisma: PrismaClient): InvariantStore {
  return {
    async add(input) {
      const row = await prisma.invariant.create({
        data: {
          id: ulid(),
          text: input.text.trim(),
          description: input.description?.trim() ?? null,
          scope: input.scope,
          target: input.target,
          rule: input.rule ?? Prisma.DbNull,
          author: input.author,
          createdAt: parseTime(input.at, 'at'),
        },
      });
      return toStored(row);
    },

    async get(id) {
      const row = await prisma.invariant.findUnique({ where: { id } });
      return row === null ? null : toStored(row);
    },

    async list(filter = {}) {
      const rows = await prisma.invariant.findMany({
        where: {
          ...(filter.scope === undefined ? {} : { scope: filter.scope }),
          ...(filter.target === undefined ? {} : { target: filter.target }),
        },
        orderBy: OLDEST_FIRST,
      });
      return rows.map(toStored);
    },

    async remove(id) {
      const { count } = await prisma.invariant.deleteMany({ where: { id } });
      return count > 0;
    },

    async inherited(projects, actionName) {
      const rows = await prisma.invariant.findMany({
        where: {
          OR: [
            { scope: 'GLOBAL' },
            { scope: 'PROJECT', target: { in: [...projects] } },
            { scope: 'ACTION', target: actionName },
          ],
        },
        orderBy: OLDEST_FIRST,
      });
      return rows.map(toStored);
    },
  };
}
