/**
 * Every store over one Prisma client, assembled in one place: the worker, the CLI and the tests open the same set.
 */
import { createCatalogStore } from './catalog';
import { createChangesetStore } from './changesets';
import type { ChangesetStore } from './changesets';
import { createContextFileStore } from './context-files';
import type { ContextFileStore } from './context-files';
import { createDecisionStore } from './decisions';
import type { PrismaClient } from './generated/prisma/client';
import { createInvariantStore } from './invariants';
import type { InvariantStore } from './invariants';
import { createPlanStore } from './plans';
import type { CatalogStore, DecisionStore, PlanStore } from './types';

export interface Stores {
  plans: PlanStore;
  decisions: DecisionStore;
  catalog: CatalogStore;
  changesets: ChangesetStore;
  contextFiles: ContextFileStore;
  invariants: InvariantStore;
}

export function createStores(prisma: PrismaClient): Stores {
  return {
    plans: createPlanStore(prisma),
    decisions: createDecisionStore(prisma),
    catalog: createCatalogStore(prisma),
    changesets: createChangesetStore(prisma),
    contextFiles: createContextFileStore(prisma),
    invariants: createInvariantStore(prisma),
  };
}
