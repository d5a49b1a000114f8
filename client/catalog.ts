/**
 * Actions, projects and automation profiles: validated by the domain, stored by the catalog store. The CLI and
 * `npm start` (built-in actions) go through here, so every rule about adding or removing one lives once.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseActionFile } from '../domain/action-file';
import { automationProfileSchema, projectSchema } from '../domain/catalog';
import type { Action, AutomationProfile, Project } from '../domain/catalog';
import { parseNamespacedName } from '../domain/resolve';
import { RESERVED_ACTION_NAMESPACE, TELL_ACTION_NAME, tellAction } from '../domain/tell';
import { describeZodError } from '../domain/schemas';
import { REPO_ROOT } from '../config/paths';
import { createStores } from '../storage';
import type { Stores } from '../storage';
import { resolveDatabaseUrl, sharedPrismaClient } from '../storage/prisma';
import type { CatalogStore } from '../storage/types';
import type { ClientConfig } from './config';
import { PlanClientError } from './errors';

export const BUILT_IN_ACTIONS_DIR = path.join(REPO_ROOT, 'actions');

export type { Stores };

/** The database alone: lists, records and the catalog need no Temporal server. */
export function openStores(config: Pick<ClientConfig, 'databaseUrl'>): Stores {
  return createStores(sharedPrismaClient(resolveDatabaseUrl(config.databaseUrl)));
}

export function parseName(kind: string, raw: string): string {
  const parsed = parseNamespacedName(`${kind} name`, raw);
  if (!parsed.ok) throw new PlanClientError('usage', parsed.error);
  return parsed.name;
}

/** Reads and validates an action file; nothing is stored unless the whole file is valid. */
export function readActionFile(file: string): Action {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(err);
    throw new PlanClientError('usage', `cannot read action file ${file}: ${reason}`);
  }
  const parsed = parseActionFile(text, file);
  if (!parsed.ok) throw new PlanClientError('usage', parsed.error);
  return parsed.action;
}

export async function addAction(
  catalog: CatalogStore,
  file: string,
): Promise<{ action: Action; created: boolean }> {
  const action = readActionFile(file);
  if (action.name.startsWith(`${RESERVED_ACTION_NAMESPACE}/`)) {
    throw new PlanClientError(
      'usage',
      `${file}: action names under ${RESERVED_ACTION_NAMESPACE}/ are reserved for the engine's own actions ` +
        `(${TELL_ACTION_NAME}); use another namespace, e.g. local/`,
    );
  }
  const created = await catalog.putAction(action, { builtIn: false });
  return { action, created };
}

/**
 * Puts `agents tell`'s action (defined in domain/tell.ts) into the catalog when it is missing or differs from this
 * version's, so plans pin what this engine means by tell and `action show` shows it. An action under the name that
 * a person added (before the namespace was reserved) is never overwritten: the person is told to remove it.
 */
export async function installTellAction(catalog: CatalogStore): Promise<Action> {
  const action = tellAction();
  const existing = await catalog.getAction(action.name);
  if (existing !== null && !existing.builtIn) {
    throw new PlanClientError(
      'refused',
      `the catalog holds an action ${action.name} that a person added; tell needs that name for its own action ` +
        `(agents action remove ${action.name}, then tell again)`,
    );
  }
  if (existing === null || !isDeepStrictEqual(existing.value, action)) {
    await catalog.putAction(action, { builtIn: true });
  }
  return action;
}

export function validateProject(input: { name: string; path: string; description?: string }): Project {
  const name = parseName('project', input.name);
  const root = path.resolve(input.path);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch {
    throw new PlanClientError('usage', `--path ${input.path}: no such directory`);
  }
  if (!isDirectory) throw new PlanClientError('usage', `--path ${input.path}: not a directory`);
  const parsed = projectSchema.safeParse({ name, path: root, description: input.description ?? '' });
  if (!parsed.success) throw new PlanClientError('usage', describeZodError(parsed.error));
  return parsed.data;
}

export function validateProfile(input: Record<string, unknown>): AutomationProfile {
  const parsed = automationProfileSchema.safeParse(input);
  if (!parsed.success) throw new PlanClientError('usage', describeZodError(parsed.error));
  return parsed.data;
}

export async function removeOrFail(
  kind: string,
  name: string,
  remove: (n: string) => Promise<boolean>,
): Promise<void> {
  const parsed = parseName(kind, name);
  if (!(await remove(parsed))) throw new PlanClientError('notFound', `no ${kind} named ${parsed}`);
}

export async function getOrFail<T>(
  kind: string,
  name: string,
  get: (n: string) => Promise<T | null>,
): Promise<T> {
  const parsed = parseName(kind, name);
  const found = await get(parsed);
  if (found === null) throw new PlanClientError('notFound', `no ${kind} named ${parsed}`);
  return found;
}

/**
 * Loads the example actions shipped in actions/. A shipped action replaces an older shipped version but never an
 * action a user added under the same name.
 */
export async function loadBuiltInActions(
  catalog: CatalogStore,
  dir: string = BUILT_IN_ACTIONS_DIR,
): Promise<string[]> {
  const loaded: string[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()) {
    const action = readActionFile(path.join(dir, file));
    const existing = await catalog.getAction(action.name);
    if (existing !== null && !existing.builtIn) continue;
    await catalog.putAction(action, { builtIn: true });
    loaded.push(action.name);
  }
  return loaded;
}
