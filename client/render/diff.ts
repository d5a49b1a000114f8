import { structuredPatch } from 'diff';
import pc from 'picocolors';
import { countChanges, describeCounts, type Changeset, type FileChange } from '../../domain/changeset';
import type { RenderOptions } from './format';

const CONTEXT_LINES = 3;
/**
 * A changeset records no file modes, but `git apply` rejects a creation or deletion header without one, so the
 * patch states git's mode for a plain file.
 */
const REGULAR_FILE_MODE = '100644';

type LineKind = 'header' | 'hunk' | 'removed' | 'added' | 'context' | 'note' | 'warning';

interface DiffLine {
  kind: LineKind;
  text: string;
}

interface ChangeDiff {
  lines: DiffLine[];
  binary: boolean;
  /** Unescaped; each is also one of `lines`. */
  warnings: string[];
}

/**
 * A git-style patch of the changes in the given order. Paths carry the project name (`a/local/demo/README.md`)
 * so a changeset spanning several projects reads unambiguously. Every line, the last included, ends with `\n`.
 * Control, bidi and other invisible characters in content and paths are shown escaped (see `escapeControls`),
 * never sent to the terminal: the only escape sequences in the output are our own colours. Content that is not
 * text (see `asText`) is one `Binary files ... differ` line, followed by a warning when the file looks like
 * something that runs (see `binaryWarning`).
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
    warning: (text) => colors.bold(colors.yellow(text)),
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
 * One line per change (`A`, `M`, `D`, `R old -> new`), the warnings the diff carries (see `binaryWarning`) and the
 * totals: the summary shown before Apply, so `--stat` alone still says what needs a closer look. Paths are quoted
 * and escaped as in the diff headers.
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
  const warnings = changes.flatMap((change) => binaryWarning(change) ?? []);
  return [...lines, ...warnings]
    .map(escapeControls)
    .concat(describeCounts(countChanges(changes)))
    .join('\n');
}

/**
 * The changeset for `--format json`: snake_case like the other JSON documents, and text diffs instead of the raw
 * bytes, which JSON cannot carry faithfully and a reader could not use. Each `diff` is exactly the uncoloured
 * `renderUnifiedDiff` text, control characters escaped included: it is meant to be read (`jq -r` prints it
 * straight to a terminal, and JSON itself leaves DEL and C1 characters raw), and the hashes, not the diff, pin
 * the exact bytes; a binary change has no `diff`. `warnings` (each change's, and all of them at the top) are the
 * warning lines of the diff. The other fields (`path`, `from_path`, ...) are data and stay unescaped.
 */
export function changesetJson(changeset: Changeset): Record<string, unknown> {
  const diffs = changeset.changes.map((change) => ({ change, diff: diffChange(change) }));
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
    // Text to read, like `diff`, so escaped the same way; gathered here so a script checks one field.
    warnings: diffs.flatMap(({ diff }) => diff.warnings.map(escapeControls)),
    changes: diffs.map(({ change, diff }) => ({
      project: change.project,
      operation: change.operation,
      path: change.path,
      from_path: change.fromPath,
      before_hash: change.beforeHash,
      after_hash: change.afterHash,
      diff: diff.binary ? null : diff.lines.map((line) => `${escapeControls(line.text)}\n`).join(''),
      warnings: diff.warnings.map(escapeControls),
    })),
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
      return { lines, binary: false, warnings: [] };
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
    return { lines, binary: false, warnings: [] };
  }
  const oldName = change.operation === 'CREATE' ? '/dev/null' : `a/${source}`;
  const newName = change.operation === 'DELETE' ? '/dev/null' : `b/${target}`;
  const oldText = asText(before);
  const newText = asText(after);
  if (oldText === null || newText === null) {
    lines.push({ kind: 'note', text: `Binary files ${quote(oldName)} and ${quote(newName)} differ` });
    const warning = binaryWarning(change);
    if (warning !== undefined) lines.push({ kind: 'warning', text: warning });
    return { lines, binary: true, warnings: warning === undefined ? [] : [warning] };
  }
  const patch = structuredPatch(oldName, newName, oldText, newText, undefined, undefined, {
    context: CONTEXT_LINES,
  });
  // Like git, no file headers for a change without hunks (an empty file created or deleted).
  if (patch.hunks.length === 0) return { lines, binary: false, warnings: [] };
  lines.push(header(`--- ${quote(oldName)}`), header(`+++ ${quote(newName)}`));
  for (const hunk of patch.hunks) {
    // Unified diff quirk: an empty range is numbered from the line before it (`@@ -0,0 +1,3 @@`).
    const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
    const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
    lines.push({ kind: 'hunk', text: `@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@` });
    for (const text of hunk.lines) lines.push({ kind: lineKind(text), text });
  }
  return { lines, binary: false, warnings: [] };
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

/** Strict, and keeping a byte order mark: the reviewer sees every character the file holds, or none of them. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** Valid UTF-8 with more control characters than this share is data (a zero-filled file), not text to read. */
const MAX_CONTROL_SHARE = 0.3;

/**
 * The content as text, or null when it is binary. Not git's rule (a NUL in the first 8000 bytes): one NUL would
 * then hide a whole script that `node` runs happily. Content is text when it is valid UTF-8 (anything else would
 * have to be shown with replacement characters, hiding the real bytes) and few of its characters are controls;
 * the controls it has are shown escaped. Content with many controls is binary, and a script name on it is warned
 * about (`binaryWarning`), so padding a script with NULs hides it no better.
 */
function asText(content: Uint8Array): string | null {
  let text: string;
  try {
    text = STRICT_UTF8.decode(content);
  } catch {
    return null;
  }
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // Tab, newline, form feed and carriage return are ordinary in text files.
    if (
      (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d) ||
      (code >= 0x7f && code <= 0x9f)
    ) {
      controls++;
    }
  }
  return controls > text.length * MAX_CONTROL_SHARE ? null : text;
}

/** Extensions of files something runs or reads as text (a program, a config, a page). */
const TEXT_EXTENSIONS = new Set(
  (
    '.js .mjs .cjs .jsx .ts .mts .cts .tsx .py .sh .bash .zsh .fish .ps1 .bat .cmd .rb .pl .php .lua ' +
    '.json .yml .yaml .toml .ini .cfg .conf .env .xml .md .txt .html .htm .css .sql'
  ).split(' '),
);
/** Files run or read by name rather than extension (`Dockerfile.dev` too), and the shell start-up files. */
const TEXT_NAMES =
  /^(?:(?:gnu)?makefile|dockerfile|containerfile|jenkinsfile|rakefile|gemfile|procfile|vagrantfile|justfile)(?:\..*)?$|^\.(?:bashrc|bash_profile|profile|zshrc|zprofile|envrc|npmrc)$/i;

/**
 * Why a binary change needs a closer look, or undefined. Content that is not text is not shown, so a file whose
 * name says a program or config reads it (`x.js`, `Makefile`) or whose content starts with `#!` is flagged: its
 * bytes are written without the reviewer having seen them. A deletion writes nothing and a move keeps the bytes
 * it had, so only CREATE and MODIFY are flagged. File modes are not recorded, so an existing executable without
 * such a name or `#!` is not caught here.
 */
function binaryWarning(change: FileChange): string | undefined {
  if (change.operation !== 'CREATE' && change.operation !== 'MODIFY') return undefined;
  const before = change.operation === 'CREATE' ? new Uint8Array() : change.beforeContent;
  const after = change.afterContent;
  if (before === null || after === null) return undefined;
  if (asText(before) !== null && asText(after) !== null) return undefined;
  const name = quote(projectPath(change, change.path));
  const basename = change.path.slice(change.path.lastIndexOf('/') + 1);
  const dot = basename.lastIndexOf('.');
  const extension = dot > 0 ? basename.slice(dot).toLowerCase() : '';
  const reason =
    TEXT_EXTENSIONS.has(extension) || TEXT_NAMES.test(basename)
      ? 'has a text/script name'
      : after[0] === 0x23 && after[1] === 0x21
        ? 'starts with #! like a script'
        : undefined;
  return reason === undefined
    ? undefined
    : `WARNING: ${name} ${reason} but binary content; inspect it before applying`;
}

/**
 * Characters a terminal does not show as themselves: controls (C0 but the tab, DEL, C1; 0x9b is a one-byte CSI
 * for some terminals), format characters (bidi overrides and isolates such as U+202E, which reorder what is
 * displayed; zero-width spaces and joiners; U+FEFF), every other default-ignorable code point (variation selectors
 * and tag characters, which can carry a hidden payload; Hangul fillers, which render blank yet are valid in an
 * identifier), and the line and paragraph separators, which end a `//` comment in JavaScript but not the displayed
 * line. A rendered line has no newline of its own yet, so a newline here is content.
 */
const INVISIBLE_CHARACTERS =
  // eslint-disable-next-line no-control-regex
  /[\x00-\x08\x0a-\x1f\x7f-\x9f\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/gu;

/** Not global, so `test` keeps no position between calls. */
const HAS_INVISIBLE = new RegExp(INVISIBLE_CHARACTERS.source, 'u');

/**
 * A name with a quote, backslash or invisible character (a newline would split the header) is quoted, as git does.
 * JSON quoting escapes C0 controls; the rest is left to `escapeControls`, which every rendered line goes through.
 */
function quote(name: string): string {
  return /["\\]/.test(name) || HAS_INVISIBLE.test(name) ? JSON.stringify(name) : name;
}

/**
 * Makes invisible characters visible (`\r`, `\n`, `\x1b`, `\x7f`, `\u009b`, `\u202e`, `\u{e0041}`) so that text an
 * actor wrote cannot move the cursor, erase or recolour lines of a diff a person is asked to confirm, nor show code
 * in another order than it runs (a bidi override) or hide some of it (a zero-width or separator character).
 * Applied to the plain text of a line, before colouring, so our own colour codes survive. A literal backslash is
 * left alone: `\x1b` typed as text looks the same as an escaped ESC, which can mislead but cannot hide anything. A
 * CRLF file shows `\r` at the end of each line, which is also what it holds.
 */
export function escapeControls(text: string): string {
  return text.replace(INVISIBLE_CHARACTERS, (character) => {
    if (character === '\r') return '\\r';
    if (character === '\n') return '\\n';
    const code = character.codePointAt(0) ?? 0;
    const hex = code.toString(16);
    if (code < 0x80) return `\\x${hex.padStart(2, '0')}`;
    return code > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
  });
}
