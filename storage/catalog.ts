/**
 * The catalog's repository: actions, projects and automation profiles, each keyed by its namespaced name. Plans
 * refer to these by name only and keep their own copies of what they used, so nothing here is referenced by a
 * foreign key and any entry can be replaced or removed while plans made from it live on.
 */
import { actionSchema, automationProfileSchema, projectSchema } from '../domain/catalog';
import type { Action, AutomationProfile, Project, Stored } from '../domain/catalog';
import { namespacedNameSchema } from '../domain/schemas';
import type { Prisma, PrismaClient } from './generated/prisma/client';
import type {
  Action as ActionRow,
  AutomationProfile as AutomationProfileRow,
  Project as ProjectRow,
} from './generated/prisma/client';
import { CATALOG_SCOPE, claimWriteLock } from './lock';
import type { CatalogStore } from './types';

export interface CatalogStoreOptions {
  /** Source of `createdAt`/`updatedAt`; tests pass a fake clock. Default: the system clock. */
  now?: () => Date;
}

export function createCatalogStore(prisma: PrismaClient, options: CatalogStoreOptions = {}): CatalogStore {
  const now = options.now ?? (() => new Date());

  /**
   * Insert-or-replace that reports which one happened. Prisma's upsert does not say, so the existence check and
   * the write share a transaction that holds the write lock from its first statement (see claimWriteLock).
   */
  function put(
    exists: (tx: Tx) => Promise<boolean>,
    create: (tx: Tx, at: Date) => Promise<unknown>,
    replace: (tx: Tx, at: Date) => Promise<unknown>,
  ): Promise<boolean> {
    const at = now();
    return prisma.$transaction(async (tx) => {
      await claimWriteLock(tx, CATALOG_SCOPE);
      if (await exists(tx)) {
        await replace(tx, at);
        return false;
      }
      await create(tx, at);
      return true;
    });
  }

  return {
    putAction(action, { builtIn } = {}) {
      const where = { name: action.name };
      const columns = actionColumns(action);
      return put(
        async (tx) => (await tx.action.count({ where })) > 0,
        (tx, at) =>
          tx.action.create({ data: { ...columns, builtIn: builtIn ?? false, createdAt: at, updatedAt: at } }),
        // Omitting builtIn on a replace keeps the stored flag, so editing a shipped action does not disown it.
        (tx, at) =>
          tx.action.update({
            where,
            data: { ...columns, ...(builtIn === undefined ? {} : { builtIn }), updatedAt: at },
          }),
      );
    },
    async getAction(name) {
      const key = catalogKey(name);
      const row = key === null ? null : await prisma.action.findUnique({ where: { name: key } });
      return row === null ? null : toStoredAction(row);
    },
    async listActions() {
      return (await prisma.action.findMany({ orderBy: { name: 'asc' } })).map(toStoredAction);
    },
    async removeAction(name) {
      const key = catalogKey(name);
      return key !== null && (await prisma.action.deleteMany({ where: { name: key } })).count > 0;
    },

    putProject(project) {
      const where = { name: project.name };
      const columns = { name: project.name, path: project.path, description: project.description };
      return put(
        async (tx) => (await tx.project.count({ where })) > 0,
        (tx, at) => tx.project.create({ data: { ...columns, createdAt: at, updatedAt: at } }),
        (tx, at) => tx.project.update({ where, data: { ...columns, updatedAt: at } }),
      );
    },
    async getProject(name) {
      const key = catalogKey(name);
      const row = key === null ? null : await prisma.project.findUnique({ where: { name: key } });
      return row === null ? null : toStoredProject(row);
    },
    async listProjects() {
      return (await prisma.project.findMany({ orderBy: { name: 'asc' } })).map(toStoredProject);
    },
    async removeProject(name) {
      const key = catalogKey(name);
      return key !== null && (await prisma.project.deleteMany({ where: { name: key } })).count > 0;
    },

    putProfile(input) {
      const profile = automationProfileSchema.parse(input);
      const where = { name: profile.name };
      const columns = {
        name: profile.name,
        description: profile.description,
        automationLevel: profile.automationLevel,
        minDecisionConfidence: profile.minDecisionConfidence,
        maxAutoRetries: profile.maxAutoRetries,
        approvalTimeoutSeconds: profile.approvalTimeoutSeconds,
        maxSubplanDepth: profile.maxSubplanDepth,
        onTimeout: profile.onTimeout,
        approvers: profile.approvers,
        requiredApprovals: profile.requiredApprovals,
      };
      return put(
        async (tx) => (await tx.automationProfile.count({ where })) > 0,
        (tx, at) => tx.automationProfile.create({ data: { ...columns, createdAt: at, updatedAt: at } }),
        (tx, at) => tx.automationProfile.update({ where, data: { ...columns, updatedAt: at } }),
      );
    },
    async getProfile(name) {
      const key = catalogKey(name);
      const row = key === null ? null : await prisma.automationProfile.findUnique({ where: { name: key } });
      return row === null ? null : toStoredProfile(row);
    },
    async listProfiles() {
      return (await prisma.automationProfile.findMany({ orderBy: { name: 'asc' } })).map(toStoredProfile);
    },
    async removeProfile(name) {
      const key = catalogKey(name);
      return key !== null && (await prisma.automationProfile.deleteMany({ where: { name: key } })).count > 0;
    },
  };
}

type Tx = Prisma.TransactionClient;

/**
 * Names are stored as the domain normalises them (trimmed, lowercase), so a lookup normalises the same way; a
 * string that cannot be a name matches nothing rather than throwing.
 */
function catalogKey(name: string): string | null {
  const parsed = namespacedNameSchema.safeParse(name);
  return parsed.success ? parsed.data : null;
}

function actionColumns(action: Action) {
  return {
    name: action.name,
    description: action.description,
    arguments: action.arguments,
    defaultAutomationLevel: action.defaultAutomationLevel,
    defaultProfile: action.defaultProfile,
    actors: action.actors,
    execution: action.execution,
    invariants: action.invariants,
    definitionOfDone: action.definitionOfDone,
    tags: action.tags,
    steps: action.steps,
    validation: action.validation,
  };
}

function timestamps(row: { createdAt: Date; updatedAt: Date }) {
  return { createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}

// Rows are read back through the domain's schemas so a hand-edited or corrupt row fails loudly here instead of
// reaching a caller as a value outside its type.

function toStoredAction(row: ActionRow): Stored<Action> {
  return {
    value: actionSchema.parse({
      name: row.name,
      description: row.description,
      arguments: row.arguments,
      defaultAutomationLevel: row.defaultAutomationLevel,
      defaultProfile: row.defaultProfile,
      actors: row.actors,
      // Null for actions stored before execution policies existed: the schema's cautious default.
      execution: row.execution ?? undefined,
      invariants: row.invariants,
      definitionOfDone: row.definitionOfDone,
      tags: row.tags,
      steps: row.steps,
      validation: row.validation,
    }),
    builtIn: row.builtIn,
    ...timestamps(row),
  };
}

function toStoredProject(row: ProjectRow): Stored<Project> {
  return {
    value: projectSchema.parse({ name: row.name, path: row.path, description: row.description }),
    // Only actions have a built_in column: the engine ships actions, never projects or profiles.
    builtIn: false,
    ...timestamps(row),
  };
}

function toStoredProfile(row: AutomationProfileRow): Stored<AutomationProfile> {
  return {
    value: automationProfileSchema.parse({
      name: row.name,
      description: row.description,
      automationLevel: row.automationLevel,
      minDecisionConfidence: row.minDecisionConfidence,
      maxAutoRetries: row.maxAutoRetries,
      approvalTimeoutSeconds: row.approvalTimeoutSeconds,
      maxSubplanDepth: row.maxSubplanDepth,
      onTimeout: row.onTimeout,
      approvers: row.approvers ?? [],
      requiredApprovals: row.requiredApprovals,
    }),
    builtIn: false,
    ...timestamps(row),
  };
}
