import {
  INVARIANT_PRECEDENCE,
  asPlanInvariant,
  effectiveInvariants,
  inheritedInvariantSet,
  invariantRank,
  mergeInvariants,
  normalizeInvariantText,
  orderInvariants,
  promoteActionInvariants,
} from '../../domain/invariant';
import type { StoredInvariant } from '../../domain/invariant';
import { describeRule, parseInvariantRule } from '../../domain/invariant-rule';
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
  id: null,
  rule: null,
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

const stored = (
  id: string,
  text: string,
  scope: PlanInvariant['scope'],
  target: string | null,
  rule: StoredInvariant['rule'] = null,
): StoredInvariant => ({
  id,
  text,
  description: null,
  scope,
  target,
  rule,
  author: 'tester',
  createdAt: '2026-11-30T00:00:00.000Z',
});

describe('mergeInvariants', () => {
  it('collapses duplicates across all four scopes into the highest-precedence one', () => {
    const merged = mergeInvariants([
      inv('Never touch prod', 'GLOBAL'),
      inv('never touch prod.', 'PROJECT', 'acme/api'),
      inv('Keep tests green', 'GLOBAL'),
      inv('NEVER   touch prod', 'ACTION', 'local/x'),
      inv('Keep tests green', 'PROJECT', 'acme/api'),
      inv('never touch prod', 'PLAN'),
      inv('Only in project', 'PROJECT', 'acme/api'),
    ]);
    expect(merged.map((m) => [m.invariant.text, m.invariant.scope])).toEqual([
      ['never touch prod', 'PLAN'],
      ['Keep tests green', 'PROJECT'],
      ['Only in project', 'PROJECT'],
    ]);
    expect(merged[0]?.duplicates.map((d) => d.scope)).toEqual(['ACTION', 'PROJECT', 'GLOBAL']);
    expect(merged[1]?.duplicates.map((d) => d.scope)).toEqual(['GLOBAL']);
    expect(merged[2]?.duplicates).toEqual([]);
    expect(
      effectiveInvariants([inv('a', 'GLOBAL'), inv('b', 'GLOBAL'), inv('A.', 'GLOBAL')]).map((i) => i.text),
    ).toEqual(['a', 'b']);
  });

  it("keeps two projects' invariants of the same text apart, and collapses a global one into the first", () => {
    const merged = mergeInvariants([
      inv('Tests pass', 'GLOBAL'),
      inv('Tests pass', 'PROJECT', 'acme/api'),
      inv('tests pass', 'PROJECT', 'acme/web'),
    ]);
    expect(merged.map((m) => [m.invariant.sourceName, m.duplicates.map((d) => d.scope)])).toEqual([
      ['acme/api', ['GLOBAL']],
      ['acme/web', []],
    ]);
  });

  it('normalises case, blanks and a closing full stop only', () => {
    expect(normalizeInvariantText('  Keep   the API. ')).toBe('keep the api');
    expect(normalizeInvariantText('Keep the API!')).toBe('keep the api');
    expect(normalizeInvariantText('Keep the API?')).toBe('keep the api?');
  });
});

describe('inheritedInvariantSet', () => {
  it("merges the action's, its projects' and the global invariants, and nothing else", () => {
    const list = [
      stored('01A', 'Global rule', 'GLOBAL', null),
      stored('01B', 'Project rule', 'PROJECT', 'acme/api'),
      stored('01C', 'Other project', 'PROJECT', 'acme/web'),
      stored('01D', 'Stored action rule', 'ACTION', 'local/code-review'),
      stored('01E', 'Other action', 'ACTION', 'local/other'),
      stored('01F', 'A plan of its own', 'PLAN', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA'),
      stored('01G', 'global rule.', 'PROJECT', 'acme/api', { max_changed_files: 3 }),
    ];
    const merged = inheritedInvariantSet(codeReviewAction(), list, ['acme/api']);
    expect(
      merged.map((m) => [m.invariant.text, m.invariant.scope, m.invariant.sourceName, m.invariant.id]),
    ).toEqual([
      ...codeReviewAction().invariants.map((text) => [text, 'PLAN', 'local/code-review', null]),
      ['Stored action rule', 'PLAN', 'local/code-review', '01D'],
      ['Project rule', 'PROJECT', 'acme/api', '01B'],
      ['global rule.', 'PROJECT', 'acme/api', '01G'],
    ]);
    // The PROJECT copy outranks the GLOBAL one with the same text, and carries its rule.
    expect(merged[merged.length - 1]?.invariant.rule).toEqual({ max_changed_files: 3 });
    expect(merged[merged.length - 1]?.duplicates.map((d) => d.id)).toEqual(['01A']);
  });

  it('promotes an ACTION invariant to PLAN scope, with the action as its source', () => {
    expect(asPlanInvariant(stored('01X', 'x', 'ACTION', 'local/a'))).toEqual({
      text: 'x',
      scope: 'PLAN',
      sourceName: 'local/a',
      id: '01X',
      rule: null,
    });
    expect(asPlanInvariant(stored('01Y', 'y', 'GLOBAL', null)).sourceName).toBeNull();
  });
});

describe('parseInvariantRule', () => {
  it('reads YAML and JSON', () => {
    expect(parseInvariantRule('{protected_paths: ["src/**"], max_changed_files: 2}')).toEqual({
      ok: true,
      rule: { protected_paths: ['src/**'], max_changed_files: 2 },
    });
    expect(parseInvariantRule('{"command": "npm test", "undeletable_paths": ["db/**"]}')).toEqual({
      ok: true,
      rule: { command: 'npm test', undeletable_paths: ['db/**'] },
    });
  });

  it.each([
    ['', /the rule is empty/],
    ['{protected_paths: [', /not valid YAML or JSON/],
    ['just text', /must be a mapping/],
    ['{}', /needs at least one of/],
    ['{protect: ["a"]}', /unknown key protect \(allowed: protected_paths/],
    ['{max_changed_files: -1}', /max_changed_files: must be 0 or more/],
    ['{max_changed_files: 1.5}', /max_changed_files/],
    ['{protected_paths: []}', /protected_paths: must list at least one glob/],
    ['{protected_paths: ["../x"]}', /protected_paths\.0: must be relative/],
    ['{command: "  "}', /command: must not be empty/],
  ])('refuses %j', (text, message) => {
    const result = parseInvariantRule(text);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(message);
      expect(result.error).not.toContain('\n');
    }
  });

  it('describes a rule in one line', () => {
    expect(
      describeRule({
        protected_paths: ['src/**'],
        max_changed_files: 3,
        undeletable_paths: ['db/**'],
        command: 'make',
      }),
    ).toBe(
      'protected: src/**; at most 3 changed file(s); never deleted: db/**; `make` passes in the sandbox',
    );
  });
});
