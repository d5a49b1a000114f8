/**
 * A changeset (seed 000 `changeset_id`, seed 001's CREATE/MODIFY/DELETE/MOVE): what Execute produced in the
 * sandbox, as file operations relative to each project's root, with the hash every target had when Execute looked.
 * Apply writes exactly this and refuses when a project moved on since (a hash no longer matches).
 *
 * This module is pure (no fs, no crypto): the workflow bundle may import it, and the path rules are unit-tested here.
 */

import type { Workspace } from './project-link';

export const CHANGE_OPERATIONS = ['CREATE', 'MODIFY', 'DELETE', 'MOVE'] as const;
export type ChangeOperation = (typeof CHANGE_OPERATIONS)[number];

/** One file operation. Paths are POSIX (`/`), relative to the project root, never absolute, never with `..`. */
export interface FileChange {
  /** The project's namespaced name (e.g. `local/demo`). */
  project: string;
  operation: ChangeOperation;
  /** The target: the file created, modified or deleted, or a MOVE's destination. */
  path: string;
  /** A MOVE's source; null for every other operation. */
  fromPath: string | null;
  /**
   * SHA-256 (lowercase hex) of the file Apply expects to find: the target for MODIFY and DELETE, the source for
   * MOVE; null for CREATE (the target must not exist).
   */
  beforeHash: string | null;
  /** SHA-256 of what the target holds after Apply: null for DELETE. */
  afterHash: string | null;
  /** The old bytes (MODIFY, DELETE; null otherwise), kept so a diff can be shown after the project changed. */
  beforeContent: Uint8Array | null;
  /** The new bytes (CREATE, MODIFY; null for DELETE and MOVE, whose content is the source's). */
  afterContent: Uint8Array | null;
}

// Type aliases, not interfaces: they are stored as Prisma Json, which refuses interface types.

/** A project as Execute saw it: Apply writes under its `root` and nowhere else. */
export type ChangesetProject = Workspace;

export interface Changeset {
  changesetId: string;
  planId: string;
  /** Which Execute run produced it (1 for the first, 2 after a retry, ...). */
  attempt: number;
  projects: ChangesetProject[];
  /** Sorted by project, then path. */
  changes: FileChange[];
  createdAt: string;
}

/** A changeset without the files' bytes: what a check of paths and operations reads, at any changeset size. */
export interface ChangesetSummary extends Omit<Changeset, 'changes'> {
  changes: Array<Omit<FileChange, 'beforeContent' | 'afterContent'>>;
}

export type ChangeCounts = {
  created: number;
  modified: number;
  deleted: number;
  moved: number;
};

/** Seed 001's PlanResult statistics, and what Apply records. */
export type ApplyResult = ChangeCounts & {
  changesetId: string;
  /** Changes found already applied (a retried Apply after a crash): counted above, not written twice. */
  alreadyApplied: number;
  appliedAt: string;
};

/**
 * Seed 001's PlanResult statistics as a plan records them once Apply has written its changeset (shown by
 * `plan show` as `files_created`, `files_modified`, `files_deleted`, `files_moved`). The counts are of the changes
 * Apply is done with, those a retried Apply found already written included: they say what the project now holds.
 */
export type ApplyStatistics = {
  filesCreated: number;
  filesModified: number;
  filesDeleted: number;
  filesMoved: number;
};

export function applyStatistics(counts: ChangeCounts): ApplyStatistics {
  return {
    filesCreated: counts.created,
    filesModified: counts.modified,
    filesDeleted: counts.deleted,
    filesMoved: counts.moved,
  };
}

export function countChanges(changes: ReadonlyArray<Pick<FileChange, 'operation'>>): ChangeCounts {
  const counts: ChangeCounts = { created: 0, modified: 0, deleted: 0, moved: 0 };
  for (const change of changes) {
    if (change.operation === 'CREATE') counts.created++;
    else if (change.operation === 'MODIFY') counts.modified++;
    else if (change.operation === 'DELETE') counts.deleted++;
    else counts.moved++;
  }
  return counts;
}

export function describeCounts(counts: ChangeCounts): string {
  return (
    `${counts.created} created, ${counts.modified} modified, ` +
    `${counts.deleted} deleted, ${counts.moved} moved`
  );
}

/**
 * Why a changeset path is unsafe as text, or undefined. Syntactic rules only (the filesystem checks, symlinks and
 * hashes, are Apply's): not empty, relative, POSIX separators, no `.`/`..`/empty component, no NUL, and no component
 * that names git's own directory on some filesystem (see namesGitDirectory): a plan changes a project's files,
 * never its history, hooks or config.
 */
export function checkRelativePath(path: string): string | undefined {
  if (path === '') return 'the path is empty';
  if (path.includes('\0')) return 'the path contains a NUL byte';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return `the path "${path}" is absolute`;
  if (path.includes('\\')) return `the path "${path}" contains a backslash; changeset paths use "/"`;
  const parts = path.split('/');
  if (parts.includes('..')) return `the path "${path}" has a ".." component`;
  if (parts.some((p) => p === '' || p === '.')) return `the path "${path}" has an empty or "." component`;
  const git = parts.find(namesGitDirectory);
  if (git !== undefined) {
    return `the path "${path}" has a component ${JSON.stringify(git)} that names git's directory ".git"; changes never touch it`;
  }
  return undefined;
}

/**
 * Code points HFS+ (macOS) drops when it compares names, so `.g\u200cit` is `.git` there. The list is git's own
 * (is_hfs_dotgit in git's utf8.c).
 */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/**
 * Whether a path component is `.git` on some filesystem a project may live on, by the rules git itself refuses
 * such names with (is_ntfs_dotgit, is_hfs_dotgit): any case (case-insensitive filesystems, macOS and Windows by
 * default), trailing dots and spaces (Windows drops them: `.git.` and `.git ` open `.git`), an NTFS stream suffix
 * (`.git::$INDEX_ALLOCATION` is the directory itself), the 8.3 short name `GIT~1` Windows gives `.git`, and the
 * code points HFS+ ignores. Checked on the text because the filesystem Apply runs on need not be the one the
 * project is later checked out on, and a name is refused everywhere if it is `.git` anywhere.
 */
export function namesGitDirectory(component: string): boolean {
  const folded = component.replace(HFS_IGNORED, '').toLowerCase();
  return /^(?:\.git|git~1)[. ]*(?::.*)?$/su.test(folded);
}

/** Changes ordered the way they are stored and shown: by project, then target path. */
export function sortChanges<T extends Pick<FileChange, 'project' | 'path'>>(changes: readonly T[]): T[] {
  return [...changes].sort((a, b) =>
    a.project === b.project ? compare(a.path, b.path) : compare(a.project, b.project),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
