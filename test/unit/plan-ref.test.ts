import { candidateLine, planRefError, resolvePlanId } from '../../client/plan-ref';
import { classifyPlanRef, MAX_LISTED_CANDIDATES, pickPlanRef, shortIds } from '../../domain/plan-ref';
import type { PlanRefCandidate } from '../../domain/plan-ref';
import type { PlanRefLookup } from '../../storage/types';

const A = '01KB0F5ZQ3S5G9X2N6W8Y4T7RA';
/** Shares its first 10 characters (the whole timestamp) with A. */
const B = '01KB0F5ZQ3ZZZZZZZZZZZZZZZZ';
const C = '01KC000000000000000000000C';

function candidate(planId: string, name: string, createdAt = '2026-12-01T00:00:00.000Z'): PlanRefCandidate {
  return { planId, name, phase: 'STRATEGIZE', state: 'QUEUED', createdAt };
}

describe('classifyPlanRef', () => {
  it('reads a whole id in any case, bare or as plan-<ULID>; it may also be a name', () => {
    for (const input of [A, A.toLowerCase(), `plan-${A}`, `PLAN-${A.toLowerCase()}`, `  ${A}\n`]) {
      expect(classifyPlanRef(input)).toMatchObject({ id: A, prefix: null, tooShort: false, empty: false });
    }
    expect(classifyPlanRef(A).name).toBe(A);
  });

  it('reads 6 to 25 id characters as a prefix, upper-cased, and keeps the input as a possible name', () => {
    expect(classifyPlanRef('01kb0f')).toEqual({
      id: null,
      prefix: '01KB0F',
      name: '01kb0f',
      tooShort: false,
      empty: false,
    });
    expect(classifyPlanRef('plan-01kb0f5z').prefix).toBe('01KB0F5Z');
    expect(classifyPlanRef(A.slice(0, 25)).prefix).toBe(A.slice(0, 25));
  });

  it('says a short start of an id is too short, yet may still be a name', () => {
    expect(classifyPlanRef('01KB0')).toMatchObject({ prefix: null, name: '01KB0', tooShort: true });
    expect(classifyPlanRef('0')).toMatchObject({ tooShort: true });
  });

  it('takes anything else as a name only: letters outside Crockford base32, a first character above 7', () => {
    for (const input of ['refs-alpha', 'deploy on acme/api', '8ZZZZZZZ', '01KB0FU', 'ILOU00', 'a%_b*']) {
      expect(classifyPlanRef(input)).toMatchObject({ id: null, prefix: null, name: input, tooShort: false });
    }
    expect(classifyPlanRef(`${A}0`)).toMatchObject({ id: null, prefix: null, name: `${A}0` });
  });

  it('trims, refuses blank input, and gives up on input too long to be a name without reading it', () => {
    expect(classifyPlanRef('  refs-alpha \t')).toMatchObject({ name: 'refs-alpha' });
    expect(classifyPlanRef(' \n ')).toMatchObject({ empty: true, name: null });
    expect(classifyPlanRef('x'.repeat(200)).name).toBe('x'.repeat(200));
    expect(classifyPlanRef('x'.repeat(201))).toEqual({
      id: null,
      prefix: null,
      name: null,
      tooShort: false,
      empty: false,
    });
    const started = Date.now();
    expect(classifyPlanRef('0'.repeat(10_000_000)).name).toBeNull();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('keeps odd characters in a name as they are (the store compares them exactly)', () => {
    const odd = 'x\u001b[31mred\u202e%_';
    expect(classifyPlanRef(odd).name).toBe(odd);
  });
});

describe('pickPlanRef', () => {
  const pick = (input: string, candidates: PlanRefCandidate[]) =>
    pickPlanRef(classifyPlanRef(input), candidates);

  it('a whole id wins over a plan that has it as its name', () => {
    expect(pick(A, [candidate(B, A), candidate(A, 'other')])).toEqual({ kind: 'found', planId: A, by: 'id' });
  });

  it('a whole id no plan has falls back to a name, else is passed on for the caller to report', () => {
    expect(pick(A, [candidate(C, A)])).toEqual({ kind: 'found', planId: C, by: 'name' });
    expect(pick(A, [])).toEqual({ kind: 'found', planId: A, by: 'id' });
  });

  it('finds one plan by its exact name or by a prefix', () => {
    expect(pick('refs-alpha', [candidate(A, 'refs-alpha')])).toEqual({
      kind: 'found',
      planId: A,
      by: 'name',
    });
    expect(pick('01kb0f', [candidate(A, 'x')])).toEqual({ kind: 'found', planId: A, by: 'prefix' });
    // A name that also happens to be a prefix of the same plan is still one plan.
    expect(pick('01KB0F', [candidate(A, '01KB0F')])).toMatchObject({ kind: 'found', planId: A });
  });

  it('ignores candidates that match neither (a store may return more than asked)', () => {
    expect(pick('refs-alpha', [candidate(A, 'refs-alphabet')])).toEqual({ kind: 'notFound' });
    expect(pick('01KB0F5ZQ3S', [candidate(B, 'x')])).toEqual({ kind: 'notFound' });
  });

  it('refuses a prefix two plans share, listing both oldest first', () => {
    const match = pick('01KB0F5ZQ3', [
      candidate(B, 'b', '2026-12-01T00:00:02.000Z'),
      candidate(A, 'a', '2026-12-01T00:00:01.000Z'),
    ]);
    expect(match).toEqual({
      kind: 'ambiguous',
      candidates: [
        candidate(A, 'a', '2026-12-01T00:00:01.000Z'),
        candidate(B, 'b', '2026-12-01T00:00:02.000Z'),
      ],
      more: false,
    });
  });

  it('refuses a name two plans share', () => {
    expect(pick('refs-shared', [candidate(A, 'refs-shared'), candidate(C, 'refs-shared')])).toMatchObject({
      kind: 'ambiguous',
      candidates: [{ planId: A }, { planId: C }],
    });
  });

  it("refuses a prefix of one plan that is another plan's name", () => {
    expect(pick('01kb0f', [candidate(A, 'x'), candidate(C, '01kb0f')])).toMatchObject({
      kind: 'ambiguous',
      candidates: [{ planId: A }, { planId: C }],
    });
  });

  it(`lists at most ${MAX_LISTED_CANDIDATES} candidates and says there are more`, () => {
    const many = Array.from({ length: MAX_LISTED_CANDIDATES + 1 }, (_, i) =>
      candidate(
        `01KB0F${String(i).padStart(20, '0')}`,
        'same',
        `2026-12-01T00:00:${String(i).padStart(2, '0')}.000Z`,
      ),
    );
    const match = pick('same', many);
    expect(match).toMatchObject({ kind: 'ambiguous', more: true });
    expect(match.kind === 'ambiguous' && match.candidates).toHaveLength(MAX_LISTED_CANDIDATES);
  });

  it('says too short only when no plan has that name, and not found otherwise', () => {
    expect(pick('01KB', [])).toEqual({ kind: 'tooShort' });
    expect(pick('01KB', [candidate(A, '01KB')])).toMatchObject({ kind: 'found', by: 'name' });
    expect(pick('nope', [])).toEqual({ kind: 'notFound' });
    expect(pick('x'.repeat(300), [])).toEqual({ kind: 'notFound' });
    expect(pick('   ', [])).toEqual({ kind: 'empty' });
  });
});

describe('shortIds', () => {
  it('gives each id its shortest prefix no other listed id shares, never under 8 characters', () => {
    const shorts = shortIds([A, B, C]);
    expect(shorts.get(A)).toBe('01KB0F5ZQ3S');
    expect(shorts.get(B)).toBe('01KB0F5ZQ3Z');
    expect(shorts.get(C)).toBe('01KC0000');
    expect(shortIds([A]).get(A)).toBe('01KB0F5Z');
    expect(shortIds([]).size).toBe(0);
  });

  it('never cuts past the whole id, and a listed id twice is one id', () => {
    expect(shortIds([A, A]).get(A)).toBe('01KB0F5Z');
    expect(shortIds([A], 40).get(A)).toBe(A);
  });

  it('every short id picks its own plan back out of the list', () => {
    const ids = [A, B, C, '01KB0F5ZQ3S5G9X2N6W8Y4T7RB', '01KB0F5ZQ4000000000000000A'];
    const shorts = shortIds(ids);
    for (const id of ids) {
      const short = shorts.get(id)!;
      expect(ids.filter((other) => other.startsWith(short))).toEqual([id]);
    }
  });
});

/** What a terminal would act on rather than show. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('resolvePlanId and its errors', () => {
  function storeOf(plans: PlanRefCandidate[]) {
    const lookups: PlanRefLookup[] = [];
    return {
      lookups,
      async findPlanRefs(lookup: PlanRefLookup) {
        lookups.push(lookup);
        return plans.filter(
          (p) =>
            p.planId === lookup.id ||
            p.name === lookup.name ||
            (typeof lookup.idPrefix === 'string' && p.planId.startsWith(lookup.idPrefix)),
        );
      },
    };
  }

  it('asks the store for the id, the prefix and the name at once, one more than it lists', async () => {
    const store = storeOf([candidate(A, 'refs-alpha')]);
    await expect(resolvePlanId(store, '01kb0f5z')).resolves.toBe(A);
    expect(store.lookups).toEqual([
      { id: null, idPrefix: '01KB0F5Z', name: '01kb0f5z', limit: MAX_LISTED_CANDIDATES + 1 },
    ]);
  });

  it('does not ask the store about a blank or huge input', async () => {
    const store = storeOf([]);
    await expect(resolvePlanId(store, '')).rejects.toMatchObject({ kind: 'usage' });
    await expect(resolvePlanId(store, 'y'.repeat(100_000))).rejects.toMatchObject({ kind: 'notFound' });
    expect(store.lookups).toEqual([]);
  });

  it('maps ambiguous and too short to usage (exit 2), nothing to not found (exit 3)', async () => {
    const store = storeOf([candidate(A, 'refs-shared'), candidate(C, 'refs-shared')]);
    const ambiguous = await resolvePlanId(store, 'refs-shared').catch((err: unknown) => err);
    expect(ambiguous).toMatchObject({ kind: 'usage', exitCode: 2 });
    expect((ambiguous as Error).message.split('\n')).toEqual([
      '"refs-shared" matches 2 plans; give more of the id, or the whole id:',
      `  ${A}  "refs-shared"  STRATEGIZE QUEUED  created 2026-12-01T00:00:00.000Z`,
      `  ${C}  "refs-shared"  STRATEGIZE QUEUED  created 2026-12-01T00:00:00.000Z`,
    ]);
    await expect(resolvePlanId(store, '01KB')).rejects.toMatchObject({
      kind: 'usage',
      message:
        '"01KB" is too short for a plan id prefix: give at least 6 characters of the id, or the plan\'s whole name',
    });
    await expect(resolvePlanId(store, 'nope')).rejects.toMatchObject({
      kind: 'notFound',
      exitCode: 3,
      message: 'no plan with id, id prefix or name "nope"',
    });
  });

  it('escapes control and bidi characters and cuts long text in what it prints', () => {
    const line = candidateLine(candidate(A, 'evil\u001b[2J\r\nname\u202e' + 'z'.repeat(100)));
    expect(line).not.toMatch(CONTROL);
    expect(line).toContain('evil\\x1b[2J\\r\\nname\\u202e');
    expect(line).toContain('…"');
    const error = planRefError('\u001b]0;title\u0007', { kind: 'notFound' });
    expect(error.message).not.toMatch(CONTROL);
    const more = planRefError('same', {
      kind: 'ambiguous',
      candidates: Array.from({ length: MAX_LISTED_CANDIDATES }, () => candidate(A, 'same')),
      more: true,
    });
    expect(more.message.split('\n')).toHaveLength(MAX_LISTED_CANDIDATES + 2);
    expect(more.message).toMatch(/^"same" matches more than 10 plans/);
  });
});
