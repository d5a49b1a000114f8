/**
 * Plan invariants (seed 000 `PlanInvariant`): constraint texts with the scope they came from. Scope precedence is
 * PLAN > ACTION > PROJECT > GLOBAL; within one scope the order they were added is kept, so CLI output is stable.
 */
import type { Action } from './catalog';
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
  return action.invariants.map((text) => ({ text: text.trim(), scope: 'PLAN', sourceName: action.name }));
}
