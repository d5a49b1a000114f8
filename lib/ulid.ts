/**
 * ULIDs for ids minted in bulk (decisions: a batch per recording). The `ulid` package's default source of
 * randomness asks node:crypto for one byte per character, 16 calls an id (~30 µs, a third of a decision's insert
 * in the P3 bench); this draws the same crypto-quality bytes from a pool filled 4 KiB at a time. Same format and
 * distribution: each character is a byte's top 5 bits, as the package's own source gives it.
 */
import { randomFillSync } from 'node:crypto';
import { ulid } from 'ulid';

const pool = new Uint8Array(4096);
let next = pool.length;

function pooledRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
}

export function newUlid(): string {
  return ulid(undefined, pooledRandom);
}
