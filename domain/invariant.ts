/**
 * Plan invariants (seed 000 `PlanInvariant`, seed 004's invariant API): constraint texts with the scope they came
 * from. Scope precedence is PLAN > ACTION > PROJECT > GLOBAL (ACTION ones are promoted to PLAN when a plan is made,
 * so a plan's set only holds PLAN, PROJECT and GLOBAL); within one scope the order they were added is kept, so
 * CLI output is stable.
 */
import type { Action } from './catalog';
import type { InvariantRule } from './invariant-rule';
import type { InvariantScope, PlanInvariant } from './schemas';

/** Seed 000's precedence, highest first. */
export const INVARIANT_PRECEDENCE: readonly InvariantScope[] = ['PLAN', 'ACTION', 'PROJECT', 'GLOBAL'];

/** 0 for the highest-precedence scope (PLAN), 3 for the lowest (GLOBAL). */
export function invariantRank(scope: InvariantScope): number {
  return INVARIANT_PRECEDENCE.indexOf(scope);
}

/**
 * Orders invariants by scope precedence, keeping insertion order within a scope (a stable sort). Returns a new
 * array; the input is not changed.
 */
export function orderInvariants<T extends Pick<PlanInvariant, 'scope'>>(list: readonly T[]): T[] {
  return list
    .map((item, index) => ({ item, index }))
    .sort((a, b) => invariantRank(a.item.scope) - invariantRank(b.item.scope) || a.index - b.index)
    .map(({ item }) => item);
}

/**
 * An action's invariants become the plan's own at `plan use` (issue item 8): scope PLAN, with `sourceName` naming
 * the action so a reader can tell where each came from. Texts are trimmed; order is the action's.
 */
export function promoteActionInvariants(action: Pick<Action, 'name' | 'invariants'>): PlanInvariant[] {
  return action.invariants.map((text) => ({
    text: text.trim(),
    scope: 'PLAN',
    sourceName: action.name,
    id: null,
    rule: null,
  }));
}

/**
 * An invariant as `agents invariant add` stored it. `text` is the constraint (seed 004's NAME: what is checked,
 * merged and shown first); `description` is seed 004's optional --description, what it means and why (ADR 0018).
 */
export interface StoredInvariant {
  id: string;
  text: string;
  description: string | null;
  scope: InvariantScope;
  /** The project name, action name or plan id the scope names; null for GLOBAL. */
  target: string | null;
  rule: InvariantRule | null;
  author: string;
  createdAt: string;
}

/**
 * A stored invariant as a plan carries it: an ACTION one is promoted to PLAN scope with the action as its source
 * (seed 004), a PROJECT one keeps the project as its source, a PLAN one added to the plan has no other source.
 */
export function asPlanInvariant(stored: StoredInvariant): PlanInvariant {
  return {
    text: stored.text,
    scope: stored.scope === 'ACTION' ? 'PLAN' : stored.scope,
    sourceName: stored.scope === 'GLOBAL' || stored.scope === 'PLAN' ? null : stored.target,
    id: stored.id,
    rule: stored.rule,
    // Only when there is one, so the pinned set of a plan without descriptions is what it always was.
    ...(stored.description === null ? {} : { description: stored.description }),
  };
}

/**
 * The text two invariants are compared by: case, surrounding and repeated blanks, and a closing full stop do not
 * make a different constraint.
 */
export function normalizeInvariantText(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.!]+$/, '');
}

export interface MergedInvariant<T> {
  invariant: T;
  /** Lower-precedence invariants with the same normalised text, collapsed into this one. */
  duplicates: T[];
}

/**
 * The effective set (seed 004): ordered by precedence (PLAN > PROJECT > GLOBAL; ACTION invariants arrive promoted
 * to PLAN), insertion order kept within a scope, and invariants with the same normalised text collapsed into the
 * highest-precedence one, which keeps a note of what it replaced. Two PROJECT invariants of different projects
 * are different constraints (each governs its own project), so they never collapse into each other.
 */
export function mergeInvariants<T extends Pick<PlanInvariant, 'scope' | 'text' | 'sourceName'>>(
  list: readonly T[],
): MergedInvariant<T>[] {
  const merged: MergedInvariant<T>[] = [];
  const byText = new Map<string, MergedInvariant<T>[]>();
  const sameProjectOrOtherScope = (a: T, b: T): boolean =>
    a.scope !== 'PROJECT' || b.scope !== 'PROJECT' || a.sourceName === b.sourceName;
  for (const invariant of orderInvariants(list)) {
    const key = normalizeInvariantText(invariant.text);
    const candidates = byText.get(key) ?? [];
    const kept = candidates.find((entry) => sameProjectOrOtherScope(entry.invariant, invariant));
    if (kept !== undefined) {
      kept.duplicates.push(invariant);
      continue;
    }
    const entry = { invariant, duplicates: [] };
    byText.set(key, [...candidates, entry]);
    merged.push(entry);
  }
  return merged;
}

/** The effective invariants themselves, without the bookkeeping. */
export function effectiveInvariants<T extends Pick<PlanInvariant, 'scope' | 'text' | 'sourceName'>>(
  list: readonly T[],
): T[] {
  return mergeInvariants(list).map((entry) => entry.invariant);
}

/**
 * The invariants a new plan on these projects from this action starts with, merged: the action file's and the
 * stored ACTION ones (promoted to PLAN), the stored PROJECT ones of these projects, and the GLOBAL ones.
 * `plan use` pins the result into the plan; `invariant list --effective` shows it with what each entry collapsed.
 */
export function inheritedInvariantSet(
  action: Pick<Action, 'name' | 'invariants'> | null,
  stored: readonly StoredInvariant[],
  projectNames: readonly string[],
): MergedInvariant<PlanInvariant>[] {
  const applies = (inv: StoredInvariant): boolean =>
    inv.scope === 'GLOBAL' ||
    (inv.scope === 'PROJECT' && inv.target !== null && projectNames.includes(inv.target)) ||
    (inv.scope === 'ACTION' && action !== null && inv.target === action.name);
  return mergeInvariants([
    ...(action === null ? [] : promoteActionInvariants(action)),
    ...stored.filter(applies).map(asPlanInvariant),
  ]);
}

/** What a plan enforces now: the set pinned at its creation and the PLAN-scope invariants added to it since. */
export function enforcedInvariants(
  pinned: readonly PlanInvariant[],
  addedToPlan: readonly StoredInvariant[],
): PlanInvariant[] {
  return effectiveInvariants([...pinned, ...addedToPlan.map(asPlanInvariant)]);
}
