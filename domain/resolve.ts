/**
 * `plan use` resolution (issue item 8), pure: the caller looks the action, the linked projects and the profile up
 * in the catalog and passes them in; everything else (links, arguments, automation level, profile snapshot,
 * invariants, tags, name) is decided here, and the result is validated with planSpecSchema, so the plan row and
 * the workflow input are the same validated object. A plan that cannot run is never started.
 */
import { resolveArguments } from './arguments';
import type { Action, AutomationProfile, Project } from './catalog';
import { profileSnapshot } from './catalog';
import { inheritedInvariantSet } from './invariant';
import type { StoredInvariant } from './invariant';
import type { AutomationLevel } from './lifecycle';
import { checkProjectLinks } from './project-link';
import { describeZodError, namespacedNameSchema, planSpecSchema, tagSchema } from './schemas';
import type { PlanSpec, ProjectLink } from './schemas';

export interface ResolvePlanInput {
  planId: string;
  /** ISO-8601 timestamp. */
  createdAt: string;
  createdBy: string;
  /** The action, as the catalog holds it. */
  action: Action;
  /** The linked projects the caller looked up, keyed by (lowercase) project name. */
  projects: ReadonlyMap<string, Project> | Readonly<Record<string, Project>>;
  /** Parsed `--project` values (parseProjectLinkOption), in the order given. */
  links: readonly ProjectLink[];
  /** The profile the caller looked up (see chooseProfileName), or null for none. Frozen into the spec. */
  profile: AutomationProfile | null;
  /** Raw `--arg` strings by name (parseArgumentPairs). */
  rawArguments: Readonly<Record<string, string>>;
  /**
   * The order the user typed the arguments in. Accepted for callers that have it, but not used:
   * `argumentsOrder` always follows the action's definition order.
   */
  argumentsOrder?: readonly string[];
  /** `--name`; default `<action short name> on <project names>`. */
  name?: string;
  /** `--description`; default empty. */
  description?: string;
  /** `--tag` values, in the order given; added after the action's tags. */
  tags: readonly string[];
  /** `--automation`; overrides the profile's level, which overrides the action's default. */
  automationLevel?: AutomationLevel;
  /**
   * Stored GLOBAL invariants, and the PROJECT and ACTION ones of the linked projects and the action
   * (InvariantStore.inherited); merged with the action file's into the plan's pinned set. Default none.
   */
  inheritedInvariants?: readonly StoredInvariant[];
  /** For a subplan: its place in the family (domain/subplans.ts checkSubplanDepth). Left out: a root plan. */
  parent?: { parentPlanId: string; rootPlanId: string; depth: number };
}

export type ResolvePlanResult = { ok: true; spec: PlanSpec } | { ok: false; error: string };

const NAME_MAX = 200;

/**
 * Which profile a plan uses: an explicit `--profile` wins, then the action's `default_profile`, else none.
 * The caller looks the returned name up (unknown → its error) and passes the profile to resolvePlanSpec.
 */
export function chooseProfileName(
  explicit: string | undefined,
  action: Pick<Action, 'defaultProfile'>,
): string | null {
  return explicit ?? action.defaultProfile;
}

/**
 * Which automation level a plan runs at: explicit `--automation` > the profile's level > the action's default.
 */
export function chooseAutomationLevel(
  explicit: AutomationLevel | undefined,
  profile: Pick<AutomationProfile, 'automationLevel'> | null,
  action: Pick<Action, 'defaultAutomationLevel'>,
): AutomationLevel {
  return explicit ?? profile?.automationLevel ?? action.defaultAutomationLevel;
}

/**
 * Checks a namespaced name typed on the command line (an action, project or profile) and returns it normalised
 * (trimmed, lowercased); the error names what was expected, e.g.
 * `action "code-review": must look like namespace/name (lowercase letters, digits, - and _)`.
 */
export function parseNamespacedName(
  kind: string,
  text: string,
): { ok: true; name: string } | { ok: false; error: string } {
  const parsed = namespacedNameSchema.safeParse(text);
  return parsed.success
    ? { ok: true, name: parsed.data }
    : { ok: false, error: `${kind} "${text}": ${describeZodError(parsed.error)}` };
}

/** `<action short name> on <project names>`, e.g. `code-review on acme/api, acme/web`, cut to 200 characters. */
export function defaultPlanName(actionName: string, projectNames: readonly string[]): string {
  const short = actionName.slice(actionName.indexOf('/') + 1);
  const name = `${short} on ${projectNames.join(', ')}`;
  return name.length <= NAME_MAX ? name : `${name.slice(0, NAME_MAX - 1)}…`;
}

function lookupProject(projects: ResolvePlanInput['projects'], name: string): Project | undefined {
  if (projects instanceof Map) return projects.get(name);
  const record = projects as Readonly<Record<string, Project>>;
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * Resolves everything a plan needs before its workflow starts. Rules:
 * - links: at least one; checked with checkProjectLinks (names and aliases unique, aliases lowercased); every
 *   linked project must be in `projects` (else `--project <name>: unknown project`);
 * - arguments: resolveArguments against the action's definitions; `argumentsOrder` = the action's order;
 * - automation level: chooseAutomationLevel; profile: the one passed, frozen with profileSnapshot (a copy);
 * - actors and definition of done: the action's;
 * - invariants: the action file's and the stored ACTION ones promoted to PLAN scope with `sourceName` = the action,
 *   the linked projects' PROJECT ones and the GLOBAL ones, merged (mergeInvariants: precedence, duplicates
 *   collapsed) into the set the plan is pinned to;
 * - tags: the action's, then `--tag` values, trimmed, duplicates dropped, first occurrence kept;
 * - name: `--name` (trimmed, non-empty) or defaultPlanName;
 * - the result passes planSpecSchema; any error is one line naming the option or field and the rule.
 */
export function resolvePlanSpec(input: ResolvePlanInput): ResolvePlanResult {
  const fail = (error: string): ResolvePlanResult => ({ ok: false, error });
  const { action } = input;

  if (input.links.length === 0) {
    return fail('--project: a plan targets at least one project (give --project name[:alias][:ro])');
  }
  const links = checkProjectLinks(input.links);
  if (!links.ok) return fail(links.error);
  for (const link of links.links) {
    if (lookupProject(input.projects, link.projectName) === undefined) {
      return fail(`--project ${link.projectName}: unknown project (see agents project list)`);
    }
  }

  const args = resolveArguments(action.arguments, input.rawArguments);
  if (!args.ok) return fail(args.error);

  const tags: string[] = [];
  for (const tag of input.tags) {
    const parsed = tagSchema.safeParse(tag);
    if (!parsed.success) return fail(`--tag "${tag}": ${describeZodError(parsed.error)}`);
  }
  for (const tag of [...action.tags, ...input.tags]) {
    const trimmed = tag.trim();
    if (!tags.includes(trimmed)) tags.push(trimmed);
  }

  let name: string;
  if (input.name === undefined) {
    name = defaultPlanName(
      action.name,
      links.links.map((l) => l.projectName),
    );
  } else {
    name = input.name.trim();
    if (name === '') return fail('--name: must not be empty');
    if (name.length > NAME_MAX) return fail(`--name: must be at most ${NAME_MAX} characters`);
  }

  const candidate = {
    planId: input.planId,
    name,
    actionName: action.name,
    description: input.description ?? '',
    projects: links.links,
    automationLevel: chooseAutomationLevel(input.automationLevel, input.profile, action),
    arguments: args.values,
    argumentsOrder: args.order,
    definitionOfDone: action.definitionOfDone,
    automationProfileName: input.profile?.name ?? null,
    effectiveProfileSnapshot: input.profile === null ? null : profileSnapshot(input.profile),
    invariants: inheritedInvariantSet(
      action,
      input.inheritedInvariants ?? [],
      links.links.map((l) => l.projectName),
    ).map((entry) => entry.invariant),
    actors: { ...action.actors },
    execution: { ...action.execution, ignore: [...action.execution.ignore] },
    tags,
    steps: action.steps,
    validation: action.validation,
    parentPlanId: input.parent?.parentPlanId ?? null,
    rootPlanId: input.parent?.rootPlanId ?? null,
    depth: input.parent?.depth ?? 0,
    createdBy: input.createdBy,
    createdAt: input.createdAt,
  };
  const parsed = planSpecSchema.safeParse(candidate);
  if (!parsed.success) return fail(`invalid plan: ${describeZodError(parsed.error)}`);
  return { ok: true, spec: parsed.data };
}
