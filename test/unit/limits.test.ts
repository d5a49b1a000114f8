import type { SizedChange } from '../../domain/limits';
import { CHANGESET_LIMITS, ChangesetTally, keepsOldContent } from '../../domain/limits';

const MIB = 1024 * 1024;

const change = (path: string, newBytes = 1, oldBytes = 0, project = 'local/demo'): SizedChange => ({
  project,
  path,
  newBytes,
  oldBytes,
});

describe('changeset limits', () => {
  it('are 2,000 files, 10 MiB per file and 100 MiB in all by default', () => {
    expect(CHANGESET_LIMITS).toEqual({ maxFiles: 2000, maxFileBytes: 10 * MIB, maxTotalBytes: 100 * MIB });
  });

  it('accept a changeset exactly at every limit', () => {
    const tally = new ChangesetTally({ maxFiles: 3, maxFileBytes: 10, maxTotalBytes: 25 });
    expect(tally.bytesLeft).toBe(25);
    expect(tally.add([change('a', 10), change('b', 10), change('c', 0, 5)])).toBeNull();
    expect(tally.bytesLeft).toBe(0);
  });

  it('refuse the file one past the count, naming it', () => {
    const tally = new ChangesetTally();
    const changes = Array.from({ length: 2001 }, (_, i) => change(`f${String(i).padStart(4, '0')}`, 0));
    expect(tally.add(changes)).toEqual({
      limit: 'files',
      project: 'local/demo',
      path: 'f2000',
      message:
        'The changeset is too large: more than 2,000 files changed, the limit for one changeset; ' +
        'the first over it is f2000 in local/demo',
    });
  });

  it('refuse a file one byte over the per-file limit, naming it and both sizes', () => {
    const breach = new ChangesetTally().add([change('small.txt'), change('big.bin', 10 * MIB + 1)]);
    expect(breach).toMatchObject({ limit: 'file-bytes', path: 'big.bin' });
    expect(breach?.message).toBe(
      'The changeset is too large: big.bin in local/demo is 10,485,761 bytes, over the limit of ' +
        '10 MiB (10,485,760 bytes) for one file',
    );
  });

  it('refuse at the change that takes the total over, old contents counted with new ones', () => {
    const tally = new ChangesetTally({ maxFiles: 100, maxFileBytes: 10, maxTotalBytes: 25 });
    const breach = tally.add([change('a', 10), change('b', 0, 10), change('c', 6), change('d', 1)]);
    expect(breach).toMatchObject({ limit: 'total-bytes', path: 'c' });
    expect(breach?.message).toBe(
      'The changeset is too large: the changed files hold more than 25 bytes, the limit for one changeset, ' +
        'once c in local/demo is counted',
    );
  });

  it('count every project of one changeset together', () => {
    const tally = new ChangesetTally({ maxFiles: 3, maxFileBytes: 10, maxTotalBytes: 100 });
    expect(tally.add([change('a'), change('b')])).toBeNull();
    expect(tally.add([change('a', 1, 0, 'local/docs'), change('b', 1, 0, 'local/docs')])).toMatchObject({
      limit: 'files',
      project: 'local/docs',
      path: 'b',
    });
  });

  it("keep a file's old content for a diff only within the per-file limit", () => {
    expect(keepsOldContent(10 * MIB)).toBe(true);
    expect(keepsOldContent(10 * MIB + 1)).toBe(false);
    expect(keepsOldContent(0)).toBe(true);
  });
});
