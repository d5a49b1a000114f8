/**
 * The one content hash of the engine: SHA-256 as lowercase hex. Changesets (before/after hashes), sandbox
 * baselines, context files and decision context snapshots all use it, so a hash computed in one place can be
 * compared with one stored by another. Not in domain/: node:crypto cannot enter the workflow bundle.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** For content hashed as it streams past (a file being copied): update it chunk by chunk, then `digest('hex')`. */
export function sha256Stream(): Hash {
  return createHash('sha256');
}
