/**
 * Seed 004's decision tree, built in memory from a plan's decisions: one pass to index children by parent, one
 * breadth-first walk. Everything here is O(n) in the number of decisions (O(n log n) only when the input is not
 * already in sequence order) and pure, so storage and the CLI share it.
 *
 * Superseded decisions: the current tree is the tree without superseded decisions. A superseded decision is left
 * out together with everything under it, because those decisions were made under a choice that no longer holds;
 * the correcting decision is a sibling of the original (a child of the original's parent), so it takes the
 * original's place. With `showSuperseded` every decision is shown, and each node says whether it is superseded
 * itself and whether it is part of the current tree.
 */

/** The fields the tree functions read; DecisionRecord (storage/types.ts) has them all. */
export interface TreeDecision {
  decisionId: string;
  parentDecisionId: string | null;
  seq: number;
  supersededBy: string | null;
}

export interface DecisionTreeOptions {
  /** Include superseded decisions and the decisions under them. Default false. */
  showSuperseded?: boolean;
  /** Deepest level to include, the root being level 0 (so 2 = root, children, grandchildren). 0 = unlimited. */
  depth?: number;
}

export interface DecisionTreeNode<T extends TreeDecision> {
  decision: T;
  /** 0 for the root. */
  depth: number;
  /** The children included in this tree, by sequence number (none at the depth limit). */
  childIds: string[];
  /** This decision was replaced by a correction (`supersededBy` is set). */
  superseded: boolean;
  /** Part of the current tree: neither this decision nor any above it is superseded. */
  current: boolean;
}

export interface DecisionTree<T extends TreeDecision> {
  /** Breadth-first from the root, level by level; siblings by sequence number. */
  nodes: DecisionTreeNode<T>[];
  /** Decisions below the depth limit that would otherwise have been included. */
  hiddenByDepth: number;
  /** Decisions left out because they are superseded or under a superseded decision (0 with showSuperseded). */
  hiddenSuperseded: number;
}

/** Throws RangeError unless `depth` is a non-negative integer. */
export function checkTreeDepth(depth: number): void {
  if (!Number.isInteger(depth) || depth < 0) {
    throw new RangeError(`depth must be a non-negative integer (0 = unlimited), got ${depth}`);
  }
}

function bySeq<T extends TreeDecision>(records: readonly T[]): readonly T[] {
  for (let i = 1; i < records.length; i++) {
    if ((records[i - 1] as T).seq > (records[i] as T).seq) return [...records].sort((a, b) => a.seq - b.seq);
  }
  return records;
}

/** Roots (no parent) and children by parent id, each in sequence order. */
function index<T extends TreeDecision>(records: readonly T[]) {
  const roots: T[] = [];
  const children = new Map<string, T[]>();
  for (const record of bySeq(records)) {
    if (record.parentDecisionId === null) {
      roots.push(record);
      continue;
    }
    const siblings = children.get(record.parentDecisionId);
    if (siblings === undefined) children.set(record.parentDecisionId, [record]);
    else siblings.push(record);
  }
  return { roots, children };
}

/**
 * The tree breadth-first from the root(s) (a valid plan has exactly one). Decisions whose parent is not among
 * `records` are not reachable and left out.
 */
export function buildTree<T extends TreeDecision>(
  records: readonly T[],
  options: DecisionTreeOptions = {},
): DecisionTree<T> {
  const showSuperseded = options.showSuperseded ?? false;
  const maxDepth = options.depth ?? 0;
  checkTreeDepth(maxDepth);
  const { roots, children } = index(records);

  const nodes: DecisionTreeNode<T>[] = [];
  let hiddenByDepth = 0;
  let hiddenSuperseded = 0;
  // The queue holds every reachable decision once; `shown` says whether it makes it into the result.
  const queue: Array<{ decision: T; depth: number; current: boolean; parent: DecisionTreeNode<T> | null }> =
    roots.map((decision) => ({ decision, depth: 0, current: true, parent: null }));
  for (let head = 0; head < queue.length; head++) {
    const { decision, depth, current: parentCurrent, parent } = queue[head] as (typeof queue)[number];
    const superseded = decision.supersededBy !== null;
    const current = parentCurrent && !superseded;
    let node: DecisionTreeNode<T> | null = null;
    if (!current && !showSuperseded) {
      hiddenSuperseded++;
    } else if (maxDepth !== 0 && depth > maxDepth) {
      hiddenByDepth++;
    } else {
      node = { decision, depth, childIds: [], superseded, current };
      nodes.push(node);
      parent?.childIds.push(decision.decisionId);
    }
    for (const child of children.get(decision.decisionId) ?? []) {
      queue.push({ decision: child, depth: depth + 1, current, parent: node });
    }
  }
  return { nodes, hiddenByDepth, hiddenSuperseded };
}

/** The decisions of the current tree (see the module comment), in sequence order. */
export function currentTree<T extends TreeDecision>(records: readonly T[]): T[] {
  const current = new Set(
    buildTree(records, { showSuperseded: false }).nodes.map((node) => node.decision.decisionId),
  );
  return bySeq(records).filter((record) => current.has(record.decisionId));
}

/** The tree's nodes depth-first, parents before children, siblings by sequence number: the order of an indented view. */
export function depthFirst<T extends TreeDecision>(tree: DecisionTree<T>): DecisionTreeNode<T>[] {
  const byId = new Map(tree.nodes.map((node) => [node.decision.decisionId, node]));
  const order: DecisionTreeNode<T>[] = [];
  const stack = tree.nodes.filter((node) => node.depth === 0).reverse();
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    order.push(node);
    for (let i = node.childIds.length - 1; i >= 0; i--) {
      const child = byId.get(node.childIds[i] as string);
      if (child !== undefined) stack.push(child);
    }
  }
  return order;
}

/**
 * From the decision up to the root: `[decision, parent, …, root]`. Null when `decisionId` is not among
 * `records`. Throws when the parent links loop (storage never writes such links: a parent comes before its child).
 */
export function pathToRoot<T extends TreeDecision>(records: readonly T[], decisionId: string): T[] | null {
  const byId = new Map(records.map((record) => [record.decisionId, record]));
  let decision = byId.get(decisionId);
  if (decision === undefined) return null;
  const path: T[] = [];
  const seen = new Set<string>();
  while (decision !== undefined) {
    if (seen.has(decision.decisionId)) throw new Error(`decision ${decision.decisionId} is its own ancestor`);
    seen.add(decision.decisionId);
    path.push(decision);
    decision = decision.parentDecisionId === null ? undefined : byId.get(decision.parentDecisionId);
  }
  return path;
}
