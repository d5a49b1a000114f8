import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBuiltinActors } from '../../actors/builtin';
import { runStep, runValidation, StepError } from '../../actors/steps';
import type { ActorCall, ContextFile, ExecutionActor, ExecutionOutcome } from '../../actors/types';
import type { Workspace } from '../../domain/project-link';
import { DecisionLog } from '../../domain/decision-log';
import type { DecisionDraft } from '../../domain/decision';
import type { Phase } from '../../domain/lifecycle';
import type { PlanSpec } from '../../domain/plan';
import { planSpecSchema } from '../../domain/schemas';
import type { Step, StepFile, Strategy } from '../../domain/steps';
import { stepFromFile } from '../../domain/steps';
import type { Isolation } from '../../sandbox/isolation';
import { testIsolation } from '../helpers/isolation';
import { allEnded, started, uniqueSeconds } from '../helpers/processes';
import { CREATED_AT, PLAN_ID } from '../unit/fixtures';

const FIRST_SEQ = 10;
const PHASE_PARENT = 9;

const actors = createBuiltinActors();
const execution = actors.execution as ExecutionActor;

let base: string;
let root: string;
let sandbox: string;
let docsRoot: string;
let isolation: Isolation;

beforeAll(async () => {
  isolation = await testIsolation();
});

/** The sandbox as Execute gets it: a plain copy of the project root. */
async function copyToSandbox(from: string, to: string): Promise<void> {
  await fs.mkdir(path.dirname(to), { recursive: true });
  await fs.cp(from, to, { recursive: true, verbatimSymlinks: true });
}

async function write(dir: string, rel: string, content: string): Promise<void> {
  const file = path.join(dir, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
}

/** Every file under dir with its content, symlinks as `-> target`: compares a tree before and after. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isSymbolicLink()) out[child] = `-> ${await fs.readlink(path.join(dir, child))}`;
      else out[child] = await fs.readFile(path.join(dir, child), 'utf8');
    }
  };
  await walk('');
  return out;
}

async function exists(file: string): Promise<boolean> {
  return fs.lstat(file).then(
    () => true,
    () => false,
  );
}

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'builtin-actors-'));
  root = path.join(base, 'projects', 'api');
  docsRoot = path.join(base, 'projects', 'docs');
  await write(root, 'README.md', '# Demo\n');
  await write(root, 'src/a.ts', '// Copyright 2020\nexport const a = 1;\n');
  await write(root, 'src/b.ts', 'export const b = 2;\n');
  await write(root, 'src/.hidden.ts', '// Copyright 2020\n');
  await write(root, 'notes/old.txt', 'old notes\n');
  await write(root, 'tmp/one.log', 'log 1\n');
  await write(root, 'tmp/deep/two.log', 'log 2\n');
  await write(root, '.git/config', '[core]\n');
  await write(docsRoot, 'guide.md', 'docs\n');
  sandbox = path.join(base, 'sandboxes', 'api');
  await copyToSandbox(root, sandbox);
});

afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function plan(args: Record<string, string | number | boolean> = {}): PlanSpec {
  return planSpecSchema.parse({
    planId: PLAN_ID,
    name: 'demo plan',
    actionName: 'local/demo',
    projects: [
      { projectName: 'acme/api', alias: 'api' },
      { projectName: 'acme/docs', readOnly: true },
    ],
    automationLevel: 'MANUAL',
    arguments: args,
    argumentsOrder: Object.keys(args),
    createdAt: CREATED_AT,
  });
}

function workspaces(): Workspace[] {
  return [
    { projectName: 'acme/api', alias: 'api', readOnly: false, root, sandbox },
    { projectName: 'acme/docs', alias: null, readOnly: true, root: docsRoot, sandbox: null },
  ];
}

function newLog(phase: Phase = 'EXECUTE'): DecisionLog {
  return new DecisionLog({ firstSeq: FIRST_SEQ, parentSeq: PHASE_PARENT, phase, actor: 'builtin' });
}

interface CallOptions {
  args?: Record<string, string | number | boolean>;
  signal?: AbortSignal;
  contextFiles?: ContextFile[];
  phase?: Phase;
}

function actorCall(options: CallOptions = {}): ActorCall & { progressed: string[] } {
  const progressed: string[] = [];
  return {
    plan: plan(options.args),
    workspaces: workspaces(),
    contextFiles: options.contextFiles ?? [],
    log: newLog(options.phase),
    signal: options.signal ?? new AbortController().signal,
    progress: (message: string) => progressed.push(message),
    progressed,
    isolation,
  };
}

const steps = (...files: StepFile[]): Step[] => files.map(stepFromFile);

async function execute(
  stepList: Step[],
  options: CallOptions & { validation?: string; maxAutoRetries?: number } = {},
): Promise<{ outcome: ExecutionOutcome; drafts: DecisionDraft[]; progressed: string[] }> {
  const call = actorCall(options);
  const strategy: Strategy = { steps: stepList, validation: options.validation ?? null, summary: 'test' };
  const outcome = await execution.execute({ ...call, strategy, maxAutoRetries: options.maxAutoRetries ?? 0 });
  return { outcome, drafts: call.log.drafts(), progressed: call.progressed };
}

function ofType(drafts: DecisionDraft[], type: DecisionDraft['type']): DecisionDraft[] {
  return drafts.filter((d) => d.type === type);
}

/** Every parent is the phase parent or a decision recorded earlier in the same batch. */
function expectTreeShape(drafts: DecisionDraft[]): void {
  drafts.forEach((draft, i) => {
    const seq = FIRST_SEQ + i;
    const parent = draft.parentSeq;
    expect(parent === PHASE_PARENT || (parent !== null && parent >= FIRST_SEQ && parent < seq)).toBe(true);
  });
}

function failure(outcome: ExecutionOutcome): Extract<ExecutionOutcome, { ok: false }>['error'] {
  if (outcome.ok) throw new Error(`expected a failure, got ok: ${outcome.summary}`);
  return outcome.error;
}

describe('built-in execution: step kinds', () => {
  it('runs create, replace, move, delete and run in the sandbox and leaves the project root untouched', async () => {
    const before = await snapshot(root);
    const { outcome, drafts } = await execute(
      steps(
        { create: 'docs/NOTES.md', content: 'notes\n' },
        { replace: 'src/**/*.ts', pattern: 'Copyright \\d+', with: 'Copyright 2026' },
        { move: 'notes/old.txt', to: 'archive/old.txt' },
        { delete: 'tmp/**' },
        { delete: 'README.md' },
        { run: 'echo ran > ran.txt && pwd' },
      ),
    );
    expect(outcome).toMatchObject({ ok: true, validation: null });
    expect(await snapshot(root)).toEqual(before);

    const after = await snapshot(sandbox);
    expect(after['docs/NOTES.md']).toBe('notes\n');
    expect(after['src/a.ts']).toBe('// Copyright 2026\nexport const a = 1;\n');
    expect(after['src/b.ts']).toBe('export const b = 2;\n');
    // dot: false: a glob does not reach dotfiles.
    expect(after['src/.hidden.ts']).toBe('// Copyright 2020\n');
    expect(after['archive/old.txt']).toBe('old notes\n');
    expect(after['notes/old.txt']).toBeUndefined();
    expect(after['tmp/one.log']).toBeUndefined();
    expect(after['tmp/deep/two.log']).toBeUndefined();
    expect(after['README.md']).toBeUndefined();
    expect(after['ran.txt']).toBe('ran\n');
    expect(after['.git/config']).toBe('[core]\n');

    const tools = ofType(drafts, 'tool_invocation');
    expect(tools.map((d) => d.chosenOption)).toEqual([
      'create docs/NOTES.md: docs/NOTES.md',
      'replace /Copyright \\d+/ in src/**/*.ts: src/a.ts',
      'move notes/old.txt to archive/old.txt: notes/old.txt, archive/old.txt',
      'delete tmp/**: tmp/deep/two.log, tmp/one.log',
      'delete README.md: README.md',
      '`echo ran > ran.txt && pwd` exited with code 0',
    ]);
    expect(tools[1]?.context?.relevantResources).toEqual([
      { kind: 'file', uri: 'src/a.ts', description: 'in acme/api' },
    ]);
    const runReport = (tools[5]?.context?.content as { report: { command: { output: string } } }).report;
    expect(runReport.command.output.trim()).toBe(await fs.realpath(sandbox));
  });

  it('rewrites only the files whose content changes', async () => {
    const untouched = path.join(sandbox, 'src/b.ts');
    const old = new Date('2020-01-01T00:00:00Z');
    await fs.utimes(untouched, old, old);
    const { outcome, drafts } = await execute(
      steps({ replace: 'src/*.ts', pattern: 'export', with: 'export', flags: 'i' }),
    );
    expect(outcome.ok).toBe(true);
    expect((await fs.stat(untouched)).mtime.getTime()).toBe(old.getTime());
    expect(ofType(drafts, 'tool_invocation')[0]?.chosenOption).toMatch(/no file changed/);
  });

  it('refuses to create over an existing file unless overwrite is set', async () => {
    const refused = await execute(steps({ create: 'README.md', content: 'new\n' }));
    expect(failure(refused.outcome).message).toMatch(/already exists/);
    expect(await fs.readFile(path.join(sandbox, 'README.md'), 'utf8')).toBe('# Demo\n');

    const allowed = await execute(steps({ create: 'README.md', content: 'new\n', overwrite: true }));
    expect(allowed.outcome.ok).toBe(true);
    expect(await fs.readFile(path.join(sandbox, 'README.md'), 'utf8')).toBe('new\n');
  });

  it('refuses a move whose source is missing or whose destination exists', async () => {
    const missing = await execute(steps({ move: 'nope.txt', to: 'x.txt' }));
    expect(failure(missing.outcome).message).toMatch(/nope\.txt does not exist/);
    const taken = await execute(steps({ move: 'src/a.ts', to: 'src/b.ts' }));
    expect(failure(taken.outcome).message).toMatch(/src\/b\.ts already exists/);
    expect(await fs.readFile(path.join(sandbox, 'src/b.ts'), 'utf8')).toBe('export const b = 2;\n');
  });
});

describe('built-in execution: templates', () => {
  it('fills plan arguments and plan/project values, shell-quoting them in commands', async () => {
    const greeting = "hi'; touch pwned; echo '";
    const { outcome } = await execute(
      steps(
        {
          create: 'out/{{file}}.md',
          content: '{{greeting}} from {{plan.name}} ({{plan.id}}) in {{project.name}} as {{project.alias}}\n',
        },
        { replace: 'out/*.md', pattern: 'from', with: '{{word}}' },
        { run: 'printf %s {{greeting}} > said.txt && printf %s "$CLEVERAGENTS_ARG_MY_FILE_NAME" > env.txt' },
      ),
      { args: { file: 'hello', greeting, word: 'by', 'my-file.name': 'x y' } },
    );
    expect(outcome.ok).toBe(true);
    expect(await fs.readFile(path.join(sandbox, 'out/hello.md'), 'utf8')).toBe(
      `${greeting} by demo plan (${PLAN_ID}) in acme/api as api\n`,
    );
    expect(await fs.readFile(path.join(sandbox, 'said.txt'), 'utf8')).toBe(greeting);
    expect(await fs.readFile(path.join(sandbox, 'env.txt'), 'utf8')).toBe('x y');
    expect(await exists(path.join(sandbox, 'pwned'))).toBe(false);
  });

  it('fails with a message naming an unknown template argument', async () => {
    const { outcome, drafts } = await execute(steps({ create: '{{nmae}}.md', content: 'x' }), {
      args: { name: 'n' },
    });
    const error = failure(outcome);
    expect(error.message).toMatch(/"nmae", which this plan does not have/);
    expect(error.message).toMatch(/known: name, plan\.id/);
    expect(error.step).toBe(0);
    expect(ofType(drafts, 'error_recovery')).toHaveLength(1);
  });

  it('refuses a placeholder inside quotes in a command, naming it, and runs nothing', async () => {
    const msg = '$(touch pwned)';
    const doubled = await execute(steps({ run: 'echo "{{msg}}"' }), { args: { msg } });
    expect(failure(doubled.outcome).message).toBe(
      'Step 1 (run echo "{{msg}}") failed: the command: {{msg}} is inside quotes in the command; write it bare (it is quoted for you) ' +
        'or use $CLEVERAGENTS_ARG_MSG',
    );
    const single = await execute(steps({ run: "echo 'say: {{ msg }}'" }), { args: { msg } });
    expect(failure(single.outcome).message).toMatch(/failed: the command: \{\{ msg \}\} is inside quotes/);
    const validation = await runValidation('test "{{plan.id}}" = x', {
      plan: plan(),
      workspaces: workspaces(),
      signal: new AbortController().signal,
      progress: () => undefined,
      isolation,
    });
    expect(validation).toMatchObject({ passed: false, exitCode: null });
    expect(validation.output).toMatch(/\{\{plan\.id\}\} is inside quotes .* or use \$CLEVERAGENTS_PLAN_ID$/);
    expect(await exists(path.join(sandbox, 'pwned'))).toBe(false);
  });

  it('refuses a placeholder where its quoting would not hold: backquotes, comments, here-documents, \\ and $', async () => {
    const cases: [string, RegExp][] = [
      ['echo `echo {{msg}}`', /is inside `\.\.\.` in the command/],
      ['echo ok # {{msg}}', /is inside a comment/],
      ['cat <<EOF\nhello {{msg}}\nEOF', /is inside a here-document/],
      ["cat <<-'END' > out.txt\n\t{{msg}}\n\tEND", /is inside a here-document/],
      ['cat <<{{msg}}\nx\n', /is inside a here-document/],
      ['echo \\{{msg}}', /follows a backslash/],
      ['echo ${{msg}}', /follows a `\$`/],
    ];
    for (const [run, message] of cases) {
      const { outcome } = await execute(steps({ run }), { args: { msg: 'x\ntouch pwned' } });
      expect(failure(outcome).message).toMatch(message);
    }
    expect(await exists(path.join(sandbox, 'pwned'))).toBe(false);
  });

  it('passes a bare placeholder as one literal word, wherever the shell parses its quotes', async () => {
    const msg = '$(id); rm -rf x "`id`" \'\n# done';
    const { outcome } = await execute(
      steps({
        run:
          'echo {{msg}} > bare.txt; printf %s --opt={{msg}} > joined.txt; printf %s \'a "b" #\'{{msg}} > after.txt\n' +
          'cat <<EOF > {{file}}\n$CLEVERAGENTS_ARG_MSG\nEOF\necho done # a comment, {{ not a placeholder',
      }),
      { args: { msg, file: 'doc.txt' } },
    );
    expect(outcome.ok).toBe(true);
    expect(await fs.readFile(path.join(sandbox, 'bare.txt'), 'utf8')).toBe(`${msg}\n`);
    expect(await fs.readFile(path.join(sandbox, 'joined.txt'), 'utf8')).toBe(`--opt=${msg}`);
    expect(await fs.readFile(path.join(sandbox, 'after.txt'), 'utf8')).toBe(`a "b" #${msg}`);
    expect(await fs.readFile(path.join(sandbox, 'doc.txt'), 'utf8')).toBe(`${msg}\n`);
  });
});

describe('built-in execution: command environment', () => {
  const secrets = { DATABASE_URL: 'postgres://user:hunter2@db/x', CLEVERAGENTS_MODEL_API_KEY: 'sk-secret' };
  const saved: Record<string, string | undefined> = {};
  beforeEach(() => {
    for (const [name, value] of Object.entries(secrets)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterEach(() => {
    for (const name of Object.keys(secrets)) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('gives run steps and validation commands PATH, the plan id, the arguments and a git ceiling, never the worker secrets', async () => {
    const { outcome } = await execute(steps({ run: 'env > env.txt' }), {
      args: { msg: 'hello', 'my-file.name': 'x y' },
      validation: 'env',
    });
    expect(outcome.ok).toBe(true);
    const validationOutput = outcome.ok ? (outcome.validation?.output ?? '') : '';
    for (const listing of [await fs.readFile(path.join(sandbox, 'env.txt'), 'utf8'), validationOutput]) {
      const names = listing
        .split('\n')
        .filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line))
        .map((line) => line.slice(0, line.indexOf('=')));
      expect(listing).not.toMatch(/DATABASE_URL|CLEVERAGENTS_MODEL_API_KEY|hunter2|sk-secret/);
      const boxPath = isolation.mode === 'bwrap' ? isolation.path : null;
      expect(listing).toContain(`PATH=${boxPath ?? process.env['PATH']}\n`);
      expect(listing).toContain(`GIT_CEILING_DIRECTORIES=${path.dirname(await fs.realpath(sandbox))}\n`);
      if (boxPath !== null) expect(listing).toContain('HOME=/tmp/home\n');
      expect(listing).toContain('CLEVERAGENTS_ARG_MSG=hello\n');
      expect(listing).toContain('CLEVERAGENTS_ARG_MY_FILE_NAME=x y\n');
      expect(listing).toContain(`CLEVERAGENTS_PLAN_ID=${PLAN_ID}\n`);
      const allowed = [
        'PATH',
        'HOME',
        'LANG',
        'LC_ALL',
        'TMPDIR',
        'TERM',
        'CI',
        'PWD',
        'OLDPWD',
        'SHLVL',
        '_',
        'GIT_CEILING_DIRECTORIES',
      ];
      expect(names.filter((n) => !allowed.includes(n) && !n.startsWith('CLEVERAGENTS_'))).toEqual([]);
    }
  });
});

describe('built-in execution: refusals', () => {
  it('fails when a glob matches no file and a match is required, and passes when it is not', async () => {
    const required = await execute(steps({ replace: 'lib/**/*.js', pattern: 'x', with: 'y' }));
    expect(failure(required.outcome).message).toMatch(/no file matches the glob/);

    const pattern = await execute(steps({ replace: 'src/*.ts', pattern: 'nothing-like-this', with: 'y' }));
    expect(failure(pattern.outcome).message).toMatch(/matches in none of the 2 matching file/);

    const deleteNothing = await execute(steps({ delete: 'build/**' }));
    expect(failure(deleteNothing.outcome).message).toMatch(/no file matches the glob/);

    const optional = await execute(
      steps(
        { replace: 'lib/**/*.js', pattern: 'x', with: 'y', require_match: false },
        { delete: 'build/**', require_match: false },
      ),
    );
    expect(optional.outcome.ok).toBe(true);
  });

  it('refuses a path that leaves the sandbox', async () => {
    for (const target of ['../escaped.txt', 'src/../../escaped.txt', '/tmp/escaped.txt']) {
      const { outcome } = await execute(steps({ create: target, content: 'x' }));
      expect(failure(outcome).message).toMatch(/(\.\.|absolute)/);
    }
    expect(await exists(path.join(base, 'sandboxes', 'escaped.txt'))).toBe(false);
    const moved = await execute(steps({ move: 'README.md', to: '../README.md' }));
    expect(failure(moved.outcome).message).toMatch(/"\.\." component/);
  });

  it('refuses to write through a symbolic link leading outside the sandbox', async () => {
    const outside = path.join(base, 'outside');
    await fs.mkdir(outside);
    await fs.symlink(outside, path.join(sandbox, 'link'));
    await fs.symlink(path.join(outside, 'target.txt'), path.join(sandbox, 'file-link'));
    const viaDir = await execute(steps({ create: 'link/x.txt', content: 'x' }));
    expect(failure(viaDir.outcome).message).toMatch(/"link" is a symbolic link leading outside the sandbox/);
    const viaFile = await execute(steps({ create: 'file-link', content: 'x', overwrite: true }));
    expect(failure(viaFile.outcome).message).toMatch(/symbolic link leading outside/);
    expect(await fs.readdir(outside)).toEqual([]);

    // A glob never follows links, and deleting a link removes the link, not its target.
    await fs.writeFile(path.join(outside, 'keep.txt'), 'keep');
    const deleted = await execute(steps({ delete: 'link' }));
    expect(deleted.outcome.ok).toBe(true);
    expect(await fs.readFile(path.join(outside, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('refuses replace and delete through a literal path whose directory is a link leading outside', async () => {
    const outside = path.join(base, 'outside');
    await write(outside, 'file.txt', 'secret\n');
    await fs.symlink(outside, path.join(sandbox, 'linkdir'));

    for (const requireMatch of [true, false]) {
      const { outcome } = await execute(
        steps({
          replace: 'linkdir/file.txt',
          pattern: 'secret',
          with: 'leaked',
          require_match: requireMatch,
        }),
      );
      expect(failure(outcome).message).toBe(
        'Step 1 (replace /secret/ in linkdir/file.txt) failed: ' +
          'replace in linkdir/file.txt: "linkdir" is a symbolic link leading outside the sandbox (or nowhere)',
      );
    }
    const env = {
      plan: plan(),
      workspaces: workspaces(),
      signal: new AbortController().signal,
      progress: () => {},
      isolation,
    };
    await expect(
      runStep(stepFromFile({ replace: 'linkdir/file.txt', pattern: 'secret', with: 'leaked' }), env),
    ).rejects.toThrow(StepError);

    const deleted = await execute(steps({ delete: 'linkdir/file.txt' }));
    expect(failure(deleted.outcome).message).toMatch(
      /"linkdir" is a symbolic link leading outside the sandbox/,
    );

    // Globs never descend into the linked directory, whether it is their base or met on the walk.
    const globbed = await execute(
      steps(
        { replace: 'linkdir/*.txt', pattern: 'secret', with: 'leaked', require_match: false },
        { replace: '**/*.txt', pattern: 'secret', with: 'leaked', require_match: false },
        { delete: '**/file.txt', require_match: false },
      ),
    );
    expect(globbed.outcome.ok).toBe(true);
    expect(await snapshot(outside)).toEqual({ 'file.txt': 'secret\n' });
  });

  it('never rewrites through a link staying inside the sandbox, directory or file', async () => {
    await fs.symlink('src', path.join(sandbox, 'inlink'));
    await fs.symlink('src/a.ts', path.join(sandbox, 'alias.ts'));
    const viaDir = await execute(steps({ replace: 'inlink/a.ts', pattern: 'Copyright', with: 'Copyleft' }));
    expect(failure(viaDir.outcome).message).toBe(
      'Step 1 (replace /Copyright/ in inlink/a.ts) failed: ' +
        'replace in inlink/a.ts: "inlink" is a symbolic link; replace never reads or rewrites through a link',
    );
    const viaFile = await execute(steps({ replace: 'alias.ts', pattern: 'Copyright', with: 'Copyleft' }));
    expect(failure(viaFile.outcome).message).toMatch(/"alias\.ts" is a symbolic link; replace never/);
    const globbed = await execute(
      steps({ replace: '*.ts', pattern: 'Copyright', with: 'Copyleft', require_match: false }),
    );
    expect(globbed.outcome.ok).toBe(true);
    expect(await fs.readFile(path.join(sandbox, 'src/a.ts'), 'utf8')).toBe(
      '// Copyright 2020\nexport const a = 1;\n',
    );
  });

  it('refuses a step targeting a read-only or unknown project', async () => {
    const readOnly = await execute(steps({ create: 'x.md', content: 'x', project: 'acme/docs' }));
    expect(failure(readOnly.outcome).message).toMatch(/acme\/docs, which is linked read-only/);
    const unknown = await execute(steps({ create: 'x.md', content: 'x', project: 'acme/nope' }));
    expect(failure(unknown.outcome).message).toMatch(/"acme\/nope", which is not linked/);
    expect(await exists(path.join(docsRoot, 'x.md'))).toBe(false);

    const byAlias = await execute(steps({ create: 'x.md', content: 'x', project: 'api' }));
    expect(byAlias.outcome.ok).toBe(true);
  });

  it('refuses to run when no project is writable', async () => {
    const env = {
      plan: plan(),
      workspaces: workspaces().map((w) => ({ ...w, readOnly: true, sandbox: null })),
      signal: new AbortController().signal,
      progress: () => undefined,
      isolation,
    };
    await expect(runStep(stepFromFile({ create: 'x', content: '' }), env)).rejects.toThrow(StepError);
    await expect(runStep(stepFromFile({ create: 'x', content: '' }), env)).rejects.toThrow(
      /no writable project/,
    );
  });
});

describe('built-in execution: auto-debug', () => {
  it('retries a failing command maxAutoRetries times, then stops', async () => {
    const { outcome, drafts } = await execute(
      steps({ create: 'a.txt', content: 'a' }, { run: 'echo broken >&2; exit 3' }),
      {
        maxAutoRetries: 2,
      },
    );
    const error = failure(outcome);
    expect(error).toMatchObject({ step: 1, attempts: 3 });
    expect(error.message).toMatch(/exited with code 3/);
    expect(error.message).toMatch(/broken/);
    expect(error.details).toBe('broken\n');
    const recoveries = ofType(drafts, 'error_recovery');
    expect(recoveries.map((d) => d.chosenOption)).toEqual([
      'Retry step 2 (attempt 2 of 3)',
      'Retry step 2 (attempt 3 of 3)',
      'Stop: mark the plan ERRORED',
    ]);
    expect(recoveries.every((d) => d.question === 'Step 2 failed: what now?')).toBe(true);
    expect(recoveries[0]?.rationale).toMatch(/exited with code 3/);
    expect(recoveries[2]?.context?.content).toMatchObject({ attempt: 3, step: { kind: 'run' } });
    expectTreeShape(drafts);
  });

  it('passes when a flaky command succeeds on retry', async () => {
    // In the sandbox: a retry runs in the same sandbox, and a command can write nowhere else.
    const counter = 'counter.txt';
    const { outcome, drafts, progressed } = await execute(
      steps({
        run: 'n=$(cat {{counter}} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {{counter}}; test $n -ge 2',
      }),
      { args: { counter }, maxAutoRetries: 2 },
    );
    expect(outcome.ok).toBe(true);
    expect(await fs.readFile(path.join(sandbox, counter), 'utf8')).toBe('2\n');
    const recoveries = ofType(drafts, 'error_recovery');
    expect(recoveries.map((d) => d.chosenOption)).toEqual(['Retry step 1 (attempt 2 of 3)']);
    const tool = ofType(drafts, 'tool_invocation')[0];
    expect(tool?.parentSeq).toBe(FIRST_SEQ + drafts.indexOf(recoveries[0] as DecisionDraft));
    expect(progressed.filter((m) => m.startsWith('step 1/1: run n=$(cat {{counter}}'))).toHaveLength(2);
    expect(progressed.some((m) => m.endsWith('(attempt 2 of 3)'))).toBe(true);
    expectTreeShape(drafts);
  });

  it('fails a command that exceeds its timeout', async () => {
    const started = Date.now();
    const { outcome } = await execute(steps({ run: 'sleep 30', timeout_seconds: 1 }));
    expect(failure(outcome).message).toMatch(/timed out after 1s/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('built-in execution: validation', () => {
  it('records a validation_response and returns the outcome when validation passes', async () => {
    const { outcome, drafts } = await execute(steps({ create: 'ok.txt', content: 'ok\n' }), {
      validation: 'cat ok.txt',
    });
    expect(outcome).toMatchObject({
      ok: true,
      validation: { command: 'cat ok.txt', passed: true, exitCode: 0, output: 'ok\n' },
    });
    const responses = ofType(drafts, 'validation_response');
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({
      question: 'Did validation pass?',
      chosenOption: 'Validation passed: `cat ok.txt`',
    });
    expect(responses[0]?.rationale).toMatch(/exited with code 0/);
    expectTreeShape(drafts);
  });

  it('fails the execution when validation keeps failing, after the retries', async () => {
    const { outcome, drafts } = await execute(steps({ create: 'a.txt', content: 'a' }), {
      validation: 'echo tests failed; exit 1',
      maxAutoRetries: 1,
    });
    const error = failure(outcome);
    expect(error).toMatchObject({ step: null, attempts: 2, details: 'tests failed\n' });
    expect(outcome.validation).toMatchObject({ passed: false, exitCode: 1 });
    expect(ofType(drafts, 'validation_response').map((d) => d.chosenOption)).toEqual([
      'Validation failed: `echo tests failed; exit 1` exited with code 1',
      'Validation failed: `echo tests failed; exit 1` exited with code 1',
    ]);
    expect(ofType(drafts, 'error_recovery').map((d) => d.chosenOption)).toEqual([
      'Retry validation (attempt 2 of 2)',
      'Stop: mark the plan ERRORED',
    ]);
    expectTreeShape(drafts);
  });

  it('runValidation reports a failing command instead of throwing', async () => {
    const outcome = await runValidation('echo nope; exit 4', {
      plan: plan(),
      workspaces: workspaces(),
      signal: new AbortController().signal,
      progress: () => undefined,
      isolation,
    });
    expect(outcome).toEqual({ command: 'echo nope; exit 4', passed: false, exitCode: 4, output: 'nope\n' });
  });
});

describe('built-in execution: decision tree and cancellation', () => {
  it('hangs every decision under the phase parent or an earlier decision of the batch', async () => {
    const { drafts } = await execute(steps({ create: 'a.txt', content: 'a' }, { run: 'exit 1' }), {
      maxAutoRetries: 1,
    });
    expectTreeShape(drafts);
    expect(drafts.map((d) => d.type)).toEqual([
      'implementation_choice',
      'resource_selection',
      'tool_invocation',
      'error_recovery',
      'error_recovery',
    ]);
    expect(drafts[0]?.parentSeq).toBe(PHASE_PARENT);
    expect(drafts[1]?.parentSeq).toBe(FIRST_SEQ);
    expect(drafts[2]?.parentSeq).toBe(FIRST_SEQ);
    expect(drafts[3]?.parentSeq).toBe(FIRST_SEQ);
    expect(drafts[4]?.parentSeq).toBe(FIRST_SEQ + 3);
    expect(drafts[1]).toMatchObject({
      chosenOption: 'Writable: acme/api',
      alternatives: ['Also write acme/docs'],
    });
    expect(drafts.every((d) => d.phase === 'EXECUTE' && d.actor === 'builtin')).toBe(true);
  });

  it('kills a long command when the signal aborts, and rethrows instead of recording a failure', async () => {
    const controller = new AbortController();
    const seconds = uniqueSeconds();
    const running = execute(steps({ run: `sleep ${seconds} & wait` }), {
      signal: controller.signal,
      maxAutoRetries: 3,
    });
    expect(await started(seconds)).toBe(true);
    const cancelledAt = Date.now();
    controller.abort(new Error('plan cancelled'));
    await expect(running).rejects.toThrow('plan cancelled');
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    expect(await allEnded(seconds)).toBe(true);
  });
});

describe('built-in strategy', () => {
  it('records one strategy_choice per step of the action definition', async () => {
    const call = actorCall({
      phase: 'STRATEGIZE',
      args: { who: 'ada' },
      contextFiles: [{ path: '/home/ada/spec.md', sha256: 'a'.repeat(64), size: 3, content: 'abc' }],
    });
    const stepList = steps({ create: 'a.md', content: '{{who}}' }, { run: 'npm test', description: 'tests' });
    const strategy = await actors.strategy?.strategize({
      ...call,
      action: { steps: stepList, validation: 'npm test' },
    });
    expect(strategy).toEqual({
      steps: stepList,
      validation: 'npm test',
      summary: '2 steps from the action definition, then validation with `npm test`',
      // The decision each step came from, for a correction to find it by (ADR 0016).
      stepDecisions: [10, 11],
    });
    const drafts = call.log.drafts();
    expect(drafts.map((d) => [d.type, d.question, d.chosenOption, d.parentSeq, d.confidence])).toEqual([
      ['strategy_choice', 'Step 1 of 2: what should be done?', 'create a.md', PHASE_PARENT, 1],
      ['strategy_choice', 'Step 2 of 2: what should be done?', 'run npm test (tests)', PHASE_PARENT, 1],
    ]);
    expect(drafts[0]?.alternatives).toEqual(['Skip this step']);
    expect(drafts[0]?.rationale).toMatch(/action definition/);
    expect(drafts[0]?.context).toEqual({
      content: { step: stepList[0], arguments: { who: 'ada' } },
      relevantResources: [{ kind: 'file', uri: '/home/ada/spec.md' }],
    });
  });

  it('records that nothing will change when the action has no steps', async () => {
    const call = actorCall({ phase: 'STRATEGIZE' });
    const strategy = await actors.strategy?.strategize({ ...call, action: { steps: [], validation: null } });
    expect(strategy?.steps).toEqual([]);
    expect(call.log.drafts().map((d) => d.chosenOption)).toEqual([
      'No file changes: the action defines no steps',
    ]);
  });
});

describe('built-in estimation and invariants', () => {
  it('counts the files the file steps will touch, reading the project root', async () => {
    await write(root, 'extra/one.ts', 'x');
    const call = actorCall();
    const estimate = await actors.estimation?.estimate({
      ...call,
      strategy: {
        steps: steps(
          { create: 'new.md', content: 'x' },
          { replace: 'src/**/*.ts', pattern: 'Copyright', with: 'C' },
          { delete: 'tmp/**' },
          { move: 'notes/old.txt', to: 'notes/new.txt' },
        ),
        validation: null,
        summary: '',
      },
    });
    // The replace counts both files its glob matches (src/a.ts and src/b.ts): its pattern is not run here.
    expect(estimate).toEqual({
      summary: '6 files likely changed (2 deleted); medium risk',
      filesLikelyChanged: 6,
      risk: 'medium',
    });
    const small = await actors.estimation?.estimate({
      ...call,
      strategy: { steps: steps({ create: 'a.md', content: 'x' }), validation: null, summary: '' },
    });
    expect(small?.risk).toBe('low');
    expect(call.log.drafts()).toEqual([]);
  });

  it("never runs a replace's untrusted pattern, so a backtracking one cannot stall Strategize", async () => {
    await write(root, 'evil.txt', `${'a'.repeat(40)}b`);
    const started = Date.now();
    const estimate = await actors.estimation?.estimate({
      ...actorCall(),
      strategy: {
        steps: steps({ replace: 'evil.txt', pattern: '^(a+)+$', with: 'x' }),
        validation: null,
        summary: '',
      },
    });
    // 40 a's would backtrack for days on the event loop.
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(estimate?.filesLikelyChanged).toBe(1);
  });

  it('acknowledges every invariant and records nothing', async () => {
    const call = actorCall();
    const invariants = plan().invariants.concat([
      { text: 'Keep the API', scope: 'PLAN', sourceName: null, id: null, rule: null },
    ]);
    const verdicts = await actors.invariant?.check({ ...call, phase: 'EXECUTE', invariants, changes: null });
    expect(verdicts).toEqual([
      {
        invariant: invariants[0],
        status: 'acknowledged',
        evidence: 'no machine-checkable rule; recorded as acknowledged',
      },
    ]);
    expect(call.log.drafts()).toEqual([]);
  });
});
