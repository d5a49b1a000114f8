import {
  INVARIANT_PRECEDENCE,
  invariantRank,
  orderInvariants,
  promoteActionInvariants,
} from '../../domain/invariant';
import type { PlanInvariant } from '../../domain/schemas';
import { INVARIANT_SCOPES, planInvariantSchema } from '../../domain/schemas';
import { codeReviewAction } from './fixtures';

const inv = (
  text: string,
  scope: PlanInvariant['scope'],
  sourceName: string | null = null,
): PlanInvariant => ({
  text,
  scope,
  sourceName,
});

describe('INVARIANT_PRECEDENCE', () => {
  it('is PLAN > ACTION > PROJECT > GLOBAL and covers every scope', () => {
    expect(INVARIANT_PRECEDENCE).toEqual(['PLAN', 'ACTION', 'PROJECT', 'GLOBAL']);
    expect([...INVARIANT_PRECEDENCE].sort()).toEqual([...INVARIANT_SCOPES].sort());
    expect(invariantRank('PLAN')).toBeLessThan(invariantRank('GLOBAL'));
  });
});

describe('orderInvariants', () => {
  it('sorts by precedence and keeps insertion order within a scope', () => {
    const list = [
      inv('g1', 'GLOBAL'),
      inv('p1', 'PROJECT'),
      inv('a1', 'ACTION'),
      inv('plan1', 'PLAN'),
      inv('g2', 'GLOBAL'),
      inv('plan2', 'PLAN'),
      inv('a2', 'ACTION'),
      inv('p2', 'PROJECT'),
      inv('plan3', 'PLAN'),
    ];
    expect(orderInvariants(list).map((i) => i.text)).toEqual([
      'plan1',
      'plan2',
      'plan3',
      'a1',
      'a2',
      'p1',
      'p2',
      'g1',
      'g2',
    ]);
  });

  it('keeps an all-same-scope list exactly as inserted', () => {
    const list = ['c', 'a', 'b', 'a'].map((t) => inv(t, 'PROJECT'));
    expect(orderInvariants(list).map((i) => i.text)).toEqual(['c', 'a', 'b', 'a']);
  });

  it('returns a new array and leaves the input alone', () => {
    const list = [inv('g', 'GLOBAL'), inv('p', 'PLAN')];
    const ordered = orderInvariants(list);
    expect(ordered).not.toBe(list);
    expect(list.map((i) => i.text)).toEqual(['g', 'p']);
  });

  it('handles an empty list', () => {
    expect(orderInvariants([])).toEqual([]);
  });
});

describe('promoteActionInvariants', () => {
  it('makes each action invariant a PLAN invariant sourced from the action, in order', () => {
    const promoted = promoteActionInvariants(codeReviewAction());
    expect(promoted).toEqual([
      inv('Do not modify files outside the path.', 'PLAN', 'local/code-review'),
      inv('Keep the public API.', 'PLAN', 'local/code-review'),
    ]);
    for (const p of promoted) expect(planInvariantSchema.parse(p)).toEqual(p);
  });

  it('gives nothing for an action without invariants', () => {
    expect(promoteActionInvariants(codeReviewAction({ invariants: [] }))).toEqual([]);
  });

  it('trims texts', () => {
    expect(promoteActionInvariants({ name: 'a/b', invariants: ['  x  '] })).toEqual([
      inv('x', 'PLAN', 'a/b'),
    ]);
  });
});
