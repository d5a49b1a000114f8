/**
 * Where an activity finds the spec of the plan it works for. A lean plan's workflow names the plan by id and the
 * spec travels once, in the workflow's input (ADR 0011); the activity reads it from the plan's row. A spec never
 * changes after creation (it pins the action's steps, the invariants and the profile), so each worker keeps the
 * specs it has read, and a plan's activities read its row once per worker.
 */
import type { PlanSpec } from '../domain/plan';
import { PlanNotFoundError } from '../storage/errors';
import type { PlanStore } from '../storage/types';
import type { PlanRef } from './contracts';

/** Enough for every plan a worker runs at once; a plan evicted is read again, nothing else. */
const DEFAULT_CAPACITY = 1_000;

export type SpecSource = (ref: PlanRef) => Promise<PlanSpec>;

export function createSpecSource(plans: Pick<PlanStore, 'getSpec'>, capacity = DEFAULT_CAPACITY): SpecSource {
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  const cache = new Map<string, PlanSpec>();
  return async (ref) => {
    if ('spec' in ref) return ref.spec;
    const cached = cache.get(ref.planId);
    if (cached !== undefined) {
      cache.delete(ref.planId);
      cache.set(ref.planId, cached);
      return cached;
    }
    const spec = await plans.getSpec(ref.planId);
    if (spec === null) throw new PlanNotFoundError(ref.planId);
    cache.set(ref.planId, spec);
    if (cache.size > capacity) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    return spec;
  };
}
