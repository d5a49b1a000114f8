/**
 * Issue 15 items 2 and 3 end to end, on the real dev server, activities, sandboxes and database: a correction at a
 * gate re-runs exactly what depends on the corrected decision (ADR 0016), `plan amend` runs Strategize again, and
 * every refusal is clear and changes nothing.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createActorRegistry } from '../../actors';
import { parseActionFile } from '../../domain/action-file';
import type { AutomationLevel } from '../../domain/lifecycle';
import type { DecisionRecord } from '../../storage/types';
import { FakeModelServer, wireStep } from '../helpers/fake-model-server';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h?.teardown();
});

/** A fresh project per plan, so what Apply wrote is this plan's alone. */
let projects = 0;
async function freshProject(): Promise<{ name: string; dir: string }> {
  projects += 1;
  const name = `local/corr${projects}`;
  const dir = path.join(h.projectDir, `corr${projects}`);
  mkdirSync(dir, { recursive: true });
  await h.catalog.putProject({ name, path: dir, description: '' });
  return { name, dir };
}

async function createPlan(level: AutomationLevel, project: string): Promise<string> {
  const created = await h.client.create({
    actionName: 'local/example',
    projects: [project],
    automationLevel: level,
    arguments: { greeting: 'hello' },
    createdBy: 'tester',
  });
  return created.planId;
}

const strategySteps = (decisions: DecisionRecord[]) =>
  decisions.filter((d) => d.type === 'strategy_choice' && d.supersededBy === null);

/** Seed 004: sequence numbers 0..N-1, no gap, no duplicate, whatever was corrected or run again. */
function expectDenseSeqs(decisions: DecisionRecord[]): void {
  expect(decisions.map((d) => d.seq)).toEqual(decisions.map((_, i) => i));
}

async function approveToTheEnd(planId: string): Promise<void> {
  for (;;) {
    const view = await h.client.waitForInput(planId);
    if (view.phase === 'APPLIED' || view.state === 'CANCELLED') return;
    expect(view.awaitingApproval).toBe(true);
    await h.client.advance(planId, { by: 'tester', expectedPhase: view.phase });
  }
}

interface CliNode {
  decision_id: string;
  superseded_by: string | null;
}

it('replaces a strategy step at the gate after Strategize: Apply writes the corrected file, not the original', async () => {
  const project = await freshProject();
  await h.withWorker(async () => {
    const planId = await createPlan('MANUAL', project.name);
    await h.client.waitForInput(planId);
    const [step] = strategySteps(await h.plans.listDecisions(planId));
    if (step === undefined) throw new Error('no strategy step recorded');

    const dry = await h.cli(
      'plan',
      'correct',
      step.decisionId,
      '--option',
      '{create: CORRECTED.md, content: "corrected by {{plan.name}}\\n"}',
      '--dry-run',
      '--format',
      'json',
    );
    expect(dry.stderr).toBe('');
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dry_run: true,
      effect: 'replace_step',
      step: 1,
      replacement: 'create CORRECTED.md',
      superseded: [expect.stringContaining(step.decisionId)],
      reruns: [],
    });

    const out = await h.cli(
      'plan',
      'correct',
      step.decisionId,
      '--option',
      '{create: CORRECTED.md, content: "corrected by {{plan.name}}\\n"}',
      '--reason',
      'a different file',
      '--format',
      'json',
    );
    expect(out.stderr).toBe('');
    const correction = JSON.parse(out.stdout) as { decision_id: string };
    // The gate stays open: nothing else had run, so nothing else runs again.
    await expect(h.client.waitForInput(planId, 5_000)).resolves.toMatchObject({
      phase: 'STRATEGIZE',
      state: 'COMPLETE',
      awaitingApproval: true,
    });

    await approveToTheEnd(planId);
    expect(readFileSync(path.join(project.dir, 'CORRECTED.md'), 'utf8')).toMatch(/^corrected by /);
    expect(existsSync(path.join(project.dir, 'GREETING.md'))).toBe(false);

    const decisions = await h.plans.listDecisions(planId);
    expectDenseSeqs(decisions);
    expect(decisions.find((d) => d.decisionId === step.decisionId)?.supersededBy).toBe(
      correction.decision_id,
    );
    // The old branch beside the new one.
    const tree = JSON.parse(
      (await h.cli('plan', 'tree', planId, '--show-superseded', '--format', 'json')).stdout,
    ) as { nodes: CliNode[] };
    // The original is superseded by the correction, which itself is current.
    expect(tree.nodes.find((n) => n.decision_id === step.decisionId)).toMatchObject({
      superseded_by: correction.decision_id,
    });
    expect(tree.nodes.find((n) => n.decision_id === correction.decision_id)).toMatchObject({
      superseded_by: null,
    });
    const current = JSON.parse((await h.cli('plan', 'tree', planId, '--format', 'json')).stdout) as {
      nodes: CliNode[];
    };
    expect(current.nodes.map((n) => n.decision_id)).not.toContain(step.decisionId);
    // Execute built on the correction.
    const implementation = decisions.find((d) => d.type === 'implementation_choice');
    expect(implementation?.parentDecisionId).toBe(correction.decision_id);
  });
});

it('skips a strategy step: Execute runs without it and Apply writes nothing', async () => {
  const project = await freshProject();
  await h.withWorker(async () => {
    const manual = await createPlan('MANUAL', project.name);
    await h.client.waitForInput(manual);
    const [step] = strategySteps(await h.plans.listDecisions(manual));
    await h.client.correct(manual, {
      by: 'tester',
      decisionId: step!.decisionId,
      chosenOption: 'skip',
      reason: 'not needed',
    });
    await h.client.advance(manual, { by: 'tester', expectedPhase: 'STRATEGIZE' });
    const atApply = await h.client.waitForInput(manual);
    expect(atApply).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
    const changeset = await h.changesets.get(atApply.changesetId!);
    expect(changeset?.changes).toEqual([]);
    await approveToTheEnd(manual);
    expect(existsSync(path.join(project.dir, 'GREETING.md'))).toBe(false);
  });
});

it('re-runs Execute from a fresh sandbox when a step is corrected at the gate after Execute; the old changeset is refused', async () => {
  const project = await freshProject();
  await h.withWorker(async () => {
    const planId = await createPlan('REVIEW_BEFORE_APPLY', project.name);
    const first = await h.client.waitForInput(planId);
    expect(first).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
    const oldChangeset = first.changesetId!;
    const before = await h.plans.listDecisions(planId);
    const oldExecute = before.filter((d) => d.phase === 'EXECUTE' && d.type !== 'user_intervention');
    expect(oldExecute.length).toBeGreaterThan(0);
    const [step] = strategySteps(before);

    const dry = JSON.parse(
      (
        await h.cli(
          'plan',
          'correct',
          step!.decisionId,
          '--option',
          '{"create": "AGAIN.md", "content": "second run\\n"}',
          '--dry-run',
          '--format',
          'json',
        )
      ).stdout,
    ) as { effect: string; superseded: string[]; leaves_tree: string[]; reruns: string[] };
    expect(dry.effect).toBe('replace_step');
    expect(dry.reruns).toEqual([expect.stringMatching(/^EXECUTE runs again from a fresh sandbox/)]);
    for (const d of oldExecute) expect(dry.leaves_tree.join('\n')).toContain(d.decisionId);
    // The dry run changed nothing.
    expect(await h.plans.listDecisions(planId)).toEqual(before);

    const result = await h.client.correct(planId, {
      by: 'tester',
      decisionId: step!.decisionId,
      chosenOption: '{"create": "AGAIN.md", "content": "second run\\n"}',
      reason: 'another file',
    });
    const again = await h.client.waitForInput(planId);
    expect(again).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
    expect(again.changesetId).not.toBeNull();
    expect(again.changesetId).not.toBe(oldChangeset);
    const changeset = await h.changesets.get(again.changesetId!);
    expect(changeset?.changes.map((c) => c.path)).toEqual(['AGAIN.md']);

    // The approval of the changeset reviewed before the re-run is refused: the new one must be reviewed.
    await expect(
      h.client.advance(planId, { by: 'tester', expectedPhase: 'EXECUTE', reviewedChangesetId: oldChangeset }),
    ).rejects.toThrow(/the changeset changed since it was reviewed/);

    const decisions = await h.plans.listDecisions(planId);
    expectDenseSeqs(decisions);
    for (const d of oldExecute) {
      expect(decisions.find((x) => x.decisionId === d.decisionId)?.supersededBy).toBe(
        result.correctionDecisionId,
      );
    }
    const newExecute = decisions.filter(
      (d) => d.phase === 'EXECUTE' && d.type !== 'user_intervention' && d.supersededBy === null,
    );
    expect(newExecute.length).toBe(oldExecute.length);
    expect(newExecute.find((d) => d.type === 'implementation_choice')?.parentDecisionId).toBe(
      result.correctionDecisionId,
    );
    const events = (await h.plans.listEvents(planId)).map((e) => e.type);
    expect(events.slice(events.indexOf('DECISION_CORRECTED'))).toEqual([
      'DECISION_CORRECTED',
      'PHASE_STARTED',
      'PHASE_COMPLETED',
      'AWAITING_APPROVAL',
      // The advance with the old changeset, refused (ADR 0021).
      'COMMAND_REFUSED',
    ]);

    await h.client.advance(planId, {
      by: 'tester',
      expectedPhase: 'EXECUTE',
      reviewedChangesetId: again.changesetId,
    });
    await approveToTheEnd(planId);
    expect(readFileSync(path.join(project.dir, 'AGAIN.md'), 'utf8')).toBe('second run\n');
    expect(existsSync(path.join(project.dir, 'GREETING.md'))).toBe(false);
  });
});

it('re-runs Execute with the strategy as it stands when a decision of Execute is corrected', async () => {
  const project = await freshProject();
  await h.withWorker(async () => {
    const planId = await createPlan('REVIEW_BEFORE_APPLY', project.name);
    const first = await h.client.waitForInput(planId);
    const tool = (await h.plans.listDecisions(planId)).find(
      (d) => d.phase === 'EXECUTE' && d.type === 'tool_invocation',
    );
    await h.client.correct(planId, {
      by: 'tester',
      decisionId: tool!.decisionId,
      chosenOption: 'Run it again from a clean copy',
      reason: 'the first run looked odd',
    });
    const again = await h.client.waitForInput(planId);
    expect(again).toMatchObject({ phase: 'EXECUTE', awaitingApproval: true });
    expect(again.changesetId).not.toBe(first.changesetId);
    const decisions = await h.plans.listDecisions(planId);
    expectDenseSeqs(decisions);
    expect(
      decisions.filter((d) => d.type === 'implementation_choice' && d.supersededBy === null),
    ).toHaveLength(1);
    await h.client.cancel(planId);
  });
});

it('refuses an advance and an amendment while Execute runs again', async () => {
  const project = await freshProject();
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let rerunStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    rerunStarted = resolve;
  });
  await h.withWorker(
    async () => {
      const planId = await createPlan('REVIEW_BEFORE_APPLY', project.name);
      await h.client.waitForInput(planId);
      const [step] = strategySteps(await h.plans.listDecisions(planId));
      await h.client.correct(planId, {
        by: 'tester',
        decisionId: step!.decisionId,
        chosenOption: '{create: LATER.md, content: "later\\n"}',
        reason: 'later',
      });
      await started;
      // The gate closed with the re-run's start: nothing can approve the old changeset, or change the strategy.
      await expect(h.client.advance(planId, { by: 'tester', expectedPhase: 'EXECUTE' })).rejects.toThrow(
        /EXECUTE is PROCESSING/,
      );
      const oldImplementation = (await h.plans.listDecisions(planId)).find(
        (d) => d.phase === 'EXECUTE' && d.type === 'implementation_choice',
      );
      const before = await h.plans.listDecisions(planId);
      const amend = await h.cli('plan', 'amend', planId, 'more');
      expect(amend.code).toBe(4);
      expect(await h.plans.listDecisions(planId)).toEqual(before);
      release();
      const again = await h.client.waitForInput(planId);
      expect(again).toMatchObject({ phase: 'EXECUTE', state: 'COMPLETE', awaitingApproval: true });
      expect((await h.changesets.get(again.changesetId!))?.changes.map((c) => c.path)).toEqual(['LATER.md']);
      expect(oldImplementation?.supersededBy).not.toBeNull();
      expectDenseSeqs(await h.plans.listDecisions(planId));
      await h.client.cancel(planId);
    },
    {
      execute: async (input) => {
        if (input.attempt > 1) {
          rerunStarted();
          await held;
        }
        return h.activities.execute(input);
      },
    },
  );
});

it('amends a plan waiting after Strategize: Strategize runs again with the instructions and the gate reopens', async () => {
  const project = await freshProject();
  await h.withWorker(async () => {
    const planId = await createPlan('MANUAL', project.name);
    await h.client.waitForInput(planId);
    const oldSteps = strategySteps(await h.plans.listDecisions(planId));

    const out = await h.cli('plan', 'amend', planId, 'Also mention the weather', '--reason', 'forgot it');
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const view = await h.client.waitForInput(planId);
    expect(view).toMatchObject({ phase: 'STRATEGIZE', state: 'COMPLETE', awaitingApproval: true });

    const decisions = await h.plans.listDecisions(planId);
    expectDenseSeqs(decisions);
    const intervention = decisions.find(
      (d) => d.type === 'user_intervention' && d.chosenOption === 'Also mention the weather',
    );
    expect(intervention).toMatchObject({ actor: 'tester', rationale: 'forgot it', phase: 'STRATEGIZE' });
    for (const old of oldSteps) {
      expect(decisions.find((d) => d.decisionId === old.decisionId)?.supersededBy).toBe(
        intervention?.decisionId,
      );
    }
    const newSteps = strategySteps(decisions);
    expect(newSteps).toHaveLength(oldSteps.length);
    expect(newSteps.every((d) => d.seq > intervention!.seq)).toBe(true);
    const events = (await h.plans.listEvents(planId)).map((e) => e.type);
    expect(events.slice(-4)).toEqual([
      'AWAITING_APPROVAL',
      'PHASE_STARTED',
      'PHASE_COMPLETED',
      'AWAITING_APPROVAL',
    ]);

    // A step of the new strategy can be corrected like any other.
    await h.client.correct(planId, {
      by: 'tester',
      decisionId: newSteps[0]!.decisionId,
      chosenOption: '{create: WEATHER.md, content: "sunny\\n"}',
      reason: 'the weather',
    });
    await approveToTheEnd(planId);
    expect(readFileSync(path.join(project.dir, 'WEATHER.md'), 'utf8')).toBe('sunny\n');

    // Elsewhere an amendment is refused with the reason, exit 4.
    const late = await h.cli('plan', 'amend', planId, 'too late');
    expect(late.code).toBe(4);
    expect(late.stderr).toMatch(/finished/);
  });
});

describe('refusals change nothing', () => {
  /**
   * Everything a refusal must leave alone: the decisions, the events (but the refusal's own COMMAND_REFUSED, ADR
   * 0021), the project.
   */
  async function recordOf(planId: string) {
    const events = await h.plans.listEvents(planId);
    return {
      decisions: await h.plans.listDecisions(planId),
      events: events.filter((e) => e.type !== 'COMMAND_REFUSED'),
    };
  }

  async function refusalsLogged(planId: string): Promise<string[]> {
    return (await h.plans.listEvents(planId))
      .filter((e) => e.type === 'COMMAND_REFUSED')
      .map((e) => e.message ?? '');
  }

  it('refuses bad and hostile steps, corrections after Apply and amendments at the wrong gate', async () => {
    const project = await freshProject();
    await h.withWorker(async () => {
      const planId = await createPlan('MANUAL', project.name);
      await h.client.waitForInput(planId);
      const [step] = strategySteps(await h.plans.listDecisions(planId));
      const before = await recordOf(planId);
      const refusals: Array<[string, RegExp]> = [
        ['Write the greeting by hand', /must be one step in the action step syntax/],
        ['{create: }', /must be one step in the action step syntax/],
        ['{create: a.md, run: id}', /exactly one verb/],
        ['{create: ../escaped.md, content: x}', /"\.\." component/],
        ['{create: /etc/cron.d/x, content: x}', /is absolute/],
        ['{move: GREETING.md, to: .git/hooks/pre-commit}', /git's directory/],
        ['{create: "{{greeting}}/../../x", content: x}', /"\.\." component/],
        ['{run: \'echo "{{greeting}}"\'}', /inside quotes/],
        ['{run: "echo {{nope}}"}', /"nope", which this plan does not have/],
        ['{create: x.md, content: y, project: local/elsewhere}', /not linked to this plan/],
      ];
      for (const [option, reason] of refusals) {
        const out = await h.cli('plan', 'correct', step!.decisionId, '--option', option, '--reason', 'r');
        expect({ option, code: out.code }).toEqual({ option, code: 4 });
        expect(out.stderr).toMatch(reason);
        const dry = await h.cli('plan', 'correct', step!.decisionId, '--option', option, '--dry-run');
        expect({ option, code: dry.code }).toEqual({ option, code: 4 });
        expect(dry.stderr).toMatch(reason);
      }
      expect(await recordOf(planId)).toEqual(before);
      // Each refused correction is logged; a dry run is a question, not a command, and is not.
      const logged = await refusalsLogged(planId);
      expect(logged).toHaveLength(refusals.length);
      logged.forEach((message, i) => {
        expect(message.startsWith('correct refused: ')).toBe(true);
        expect(message).toMatch(refusals[i]![1]);
      });
      const noReason = await h.cli('plan', 'correct', step!.decisionId, '--option', 'skip');
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toMatch(/--reason/);

      // An amendment is for the gate after Strategize only.
      await h.client.advance(planId, { by: 'tester', expectedPhase: 'STRATEGIZE' });
      await h.client.waitForInput(planId);
      const atExecute = await recordOf(planId);
      const amend = await h.cli('plan', 'amend', planId, 'more');
      expect(amend.code).toBe(4);
      expect(amend.stderr).toMatch(/only while it waits for approval after Strategize/);
      expect(await recordOf(planId)).toEqual(atExecute);

      // After Apply nothing can be corrected.
      await h.client.advance(planId, { by: 'tester', expectedPhase: 'EXECUTE' });
      const inApply = await h.client.waitForInput(planId);
      expect(inApply).toMatchObject({ phase: 'APPLY', awaitingApproval: true });
      const applied = await recordOf(planId);
      const files = readFileSync(path.join(project.dir, 'GREETING.md'), 'utf8');
      const late = await h.cli('plan', 'correct', step!.decisionId, '--option', 'skip', '--reason', 'r');
      expect(late.code).toBe(4);
      expect(late.stderr).toMatch(/the plan is in APPLY/);
      expect(await recordOf(planId)).toEqual(applied);
      expect((await refusalsLogged(planId)).slice(refusals.length)).toEqual([
        expect.stringMatching(/^amend refused: .*only while it waits for approval after Strategize/),
        expect.stringMatching(/^correct refused: .*the plan is in APPLY/),
      ]);
      expect(readFileSync(path.join(project.dir, 'GREETING.md'), 'utf8')).toBe(files);
      await approveToTheEnd(planId);
    });
  });
});

describe('with the model actor', () => {
  let server: FakeModelServer;

  beforeAll(async () => {
    server = await FakeModelServer.start();
    const parsed = parseActionFile('name: local/model-steps\nactors:\n  strategy: model\n', 'action.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    await h.catalog.putAction(parsed.action);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('re-asks the steps after a corrected one with the correction as a constraint, and runs the result', async () => {
    const project = await freshProject();
    server.replyContent({
      summary: 'Three files',
      rationale: 'one per topic',
      confidence: 0.8,
      alternatives: [],
      steps: ['A', 'B', 'C'].map((n) =>
        wireStep({ kind: 'create', target: `${n}.md`, content: `${n}\n`, overwrite: null }),
      ),
      validation: null,
    });
    server.replyContent({
      summary: 'Follow the correction with one file',
      rationale: 'the corrected step covers A',
      confidence: 0.6,
      alternatives: [],
      steps: [wireStep({ kind: 'create', target: 'Y.md', content: 'Y\n' })],
      validation: null,
    });
    const actors = createActorRegistry({
      model: { baseUrl: server.baseUrl, model: 'fake', apiKey: null, timeoutSeconds: 10, maxAttempts: 1 },
    });
    await h.withActors(actors, async () => {
      const created = await h.client.create({
        actionName: 'local/model-steps',
        projects: [project.name],
        automationLevel: 'MANUAL',
        arguments: {},
        createdBy: 'tester',
      });
      const planId = created.planId;
      await h.client.waitForInput(planId);
      const before = await h.plans.listDecisions(planId);
      const [approach, a, b, c] = strategySteps(before);
      expect([a, b, c].map((d) => d?.chosenOption)).toEqual(['create A.md', 'create B.md', 'create C.md']);

      const dry = JSON.parse(
        (
          await h.cli(
            'plan',
            'correct',
            a!.decisionId,
            '--option',
            '{create: X.md, content: "X\\n"}',
            '--dry-run',
            '--format',
            'json',
          )
        ).stdout,
      ) as { superseded: string[]; reruns: string[] };
      expect(dry.superseded.map((line) => line.split(' ')[2]?.replace(':', ''))).toEqual([
        a!.decisionId,
        b!.decisionId,
        c!.decisionId,
      ]);
      expect(dry.reruns).toEqual([
        expect.stringMatching(/^STRATEGIZE asks the strategy actor again for the steps after step 1/),
      ]);

      const result = await h.client.correct(planId, {
        by: 'tester',
        decisionId: a!.decisionId,
        chosenOption: '{create: X.md, content: "X\\n"}',
        reason: 'X covers A to C',
      });
      await expect(h.client.waitForInput(planId)).resolves.toMatchObject({
        phase: 'STRATEGIZE',
        state: 'COMPLETE',
        awaitingApproval: true,
      });
      // The model was told what stays and what the person changed.
      const asked = JSON.stringify(server.requests[1]?.body);
      expect(asked).toContain('A person replaced step 1 with: create X.md.');
      expect(asked).toContain('X covers A to C');

      const decisions = await h.plans.listDecisions(planId);
      expectDenseSeqs(decisions);
      for (const old of [a, b, c]) {
        expect(decisions.find((d) => d.decisionId === old!.decisionId)?.supersededBy).toBe(
          result.correctionDecisionId,
        );
      }
      const current = strategySteps(decisions);
      expect(current.map((d) => d.chosenOption)).toEqual([
        approach!.chosenOption,
        '{create: X.md, content: "X\\n"}',
        'create Y.md',
      ]);
      // The re-asked step follows from the correction.
      expect(current[2]?.parentDecisionId).toBe(result.correctionDecisionId);

      await approveToTheEnd(planId);
      expect(readFileSync(path.join(project.dir, 'X.md'), 'utf8')).toBe('X\n');
      expect(readFileSync(path.join(project.dir, 'Y.md'), 'utf8')).toBe('Y\n');
      for (const gone of ['A.md', 'B.md', 'C.md'])
        expect(existsSync(path.join(project.dir, gone))).toBe(false);
    });
    expect(server.requests).toHaveLength(2);
  });
});
