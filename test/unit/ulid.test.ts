import { decodeTime, isValid } from 'ulid';
import { newUlid } from '../../lib/ulid';

describe('newUlid', () => {
  it('is a valid ULID stamped with the current time', () => {
    const before = Date.now();
    const id = newUlid();
    const after = Date.now();
    expect(isValid(id)).toBe(true);
    expect(decodeTime(id)).toBeGreaterThanOrEqual(before);
    expect(decodeTime(id)).toBeLessThanOrEqual(after);
  });

  it('draws fresh randomness for every id, across refills of the pool', () => {
    // 16 bytes an id and a 4 KiB pool: 2,000 ids refill it several times.
    const ids = Array.from({ length: 2000 }, () => newUlid());
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(10))).size).toBe(ids.length);
  });

  it('uses every character of the alphabet in the random part', () => {
    const seen = new Set(
      Array.from({ length: 500 }, () => newUlid().slice(10))
        .join('')
        .split(''),
    );
    expect(seen.size).toBe(32);
  });
});
