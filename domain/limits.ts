/**
 * How much one changeset may hold (issue 12). Execute keeps every changed file's bytes in memory and the changeset
 * store writes them all, so a step that writes a huge file or thousands of them (a model's `run` that vendors a
 * dependency, a runaway loop) would exhaust the worker's memory and fill the database. Past a limit, Execute fails
 * naming the limit and the first file over it, and nothing is stored.
 *
 * Pure: sandbox/workspace.ts measures, this decides.
 */

const MIB = 1024 * 1024;

export interface ChangesetLimits {
  /** Changes (files created, modified, deleted, moved) in one changeset, over all the plan's projects. */
  maxFiles: number;
  /** The new content of one file. */
  maxFileBytes: number;
  /** Every content one changeset keeps, new and old together. */
  maxTotalBytes: number;
}

export const CHANGESET_LIMITS: ChangesetLimits = {
  maxFiles: 2_000,
  maxFileBytes: 10 * MIB,
  maxTotalBytes: 100 * MIB,
};

/** One change as the limits see it, measured before any content is read. */
export interface SizedChange {
  project: string;
  path: string;
  /** The content the changeset will keep for the file's new state: 0 for DELETE and MOVE. */
  newBytes: number;
  /** The old content it will keep to show a diff (see keepsOldContent): 0 when none. */
  oldBytes: number;
}

export type ChangesetLimit = 'files' | 'file-bytes' | 'total-bytes';

export interface LimitBreach {
  limit: ChangesetLimit;
  /** The first change over the limit. */
  project: string;
  path: string;
  message: string;
}

/**
 * Whether a file's old content (`size` bytes) is kept for a diff. The project already holds it, so a step that
 * deletes or rewrites a file over the per-file limit is not refused for it; the diff shows its old side as
 * unavailable instead, and Apply still checks the file by its hash.
 */
export function keepsOldContent(size: number, limits: ChangesetLimits = CHANGESET_LIMITS): boolean {
  return size <= limits.maxFileBytes;
}

/**
 * Counts a changeset's changes as they are found, project after project, and names the first that breaks a
 * limit. Measuring happens before contents are read, so a breach costs no memory.
 */
export class ChangesetTally {
  private files = 0;
  private bytes = 0;

  constructor(readonly limits: ChangesetLimits = CHANGESET_LIMITS) {}

  /** How many more bytes of content the changeset may hold. */
  get bytesLeft(): number {
    return this.limits.maxTotalBytes - this.bytes;
  }

  /**
   * Adds changes in order. Returns the first limit one of them breaks, naming that change (it and those after it
   * are not counted), or null.
   */
  add(changes: readonly SizedChange[]): LimitBreach | null {
    const { maxFiles, maxFileBytes, maxTotalBytes } = this.limits;
    for (const change of changes) {
      const where = `${change.path} in ${change.project}`;
      if (change.newBytes > maxFileBytes) {
        return breach(
          'file-bytes',
          change,
          `${where} is ${count(change.newBytes)} bytes, over the limit of ${limit(maxFileBytes)} for one file`,
        );
      }
      if (this.files + 1 > maxFiles) {
        return breach(
          'files',
          change,
          `more than ${count(maxFiles)} files changed, the limit for one changeset; the first over it is ${where}`,
        );
      }
      const total = this.bytes + change.newBytes + change.oldBytes;
      if (total > maxTotalBytes) {
        return breach(
          'total-bytes',
          change,
          `the changed files hold more than ${limit(maxTotalBytes)}, the limit for one changeset, ` +
            `once ${where} is counted`,
        );
      }
      this.files++;
      this.bytes = total;
    }
    return null;
  }
}

function breach(limit: ChangesetLimit, change: SizedChange, detail: string): LimitBreach {
  return {
    limit,
    project: change.project,
    path: change.path,
    message: `The changeset is too large: ${detail}`,
  };
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** A limit as set (in MiB) and exactly, to compare with a file's size in bytes. */
function limit(bytes: number): string {
  const exact = `${count(bytes)} bytes`;
  return bytes % MIB === 0 ? `${bytes / MIB} MiB (${exact})` : exact;
}
