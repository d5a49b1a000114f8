/**
 * A plan's family as the record holds it, for `agents plan tree --subplans`: the plan's decision tree and, under
 * each decision that spawned child plans (`downstream_plan_ids`), those plans' trees, recursively.
 */
import type { DecisionTreeOptions } from '../domain/decision-tree';
import type { Stores } from '../storage';
import type { FamilyTree } from './render/family-view';

export async function loadFamily(
  stores: Pick<Stores, 'plans' | 'decisions'>,
  planId: string,
  options: DecisionTreeOptions,
  seen: Set<string> = new Set(),
): Promise<FamilyTree | null> {
  // The record is the engine's own, but a loop in it must not hang the CLI.
  if (seen.has(planId)) return null;
  seen.add(planId);
  const plan = await stores.plans.getPlan(planId);
  if (plan === null) return null;
  const tree = await stores.decisions.getTree(planId, options);
  const subplans = new Map<string, FamilyTree[]>();
  for (const node of tree.nodes) {
    const children: FamilyTree[] = [];
    for (const childId of node.decision.downstreamPlanIds) {
      const child = await loadFamily(stores, childId, options, seen);
      if (child !== null) children.push(child);
    }
    if (children.length > 0) subplans.set(node.decision.decisionId, children);
  }
  return {
    planId,
    name: plan.name,
    actionName: plan.actionName,
    phase: plan.phase,
    state: plan.state,
    tree,
    subplans,
  };
}
