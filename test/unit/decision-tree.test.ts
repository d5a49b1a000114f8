import { buildTree, currentTree, depthFirst, pathToRoot } from '../../domain/decision-tree';
import type { DecisionTree, TreeDecision } from '../../domain/decision-tree';

/** A decision named by its sequence number: id `d<seq>`, parent `d<parentSeq>`. */
function d(seq: number, parentSeq: number | null, supersededBy: number | null = null): TreeDecision {
  return {
    decisionId: `d${seq}`,
    parentDecisionId: parentSeq === null ? null : `d${parentSeq}`,
    seq,
    supersededBy: supersededBy === null ? null : `d${supersededBy}`,
  };
}

const ids = (tree: DecisionTree<TreeDecision>) => tree.nodes.map((n) => n.decision.decisionId);
const levels = (tree: DecisionTree<TreeDecision>) => tree.nodes.map((n) => [n.decision.decisionId, n.depth]);

/**
 *        d0
 *   ┌────┼─────┐
 *   d1   d2    d5
 *  ┌┴┐   │
 *  d3 d4 d6
 *  │
 *  d7
 */
const TREE = [d(0, null), d(1, 0), d(2, 0), d(3, 1), d(4, 1), d(5, 0), d(6, 2), d(7, 3)];

describe('buildTree', () => {
  it('walks breadth-first from the root, level by level, siblings by sequence number', () => {
    const tree = buildTree(TREE);
    expect(levels(tree)).toEqual([
      ['d0', 0],
      ['d1', 1],
      ['d2', 1],
      ['d5', 1],
      ['d3', 2],
      ['d4', 2],
      ['d6', 2],
      ['d7', 3],
    ]);
    expect(tree.nodes.map((n) => [n.decision.decisionId, n.childIds])).toEqual([
      ['d0', ['d1', 'd2', 'd5']],
      ['d1', ['d3', 'd4']],
      ['d2', ['d6']],
      ['d5', []],
      ['d3', ['d7']],
      ['d4', []],
      ['d6', []],
      ['d7', []],
    ]);
    expect(tree.nodes.every((n) => n.current && !n.superseded)).toBe(true);
    expect(tree).toMatchObject({ hiddenByDepth: 0, hiddenSuperseded: 0 });
  });

  it('orders by sequence number whatever order the records come in', () => {
    const shuffled = [
      TREE[7],
      TREE[2],
      TREE[0],
      TREE[5],
      TREE[1],
      TREE[6],
      TREE[4],
      TREE[3],
    ] as TreeDecision[];
    expect(ids(buildTree(shuffled))).toEqual(ids(buildTree(TREE)));
  });

  it('stops at the depth limit (root = level 0; 0 = unlimited) and counts what it left out', () => {
    expect(ids(buildTree(TREE, { depth: 1 }))).toEqual(['d0', 'd1', 'd2', 'd5']);
    const two = buildTree(TREE, { depth: 2 });
    expect(ids(two)).toEqual(['d0', 'd1', 'd2', 'd5', 'd3', 'd4', 'd6']);
    expect(two.hiddenByDepth).toBe(1);
    // A node at the limit lists no children: none of them is in the tree.
    expect(two.nodes.find((n) => n.decision.decisionId === 'd3')?.childIds).toEqual([]);
    expect(ids(buildTree(TREE, { depth: 0 }))).toHaveLength(8);
    expect(ids(buildTree(TREE, { depth: 99 }))).toHaveLength(8);
  });

  it('refuses a negative or fractional depth', () => {
    expect(() => buildTree(TREE, { depth: -1 })).toThrow(RangeError);
    expect(() => buildTree(TREE, { depth: 1.5 })).toThrow(/non-negative integer/);
  });

  it('returns an empty tree for no decisions', () => {
    expect(buildTree([])).toEqual({ nodes: [], hiddenByDepth: 0, hiddenSuperseded: 0 });
  });

  describe('after a correction', () => {
    // d1 was corrected: d8 (user_intervention) and d9 (the correction) hang under d1's parent, d0.
    const corrected = [
      d(0, null),
      d(1, 0, 9),
      d(2, 0),
      d(3, 1),
      d(4, 1),
      d(5, 0),
      d(6, 2),
      d(7, 3),
      d(8, 0),
      d(9, 0),
      d(10, 9),
    ];

    it('hides the superseded decision and everything under it; the correction takes its place', () => {
      const tree = buildTree(corrected);
      expect(levels(tree)).toEqual([
        ['d0', 0],
        ['d2', 1],
        ['d5', 1],
        ['d8', 1],
        ['d9', 1],
        ['d6', 2],
        ['d10', 2],
      ]);
      expect(tree.nodes[0]?.childIds).toEqual(['d2', 'd5', 'd8', 'd9']);
      expect(tree.hiddenSuperseded).toBe(4); // d1 and d3, d4, d7 under it
    });

    it('shows everything with showSuperseded, marking superseded and no-longer-current nodes', () => {
      const tree = buildTree(corrected, { showSuperseded: true });
      expect(ids(tree)).toEqual(['d0', 'd1', 'd2', 'd5', 'd8', 'd9', 'd3', 'd4', 'd6', 'd10', 'd7']);
      const flags = Object.fromEntries(
        tree.nodes.map((n) => [n.decision.decisionId, [n.superseded, n.current]]),
      );
      expect(flags).toMatchObject({
        d0: [false, true],
        d1: [true, false],
        d3: [false, false],
        d7: [false, false],
        d9: [false, true],
        d10: [false, true],
      });
      expect(tree.hiddenSuperseded).toBe(0);
    });

    it('currentTree is the decisions of the current tree in sequence order', () => {
      expect(currentTree(corrected).map((r) => r.decisionId)).toEqual([
        'd0',
        'd2',
        'd5',
        'd6',
        'd8',
        'd9',
        'd10',
      ]);
    });
  });

  it('leaves out decisions whose parent is not among the records', () => {
    expect(ids(buildTree([d(0, null), d(1, 0), d(3, 2)]))).toEqual(['d0', 'd1']);
  });

  it('keeps generic records whole', () => {
    const records = [{ ...d(0, null), label: 'root' }];
    expect(buildTree(records).nodes[0]?.decision.label).toBe('root');
  });

  it('builds a 100,000-decision tree in one pass', () => {
    const many: TreeDecision[] = [d(0, null)];
    for (let seq = 1; seq < 100_000; seq++) many.push(d(seq, Math.floor((seq - 1) / 3)));
    const tree = buildTree(many);
    expect(tree.nodes).toHaveLength(100_000);
    expect(tree.nodes.at(-1)?.depth).toBe(11); // a ternary tree: 3^0 + … + 3^10 = 88,573 < 100,000
    expect(depthFirst(tree)).toHaveLength(100_000);
  });
});

describe('depthFirst', () => {
  it('lists parents before children, siblings by sequence number: the indented view', () => {
    expect(depthFirst(buildTree(TREE)).map((n) => `${'  '.repeat(n.depth)}${n.decision.decisionId}`)).toEqual(
      ['d0', '  d1', '    d3', '      d7', '    d4', '  d2', '    d6', '  d5'],
    );
  });

  it('handles a chain too deep for recursion', () => {
    const chain = Array.from({ length: 50_000 }, (_, seq) => d(seq, seq === 0 ? null : seq - 1));
    const order = depthFirst(buildTree(chain));
    expect(order).toHaveLength(50_000);
    expect(order.at(-1)?.depth).toBe(49_999);
  });
});

describe('pathToRoot', () => {
  it('walks from the decision up to the root', () => {
    expect(pathToRoot(TREE, 'd7')?.map((r) => r.decisionId)).toEqual(['d7', 'd3', 'd1', 'd0']);
    expect(pathToRoot(TREE, 'd0')?.map((r) => r.decisionId)).toEqual(['d0']);
  });

  it('is null for an unknown decision', () => {
    expect(pathToRoot(TREE, 'nope')).toBeNull();
  });

  it('throws on a loop instead of running forever', () => {
    expect(() => pathToRoot([d(1, 2), d(2, 1)], 'd1')).toThrow(/its own ancestor/);
  });
});
