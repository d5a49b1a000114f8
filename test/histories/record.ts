/**
 * Records the workflow histories that test/workflows/replay.test.ts replays, from real runs on a private dev
 * server (test/helpers/harness.ts). `npm run histories:record -- <name>...` records the named scenarios; with no
 * name it lists them. Record a scenario again only when a workflow change is meant to be incompatible with running
 * plans, and say so in the commit: the checked-in histories are what proves every other change replays.
 *
 * A scenario is recorded as `<GENERATION>-<scenario>.json`. Older generations are never recorded again: plans
 * started then must still replay, and this code can no longer produce them. `runphase-*` were recorded before
 * actors (issue 6), `actors-*` before lean histories (issue 13: recordings and checks as local activities).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { History } from '@temporalio/common/lib/proto-utils';
import { createActorRegistry } from '../../actors';
import { PlanClient } from '../../client/plans';
import type { ActorRegistry } from '../../actors';
import { parseActionFile } from '../../domain/action-file';
import type { AutomationProfileInput } from '../../domain/catalog';
import type { AutomationLevel } from '../../domain/lifecycle';
import { planWorkflowId } from '../../domain/ids';
import { childPlanId } from '../../domain/subplans';
import { approveSignal } from '../../workflows/definitions';
import { ensureTemporalCli } from '../../scripts/temporal-cli';
import * as drives from '../helpers/drives';
import { FakeModelServer, wireStep } from '../helpers/fake-model-server';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

const OUT_DIR = __dirname;

/** The workflow generation this code records: the newest patch marker its plans carry (`lean-history`). */
const GENERATION = 'lean';

interface Scenario {
  level: AutomationLevel;
  /** The plan's automation profile (stored under the name `recorded/<scenario>`); none unless said. */
  profile?: Omit<AutomationProfileInput, 'name' | 'automationLevel'>;
  /** The action the plan is made from, and its arguments; local/example with a greeting unless said. */
  action?: { name: string; arguments: Record<string, string> };
  /** A worker with these actors instead of the built-in ones alone. */
  actors?(): Promise<{ registry: ActorRegistry; close(): Promise<void> }>;
  /** Drives the plan from its creation to its end; the worker runs meanwhile. */
  drive(h: Harness, planId: string): Promise<void>;
  /**
   * Plans continue as new at gates once their history passes this many events. Each run has its history: the
   * first (which ends continuing as new) and the last (which starts from a continuation) are recorded.
   */
  historyEventLimit?: number;
  /** Activities to replace on the worker that runs this scenario. */
  overrides?(h: Harness): Parameters<Harness['withWorker']>[1];
}

const approveToTheEnd = (h: Harness, planId: string) => drives.approveToTheEnd(h, planId, 'recorder');

async function cli(h: Harness, ...argv: string[]): Promise<string> {
  const out = await h.cli(...argv);
  if (out.code !== 0) throw new Error(`agents ${argv.join(' ')} failed (${out.code}): ${out.stderr}`);
  return out.stdout;
}

const SCENARIOS: Record<string, Scenario> = {
  'manual-applied': { level: 'MANUAL', drive: approveToTheEnd },

  'review-cancelled': {
    level: 'REVIEW_BEFORE_APPLY',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      await h.client.cancel(planId);
    },
  },

  'full-errored-retried': {
    level: 'FULL_AUTOMATION',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      await h.client.retry(planId, { by: 'recorder', reason: 'try again' });
      await h.client.waitForInput(planId);
    },
    overrides: (h) => ({
      execute: async (input) => {
        if (input.attempt === 1)
          throw ApplicationFailure.nonRetryable('simulated execute failure', 'PhaseFailed');
        return h.activities.execute(input);
      },
    }),
  },

  /**
   * A model proposes a command the action does not contain: the fully automatic plan stops before Execute until a
   * person approves, then runs to the end by itself.
   */
  'full-command-review': {
    level: 'FULL_AUTOMATION',
    action: { name: 'local/model-recorded', arguments: {} },
    async actors() {
      const server = await FakeModelServer.start();
      server.replyContent({
        summary: 'Write and check a greeting',
        rationale: 'recorded',
        confidence: 0.9,
        alternatives: [],
        steps: [
          wireStep({ kind: 'create', target: 'GREETING.md', content: 'hi\n', overwrite: true }),
          wireStep({ kind: 'run', target: 'test -s GREETING.md' }),
        ],
        validation: null,
      });
      const registry = createActorRegistry({
        model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 1 },
      });
      return { registry, close: () => server.close() };
    },
    async drive(h, planId) {
      const gate = await h.client.waitForInput(planId);
      if (!gate.awaitingApproval) throw new Error(`plan ${planId} did not stop for its commands`);
      await h.client.advance(planId, {
        by: 'recorder',
        reason: 'commands reviewed',
        expectedPhase: 'STRATEGIZE',
      });
      await h.client.waitForInput(planId);
    },
  },

  /** Every gate continues as new (a limit of one event); the plan crosses four runs to APPLIED. */
  'manual-continued': { level: 'MANUAL', historyEventLimit: 1, drive: approveToTheEnd },

  /**
   * A person replaces the strategy's step at the first gate; the plan then goes on to APPLIED with it. (The
   * checked-in `*-manual-corrected.json` were recorded when a correction only recorded, with free text: this code
   * refuses that text for a step, so that scenario is frozen like an older generation.)
   */
  'manual-corrected-step': {
    level: 'MANUAL',
    drive: (h, planId) =>
      drives.correctThenApprove(
        h,
        planId,
        'recorder',
        '{create: CORRECTED.md, content: "written by hand\\n"}',
      ),
  },

  /**
   * At the gate after Execute a person replaces the step: Execute runs again from a fresh sandbox (ADR 0016), the
   * gate reopens with the new changeset, and the plan goes on to APPLIED with it.
   */
  'review-corrected-rerun': {
    level: 'REVIEW_BEFORE_APPLY',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const step = (await h.plans.listDecisions(planId)).find((d) => d.type === 'strategy_choice');
      if (step === undefined) throw new Error(`plan ${planId} recorded no strategy_choice to correct`);
      await h.client.correct(planId, {
        by: 'recorder',
        decisionId: step.decisionId,
        chosenOption: '{create: AGAIN.md, content: "second run\\n"}',
        reason: 'another file',
      });
      await approveToTheEnd(h, planId);
    },
  },

  /** A person amends the plan at the first gate: Strategize runs again, then the plan goes on to APPLIED. */
  'manual-amended': {
    level: 'MANUAL',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      await h.client.amend(planId, { by: 'recorder', instructions: 'Also greet the reviewers' });
      await approveToTheEnd(h, planId);
    },
  },

  /**
   * An invariant added at the gate before APPLY stops the approved transition; a retry with it still there stops
   * again, and once it is removed a retry takes the approved transition.
   */
  'review-invariant-retried': {
    level: 'REVIEW_BEFORE_APPLY',
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const { id } = JSON.parse(
        await cli(
          h,
          'invariant',
          'add',
          '--format',
          'json',
          'Leave the greeting alone',
          '--plan',
          planId,
          '--rule',
          '{protected_paths: ["GREETING.md"]}',
        ),
      ) as { id: string };
      const stopped = await h.client.advance(planId, {
        by: 'recorder',
        reason: 'apply it',
        expectedPhase: 'EXECUTE',
      });
      if (stopped.state !== 'ERRORED') throw new Error(`the invariant did not stop plan ${planId}`);
      await h.client.retry(planId, { by: 'recorder', reason: 'try anyway' });
      const again = await h.client.waitForInput(planId);
      if (again.state !== 'ERRORED') throw new Error(`the retry of plan ${planId} was not stopped again`);
      await cli(h, 'invariant', 'remove', id);
      await h.client.retry(planId, { by: 'recorder', reason: 'invariant removed' });
      await approveToTheEnd(h, planId);
    },
  },

  /**
   * A fully automatic parent spawns two child plans in parallel; one waits at its gates for a person, and the
   * parent, waiting in Execute, finishes once that child is applied.
   */
  'full-subplans': {
    level: 'FULL_AUTOMATION',
    action: { name: 'local/family-recorded', arguments: {} },
    async drive(h, planId) {
      const waiting = childPlanId(planId, { stepIndex: 0, childIndex: 1 });
      for (;;) {
        const found = await h.client.get(waiting).catch(() => null);
        if (found !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await approveToTheEnd(h, waiting);
      const done = await h.client.waitForInput(planId);
      if (done.phase !== 'APPLIED')
        throw new Error(`plan ${planId} did not finish: ${done.phase} ${done.state}`);
    },
  },

  /** Nobody approves the first gate within its profile's timeout: the plan is cancelled, approval_expired. */
  'manual-expired': {
    level: 'MANUAL',
    profile: { approvalTimeoutSeconds: 1 },
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      // The workflow ends by itself: its own gate cancels it.
      await h.env.client.workflow.getHandle(planWorkflowId(planId)).result();
      const ended = await h.plans.getPlan(planId);
      if (ended?.state !== 'CANCELLED' || ended.error?.type !== 'ApprovalExpired')
        throw new Error(`plan ${planId} did not expire: ${ended?.phase} ${ended?.state}`);
    },
  },

  /** The gate's timeout runs out twice with `remind`: two reminders, then a person approves and the plan goes on. */
  'manual-reminded': {
    level: 'MANUAL',
    profile: { approvalTimeoutSeconds: 1, onTimeout: 'remind' },
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      for (;;) {
        const reminders = (await h.plans.listEvents(planId)).filter((e) => e.type === 'APPROVAL_REMINDER');
        if (reminders.length >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await approveToTheEnd(h, planId);
    },
  },

  /**
   * Two of alice, bob and carol must approve the gate before APPLY: mallory and a second yes from alice are
   * refused by the validator (no update in history) and logged through the recordRefusal signal (ADR 0021),
   * alice's approval is counted, and bob's opens the gate.
   */
  'review-two-of-three': {
    level: 'REVIEW_BEFORE_APPLY',
    profile: { approvers: ['alice', 'bob', 'carol'], requiredApprovals: 2 },
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const approve = (by: string) =>
        h.client.advance(planId, { by, reason: `${by} approves`, expectedPhase: 'EXECUTE' });
      for (const refused of ['mallory', 'alice']) {
        if (refused === 'alice') await approve('alice');
        const verdict = await approve(refused).then(
          () => 'accepted',
          (err: unknown) => String(err),
        );
        if (verdict === 'accepted')
          throw new Error(`${refused}'s approval of plan ${planId} was not refused`);
      }
      await approve('bob');
      await h.client.waitForInput(planId);
    },
  },

  /**
   * The Web UI's `approve` signal at a 2-of-3 gate (ADR 0021): an outsider's and a malformed one are refused into
   * the log, carol's is counted, a repeat of hers is refused, and bob's opens the gate.
   */
  'review-approved-by-signal': {
    level: 'REVIEW_BEFORE_APPLY',
    profile: { approvers: ['alice', 'bob', 'carol'], requiredApprovals: 2 },
    async drive(h, planId) {
      await h.client.waitForInput(planId);
      const handle = h.env.client.workflow.getHandle(planWorkflowId(planId));
      const refusals = async (count: number) => {
        for (;;) {
          const found = (await h.plans.listEvents(planId)).filter((e) => e.type === 'COMMAND_REFUSED');
          if (found.length >= count) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      await handle.signal(approveSignal, { by: 'mallory', reason: 'let me' });
      await handle.signal('approve', 'not an object');
      await refusals(2);
      await handle.signal(approveSignal, { by: 'carol', reason: 'carol approves' });
      for (;;) {
        if ((await h.plans.getPlan(planId))?.gate?.approvals.length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await handle.signal(approveSignal, { by: 'carol' });
      await refusals(3);
      await handle.signal(approveSignal, { by: 'bob', reason: 'bob approves' });
      await handle.result();
    },
  },
};

/** The actions the scenarios use besides local/example. */
const RECORDED_ACTIONS = [
  'name: local/model-recorded\nactors:\n  strategy: model\n',
  `name: local/writer-recorded
arguments:
  - name: file
    type: string
    required: true
steps:
  - create: "{{file}}"
    content: "written\\n"
    overwrite: true
`,
  `name: local/family-recorded
steps:
  - parallel:
      - subplan: local/writer-recorded
        arguments: { file: first.txt }
      - subplan: local/writer-recorded
        arguments: { file: second.txt }
        automation: manual
  - create: FAMILY.md
    content: "both children applied\\n"
    overwrite: true
`,
];

async function record(h: Harness, name: string, scenario: Scenario): Promise<void> {
  const client =
    scenario.historyEventLimit === undefined
      ? h.client
      : new PlanClient(h.env.client, h.plans, h.catalog, h.invariants, {
          taskQueue: h.taskQueue,
          historyEventLimit: scenario.historyEventLimit,
        });
  const profileName = `recorded/${name}`;
  if (scenario.profile !== undefined) {
    await h.catalog.putProfile({ name: profileName, automationLevel: scenario.level, ...scenario.profile });
  }
  const run = async (): Promise<Array<{ suffix: string; history: History }>> => {
    const created = await client.create({
      ...(scenario.profile === undefined ? {} : { profileName }),
      actionName: scenario.action?.name ?? 'local/example',
      projects: ['local/demo'],
      automationLevel: scenario.level,
      arguments: scenario.action?.arguments ?? { greeting: 'hello' },
      createdBy: 'recorder',
    });
    await scenario.drive(h, created.planId);
    const handle = h.env.client.workflow.getHandle(created.workflowId);
    await handle.result().catch(() => undefined);
    if (scenario.historyEventLimit === undefined)
      return [{ suffix: '', history: await handle.fetchHistory() }];
    const runs: Array<{ runId: string; start: number }> = [];
    for await (const info of h.env.client.workflow.list({ query: `WorkflowId = '${created.workflowId}'` })) {
      runs.push({ runId: info.runId, start: info.startTime.getTime() });
    }
    runs.sort((a, b) => a.start - b.start);
    const [first, last] = [runs[0], runs.at(-1)];
    if (first === undefined || last === undefined || first === last)
      throw new Error(`plan ${created.planId} never continued as new`);
    const runHistory = (id: string) => h.env.client.workflow.getHandle(created.workflowId, id).fetchHistory();
    return [
      { suffix: '-first', history: await runHistory(first.runId) },
      { suffix: '-last', history: await runHistory(last.runId) },
    ];
  };
  const actors = await scenario.actors?.();
  const histories = await (actors === undefined
    ? h.withWorker(run, scenario.overrides?.(h))
    : h.withActors(actors.registry, run).finally(() => actors.close()));
  for (const { suffix, history } of histories) {
    // The canonical JSON form (as `temporal workflow show --output json` prints it), readable by historyFromJSON.
    const file = path.join(OUT_DIR, `${GENERATION}-${name}${suffix}.json`);
    writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
    console.log(`recorded ${path.relative(process.cwd(), file)} (${history.events?.length ?? 0} events)`);
  }
}

async function main(names: string[]): Promise<number> {
  const unknown = names.filter((n) => !(n in SCENARIOS));
  if (names.length === 0 || unknown.length > 0) {
    if (unknown.length > 0) console.error(`unknown scenario(s): ${unknown.join(', ')}`);
    console.error(
      `usage: npm run histories:record -- <scenario>...\nscenarios: ${Object.keys(SCENARIOS).join(', ')}`,
    );
    return 2;
  }
  process.env.TEMPORAL_CLI_PATH = await ensureTemporalCli();
  const h = await createHarness();
  for (const yaml of RECORDED_ACTIONS) {
    const parsed = parseActionFile(yaml, 'action.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    await h.catalog.putAction(parsed.action);
  }
  try {
    for (const name of names) {
      const scenario = SCENARIOS[name];
      if (scenario !== undefined) await record(h, name, scenario);
    }
  } finally {
    await h.teardown();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
