import {
  canonicalJson,
  contextRef,
  CONTEXT_REF_PREFIX,
  isContextHash,
  parseContextRef,
} from '../../domain/decision-context';
import { contextHash, serialiseContext } from '../../storage/decision-contexts';

describe('canonicalJson', () => {
  it('sorts keys at every level and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same text for the same value built in a different key order', () => {
    const one = { messages: [{ role: 'user', text: 'hi' }], model: 'm', temperature: 0.2 };
    const two = { temperature: 0.2, model: 'm', messages: [{ text: 'hi', role: 'user' }] };
    expect(canonicalJson(one)).toBe(canonicalJson(two));
  });

  it('sorts integer-like keys as strings, not in the engine property order', () => {
    expect(canonicalJson({ b: 1, 10: 2, 2: 3 })).toBe('{"10":2,"2":3,"b":1}');
  });

  it('keeps array order', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
  });

  it('follows JSON.stringify for everything but key order', () => {
    const value = {
      when: new Date('2026-01-01T00:00:00.000Z'),
      gone: undefined,
      fn: () => 1,
      list: [undefined, Number.NaN, Infinity, -0],
      boxed: [new Number(1), new String('s'), new Boolean(false)],
      text: 'quote " and \u2028 and é',
      nested: { toJSON: () => ({ b: 2, a: 1 }) },
    };
    const canonical = canonicalJson(value);
    expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
    expect(canonical).toContain('"nested":{"a":1,"b":2}');
    expect(canonical).not.toContain('gone');
    expect(canonicalJson('plain')).toBe('"plain"');
    expect(canonicalJson(null)).toBe('null');
  });

  it('refuses what JSON cannot represent', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
    expect(() => canonicalJson({ n: 1n })).toThrow(/bigint/);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('context references', () => {
  const hash = 'a'.repeat(64);

  it('is sha256:<hash> and parses back', () => {
    expect(contextRef(hash)).toBe(`${CONTEXT_REF_PREFIX}${hash}`);
    expect(parseContextRef(contextRef(hash))).toBe(hash);
  });

  it('rejects what is not a reference', () => {
    expect(parseContextRef(hash)).toBeNull();
    expect(parseContextRef('sha256:ABC')).toBeNull();
    expect(parseContextRef(`md5:${hash}`)).toBeNull();
    expect(() => contextRef('xyz')).toThrow(RangeError);
    expect(isContextHash(hash.toUpperCase())).toBe(false);
  });
});

describe('contextHash', () => {
  it('is the SHA-256 of the canonical JSON', () => {
    // sha256('{"a":1}')
    expect(contextHash({ a: 1 })).toBe('015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862');
    expect(contextHash({ b: [1, 2], a: 'x' })).toBe(contextHash({ a: 'x', b: [1, 2] }));
    expect(contextHash({ a: 1 })).not.toBe(contextHash({ a: 2 }));
  });

  it('measures the stored size in UTF-8 bytes', () => {
    expect(serialiseContext({ t: 'é' })).toMatchObject({ content: '{"t":"é"}', size: 10 });
  });
});
