import { structuredPatch } from 'diff';
import pc from 'picocolors';
import { countChanges, describeCounts, type Changeset, type FileChange } from '../../domain/changeset';
import type { RenderOptions } from './format';

/** How much of a file git inspects to call it binary; the same rule keeps our output in line with `git diff`. */
const BINARY_PROBE_BYTES = 8000;
const CONTEXT_LINES = 3;
/**
 * A changeset records no file modes, but `git apply` rejects a creation or deletion header without one, so the
 * patch states git's mode for a plain file.
 */
const REGULAR_FILE_MODE = '100644';

type LineKind = 'header' | 'hunk' | 'removed' | 'added' | 'context' | 'note';

interface DiffLine {
  kind: LineKind;
  text: string;
}

interface ChangeDiff {
  lines: DiffLine[];
  binary: boolean;
}

/**
 * A git-style patch of the changes in the given order. Paths carry the project name (`a/local/demo/README.md`)
 * so a changeset spanning several projects reads unambiguously. Every line, the last included, ends with `\n`.
 * Control characters in content and paths are shown escaped (see `escapeControls`), never sent to the terminal:
 * the only escape sequences in the output are our own colours.
 */
export function renderUnifiedDiff(changes: readonly FileChange[], options: RenderOptions): string {
  const colors = pc.createColors(options.color);
  const paint: Record<LineKind, (text: string) => string> = {
    header: colors.bold,
    hunk: colors.cyan,
    removed: colors.red,
    added: colors.green,
    context: (text) => text,
    note: (text) => text,
  };
  return changes
    .map((change) =>
      diffChange(change)
        .lines.map((line) => `${paint[line.kind](escapeControls(line.text))}\n`)
        .join(''),
    )
    .join('');
}

/**
 * One line per change (`A`, `M`, `D`, `R old -> new`) and the totals: the summary shown before Apply. Paths are
 * quoted and escaped as in the diff headers.
 */
export function diffStat(changes: readonly FileChange[]): string {
  const lines = changes.map((change) => {
    const target = quote(projectPath(change, change.path));
    switch (change.operation) {
      case 'CREATE':
        return `A ${target}`;
      case 'MODIFY':
        return `M ${target}`;
      case 'DELETE':
        return `D ${target}`;
      case 'MOVE':
        return `R ${quote(projectPath(change, change.fromPath ?? change.path))} -> ${target}`;
    }
  });
  return [...lines.map(escapeControls), describeCounts(countChanges(changes))].join('\n');
}

/**
 * The changeset for `--format json`: snake_case like the other JSON documents, and text diffs instead of the raw
 * bytes, which JSON cannot carry faithfully and a reader could not use. Each `diff` is exactly the uncoloured
 * `renderUnifiedDiff` text, control characters escaped included: it is meant to be read (`jq -r` prints it
 * straight to a terminal, and JSON itself leaves DEL and C1 characters raw), and the hashes, not the diff, pin
 * the exact bytes. The other fields (`path`, `from_path`, ...) are data and stay unescaped.
 */
export function changesetJson(changeset: Changeset): Record<string, unknown> {
  return {
    changeset_id: changeset.changesetId,
    plan_id: changeset.planId,
    attempt: changeset.attempt,
    created_at: changeset.createdAt,
    projects: changeset.projects.map((project) => ({
      name: project.projectName,
      alias: project.alias,
      root: project.root,
      read_only: project.readOnly,
    })),
    counts: countChanges(changeset.changes),
    changes: changeset.changes.map((change) => {
      const diff = diffChange(change);
      return {
        project: change.project,
        operation: change.operation,
        path: change.path,
        from_path: change.fromPath,
        before_hash: change.beforeHash,
        after_hash: change.afterHash,
        diff: diff.binary ? null : diff.lines.map((line) => `${escapeControls(line.text)}\n`).join(''),
      };
    }),
  };
}

function diffChange(change: FileChange): ChangeDiff {
  const source = projectPath(
    change,
    change.operation === 'MOVE' ? (change.fromPath ?? change.path) : change.path,
  );
  const target = projectPath(change, change.path);
  const header = (text: string): DiffLine => ({ kind: 'header', text });
  const lines: DiffLine[] = [header(`diff --git ${quote(`a/${source}`)} ${quote(`b/${target}`)}`)];
  switch (change.operation) {
    case 'MOVE':
      // The content is the source's, unchanged: the rename is the whole change.
      lines.push(header(`rename from ${quote(source)}`), header(`rename to ${quote(target)}`));
      return { lines, binary: false };
    case 'CREATE':
      lines.push(header(`new file mode ${REGULAR_FILE_MODE}`));
      break;
    case 'DELETE':
      lines.push(header(`deleted file mode ${REGULAR_FILE_MODE}`));
      break;
    case 'MODIFY':
      break;
  }
  const before = change.operation === 'CREATE' ? new Uint8Array() : change.beforeContent;
  const after = change.operation === 'DELETE' ? new Uint8Array() : change.afterContent;
  if (before === null || after === null) {
    lines.push({ kind: 'note', text: 'Content not recorded' });
    return { lines, binary: false };
  }
  if (isBinary(before) || isBinary(after)) {
    lines.push({ kind: 'note', text: 'Binary files differ' });
    return { lines, binary: true };
  }
  const oldName = change.operation === 'CREATE' ? '/dev/null' : `a/${source}`;
  const newName = change.operation === 'DELETE' ? '/dev/null' : `b/${target}`;
  const patch = structuredPatch(oldName, newName, decode(before), decode(after), undefined, undefined, {
    context: CONTEXT_LINES,
  });
  // Like git, no file headers for a change without hunks (an empty file created or deleted).
  if (patch.hunks.length === 0) return { lines, binary: false };
  lines.push(header(`--- ${quote(oldName)}`), header(`+++ ${quote(newName)}`));
  for (const hunk of patch.hunks) {
    // Unified diff quirk: an empty range is numbered from the line before it (`@@ -0,0 +1,3 @@`).
    const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
    const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
    lines.push({ kind: 'hunk', text: `@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@` });
    for (const text of hunk.lines) lines.push({ kind: lineKind(text), text });
  }
  return { lines, binary: false };
}

function lineKind(text: string): LineKind {
  if (text.startsWith('+')) return 'added';
  if (text.startsWith('-')) return 'removed';
  if (text.startsWith('\\')) return 'note';
  return 'context';
}

function projectPath(change: FileChange, file: string): string {
  return `${change.project}/${file}`;
}

function isBinary(content: Uint8Array): boolean {
  return content.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

function decode(content: Uint8Array): string {
  return Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
}

/**
 * A name with a quote, backslash or control character (a newline would split the header) is quoted, as git does.
 * JSON quoting escapes C0 controls; DEL and C1 are left to `escapeControls`, which every rendered line goes through.
 */
function quote(name: string): string {
  // eslint-disable-next-line no-control-regex
  return /["\\\x00-\x1f\x7f-\x9f]/.test(name) ? JSON.stringify(name) : name;
}

/**
 * Every control character but the tab: C0 (a rendered line has no newline of its own yet), DEL and C1 (0x9b is a
 * one-byte CSI for some terminals).
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;

/**
 * Makes control characters visible (`\r`, `\n`, `\x1b`, `\x7f`, `\u009b`) so that text an actor wrote cannot
 * move the cursor, erase or recolour lines of a diff a person is asked to confirm. Applied to the plain text of a
 * line, before colouring, so our own colour codes survive. A literal backslash is left alone: `\x1b` typed as text
 * looks the same as an escaped ESC, which can mislead but cannot hide anything. A CRLF file shows `\r` at the end of
 * each line, which is also what it holds.
 */
function escapeControls(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => {
    const code = character.charCodeAt(0);
    if (character === '\r') return '\\r';
    if (character === '\n') return '\\n';
    const hex = code.toString(16).padStart(2, '0');
    return code >= 0x80 ? `\\u00${hex}` : `\\x${hex}`;
  });
}
