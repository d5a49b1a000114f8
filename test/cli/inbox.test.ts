/**
 * `agents inbox` on a real dev server (issue 16 item 5, ADR 0022): plans at a gate, under a 2-of-3 policy (one of
 * them half approved by alice), under a policy without alice, paused, ERRORED, reminded, and one applied; the inbox
 * lists exactly those waiting, `--as alice` exactly hers, from visibility alone. Visibility is eventually
 * consistent, so every expectation about the list polls until it holds.
 */
import { parseActionFile } from '../../domain/action-file';
import { inboxQuery, quoteLiteral } from '../../domain/inbox';
import type { InboxRow } from '../../domain/inbox';
import { planWorkflowId } from '../../domain/ids';
import type { AutomationLevel } from '../../domain/lifecycle';
import { runCli } from '../../client/cli/main';
import { listInbox } from '../../client/inbox';
import { createHarness } from '../helpers/harness';
import type { CliResult, Harness } from '../helpers/harness';
import { waitUntil } from '../helpers/wait';
import type { Worker } from '@temporalio/worker';

let h: Harness;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  h = await createHarness();
  const parsed = parseActionFile('name: local/fails\nsteps:\n  - run: exit 3\n', 'action.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  await h.catalog.putAction(parsed.action);
});

afterAll(async () => {
  if (worker !== undefined) {
    worker.shutdown();
    await running;
  }
  await h?.teardown();
});

async function inbox(...args: string[]): Promise<CliResult> {
  return h.cli('inbox', ...args);
}

async function inboxJson(...args: string[]): Promise<InboxRow[]> {
  const result = await inbox(...args, '--format', 'json');
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as InboxRow[];
}

/**
 * Polls until the inbox lists exactly these plans, and `settled` holds of the rows: visibility catches up with the
 * workflows a moment later, with a plan's list membership and with its latest change (a pause, an approval).
 */
async function expectInbox(
  ids: string[],
  args: string[] = [],
  settled: (rows: InboxRow[]) => boolean = () => true,
): Promise<InboxRow[]> {
  const wanted = [...ids].sort();
  let seen: string[] = [];
  return waitUntil(
    () => `inbox ${args.join(' ')} to list ${wanted.join(', ')}; it listed ${seen.join(', ')}`,
    async () => {
      const rows = await inboxJson(...args);
      seen = rows.map((r) => r.plan_id).sort();
      return JSON.stringify(seen) === JSON.stringify(wanted) && settled(rows) ? rows : null;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

async function startPlan(
  name: string,
  options: { action?: string; profile?: string; automation?: AutomationLevel },
) {
  const created = await h.client.create({
    actionName: options.action ?? 'local/example',
    projects: ['local/demo'],
    ...(options.profile === undefined ? {} : { profileName: options.profile }),
    ...(options.automation === undefined ? {} : { automationLevel: options.automation }),
    arguments: {},
    name,
    createdBy: 'tester',
  });
  return created.planId;
}

async function cliOk(...argv: string[]): Promise<CliResult> {
  const result = await h.cli(...argv);
  expect({ argv, code: result.code, stderr: result.stderr }).toMatchObject({ code: 0 });
  return result;
}

describe('an empty inbox', () => {
  it('says so in words, and as an empty list in json and yaml', async () => {
    expect(await inbox('--format', 'plain')).toEqual({
      code: 0,
      stdout: 'no plan waits for a person\n',
      stderr: '',
    });
    expect(await inbox('--as', 'alice', '--format', 'table')).toEqual({
      code: 0,
      stdout: 'no plan waits for alice\n',
      stderr: '',
    });
    expect(await inbox('--format', 'json')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
    expect(await inbox('--format', 'yaml')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });
});

describe('the query', () => {
  it('--print-query prints the query the inbox runs, for the Web UI', async () => {
    const all = inboxQuery();
    const alice = inboxQuery({ as: 'alice' });
    if (!all.ok || !alice.ok) throw new Error('no query');
    expect(await inbox('--print-query')).toEqual({ code: 0, stdout: `${all.query}\n`, stderr: '' });
    expect((await inbox('--print-query', '--as', 'alice')).stdout).toBe(`${alice.query}\n`);
  });

  it.each([["x' OR 1=1 --"], ["alice' OR PlanState = 'APPLIED"], ['two words'], ['bell\u0007']])(
    'refuses --as %j as a usage error, before asking the server anything',
    async (hostile) => {
      for (const extra of [[], ['--print-query']]) {
        const result = await inbox('--as', hostile, ...extra);
        expect(result.code).toBe(2);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(/^error: --as ".*" must be letters, digits/);
        expect(result.stderr).not.toContain('\u0007');
      }
    },
  );

  it('says to register the attributes when the server does not know one the query names', async () => {
    await expect(listInbox(h.env.client, "PlanNoSuchAttribute = 'x'", { limit: 1 })).rejects.toMatchObject({
      kind: 'unavailable',
      message: expect.stringMatching(/PlanNoSuchAttribute.*scripts\/register-search-attributes\.ts/),
    });
  });
});

describe('plans waiting for people', () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    await cliOk(
      'profile',
      'add',
      'team/two-of-three',
      '-a',
      'manual',
      '--approvers',
      'alice,bob,carol',
      '--required-approvals',
      '2',
    );
    await cliOk('profile', 'add', 'team/bob-and-carol', '-a', 'manual', '--approvers', 'bob,carol');
    await cliOk(
      'profile',
      'add',
      'team/nagging',
      '-a',
      'manual',
      '--approval-timeout',
      '2',
      '--on-timeout',
      'remind',
    );
    await cliOk('profile', 'add', 'team/no-retries', '-a', 'full', '--max-retries', '0');
    worker = await h.createWorker();
    running = worker.run();

    ids.anyone = await startPlan('anyone-may', { automation: 'MANUAL' });
    ids.twoOfThree = await startPlan('two-of-three', { profile: 'team/two-of-three' });
    ids.aliceApproved = await startPlan('alice-approved', { profile: 'team/two-of-three' });
    ids.notAlice = await startPlan('bob-and-carol', { profile: 'team/bob-and-carol' });
    ids.paused = await startPlan('held', { profile: 'team/bob-and-carol' });
    ids.reminded = await startPlan('nagging', { profile: 'team/nagging' });
    ids.errored = await startPlan('failing', { action: 'local/fails', profile: 'team/no-retries' });
    ids.applied = await startPlan('done', { automation: 'FULL_AUTOMATION' });
    for (const id of Object.values(ids)) await h.client.waitForInput(id);
    await h.env.client.workflow.getHandle(planWorkflowId(ids.applied!)).result();
    expect(await h.plans.getPlan(ids.applied!)).toMatchObject({ phase: 'APPLIED' });
    expect(await h.plans.getPlan(ids.errored!)).toMatchObject({ phase: 'EXECUTE', state: 'ERRORED' });
    await cliOk('plan', 'advance', ids.aliceApproved!, '--yes', '--by', 'alice', '--reason', 'looks fine');
    await cliOk('plan', 'pause', ids.paused!, '--by', 'bob', '--reason', 'release freeze');
    await waitUntil('a reminder', async () =>
      (await h.plans.listEvents(ids.reminded!)).some((e) => e.type === 'APPROVAL_REMINDER'),
    );
  });

  it('lists exactly the plans waiting, longest waiting first, each with its gate and what it needs', async () => {
    const { applied: _applied, ...waiting } = ids;
    const rows = await expectInbox(Object.values(waiting), [], (listed) => {
      const row = (id: string | undefined) => listed.find((r) => r.plan_id === id);
      return (
        row(ids.paused)?.waiting_for === 'RESUME' &&
        row(ids.aliceApproved)?.approved_by.length === 1 &&
        (row(ids.reminded)?.reminders ?? 0) >= 1
      );
    });
    expect(rows.map((r) => r.waiting_since)).toEqual(rows.map((r) => r.waiting_since).sort());
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['anyone-may']).toMatchObject({
      plan_id: ids.anyone,
      action_name: 'local/example',
      phase: 'STRATEGIZE',
      waiting_for: 'APPROVAL',
      gate: 'STRATEGIZE→EXECUTE',
      needs: 'waiting at STRATEGIZE→EXECUTE for approval',
      approvals_left: 1,
      approvers: [],
      approved_by: [],
    });
    expect(byName['two-of-three']).toMatchObject({
      needs: 'waiting at STRATEGIZE→EXECUTE for 2 more approvals (alice, bob or carol)',
      approvals_left: 2,
      approvers: ['alice', 'bob', 'carol'],
    });
    expect(byName['alice-approved']).toMatchObject({
      needs: 'waiting at STRATEGIZE→EXECUTE for 1 more approval (bob or carol)',
      approvals_left: 1,
      approvers: ['bob', 'carol'],
      approved_by: ['alice'],
    });
    expect(byName.held).toMatchObject({
      waiting_for: 'RESUME',
      gate: 'STRATEGIZE→EXECUTE',
      needs: 'resume: paused by bob (release freeze)',
    });
    expect(byName.failing).toMatchObject({
      waiting_for: 'RETRY',
      gate: null,
      state: 'ERRORED',
      phase: 'EXECUTE',
    });
    expect(byName.failing?.needs).toMatch(/^retry or cancel: EXECUTE is ERRORED \(/);
    expect(byName.nagging?.reminders).toBeGreaterThanOrEqual(1);
    expect(byName.done).toBeUndefined();
  });

  it('--as alice lists exactly what alice can act on: not a gate she is not on, nor one she approved', async () => {
    await expectInbox(
      [ids.anyone!, ids.twoOfThree!, ids.paused!, ids.reminded!, ids.errored!],
      ['--as', 'alice'],
    );
    await expectInbox(
      [
        ids.anyone!,
        ids.twoOfThree!,
        ids.aliceApproved!,
        ids.notAlice!,
        ids.paused!,
        ids.reminded!,
        ids.errored!,
      ],
      ['--as', 'bob'],
    );
    // Names compare exactly, as approvals do: Alice is not alice.
    await expectInbox([ids.anyone!, ids.paused!, ids.reminded!, ids.errored!], ['--as', 'Alice']);
  });

  it('shows short ids in table and plain, each a prefix the other commands take', async () => {
    const rows = await inboxJson('--as', 'alice');
    const short = (id: string | undefined) => rows.find((r) => r.plan_id === id)?.short_id ?? '';
    for (const row of rows) {
      expect(row.plan_id.startsWith(row.short_id)).toBe(true);
      expect(row.short_id.length).toBeGreaterThanOrEqual(8);
    }
    const table = await inbox('--as', 'alice', '--format', 'table');
    expect(table.code).toBe(0);
    for (const header of ['id', 'name', 'action', 'waiting', 'gate', 'age', 'needs']) {
      expect(table.stdout).toContain(header);
    }
    expect(table.stdout).toContain(short(ids.twoOfThree));
    expect(table.stdout).not.toContain(ids.twoOfThree!);
    expect(table.stdout).toContain('STRATEGIZE→EXECUTE');
    const plain = await inbox('--as', 'alice', '--format', 'plain');
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    const two = lines.find((line) => line.startsWith(`${short(ids.twoOfThree)}\t`));
    expect(two?.split('\t')).toEqual([
      short(ids.twoOfThree),
      'two-of-three',
      'local/example',
      'APPROVAL',
      'STRATEGIZE→EXECUTE',
      expect.stringMatching(/^\d+(s|m)/),
      'waiting at STRATEGIZE→EXECUTE for 2 more approvals (alice, bob or carol)',
    ]);
    expect(lines.find((line) => line.startsWith(`${short(ids.reminded)}\t`))).toMatch(
      /\tAPPROVAL \(reminded \d+×\)\t/,
    );
    // What a person copies from the inbox is what `plan show` takes.
    const shown = await cliOk('plan', 'show', short(ids.twoOfThree), '--format', 'json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ plan_id: ids.twoOfThree });
    expect((await inbox('--format', 'rich')).code).toBe(0);
  });

  it('runs the query it prints, and a hostile name quoted into it matches nothing', async () => {
    const printed = (await inbox('--print-query', '--as', 'alice')).stdout.trim();
    const listed = await waitUntil('the printed query to match 5 plans', async () => {
      const found: string[] = [];
      for await (const info of h.env.client.workflow.list({ query: printed })) found.push(info.workflowId);
      return found.length === 5 ? found : null;
    });
    expect(listed.sort()).toEqual(
      [ids.anyone!, ids.twoOfThree!, ids.paused!, ids.reminded!, ids.errored!].map(planWorkflowId).sort(),
    );
    // The server reads quoteLiteral's output as one literal: the injected condition stays text.
    const count = async (value: string) =>
      (await h.env.client.workflow.count(`PlanApprovers = ${quoteLiteral(value)}`)).count;
    expect(await count('alice')).toBe(1);
    expect(await count("x' OR 1=1 --")).toBe(0);
    expect(await count("alice' OR PlanApprovers = 'bob")).toBe(0);
    expect(await count("\\' OR PlanApprovers = 'bob")).toBe(0);
  });

  it('needs no database: the list comes from Temporal alone', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['inbox', '--as', 'alice', '--format', 'json'], {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      env: {
        TEMPORAL_ADDRESS: h.env.address,
        TEMPORAL_NAMESPACE: h.env.namespace ?? 'default',
        // Nothing listens on the discard port: any query to this database would fail the command.
        DATABASE_URL: 'postgresql://nobody:nothing@127.0.0.1:9/none',
      },
      isTty: false,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect((JSON.parse(stdout) as InboxRow[]).map((r) => r.plan_id).sort()).toEqual(
      [ids.anyone!, ids.twoOfThree!, ids.paused!, ids.reminded!, ids.errored!].sort(),
    );
  });

  it('follows a plan through its gates: gone once cancelled, and back, with no approvals, at its next gate', async () => {
    await cliOk('plan', 'cancel', ids.errored!);
    await cliOk('plan', 'advance', ids.aliceApproved!, '--yes', '--by', 'bob');
    await h.client.waitForInput(ids.aliceApproved!);
    // Under MANUAL the approved plan ran Execute and waits again: a new gate alice has not approved.
    const rows = await expectInbox(
      [ids.anyone!, ids.twoOfThree!, ids.aliceApproved!, ids.paused!, ids.reminded!],
      ['--as', 'alice'],
    );
    expect(rows.find((r) => r.plan_id === ids.aliceApproved)).toMatchObject({
      gate: 'EXECUTE→APPLY',
      approved_by: [],
      approvals_left: 2,
      approvers: ['alice', 'bob', 'carol'],
    });
    for (const id of [
      ids.anyone,
      ids.twoOfThree,
      ids.aliceApproved,
      ids.notAlice,
      ids.paused,
      ids.reminded,
    ]) {
      await cliOk('plan', 'cancel', id!);
    }
    await expectInbox([]);
  });
});
