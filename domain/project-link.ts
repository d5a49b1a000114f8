/**
 * Project links (seed 000 `ProjectLink`) as the CLI spells them: `--project name[:alias][:ro]`, repeatable.
 *
 * Grammar, decided here and nowhere else:
 * - `acme/api`             the project, no alias, writable
 * - `acme/api:api`         with alias `api`
 * - `acme/api:api:ro`      with alias `api`, read-only
 * - `acme/api::ro`         no alias, read-only (the empty middle part means "no alias")
 * - `acme/api:ro`          refused as ambiguous: `ro` is the read-only flag, never an alias, so the CLI cannot
 *                          tell what was meant; the error says to write `acme/api::ro`. (Links made through the
 *                          API may still use the alias `ro`: the seed's alias rule allows it.)
 * `ro` (any case) is the only flag. Project names and aliases are trimmed and lowercased, as the seed says
 * aliases are; the result must then satisfy the seed's rules.
 */
import { ALIAS_PATTERN, namespacedNameSchema } from './schemas';
import type { ProjectLink } from './schemas';

/**
 * A linked project with its places on disk, as Execute, the actors and a stored changeset see it: the link itself
 * (name, alias, read-only), the project root (read, never written but by Apply) and the sandbox copy to work in
 * (null for a read-only link, which is not copied, and before Execute made one). A type alias, not an interface:
 * changesets store it as Prisma Json, which refuses interface types.
 */
export type Workspace = ProjectLink & {
  /** Absolute path of the project root (the catalog's path when the plan ran). */
  root: string;
  sandbox: string | null;
};

export type ProjectLinkResult = { ok: true; link: ProjectLink } | { ok: false; error: string };

export const READ_ONLY_FLAG = 'ro';

/** The seed's alias rule, in the words every alias error uses. */
export const ALIAS_RULE = 'alias must be lowercase letters, digits, - and _, starting with a letter or digit';

const FORM = 'the form is name[:alias][:ro]';

/**
 * Normalises an alias the way seed 000 does (auto-lowercased; surrounding blanks dropped) and checks its rule.
 * Returns the alias to store, or undefined when even the lowercased text breaks the rule.
 */
export function normalizeAlias(raw: string): string | undefined {
  const alias = raw.trim().toLowerCase();
  return ALIAS_PATTERN.test(alias) ? alias : undefined;
}

/**
 * Parses one `--project name[:alias][:ro]` value (grammar in the module comment). Every error is one line that
 * quotes the option as typed and names the rule it broke.
 */
export function parseProjectLinkOption(text: string): ProjectLinkResult {
  const fail = (rule: string): ProjectLinkResult => ({ ok: false, error: `--project "${text}": ${rule}` });
  const parts = text.split(':');
  if (parts.length > 3) {
    return fail(`too many ":"-separated parts; ${FORM}`);
  }
  const [rawName = '', rawAlias, rawFlag] = parts;

  if (rawName.trim() === '') {
    return fail(`the project name is missing; ${FORM}`);
  }
  const name = namespacedNameSchema.safeParse(rawName);
  if (!name.success) {
    return fail('project name must look like namespace/name (lowercase letters, digits, - and _)');
  }

  let readOnly = false;
  if (rawFlag !== undefined) {
    if (rawFlag.trim().toLowerCase() !== READ_ONLY_FLAG) {
      return fail(`unknown flag "${rawFlag}"; the only flag is ${READ_ONLY_FLAG} (read-only)`);
    }
    readOnly = true;
  }

  let alias: string | null = null;
  if (rawAlias !== undefined) {
    const trimmed = rawAlias.trim();
    if (trimmed === '') {
      if (rawFlag === undefined) {
        return fail(`the alias after ":" is empty; omit the ":" or give an alias (${FORM})`);
      }
    } else if (trimmed.toLowerCase() === READ_ONLY_FLAG) {
      return fail(
        `"${READ_ONLY_FLAG}" is the read-only flag, not an alias; write ${name.data}::${READ_ONLY_FLAG} ` +
          `for a read-only link without an alias`,
      );
    } else {
      const normalized = normalizeAlias(trimmed);
      if (normalized === undefined) {
        return fail(ALIAS_RULE);
      }
      alias = normalized;
    }
  }

  return { ok: true, link: { projectName: name.data, alias, readOnly } };
}

/**
 * The rules a plan's set of links must keep (seed 000): each project is linked once and aliases are unique
 * within the plan. Names and aliases are compared after lowercasing, so `API` and `api` are the same alias.
 * Each link's own alias rule is checked too, so links built without parseProjectLinkOption are held to it.
 * Returns the links normalised (names and aliases lowercased), in the order given.
 */
export function checkProjectLinks(
  links: readonly ProjectLink[],
): { ok: true; links: ProjectLink[] } | { ok: false; error: string } {
  const byName = new Set<string>();
  const byAlias = new Map<string, string>();
  const normalized: ProjectLink[] = [];
  for (const link of links) {
    const name = namespacedNameSchema.safeParse(link.projectName);
    if (!name.success) {
      return {
        ok: false,
        error: `project "${link.projectName}": project name must look like namespace/name (lowercase letters, digits, - and _)`,
      };
    }
    const projectName = name.data;
    if (byName.has(projectName)) {
      return { ok: false, error: `project ${projectName} is linked twice; a plan links each project once` };
    }
    byName.add(projectName);

    let alias: string | null = null;
    if (link.alias !== null) {
      const candidate = normalizeAlias(link.alias);
      if (candidate === undefined) {
        return { ok: false, error: `project ${projectName}: alias "${link.alias}": ${ALIAS_RULE}` };
      }
      const owner = byAlias.get(candidate);
      if (owner !== undefined) {
        return {
          ok: false,
          error: `alias "${candidate}" is used by both ${owner} and ${projectName}; aliases must be unique within a plan`,
        };
      }
      byAlias.set(candidate, projectName);
      alias = candidate;
    }
    normalized.push({ projectName, alias, readOnly: link.readOnly });
  }
  return { ok: true, links: normalized };
}

/**
 * The links a child plan gets: its request's, each naming one of the parent's linked projects by name or alias
 * (`name[:alias][:ro]`), or, when it names none, the parent's links as they are. A child's link is read-only when
 * the parent's is or the request says so: a child can narrow what its parent may write, never widen it.
 */
export function childProjectLinks(
  parentLinks: readonly ProjectLink[],
  requested: readonly string[] | null,
): { ok: true; links: ProjectLink[] } | { ok: false; error: string } {
  if (requested === null) return { ok: true, links: parentLinks.map((link) => ({ ...link })) };
  const links: ProjectLink[] = [];
  for (const text of requested) {
    // The first part names one of the parent's links, by project name or alias; the rest is the link grammar's.
    const [head = '', ...rest] = text.split(':');
    const named = head.trim().toLowerCase();
    const parent = parentLinks.find((link) => link.projectName === named || link.alias === named);
    if (parent === undefined) {
      const linked = parentLinks.map((l) =>
        l.alias === null ? l.projectName : `${l.projectName} (${l.alias})`,
      );
      return {
        ok: false,
        error:
          `projects: "${text}" is not linked to the parent plan, and a subplan may only work on its parent's ` +
          `projects (linked: ${linked.join(', ')})`,
      };
    }
    const parsed = parseProjectLinkOption([parent.projectName, ...rest].join(':'));
    if (!parsed.ok) return { ok: false, error: parsed.error.replace('--project', 'projects:') };
    const wanted = parsed.link;
    if (links.some((link) => link.projectName === parent.projectName)) {
      return { ok: false, error: `projects: ${parent.projectName} is listed twice` };
    }
    links.push({
      projectName: parent.projectName,
      alias: wanted.alias ?? parent.alias,
      readOnly: parent.readOnly || wanted.readOnly,
    });
  }
  return { ok: true, links };
}
