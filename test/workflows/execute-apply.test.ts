/**
 * Issue 6 end to end: actions whose steps really change files, run through a real Temporal dev server, the real
 * activities and actors, real sandboxes and a real SQLite database; Apply writes into real project directories.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  lstatSync,
  readlinkSync,
} from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { applyPatch, parsePatch } from 'diff';
import { parseActionFile } from '../../domain/action-file';
import type { AutomationLevel } from '../../domain/lifecycle';
import { planWorkflowId } from '../../domain/ids';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';

let h: Harness;
let demo: string;
let outside: string;

beforeAll(async () => {
  h = await createHarness();
  demo = path.join(h.projectDir, 'demo');
  outside = path.join(h.projectDir, '..', 'outside');
  mkdirSync(outside, { recursive: true });
});

afterAll(async () => {
  await h?.teardown();
});

/** Every file and symlink under a directory, with contents (or link targets): the whole observable state. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      const rel = path.relative(dir, full);
      if (entry.isSymbolicLink()) out[rel] = `-> ${readlinkSync(full)}`;
      else if (entry.isDirectory()) walk(full);
      else out[rel] = readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** The directory under `dir` (a plan's sandboxes) that holds a file named `name`, if one does yet. */
function sandboxHolding(dir: string, name: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.name === name && entry.isFile()) return entry.parentPath;
  }
  return undefined;
}

/** Replaces the demo project with exactly these files. */
function resetDemo(files: Record<string, string>): void {
  rmSync(demo, { recursive: true, force: true });
  mkdirSync(demo, { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(demo, file)), { recursive: true });
    writeFileSync(path.join(demo, file), content);
  }
}

async function addAction(yaml: string): Promise<string> {
  const parsed = parseActionFile(yaml, 'action.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  await h.catalog.putAction(parsed.action);
  return parsed.action.name;
}

async function startPlan(
  actionName: string,
  automation: AutomationLevel,
  options: { projects?: string[]; args?: Record<string, string>; profile?: string } = {},
): Promise<string> {
  const created = await h.client.create({
    actionName,
    projects: options.projects ?? ['local/demo'],
    automationLevel: automation,
    arguments: options.args ?? {},
    ...(options.profile === undefined ? {} : { profileName: options.profile }),
    createdBy: 'tester',
  });
  return created.planId;
}

const REWORK = `
name: local/rework
description: Exercises every step kind.
arguments:
  - name: license
    type: string
    default: MIT
steps:
  - create: NOTES.md
    content: "Notes for {{project.name}} ({{license}})\\n"
  - replace: "src/**/*.ts"
    pattern: "^(?!// SPDX-License-Identifier:)"
    with: "// SPDX-License-Identifier: {{license}}\\n"
    require_match: false
  - move: old.txt
    to: archive/old.txt
  - delete: "tmp/**"
validation: test -f NOTES.md && test ! -e tmp/x.log
`;

const REWORK_FILES = {
  'src/a.ts': 'export const a = 1;\n',
  'src/b.ts': '// SPDX-License-Identifier: MIT\nexport const b = 2;\n',
  'old.txt': 'kept as it was\n',
  'tmp/x.log': 'noise\n',
  'README.md': 'untouched\n',
};

describe('MANUAL: diff after Execute, confirmation, Apply', () => {
  it('applies exactly the changes the diff showed, after the person says yes', async () => {
    await addAction(REWORK);
    resetDemo(REWORK_FILES);
    const before = snapshot(demo);
    await h.withWorker(async () => {
      const planId = await startPlan('local/rework', 'MANUAL');
      await h.client.waitForInput(planId);
      expect((await h.cli('plan', 'advance', planId, '--expect', 'strategize')).code).toBe(0);
      const executed = await h.client.waitForInput(planId);
      expect(executed).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
      expect(snapshot(demo)).toEqual(before);

      // The diff, as JSON and as text.
      const json = await h.cli('plan', 'diff', planId, '--format', 'json');
      expect(json.code).toBe(0);
      const doc = JSON.parse(json.stdout) as {
        counts: Record<string, number>;
        changes: Array<{ operation: string; path: string; from_path: string | null }>;
      };
      expect(doc.counts).toEqual({ created: 1, modified: 1, deleted: 1, moved: 1 });
      expect(doc.changes.map((c) => [c.operation, c.path, c.from_path])).toEqual([
        ['CREATE', 'NOTES.md', null],
        ['MOVE', 'archive/old.txt', 'old.txt'],
        ['MODIFY', 'src/a.ts', null],
        ['DELETE', 'tmp/x.log', null],
      ]);
      const text = await h.cli('plan', 'diff', planId);
      expect(text.stdout).toContain('+// SPDX-License-Identifier: MIT');
      expect(text.stdout).toContain('rename from local/demo/old.txt');
      expect(text.stdout).toContain('+Notes for local/demo (MIT)');
      expect(text.stdout).not.toContain('\u001b[');

      // Before Apply the plan has no statistics to show.
      const gate = JSON.parse((await h.cli('plan', 'show', planId, '--format', 'json')).stdout) as object;
      expect(Object.keys(gate).filter((k) => k.startsWith('files_'))).toEqual([]);

      // Nobody at a terminal: refused with the way out, nothing written.
      const piped = await h.cli('plan', 'advance', planId);
      expect(piped.code).toBe(2);
      expect(piped.stderr).toMatch(/error: entering Apply writes 4 change\(s\) to local\/demo .*pass --yes/);
      // A person who says no: refused, still waiting, nothing written.
      const declined = await h.cliAnswering(false, 'plan', 'advance', planId);
      expect(declined.code).toBe(4);
      expect(declined.questions).toEqual([expect.stringMatching(/^Apply 4 change\(s\) to local\/demo \(/)]);
      expect(declined.stderr).toContain('+// SPDX-License-Identifier: MIT');
      expect(snapshot(demo)).toEqual(before);
      expect(await h.client.get(planId)).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
      // The workflow itself refuses an advance that confirmed no changeset, or another one.
      await expect(h.client.advance(planId, { by: 'tester', reviewedChangesetId: null })).rejects.toThrow(
        /which was not shown for confirmation/,
      );
      await expect(
        h.client.advance(planId, { by: 'tester', reviewedChangesetId: '01KB0F5ZQ3S5G9X2N6W8Y4T7RA' }),
      ).rejects.toThrow(/the changeset changed since it was reviewed/);

      const accepted = await h.cliAnswering(true, 'plan', 'advance', planId, '--format', 'json');
      expect(accepted.code).toBe(0);
      expect(JSON.parse(accepted.stdout)).toMatchObject({ phase: 'APPLY' });
      const applied = await h.client.waitForInput(planId);
      expect(applied).toMatchObject({ phase: 'APPLY', state: 'COMPLETE' });

      expect(snapshot(demo)).toEqual({
        'NOTES.md': 'Notes for local/demo (MIT)\n',
        'src/a.ts': '// SPDX-License-Identifier: MIT\nexport const a = 1;\n',
        'src/b.ts': REWORK_FILES['src/b.ts'],
        'archive/old.txt': 'kept as it was\n',
        'README.md': 'untouched\n',
      });
      expect(applied.validationSummary).toBe(
        'validation `test -f NOTES.md && test ! -e tmp/x.log` passed in the sandbox (exit 0); ' +
          'applied: 1 created, 1 modified, 1 deleted, 1 moved',
      );
      // The same counts as fields, from the record, in json and yaml.
      const counts = { files_created: 1, files_modified: 1, files_deleted: 1, files_moved: 1 };
      expect(JSON.parse((await h.cli('plan', 'show', planId, '--format', 'json')).stdout)).toMatchObject(
        counts,
      );
      expect(YAML.parse((await h.cli('plan', 'show', planId, '--format', 'yaml')).stdout)).toMatchObject(
        counts,
      );
      expect(applied.sandboxRefs).toHaveLength(1);
      // The sandbox served its purpose and is gone; the changeset keeps what was written.
      expect(() => lstatSync(applied.sandboxRefs[0] ?? '')).toThrow();

      const types = (await h.plans.listDecisions(planId)).map((d) => d.type);
      expect(types.filter((t) => t === 'strategy_choice')).toHaveLength(4);
      expect(types.filter((t) => t === 'tool_invocation')).toHaveLength(5);
      expect(types).toContain('validation_response');

      expect((await h.cli('plan', 'advance', planId, '--expect', 'apply')).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
    });
  });
});

describe('the shipped local/add-license-header action, driven through the CLI', () => {
  it('changes the project exactly as `plan diff` showed', async () => {
    resetDemo({
      'src/a.ts': 'export const a = 1;\n',
      'src/deep/b.ts': 'export const b = 2;\n',
      'src/c.ts': '// SPDX-License-Identifier: MIT\nexport const c = 3;\n',
      'notes.md': 'not matched by the glob\n',
    });
    const before = snapshot(demo);
    await h.withWorker(async () => {
      const use = await h.cli(
        'plan',
        'use',
        'local/add-license-header',
        '--project',
        'local/demo',
        '--automation',
        'manual',
        '--arg',
        'license=Apache-2.0',
        '--format',
        'json',
      );
      expect(use.code).toBe(0);
      const planId = (JSON.parse(use.stdout) as { plan_id: string }).plan_id;
      await h.client.waitForInput(planId);
      expect((await h.cli('plan', 'advance', planId)).code).toBe(0);
      await h.client.waitForInput(planId);

      const shown = await h.cli('plan', 'diff', planId, '--format', 'plain');
      expect(shown.code).toBe(0);
      const [patchText, stat] = splitStat(shown.stdout);
      expect(stat).toBe('0 created, 2 modified, 0 deleted, 0 moved');

      const advance = await h.cliAnswering(true, 'plan', 'advance', planId, '--reason', 'reviewed the diff');
      expect(advance.code).toBe(0);
      expect(advance.questions).toHaveLength(1);
      const applied = await h.client.waitForInput(planId);
      expect(applied).toMatchObject({ phase: 'APPLY', state: 'COMPLETE' });
      expect(applied.validationSummary).toBe(
        'no validation command; applied: 0 created, 2 modified, 0 deleted, 0 moved',
      );

      // Applying the diff that was shown to the files as they were gives exactly the files as they are now.
      const expected = { ...before };
      for (const patch of parsePatch(patchText)) {
        const file = (patch.newFileName ?? '').replace(/^b\/local\/demo\//, '');
        const result = applyPatch(expected[file] ?? '', patch);
        if (result === false) throw new Error(`the diff of ${file} does not apply`);
        expected[file] = result;
      }
      expect(snapshot(demo)).toEqual(expected);
      expect(expected['src/a.ts']).toBe('// SPDX-License-Identifier: Apache-2.0\nexport const a = 1;\n');
      expect(expected['src/c.ts']).toBe(before['src/c.ts']);
      await h.client.cancel(planId);
    });
  });
});

/** `plan diff` prints the patch, the per-file stat lines and the totals line; splits off the totals. */
function splitStat(output: string): [string, string] {
  const lines = output.trimEnd().split('\n');
  const total = lines.pop() ?? '';
  const patch = lines.filter((line) => !/^[AMDR] local\//.test(line)).join('\n');
  return [`${patch}\n`, total];
}

describe('Execute failures leave the project alone', () => {
  it('retries a failing command (error_recovery), parks ERRORED, and `plan retry` resumes it', async () => {
    await addAction(`
name: local/needs-ready
steps:
  - create: out.txt
    content: "made\\n"
  - run: test -f READY
`);
    resetDemo({ 'a.txt': 'a\n' });
    await h.withWorker(async () => {
      const planId = await startPlan('local/needs-ready', 'FULL_AUTOMATION');
      const errored = await h.client.waitForInput(planId);
      expect(errored).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(errored.error?.type).toBe('ExecutionFailed');
      expect(errored.error?.message).toMatch(
        /^Execute failed: step 2 \(run test -f READY\) after 3 attempt\(s\): .*exit/,
      );
      const recoveries = (await h.plans.listDecisions(planId)).filter((d) => d.type === 'error_recovery');
      expect(recoveries.map((d) => d.chosenOption)).toEqual([
        expect.stringMatching(/^Retry step 2/),
        expect.stringMatching(/^Retry step 2/),
        expect.stringMatching(/^Stop/),
      ]);
      expect(snapshot(demo)).toEqual({ 'a.txt': 'a\n' });

      writeFileSync(path.join(demo, 'READY'), '');
      const retry = await h.cli('plan', 'retry', planId, '--reason', 'READY is there now');
      expect(retry.code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(snapshot(demo)).toEqual({ 'a.txt': 'a\n', READY: '', 'out.txt': 'made\n' });
    });
  });

  it.each([
    [
      'a template referencing an unknown argument',
      `name: local/bad-template\nsteps:\n  - create: x.txt\n    content: "{{nope}}"\n`,
      /the template refers to "nope", which this plan does not have/,
    ],
    [
      'a glob matching nothing when the step requires a match',
      `name: local/no-match\nsteps:\n  - create: x.txt\n    content: x\n  - delete: "logs/**"\n`,
      /logs\/\*\*.*(matches no file|matched nothing|no file)/,
    ],
    [
      'a step that targets a read-only project link',
      `name: local/write-docs\nsteps:\n  - create: x.txt\n    content: x\n    project: local/docs\n`,
      /read-only/,
    ],
  ])('goes ERRORED with a clear message on %s, writing nothing', async (_what, yaml, message) => {
    const name = await addAction(yaml);
    resetDemo({ 'a.txt': 'a\n' });
    const docsBefore = snapshot(path.join(h.projectDir, 'docs'));
    await h.withWorker(async () => {
      const planId = await startPlan(name, 'FULL_AUTOMATION', {
        projects: ['local/demo', 'local/docs::ro'],
        profile: 'local/no-retries',
      });
      const errored = await h.client.waitForInput(planId);
      expect(errored).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
      expect(errored.error?.message).toMatch(message);
      expect(errored.changesetId).toBeNull();
      const show = await h.cli('plan', 'show', planId, '--format', 'json');
      expect(JSON.parse(show.stdout)).toMatchObject({ state: 'ERRORED' });
      await h.client.cancel(planId);
    });
    expect(snapshot(demo)).toEqual({ 'a.txt': 'a\n' });
    expect(snapshot(path.join(h.projectDir, 'docs'))).toEqual(docsBefore);
  });

  it('fails Execute naming the limit and the first file over it when the steps change too many files, storing nothing', async () => {
    const name = await addAction(`
name: local/too-many
steps:
  - run: "mkdir many && for i in $(seq 0 2000); do : > many/f$i.txt; done"
`);
    resetDemo({ 'a.txt': 'a\n' });
    await h.withWorker(async () => {
      const planId = await startPlan(name, 'FULL_AUTOMATION', { profile: 'local/no-retries' });
      const errored = await h.client.waitForInput(planId);
      expect(errored).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED', changesetId: null });
      expect(errored.error?.type).toBe('ExecutionFailed');
      expect(errored.error?.message).toMatch(
        /^Execute failed: The changeset is too large: more than 2,000 files changed, the limit for one changeset; the first over it is many\/f\d+\.txt in local\/demo\. Nothing was stored\./,
      );
      expect(await h.changesets.latestForPlan(planId)).toBeNull();
      await h.client.cancel(planId);
    });
    expect(snapshot(demo)).toEqual({ 'a.txt': 'a\n' });
  });

  beforeAll(async () => {
    await h.catalog.putProfile({
      name: 'local/no-retries',
      description: '',
      automationLevel: 'FULL_AUTOMATION',
      minDecisionConfidence: 0.8,
      maxAutoRetries: 0,
      approvalTimeoutSeconds: null,
      maxSubplanDepth: 3,
    });
  });
});

describe("the engine's and the action's ignore lists", () => {
  it('leave node_modules and the ignored globs out of the changeset, so Apply never writes them', async () => {
    const name = await addAction(`
name: local/builds
execution:
  ignore: ["generated/", "*.log"]
steps:
  - create: node_modules/dep/index.js
    content: "installed\\n"
  - create: generated/client.ts
    content: "generated\\n"
  - create: logs/run.log
    content: "noise\\n"
  - create: src/app.ts
    content: "authored\\n"
`);
    resetDemo({ 'a.txt': 'a\n' });
    await h.withWorker(async () => {
      const planId = await startPlan(name, 'FULL_AUTOMATION');
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const changeset = await h.changesets.latestForPlan(planId);
      expect(changeset?.changes.map((c) => [c.operation, c.path])).toEqual([['CREATE', 'src/app.ts']]);
      // What the invariant checks read: the same changeset without a byte of its files.
      if (changeset === null) throw new Error('no changeset');
      const summary = await h.changesets.getSummary(changeset.changesetId);
      expect(summary).toEqual({
        ...changeset,
        changes: changeset.changes.map(({ beforeContent: _b, afterContent: _a, ...change }) => change),
      });
      expect(JSON.stringify(summary)).not.toContain('authored');
    });
    expect(snapshot(demo)).toEqual({ 'a.txt': 'a\n', 'src/app.ts': 'authored\n' });
  });
});

describe('Apply refuses a changeset the project has moved away from', () => {
  const EDIT = `
name: local/edit
steps:
  - replace: notes.txt
    pattern: draft
    with: final
  - create: out/new.txt
    content: "new\\n"
`;

  async function executedPlan(): Promise<string> {
    const planId = await startPlan('local/edit', 'REVIEW_BEFORE_APPLY');
    const waiting = await h.client.waitForInput(planId);
    expect(waiting).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
    return planId;
  }

  beforeAll(async () => {
    await addAction(EDIT);
  });

  it('refuses when a target file changed since Execute, and applies after it is restored', async () => {
    resetDemo({ 'notes.txt': 'a draft\n' });
    await h.withWorker(async () => {
      const planId = await executedPlan();
      writeFileSync(path.join(demo, 'notes.txt'), 'edited by hand\n');
      const edited = snapshot(demo);

      expect((await h.cli('plan', 'advance', planId, '--yes')).code).toBe(0);
      const refused = await h.client.waitForInput(planId);
      expect(refused).toMatchObject({ phase: 'APPLY', state: 'ERRORED' });
      expect(refused.error?.type).toBe('ChangesetRefused');
      expect(refused.error?.message).toMatch(/notes\.txt/);
      expect(refused.error?.message).toMatch(/Nothing was written/);
      expect(snapshot(demo)).toEqual(edited);

      writeFileSync(path.join(demo, 'notes.txt'), 'a draft\n');
      expect((await h.cli('plan', 'retry', planId)).code).toBe(0);
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      expect(snapshot(demo)).toEqual({ 'notes.txt': 'a final\n', 'out/new.txt': 'new\n' });
    });
  });

  it('refuses a symlink planted after Execute that leads outside the project, writing nothing anywhere', async () => {
    resetDemo({ 'notes.txt': 'a draft\n' });
    await h.withWorker(async () => {
      const planId = await executedPlan();
      symlinkSync(outside, path.join(demo, 'out'));
      const projectBefore = snapshot(demo);
      const outsideBefore = snapshot(outside);

      expect((await h.cli('plan', 'advance', planId, '--yes')).code).toBe(0);
      const refused = await h.client.waitForInput(planId);
      expect(refused).toMatchObject({ phase: 'APPLY', state: 'ERRORED' });
      expect(refused.error?.type).toBe('ChangesetRefused');
      expect(refused.error?.message).toMatch(/out\/new\.txt/);
      expect(snapshot(demo)).toEqual(projectBefore);
      expect(snapshot(outside)).toEqual(outsideBefore);
      await h.client.cancel(planId);
    });
  });
});

describe('context files', () => {
  it('adds, lists and clears files, and hands them to the strategy actor', async () => {
    const dir = path.join(h.projectDir, '..', 'context');
    mkdirSync(path.join(dir, 'nested', '.git'), { recursive: true });
    writeFileSync(path.join(dir, 'spec.md'), '# the spec\n');
    writeFileSync(path.join(dir, 'nested', 'more.txt'), 'more\n');
    writeFileSync(path.join(dir, 'nested', '.git', 'HEAD'), 'ref\n');
    resetDemo({ 'a.txt': 'a\n' });

    await h.withWorker(async () => {
      const planId = await startPlan('local/example', 'MANUAL');
      await h.client.waitForInput(planId);
      const noDiff = await h.cli('plan', 'diff', planId);
      expect(noDiff.code).toBe(3);
      expect(noDiff.stderr).toMatch(
        /has no changeset yet \(it is STRATEGIZE, COMPLETE\); Execute produces it/,
      );

      const single = await h.cli(
        'plan',
        'context',
        'add',
        planId,
        path.join(dir, 'spec.md'),
        '--format',
        'json',
      );
      expect(single.code).toBe(0);
      const added = JSON.parse(single.stdout) as Array<{ path: string; sha256: string; size: number }>;
      expect(added).toEqual([
        expect.objectContaining({
          path: path.join(dir, 'spec.md'),
          size: 11,
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      ]);

      const notRecursive = await h.cli('plan', 'context', 'add', planId, dir);
      expect(notRecursive.code).toBe(2);
      expect(notRecursive.stderr).toMatch(/is a directory; add --recursive/);
      const missing = await h.cli(
        'plan',
        'context',
        'add',
        planId,
        path.join(dir, 'nope.md'),
        path.join(dir, 'spec.md'),
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/nope\.md: no such file or directory/);

      expect((await h.cli('plan', 'context', 'add', planId, dir, '--recursive')).code).toBe(0);
      const list = JSON.parse(
        (await h.cli('plan', 'context', 'list', planId, '--format', 'json')).stdout,
      ) as Array<{
        path: string;
      }>;
      expect(list.map((f) => path.relative(dir, f.path))).toEqual(['nested/more.txt', 'spec.md']);

      // The plan waits at the gate into Execute; the next Strategize-style use is in Execute's actor call, but the
      // strategy of this plan already ran: a new plan shows the hand-over.
      const cleared = await h.cli('plan', 'context', 'clear', planId, '--format', 'json');
      expect(JSON.parse(cleared.stdout)).toEqual({ plan_id: planId, removed: 2 });
      expect(JSON.parse((await h.cli('plan', 'context', 'list', planId, '--format', 'json')).stdout)).toEqual(
        [],
      );
      await h.client.cancel(planId);

      const unknown = await h.cli('plan', 'context', 'list', '01KB0F5ZQ3S5G9X2N6W8Y4T7RA');
      expect(unknown.code).toBe(3);
    });
  });

  it('hands context added before Strategize runs to the strategy actor', async () => {
    resetDemo({ 'a.txt': 'a\n' });
    const file = path.join(h.projectDir, '..', 'context', 'spec.md');
    // No worker yet: the plan waits queued while its context is added.
    const planId = await startPlan('local/example', 'MANUAL');
    await waitForRow(planId);
    expect((await h.cli('plan', 'context', 'add', planId, file)).code).toBe(0);
    await h.withWorker(async () => {
      await h.client.waitForInput(planId);
      await h.client.cancel(planId);
    });
    const strategy = (await h.plans.listDecisions(planId)).find((d) => d.type === 'strategy_choice');
    expect(strategy?.relevantResources).toEqual([{ kind: 'file', uri: file }]);
  });
});

/** The client writes the plan row before the workflow starts, so context can be added to a queued plan. */
async function waitForRow(planId: string): Promise<void> {
  const row = async (): Promise<boolean> => (await h.plans.getPlan(planId)) !== null;
  await waitUntil(`plan ${planId}'s row in the database`, row, { timeoutMs: 10_000 });
}

describe('progress', () => {
  it("reports the running step through the activity's heartbeat", async () => {
    // Step 2 holds Execute open until the test has seen its progress: it says it has started, then waits for the
    // test to release it. The wait is bounded (60 s) and the step fails if it was never released, so a test that
    // gives up early cannot leave a command running or pass on a step that ended by itself. Both signals are files
    // in the sandbox, the only place the boxed command can write, and it removes them before it ends.
    const command =
      'touch started; i=0; ' +
      'while [ ! -e release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; ' +
      'test -e release && rm started release';
    await addAction(
      `name: local/gated\nsteps:\n  - create: a.txt\n    content: a\n    overwrite: true\n` +
        `  - run: ${JSON.stringify(command)}\n`,
    );
    resetDemo({ 'a.txt': 'a\n' });
    await h.withWorker(async () => {
      const planId = await startPlan('local/gated', 'REVIEW_BEFORE_APPLY');
      const seen: string[] = [];
      let sandbox: string | undefined;
      try {
        await waitUntil('step 2 to start (a file "started" in its sandbox)', () => {
          sandbox = sandboxHolding(path.join(h.sandboxDir, planId), 'started');
          return sandbox !== undefined;
        });
        // The step's own message, while it still runs: later heartbeats of a long command say how long it has run.
        await waitUntil(
          () => `progress naming step 2 while it runs; seen: ${JSON.stringify(seen)}`,
          async () => {
            const progress = await h.client.progress(planId);
            if (progress !== null && seen.at(-1) !== progress) seen.push(progress);
            return progress === `EXECUTE: step 2/2: run ${command}`;
          },
          { intervalMs: 100 },
        );
      } finally {
        if (sandbox !== undefined) writeFileSync(path.join(sandbox, 'release'), '');
      }
      // Released, the step ends and Execute completes: the plan waits for approval.
      expect(await h.client.waitForInput(planId)).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
      await h.client.cancel(planId);
    });
  });
});

describe('plan watch', () => {
  it('follows a plan with plain lines until it waits for a person', async () => {
    resetDemo({ 'a.txt': 'a\n' });
    await h.withWorker(async () => {
      const planId = await startPlan('local/example', 'REVIEW_BEFORE_APPLY');
      const out = await h.cli('plan', 'watch', planId, '--timeout', '60');
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/PHASE_COMPLETED: .*STRATEGIZE|STRATEGIZE COMPLETE {2}PHASE_COMPLETED/);
      expect(out.stdout).toContain('decision #0 prompt_definition');
      expect(out.stdout).toMatch(/decision #\d+ tool_invocation/);
      expect(out.stdout.trimEnd().split('\n').at(-1)).toBe(
        `EXECUTE COMPLETE: waiting for approval (agents plan advance ${planId})`,
      );
      expect(out.stdout).not.toContain('\u001b[');
      await h.client.cancel(planId);
    });
  });
});
