/**
 * A plan by a prefix of its id or by its name (issue 16 item 6, ADR 0020), through the CLI against a real server
 * and database: wherever an id works, a unique prefix and an exact name work; an ambiguous or too short one is a
 * usage error listing what it could mean, and nothing matching is not found.
 */
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;
let alpha: string;
let shared: [string, string];
/** A plan row whose id starts with the same 10 characters (the whole timestamp) as alpha's. */
let twin: string;

const ESC = '\u001b';
const BEL = '\u0007';
/** What a terminal would act on rather than show. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

async function createPlan(name: string): Promise<string> {
  const created = await h.client.create({
    actionName: 'local/example',
    projects: ['local/demo'],
    automationLevel: 'MANUAL',
    arguments: { greeting: 'refs' },
    name,
    createdBy: 'tester',
  });
  return created.planId;
}

/** A row only (no workflow), made from alpha's spec under another id and name, as a test can craft an id. */
async function insertRow(planId: string, name: string): Promise<void> {
  const spec = await h.plans.getSpec(alpha);
  await h.plans.recordPlanCreated({ spec: { ...spec!, planId, name }, eventSeq: 0 });
}

/** Another id with the same first `keep` characters. */
function sibling(planId: string, keep: number, fill: string): string {
  const id = `${planId.slice(0, keep)}${fill.repeat(26 - keep)}`;
  if (id === planId) throw new Error('the crafted id is the original');
  return id;
}

beforeAll(async () => {
  h = await createHarness();
  alpha = await createPlan('refs-alpha');
  shared = [await createPlan('refs-shared'), await createPlan('refs-shared')];
  twin = sibling(alpha, 10, alpha[10] === 'Z' ? 'Y' : 'Z');
  await insertRow(twin, 'refs-twin');
});

afterAll(async () => {
  await h?.teardown();
});

const json = <T>(out: { stdout: string }) => JSON.parse(out.stdout) as T;

it('shows a plan by a prefix of its id (any case, bare or plan-…) and by its name', async () => {
  for (const ref of [alpha.slice(0, 12), alpha.slice(0, 12).toLowerCase(), `plan-${alpha.slice(0, 11)}`]) {
    const show = await h.cli('plan', 'show', ref, '--format', 'json');
    expect(show.stderr).toBe('');
    expect(json<{ plan_id: string }>(show).plan_id).toBe(alpha);
  }
  const byName = await h.cli('plan', 'show', 'refs-alpha', '--format', 'json');
  expect(json<{ plan_id: string; name: string }>(byName)).toMatchObject({
    plan_id: alpha,
    name: 'refs-alpha',
  });
});

it('advances by name and by prefix', async () => {
  await h.withWorker(async () => {
    const first = await h.cli('plan', 'wait', 'refs-alpha', '--format', 'json');
    expect(json(first)).toMatchObject({ plan_id: alpha, phase: 'STRATEGIZE', awaiting_approval: true });
    const byName = await h.cli('plan', 'advance', 'refs-alpha', '--yes', '--format', 'json');
    expect(byName.stderr).toBe('');
    expect(json(byName)).toMatchObject({ plan_id: alpha, phase: 'EXECUTE' });

    const prefix = alpha.slice(0, 11).toLowerCase();
    const second = await h.cli('plan', 'wait', prefix, '--format', 'json');
    expect(json(second)).toMatchObject({ phase: 'EXECUTE', awaiting_approval: true });
    const byPrefix = await h.cli(
      'plan',
      'advance',
      prefix,
      '--expect',
      'execute',
      '--yes',
      '--format',
      'json',
    );
    expect(byPrefix.stderr).toBe('');
    expect(json(byPrefix)).toMatchObject({ plan_id: alpha, phase: 'APPLY' });
  });
});

it('refuses a prefix two plans share (exit 2), listing both with name, phase, state and creation', async () => {
  const out = await h.cli('plan', 'show', alpha.slice(0, 10));
  expect(out.code).toBe(2);
  expect(out.stdout).toBe('');
  const lines = out.stderr.trimEnd().split('\n');
  expect(lines[0]).toBe(
    `error: "${alpha.slice(0, 10)}" matches 2 plans; give more of the id, or the whole id:`,
  );
  // Oldest first; the twin was made from alpha's spec, so they share a creation time and the id decides.
  const expected = [
    { id: alpha, line: `^  ${alpha}  "refs-alpha"  \\w+ \\w+  created \\S+Z$` },
    { id: twin, line: `^  ${twin}  "refs-twin"  STRATEGIZE QUEUED  created \\S+Z$` },
  ].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(lines.slice(1)).toEqual(expected.map((e) => expect.stringMatching(new RegExp(e.line))));
  // One character more tells them apart.
  expect(
    json<{ plan_id: string }>(await h.cli('plan', 'show', alpha.slice(0, 11), '-f', 'json')).plan_id,
  ).toBe(alpha);
});

it('refuses a name two plans share (exit 2), listing both, in every command', async () => {
  for (const argv of [
    ['plan', 'show', 'refs-shared'],
    ['plan', 'advance', 'refs-shared', '--yes'],
    ['plan', 'cancel', 'refs-shared'],
    ['plan', 'tree', 'refs-shared'],
    ['plan', 'context', 'list', 'refs-shared'],
    ['plan', 'context', 'clear', 'refs-shared'],
    ['plan', 'diff', 'refs-shared'],
    ['plan', 'wait', 'refs-shared'],
    ['plan', 'watch', 'refs-shared'],
    ['plan', 'events', 'refs-shared'],
    ['plan', 'retry', 'refs-shared'],
    ['plan', 'pause', 'refs-shared'],
    ['plan', 'resume', 'refs-shared'],
    ['plan', 'set-automation', 'refs-shared', 'full'],
    ['plan', 'amend', 'refs-shared', 'also say hello'],
    ['plan', 'list', '--parent', 'refs-shared'],
    ['invariant', 'add', 'Keep it', '--plan', 'refs-shared'],
    ['invariant', 'list', '--plan', 'refs-shared'],
  ]) {
    const out = await h.cli(...argv);
    expect({ argv, code: out.code }).toEqual({ argv, code: 2 });
    expect(out.stderr).toMatch(/^error: "refs-shared" matches 2 plans/);
    for (const id of shared) expect(out.stderr).toContain(`  ${id}  "refs-shared"  `);
  }
  expect(await h.invariants.list({ scope: 'PLAN' })).toEqual([]);
  expect(json(await h.cli('plan', 'list', '--parent', 'refs-alpha', '-f', 'json'))).toEqual([]);
});

it('refuses a prefix shorter than 6 characters (exit 2) and an unknown reference (exit 3)', async () => {
  const short = await h.cli('plan', 'show', alpha.slice(0, 5));
  expect(short).toEqual({
    code: 2,
    stdout: '',
    stderr: `error: "${alpha.slice(0, 5)}" is too short for a plan id prefix: give at least 6 characters of the id, or the plan's whole name\n`,
  });
  for (const ref of ['refs-nobody', '7ZZZZZZZ', 'refs-%', 'refs-_lpha', 'REFS-ALPHA']) {
    const unknown = await h.cli('plan', 'advance', ref, '--yes');
    expect(unknown).toEqual({
      code: 3,
      stdout: '',
      stderr: `error: no plan with id, id prefix or name "${ref}"\n`,
    });
  }
});

it('lists the short id in plain, table and rich, and both ids in json and yaml', async () => {
  const rows = json<Array<{ plan_id: string; short_id: string; name: string }>>(
    await h.cli('plan', 'list', '--format', 'json'),
  );
  const byId = new Map(rows.map((r) => [r.plan_id, r]));
  expect(byId.get(alpha)?.short_id).toBe(alpha.slice(0, 11));
  expect(byId.get(twin)?.short_id).toBe(twin.slice(0, 11));
  for (const row of rows) {
    expect(row.short_id.length).toBeGreaterThanOrEqual(8);
    expect(row.plan_id.startsWith(row.short_id)).toBe(true);
    expect(rows.filter((other) => other.plan_id.startsWith(row.short_id))).toEqual([row]);
  }
  const plain = (await h.cli('plan', 'list', '--format', 'plain')).stdout.trimEnd().split('\n');
  expect(plain.map((line) => line.split('\t')[0])).toEqual(rows.map((r) => r.short_id));
  expect(plain.join('\n')).not.toContain(alpha);
  for (const format of ['table', 'rich']) {
    const out = (await h.cli('plan', 'list', '--format', format)).stdout;
    expect(out).toContain('short_id');
    expect(out).toContain(alpha.slice(0, 11));
    expect(out).not.toContain(alpha);
  }
  // What the list shows is what a command takes.
  const shown = await h.cli('plan', 'context', 'list', twin.slice(0, 11), '--format', 'json');
  expect(shown).toMatchObject({ code: 0, stdout: '[]\n' });
});

it('adds and lists a plan invariant by the plan name and a prefix', async () => {
  const add = await h.cli(
    'invariant',
    'add',
    'Keep the greeting short',
    '--plan',
    'refs-alpha',
    '-f',
    'json',
  );
  expect(add.stderr).toBe('');
  expect(json<{ scope: string; target: string }>(add)).toMatchObject({ scope: 'PLAN', target: alpha });
  const listed = json<Array<{ text: string }>>(
    await h.cli('invariant', 'list', '--plan', alpha.slice(0, 11).toLowerCase(), '-f', 'json'),
  );
  expect(listed.map((i) => i.text)).toEqual(['Keep the greeting short']);
});

it('cancels by prefix; the name stays ambiguous while both plans exist', async () => {
  const [first, second] = shared;
  const rows = json<Array<{ plan_id: string; short_id: string }>>(await h.cli('plan', 'list', '-f', 'json'));
  const short = rows.find((r) => r.plan_id === first)!.short_id;
  await h.withWorker(async () => {
    const cancel = await h.cli('plan', 'cancel', short, '--format', 'json');
    expect(cancel.stderr).toBe('');
    expect(json(cancel)).toMatchObject({ plan_id: first, state: 'CANCELLED' });
  });
  expect((await h.plans.getPlan(second))?.state).not.toBe('CANCELLED');
  expect((await h.cli('plan', 'show', 'refs-shared')).code).toBe(2);
});

it('lists hostile names escaped: no escape sequence or bidi control reaches the terminal', async () => {
  const evil = `refs-evil${ESC}]0;pwned${BEL}${ESC}[2J\u202e`;
  await insertRow(sibling(alpha, 8, '1'), evil);
  await insertRow(sibling(alpha, 8, '2'), evil);
  const out = await h.cli('plan', 'show', evil);
  expect(out.code).toBe(2);
  expect(out.stderr).toMatch(/matches 2 plans/);
  expect(out.stderr.replace(/\n/g, '')).not.toMatch(CONTROL);
  expect(out.stderr).toContain('refs-evil\\x1b]0;pwned\\x07\\x1b[2J\\u202e');
});
