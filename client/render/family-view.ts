/**
 * `agents plan tree <id> --subplans`: a plan's decision tree with the trees of the child plans it spawned, each
 * under the decision that spawned it (seed 004's `downstream_plan_ids`). Pure: the CLI loads the family, these
 * functions lay it out, reusing the single-plan views of tree-view.ts for every member.
 */
import type { DecisionTree } from '../../domain/decision-tree';
import type { Phase, ProcessingState } from '../../domain/lifecycle';
import { richTreeLines, treeRows, TREE_COLUMNS } from './tree-view';
import type { RichTreeStyle, ViewDecision } from './tree-view';

/** One member of a family: its plan, its tree and, by the id of the decision that spawned them, its children. */
export interface FamilyTree<T extends ViewDecision = ViewDecision> {
  planId: string;
  name: string;
  actionName: string;
  phase: Phase;
  state: ProcessingState;
  tree: DecisionTree<T>;
  /** Children whose plan the record does not hold (not created yet) are left out. */
  subplans: ReadonlyMap<string, ReadonlyArray<FamilyTree<T>>>;
}

export const FAMILY_TREE_COLUMNS: readonly string[] = ['plan_id', 'spawned_by', ...TREE_COLUMNS];

function planLine(member: FamilyTree): string {
  return `subplan ${member.planId} ${member.actionName} "${member.name}" (${member.phase}, ${member.state})`;
}

/** json/yaml: the plan's document, each spawning decision's row carrying its children's documents. */
export function familyDocument<T extends ViewDecision>(family: FamilyTree<T>): Record<string, unknown> {
  const rows = treeRows(family.tree);
  return {
    plan_id: family.planId,
    name: family.name,
    action_name: family.actionName,
    phase: family.phase,
    state: family.state,
    nodes: family.tree.nodes.map((node, i) => {
      const children = family.subplans.get(node.decision.decisionId);
      return children === undefined || children.length === 0
        ? rows[i]
        : { ...rows[i], subplans: children.map(familyDocument) };
    }),
    hidden_by_depth: family.tree.hiddenByDepth,
    hidden_superseded: family.tree.hiddenSuperseded,
  };
}

/**
 * plain/table: every member's rows, the plan's own first and then each child's after them, in spawn order; each row
 * names its plan and, for a child's, the decision that spawned it.
 */
export function familyRows<T extends ViewDecision>(
  family: FamilyTree<T>,
  spawnedBy: string | null = null,
): Array<Record<string, unknown>> {
  const own = treeRows(family.tree).map((row) => ({ plan_id: family.planId, spawned_by: spawnedBy, ...row }));
  const children = family.tree.nodes.flatMap((node) =>
    (family.subplans.get(node.decision.decisionId) ?? []).flatMap((child) =>
      familyRows(child, node.decision.decisionId),
    ),
  );
  return [...own, ...children];
}

/** rich: the indented tree, each child plan's header and tree indented under the decision that spawned it. */
export function richFamilyLines<T extends ViewDecision>(
  family: FamilyTree<T>,
  style?: RichTreeStyle,
): string[] {
  return richTreeLines(family.tree, style, (decision) =>
    (family.subplans.get(decision.decisionId) ?? []).flatMap((child) => [
      `⇢ ${planLine(child)}`,
      ...richFamilyLines(child, style).map((line) => `  ${line}`),
    ]),
  );
}
