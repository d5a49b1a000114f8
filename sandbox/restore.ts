/**
 * A plan's sandbox on a worker that did not run its Execute. Execute's copy lives on one worker's disk, but what
 * the plan needs from it afterwards is recorded: the changeset in the database holds every byte Execute changed,
 * and the project holds the rest. So any worker can rebuild the copy: the project copied as Execute copies it, and
 * the changeset written into that copy by Apply's own writer, which refuses (and so nothing is restored) when the
 * project moved on since Execute and the rebuilt copy would not be the one Execute left.
 */
import path from 'node:path';
import type { Changeset } from '../domain/changeset';
import type { IgnoreList } from '../domain/ignore';
import { ChangesetRefusedError, applyChangeset } from './apply';
import { createSandbox, removeSandbox } from './workspace';

export type RestoredSandbox = { dir: string } | { dir: null; reason: string };

/**
 * Rebuilds the sandbox of `projectName` at `dest` (replacing whatever is there). `at` is only the time the
 * writer records; nothing of the project is touched.
 */
export async function restoreSandbox(options: {
  changeset: Changeset;
  projectName: string;
  dest: string;
  ignore: IgnoreList;
  at: string;
}): Promise<RestoredSandbox> {
  const { changeset, projectName, dest } = options;
  const project = changeset.projects.find((p) => p.projectName === projectName && !p.readOnly);
  if (project === undefined) {
    return {
      dir: null,
      reason: `${projectName} is not a writable project of changeset ${changeset.changesetId}`,
    };
  }
  await createSandbox(project.root, dest, options.ignore);
  try {
    await applyChangeset(
      {
        ...changeset,
        projects: [{ ...project, root: dest, sandbox: null }],
        changes: changeset.changes.filter((change) => change.project === projectName),
      },
      { at: options.at },
    );
  } catch (err) {
    await removeSandbox(dest);
    if (err instanceof ChangesetRefusedError) {
      return {
        dir: null,
        reason: `${projectName} changed since Execute, so its sandbox cannot be rebuilt on this worker`,
      };
    }
    throw err;
  }
  return { dir: dest };
}

/** Where this worker rebuilds a plan's sandboxes: under the plan's own directory, which Apply removes. */
export function restoredSandboxDir(sandboxDir: string, planId: string, changesetId: string, name: string) {
  return path.join(sandboxDir, planId, `restored-${changesetId}`, name);
}
