/**
 * Decision contexts, content-addressed: a context is stored once per distinct SHA-256 of its canonical JSON, and
 * decisions keep the hash and the reference `sha256:<hash>`.
 */
import { canonicalJson, contextRef } from '../domain/decision-context';
import { sha256 } from '../lib/sha256';
import type { Prisma } from './generated/prisma/client';
import { insertContexts } from './recording-sql';

export interface SerialisedContext {
  /** SHA-256 of `content`, lowercase hex. */
  hash: string;
  /** `sha256:<hash>`. */
  ref: string;
  /** Canonical JSON: the exact text that was hashed and is stored. */
  content: string;
  /** Bytes of `content` in UTF-8. */
  size: number;
}

/** SHA-256 (lowercase hex) of the value's canonical JSON; throws TypeError when it is not JSON-serialisable. */
export function contextHash(value: unknown): string {
  return serialiseContext(value).hash;
}

export function serialiseContext(value: unknown): SerialisedContext {
  const content = canonicalJson(value);
  const bytes = Buffer.from(content, 'utf8');
  const hash = sha256(bytes);
  return { hash, ref: contextRef(hash), content, size: bytes.length };
}

/**
 * Inserts the contexts not stored yet (insert-if-absent by hash, in the statement itself). Call inside the
 * transaction that writes the decisions referring to them.
 */
export async function storeContexts(
  tx: Prisma.TransactionClient,
  contexts: readonly SerialisedContext[],
  at: Date,
): Promise<void> {
  // A batch often repeats a context: one row per hash is enough.
  const distinct = new Map(contexts.map((context) => [context.hash, context]));
  if (distinct.size === 0) return;
  await insertContexts(tx, [...distinct.values()], at);
}
