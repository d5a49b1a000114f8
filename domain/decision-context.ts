/**
 * Seed 004's context snapshot, the pure half: the canonical serialisation a context is hashed and stored as, and
 * the reference format decisions keep. Hashing itself (node:crypto) lives in storage/decision-contexts.ts, so this module
 * stays safe for the workflow bundle.
 */

/** `hot_context_ref` is `sha256:<64 lowercase hex digits>`: content-addressed, so the ref names the blob's hash. */
export const CONTEXT_REF_PREFIX = 'sha256:';

const HASH_PATTERN = /^[0-9a-f]{64}$/;

export function isContextHash(value: string): boolean {
  return HASH_PATTERN.test(value);
}

/** The storage reference of the context with this SHA-256 hash. */
export function contextRef(hash: string): string {
  if (!isContextHash(hash)) throw new RangeError(`not a SHA-256 hex digest: ${hash}`);
  return `${CONTEXT_REF_PREFIX}${hash}`;
}

/** The hash a reference names, or null when the text is not a context reference. */
export function parseContextRef(ref: string): string | null {
  if (!ref.startsWith(CONTEXT_REF_PREFIX)) return null;
  const hash = ref.slice(CONTEXT_REF_PREFIX.length);
  return isContextHash(hash) ? hash : null;
}

/**
 * JSON with every object's keys sorted (by UTF-16 code units, as Array#sort does) and no whitespace, so equal
 * values give equal text and therefore equal hashes whatever order their keys were built in.
 *
 * Follows JSON.stringify otherwise: `toJSON` is honoured (dates become strings), object members that are
 * undefined, functions or symbols are left out, such array elements and non-finite numbers become null, boxed
 * primitives are unboxed. Throws TypeError for a bigint, a cycle, or a top-level value JSON cannot represent.
 */
export function canonicalJson(value: unknown): string {
  const text = write(value, '', new Set());
  if (text === undefined) throw new TypeError(`a ${typeof value} is not JSON-serialisable`);
  return text;
}

function write(input: unknown, key: string, ancestors: Set<object>): string | undefined {
  let value = input;
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    value = value.valueOf();
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('a bigint is not JSON-serialisable');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError('a value with a cycle is not JSON-serialisable');
  ancestors.add(object);
  let text: string;
  if (Array.isArray(object)) {
    text = `[${object.map((item: unknown, i) => write(item, String(i), ancestors) ?? 'null').join(',')}]`;
  } else {
    const record = object as Record<string, unknown>;
    const members: string[] = [];
    for (const name of Object.keys(record).sort()) {
      const member = write(record[name], name, ancestors);
      if (member !== undefined) members.push(`${JSON.stringify(name)}:${member}`);
    }
    text = `{${members.join(',')}}`;
  }
  ancestors.delete(object);
  return text;
}
