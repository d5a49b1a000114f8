/**
 * The plan store against a real SQLite file, migrated the way `npm start` migrates it. No mocks: idempotency and
 * rollback are properties of the database transaction, so only the database can show them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ulid } from 'ulid';
import type { z } from 'zod';
import type { DecisionWrite, RecordPlanStateInput } from '../../activities/contracts';
import type { DecisionDraft, DecisionType } from '../../domain/decision';
import type { PlanSpec } from '../../domain/plan';
import { planSpecSchema } from '../../domain/schemas';
import {
  DecisionRuleError,
  isTransientStorageError,
  PlanConflictError,
  PlanNotFoundError,
} from '../../storage/errors';
import { createContextFileStore } from '../../storage/context-files';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient, disconnectSharedPrismaClients, sharedPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import type { PlanStore } from '../../storage/types';
import { createTestDatabase, TEST_BACKEND } from '../helpers/database';

let dir: string;
let databaseUrl: string;
let prisma: PrismaClient;
let store: PlanStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'plans-store-'));
  databaseUrl = await createTestDatabase(dir);
  prisma = createPrismaClient(databaseUrl);
  store = createPlanStore(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

let clock = Date.parse('2026-01-01T00:00:00.000Z');
/** Strictly increasing timestamps, so "newest first" has one right answer. */
function nextTime(): string {
  clock += 1000;
  return new Date(clock).toISOString();
}

type SpecInput = Partial<z.input<typeof planSpecSchema>>;

/** Through the domain schema, as the client builds specs, so fields a test does not name get their defaults. */
function makeSpec(overrides: SpecInput = {}): PlanSpec {
  return planSpecSchema.parse({
    planId: ulid(),
    name: 'Review the parser',
    actionName: 'local/code-review',
    description: 'look for bugs',
    projects: [{ projectName: 'local/parser', alias: 'p', readOnly: false }],
    automationLevel: 'MANUAL',
    arguments: { depth: 2, strict: true, target: 'src' },
    argumentsOrder: ['target', 'depth', 'strict'],
    createdBy: 'alice',
    createdAt: nextTime(),
    ...overrides,
  });
}

async function createPlan(overrides: SpecInput = {}): Promise<PlanSpec> {
  const spec = makeSpec(overrides);
  await store.recordPlanCreated({ spec, eventSeq: 0 });
  return spec;
}

function decision(
  seq: number,
  type: DecisionType,
  parentSeq: number | null,
  extra: Partial<DecisionDraft> = {},
) {
  const draft: DecisionDraft = {
    type,
    question: `question ${seq}`,
    chosenOption: `option ${seq}`,
    alternatives: [`alternative ${seq}a`, `alternative ${seq}b`],
    confidence: 0.5,
    rationale: `because ${seq}`,
    parentSeq,
    phase: 'STRATEGIZE',
    actor: 'workflow',
    ...extra,
  };
  return { seq, draft } satisfies DecisionWrite;
}

function stateInput(
  planId: string,
  eventSeq: number,
  extra: Partial<RecordPlanStateInput> = {},
): RecordPlanStateInput {
  return {
    planId,
    eventSeq,
    at: nextTime(),
    event: 'PHASE_STARTED',
    phase: 'STRATEGIZE',
    state: 'PROCESSING',
    recordedBy: 'workflow',
    message: null,
    error: null,
    decisions: [],
    ...extra,
  };
}

/** Everything stored for a plan, to show that a refused write left no trace. */
async function everything(planId: string) {
  return {
    plan: await store.getPlan(planId),
    events: await store.listEvents(planId),
    decisions: await store.listDecisions(planId),
  };
}

describe('recordPlanCreated', () => {
  it('stores the plan in STRATEGIZE/QUEUED with its PLAN_CREATED event', async () => {
    const spec = await createPlan();

    const plan = await store.getPlan(spec.planId);
    expect(plan).toEqual({
      planId: spec.planId,
      workflowId: `plan-${spec.planId}`,
      name: spec.name,
      actionName: spec.actionName,
      description: spec.description,
      projects: spec.projects,
      automationLevel: 'MANUAL',
      arguments: spec.arguments,
      argumentsOrder: ['target', 'depth', 'strict'],
      definitionOfDone: null,
      automationProfileName: null,
      effectiveProfileSnapshot: null,
      invariants: [],
      actors: { strategyActor: null, executionActor: null, estimationActor: null, invariantActor: null },
      tags: [],
      phase: 'STRATEGIZE',
      state: 'QUEUED',
      changesetId: null,
      sandboxRefs: [],
      validationSummary: null,
      decisionRootId: null,
      error: null,
      gate: null,
      paused: null,
      parentPlanId: null,
      rootPlanId: null,
      depth: 0,
      childPlanIds: [],
      createdBy: 'alice',
      createdAt: spec.createdAt,
      updatedAt: spec.createdAt,
      applyStatistics: null,
    });
    expect(await store.listEvents(spec.planId)).toEqual([
      {
        planId: spec.planId,
        seq: 0,
        type: 'PLAN_CREATED',
        phase: 'STRATEGIZE',
        state: 'QUEUED',
        recordedBy: 'alice',
        message: null,
        at: spec.createdAt,
      },
    ]);
  });

  it('is idempotent: the same call again writes nothing and does not throw', async () => {
    const spec = await createPlan();
    const before = await everything(spec.planId);

    await expect(store.recordPlanCreated({ spec, eventSeq: 0 })).resolves.toBeUndefined();
    // A copy that went through JSON (as Temporal delivers activity inputs) is the same plan too.
    await expect(
      store.recordPlanCreated({ spec: JSON.parse(JSON.stringify(spec)) as PlanSpec, eventSeq: 0 }),
    ).resolves.toBeUndefined();

    expect(await everything(spec.planId)).toEqual(before);
    expect(await prisma.plan.count({ where: { id: spec.planId } })).toBe(1);
  });

  it('refuses a different plan under an existing id', async () => {
    const spec = await createPlan();
    const before = await everything(spec.planId);

    await expect(
      store.recordPlanCreated({ spec: { ...spec, name: 'Something else' }, eventSeq: 0 }),
    ).rejects.toThrow(PlanConflictError);
    await expect(
      store.recordPlanCreated({ spec: { ...spec, tags: ['other'] }, eventSeq: 0 }),
    ).rejects.toThrow(/different tags/);
    await expect(
      store.recordPlanCreated({
        spec: { ...spec, actors: { ...spec.actors, executionActor: 'someone/else' } },
        eventSeq: 0,
      }),
    ).rejects.toThrow(/different executionActor/);
    await expect(store.recordPlanCreated({ spec, eventSeq: 1 })).rejects.toThrow(PlanConflictError);
    expect(await everything(spec.planId)).toEqual(before);
  });
});

describe('discardUnstarted', () => {
  const file = (text: string) => {
    const content = new TextEncoder().encode(text);
    return { path: `/notes/${text.trim()}.md`, sha256: 'a'.repeat(64), content };
  };

  it('removes a plan that has only its creation, with its context files', async () => {
    const spec = await createPlan();
    await createContextFileStore(prisma).add(
      spec.planId,
      [file('one\n'), file('two\n')],
      'alice',
      nextTime(),
    );
    expect(await store.discardUnstarted(spec.planId)).toBe(true);
    expect(await store.getPlan(spec.planId)).toBeNull();
    expect(await store.listEvents(spec.planId)).toEqual([]);
    expect(await prisma.planContextFile.count({ where: { planId: spec.planId } })).toBe(0);
  });

  it('keeps a plan once its workflow recorded anything, and says so', async () => {
    const spec = await createPlan();
    await createContextFileStore(prisma).add(spec.planId, [file('kept\n')], 'alice', nextTime());
    await store.recordPlanState(stateInput(spec.planId, 1, { message: 'strategizing' }));
    expect(await store.discardUnstarted(spec.planId)).toBe(false);
    expect(await store.getPlan(spec.planId)).not.toBeNull();
    expect((await store.listEvents(spec.planId)).map((e) => e.seq)).toEqual([0, 1]);
    expect(await prisma.planContextFile.count({ where: { planId: spec.planId } })).toBe(1);
  });

  it('answers false for an unknown plan', async () => {
    expect(await store.discardUnstarted(ulid())).toBe(false);
  });
});

describe('recordPlanState', () => {
  it('writes the event, the plan state and the decisions in one go', async () => {
    const spec = await createPlan();
    const input = stateInput(spec.planId, 1, {
      message: 'strategizing',
      decisions: [
        decision(0, 'prompt_definition', null, { confidence: null, alternatives: [] }),
        decision(1, 'strategy_choice', 0, { confidence: 0.85 }),
        decision(2, 'invariant_enforced', 0, { confidence: 1 }),
      ],
    });

    const { decisionIds } = await store.recordPlanState(input);

    expect(Object.keys(decisionIds).map(Number).sort()).toEqual([0, 1, 2]);
    const plan = await store.getPlan(spec.planId);
    expect(plan).toMatchObject({ phase: 'STRATEGIZE', state: 'PROCESSING', decisionRootId: decisionIds[0] });
    expect(plan?.updatedAt).toBe(input.at);

    const decisions = await store.listDecisions(spec.planId);
    expect(decisions.map((d) => [d.seq, d.decisionId, d.parentDecisionId, d.type])).toEqual([
      [0, decisionIds[0], null, 'prompt_definition'],
      [1, decisionIds[1], decisionIds[0], 'strategy_choice'],
      [2, decisionIds[2], decisionIds[0], 'invariant_enforced'],
    ]);
    expect(decisions[1]).toEqual({
      decisionId: decisionIds[1],
      planId: spec.planId,
      seq: 1,
      parentDecisionId: decisionIds[0],
      type: 'strategy_choice',
      phase: 'STRATEGIZE',
      question: 'question 1',
      chosenOption: 'option 1',
      alternatives: ['alternative 1a', 'alternative 1b'],
      confidence: 0.85,
      rationale: 'because 1',
      actor: 'workflow',
      createdAt: input.at,
      // Seed 004's other fields, none of which this draft sets (test/storage/decisions.test.ts covers them).
      hotContextHash: null,
      hotContextRef: null,
      relevantResources: [],
      actorStateRef: null,
      actorReasoning: null,
      downstreamDecisionIds: [],
      downstreamPlanIds: [],
      artifactsProduced: [],
      isCorrection: false,
      correctsDecisionId: null,
      correctionReason: null,
      supersededBy: null,
      modelName: null,
      promptTokens: null,
      completionTokens: null,
    });
    expect((await store.listEvents(spec.planId)).at(-1)).toEqual({
      planId: spec.planId,
      seq: 1,
      type: 'PHASE_STARTED',
      phase: 'STRATEGIZE',
      state: 'PROCESSING',
      recordedBy: 'workflow',
      message: 'strategizing',
      at: input.at,
    });
  });

  it('links to parents written by an earlier call', async () => {
    const spec = await createPlan();
    const first = await store.recordPlanState(
      stateInput(spec.planId, 1, { decisions: [decision(0, 'prompt_definition', null)] }),
    );
    const second = await store.recordPlanState(
      stateInput(spec.planId, 2, {
        phase: 'EXECUTE',
        decisions: [
          decision(1, 'strategy_choice', 0),
          decision(2, 'tool_invocation', 1, { phase: 'EXECUTE' }),
        ],
      }),
    );

    const decisions = await store.listDecisions(spec.planId);
    expect(decisions.map((d) => d.parentDecisionId)).toEqual([
      null,
      first.decisionIds[0],
      second.decisionIds[1],
    ]);
    expect((await store.getPlan(spec.planId))?.decisionRootId).toBe(first.decisionIds[0]);
  });

  it("supersedes a re-run phase's decisions with the decision that caused it, once, and never another plan's", async () => {
    const other = await createPlan();
    const foreign = await store.recordPlanState(
      stateInput(other.planId, 1, {
        decisions: [decision(0, 'prompt_definition', null), decision(1, 'strategy_choice', 0)],
      }),
    );
    const spec = await createPlan();
    const first = await store.recordPlanState(
      stateInput(spec.planId, 1, {
        decisions: [
          decision(0, 'prompt_definition', null),
          decision(1, 'strategy_choice', 0),
          decision(2, 'strategy_choice', 0),
        ],
      }),
    );
    const old = [first.decisionIds[1]!, first.decisionIds[2]!];
    const amend = stateInput(spec.planId, 2, {
      recordedBy: 'alice',
      decisions: [decision(3, 'user_intervention', 0)],
      supersede: { decisionIds: [...old, foreign.decisionIds[1]!], bySeq: 3 },
    });
    const { decisionIds } = await store.recordPlanState(amend);
    await store.recordPlanState(amend);
    const after = await store.listDecisions(spec.planId);
    expect(after.map((d) => d.supersededBy)).toEqual([null, decisionIds[3], decisionIds[3], null]);
    expect((await store.listDecisions(other.planId)).map((d) => d.supersededBy)).toEqual([null, null]);

    // A decision superseded before keeps the one that replaced it first.
    const second = await store.recordPlanState(
      stateInput(spec.planId, 3, {
        decisions: [decision(4, 'user_intervention', 0)],
        supersede: { decisionIds: old, bySeq: 4 },
      }),
    );
    expect(second.decisionIds[4]).toBeDefined();
    expect((await store.listDecisions(spec.planId)).map((d) => d.supersededBy)).toEqual([
      null,
      decisionIds[3],
      decisionIds[3],
      null,
      null,
    ]);

    // Superseding by a decision that is not recorded is refused, and nothing of the write stays.
    const before = await everything(spec.planId);
    await expect(
      store.recordPlanState(
        stateInput(spec.planId, 4, { supersede: { decisionIds: [first.decisionIds[0]!], bySeq: 9 } }),
      ),
    ).rejects.toThrow(PlanConflictError);
    expect(await everything(spec.planId)).toEqual(before);
  });

  it('writing the same input again (a retried write) leaves one event and returns the same decision ids', async () => {
    const spec = await createPlan();
    const input = stateInput(spec.planId, 1, {
      decisions: [decision(0, 'prompt_definition', null), decision(1, 'strategy_choice', 0)],
    });

    const first = await store.recordPlanState(input);
    const afterFirst = await everything(spec.planId);
    const second = await store.recordPlanState(input);

    expect(second).toEqual(first);
    expect(await everything(spec.planId)).toEqual(afterFirst);
    expect((await store.listEvents(spec.planId)).filter((e) => e.seq === 1)).toHaveLength(1);
    expect(await prisma.decision.count({ where: { planId: spec.planId } })).toBe(2);
  });

  it('keeps sequence numbers exactly 0..N-1 over a whole plan life', async () => {
    const spec = await createPlan({ automationLevel: 'FULL_AUTOMATION' });
    const steps: Partial<RecordPlanStateInput>[] = [
      { event: 'PHASE_STARTED', decisions: [decision(0, 'prompt_definition', null)] },
      { event: 'PHASE_COMPLETED', state: 'COMPLETE', decisions: [decision(1, 'strategy_choice', 0)] },
      { event: 'PHASE_STARTED', phase: 'EXECUTE', state: 'PROCESSING' },
      {
        event: 'PHASE_FAILED',
        phase: 'EXECUTE',
        state: 'ERRORED',
        error: {
          type: 'ActorError',
          message: 'boom',
          details: 'stack',
          at: new Date(clock + 500).toISOString(),
        },
        decisions: [decision(2, 'error_recovery', 1, { phase: 'EXECUTE' })],
      },
      {
        event: 'PHASE_RETRIED',
        phase: 'EXECUTE',
        state: 'PROCESSING',
        recordedBy: 'bob',
        decisions: [decision(3, 'user_intervention', 2, { phase: 'EXECUTE', actor: 'bob' })],
      },
      {
        event: 'PHASE_COMPLETED',
        phase: 'EXECUTE',
        state: 'COMPLETE',
        decisions: [
          decision(4, 'implementation_choice', 1, { phase: 'EXECUTE' }),
          decision(5, 'resource_selection', 4),
        ],
      },
      { event: 'PHASE_STARTED', phase: 'APPLY', state: 'PROCESSING' },
      { event: 'PLAN_APPLIED', phase: 'APPLIED', state: 'COMPLETE' },
    ];
    let eventSeq = 1;
    for (const step of steps) {
      const input = stateInput(spec.planId, eventSeq++, step);
      await store.recordPlanState(input);
      // Retried activities are the normal case, not the exception.
      await store.recordPlanState(input);
    }

    expect((await store.listEvents(spec.planId)).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await store.listDecisions(spec.planId)).map((d) => d.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    const plan = await store.getPlan(spec.planId);
    expect(plan).toMatchObject({ phase: 'APPLIED', state: 'COMPLETE', error: null });
  });

  it('writes the error fields and clears them with a null error', async () => {
    const spec = await createPlan();
    const error = { type: 'ActorError', message: 'model timed out', details: null, at: nextTime() };
    await store.recordPlanState(
      stateInput(spec.planId, 1, { event: 'PHASE_FAILED', state: 'ERRORED', error }),
    );
    expect((await store.getPlan(spec.planId))?.error).toEqual(error);

    await store.recordPlanState(stateInput(spec.planId, 2, { event: 'PHASE_RETRIED', state: 'PROCESSING' }));
    expect(await store.getPlan(spec.planId)).toMatchObject({ state: 'PROCESSING', error: null });
  });

  it('does not roll the plan row back when an older event arrives after a newer one', async () => {
    const spec = await createPlan();
    const older = stateInput(spec.planId, 1, { state: 'PROCESSING' });
    const newer = stateInput(spec.planId, 2, { event: 'PHASE_COMPLETED', state: 'COMPLETE' });
    await store.recordPlanState(newer);
    await store.recordPlanState(older);

    expect((await store.listEvents(spec.planId)).map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(await store.getPlan(spec.planId)).toMatchObject({ state: 'COMPLETE', updatedAt: newer.at });
  });

  it('leaves the plan row alone when an event already stored arrives again, whatever state it carries', async () => {
    const spec = await createPlan();
    await store.recordPlanState(stateInput(spec.planId, 1, { state: 'PROCESSING' }));
    const newer = stateInput(spec.planId, 2, { event: 'PHASE_COMPLETED', state: 'COMPLETE' });
    await store.recordPlanState(newer);
    const before = await everything(spec.planId);

    // The newest event again, and an older one again, each with other fields than were stored.
    const error = { type: 'ActorError', message: 'late', details: null, at: nextTime() };
    await store.recordPlanState({ ...newer, state: 'ERRORED', error, at: nextTime() });
    await store.recordPlanState(stateInput(spec.planId, 1, { state: 'ERRORED', error }));

    expect(await everything(spec.planId)).toEqual(before);
    expect(await store.getPlan(spec.planId)).toMatchObject({
      state: 'COMPLETE',
      updatedAt: newer.at,
      error: null,
    });
  });

  it('rejects a second prompt_definition root and writes nothing', async () => {
    const spec = await createPlan();
    await store.recordPlanState(
      stateInput(spec.planId, 1, { decisions: [decision(0, 'prompt_definition', null)] }),
    );
    const before = await everything(spec.planId);

    const secondRoot = stateInput(spec.planId, 2, {
      state: 'COMPLETE',
      decisions: [decision(1, 'strategy_choice', 0), decision(2, 'prompt_definition', null)],
    });
    await expect(store.recordPlanState(secondRoot)).rejects.toThrow(DecisionRuleError);
    // Two roots in one batch are refused the same way.
    const other = await createPlan();
    await expect(
      store.recordPlanState(
        stateInput(other.planId, 1, {
          decisions: [decision(0, 'prompt_definition', null), decision(1, 'prompt_definition', null)],
        }),
      ),
    ).rejects.toThrow(/exactly one/);

    expect(await everything(spec.planId)).toEqual(before);
    expect(await store.listDecisions(other.planId)).toEqual([]);
    expect((await store.listEvents(other.planId)).map((e) => e.seq)).toEqual([0]);
  });

  it('rejects a parent that exists only in another plan', async () => {
    const withTree = await createPlan();
    await store.recordPlanState(
      stateInput(withTree.planId, 1, {
        decisions: [decision(0, 'prompt_definition', null), decision(1, 'strategy_choice', 0)],
      }),
    );
    const spec = await createPlan();
    await store.recordPlanState(
      stateInput(spec.planId, 1, { decisions: [decision(0, 'prompt_definition', null)] }),
    );
    const before = await everything(spec.planId);

    // Seq 1 exists in the other plan only; it must not resolve there.
    const err: unknown = await store
      .recordPlanState(stateInput(spec.planId, 2, { decisions: [decision(2, 'implementation_choice', 1)] }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecisionRuleError);
    expect(err).toMatchObject({ name: 'DecisionRuleError', planId: spec.planId, seq: 2 });
    expect((err as Error).message).toMatch(/parent 1 not found/);
    expect(await everything(spec.planId)).toEqual(before);
  });

  it('rejects a confidence outside 0..1 and writes nothing', async () => {
    const spec = await createPlan();
    const before = await everything(spec.planId);

    await expect(
      store.recordPlanState(
        stateInput(spec.planId, 1, {
          decisions: [
            decision(0, 'prompt_definition', null),
            decision(1, 'strategy_choice', 0, { confidence: 1.5 }),
          ],
        }),
      ),
    ).rejects.toThrow(/confidence must be between 0.0 and 1.0/);
    expect(await everything(spec.planId)).toEqual(before);
  });

  it('rejects the other structural rules of seed 004', async () => {
    const spec = await createPlan();
    await store.recordPlanState(
      stateInput(spec.planId, 1, { decisions: [decision(0, 'prompt_definition', null)] }),
    );
    const before = await everything(spec.planId);
    const refused = async (decisions: DecisionWrite[]) =>
      expect(store.recordPlanState(stateInput(spec.planId, 2, { decisions }))).rejects.toThrow(
        DecisionRuleError,
      );

    await refused([decision(1, 'strategy_choice', null)]); // non-root without parent
    await refused([decision(1, 'strategy_choice', 1)]); // parent not before it
    await refused([decision(0, 'strategy_choice', 0)]); // a reused sequence number
    await refused([decision(1, 'strategy_choice', 0), decision(1, 'tool_invocation', 0)]); // twice in one batch
    await refused([decision(-1, 'strategy_choice', null)]); // negative sequence number
    expect(await everything(spec.planId)).toEqual(before);
  });

  it('throws PlanNotFoundError for an unknown plan', async () => {
    const planId = ulid();
    const err: unknown = await store.recordPlanState(stateInput(planId, 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanNotFoundError);
    expect(err).toMatchObject({ name: 'PlanNotFoundError', planId });
    expect(isTransientStorageError(err)).toBe(false);
    expect(await store.getPlan(planId)).toBeNull();
    expect(await store.listEvents(planId)).toEqual([]);
  });
});

describe('recordRefusal (ADR 0021)', () => {
  it('appends a COMMAND_REFUSED event under the number given, and a retry changes nothing', async () => {
    const spec = await createPlan();
    await store.recordPlanState(stateInput(spec.planId, 1, { state: 'PROCESSING' }));
    const planBefore = await store.getPlan(spec.planId);
    const write = {
      planId: spec.planId,
      eventSeq: 2,
      at: nextTime(),
      by: 'mallory',
      command: 'advance' as const,
      reason: 'mallory may not approve entering APPLY',
      phase: 'EXECUTE' as const,
      state: 'COMPLETE' as const,
    };
    expect(await store.recordRefusal(write)).toBe(2);
    expect(await store.recordRefusal({ ...write, at: nextTime(), reason: 'another' })).toBe(2);

    const events = await store.listEvents(spec.planId);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [0, 'PLAN_CREATED'],
      [1, 'PHASE_STARTED'],
      [2, 'COMMAND_REFUSED'],
    ]);
    expect(events[2]).toMatchObject({
      recordedBy: 'mallory',
      phase: 'EXECUTE',
      state: 'COMPLETE',
      message: 'advance refused: mallory may not approve entering APPLY',
      at: write.at,
    });
    // A refusal moves nothing: not the row, not its updatedAt, and it is not the event the plan waits at.
    expect(await store.getPlan(spec.planId)).toEqual(planBefore);
    expect((await store.lastStateEvent(spec.planId))?.seq).toBe(1);
  });

  it('refuses a number another event holds', async () => {
    const spec = await createPlan();
    await expect(
      store.recordRefusal({
        planId: spec.planId,
        eventSeq: 0,
        at: nextTime(),
        by: 'bob',
        command: 'retry',
        reason: 'nothing to retry',
      }),
    ).rejects.toBeInstanceOf(PlanConflictError);
  });

  it('without a number (the workflow has ended) takes the next one, with the plan row’s phase and state', async () => {
    const spec = await createPlan();
    await store.recordPlanState(
      stateInput(spec.planId, 1, { event: 'PLAN_APPLIED', phase: 'APPLIED', state: 'COMPLETE' }),
    );
    const first = await store.recordRefusal({
      planId: spec.planId,
      eventSeq: null,
      at: nextTime(),
      by: 'carol',
      command: 'advance',
      reason: 'the plan has finished (APPLIED, COMPLETE)',
    });
    const second = await store.recordRefusal({
      planId: spec.planId,
      eventSeq: null,
      at: nextTime(),
      by: 'carol',
      command: 'cancel',
      reason: 'the plan has finished (APPLIED, COMPLETE)',
    });
    expect([first, second]).toEqual([2, 3]);
    // What a refused client reads before it signals: the newest number, refusals included.
    expect(await store.lastEventSeq(spec.planId)).toBe(3);
    expect((await store.lastStateEvent(spec.planId))?.seq).toBe(1);
    expect((await store.listEvents(spec.planId)).slice(2)).toEqual([
      expect.objectContaining({
        type: 'COMMAND_REFUSED',
        phase: 'APPLIED',
        state: 'COMPLETE',
        recordedBy: 'carol',
      }),
      expect.objectContaining({ message: 'cancel refused: the plan has finished (APPLIED, COMPLETE)' }),
    ]);
  });

  it('throws PlanNotFoundError for an unknown plan', async () => {
    expect(await store.lastEventSeq(ulid())).toBe(-1);
    await expect(
      store.recordRefusal({
        planId: ulid(),
        eventSeq: null,
        at: nextTime(),
        by: 'bob',
        command: 'advance',
        reason: 'x',
      }),
    ).rejects.toBeInstanceOf(PlanNotFoundError);
  });

  it('lets a state change numbered before a refusal that landed first still move the plan row', async () => {
    const spec = await createPlan();
    // The workflow numbered the gate's opening 1 and a refusal 2; the refusal's write finished first.
    await store.recordRefusal({
      planId: spec.planId,
      eventSeq: 2,
      at: nextTime(),
      by: 'mallory',
      command: 'approve',
      reason: 'mallory may not approve',
    });
    const gate = stateInput(spec.planId, 1, { event: 'AWAITING_APPROVAL', state: 'COMPLETE' });
    await store.recordPlanState(gate);
    expect(await store.getPlan(spec.planId)).toMatchObject({ state: 'COMPLETE', updatedAt: gate.at });
    expect((await store.lastStateEvent(spec.planId))?.type).toBe('AWAITING_APPROVAL');
  });
});

describe('seed 000 plan fields', () => {
  it('round-trips a fully populated spec exactly, normalised as the domain schema left it', async () => {
    const parent = await createPlan();
    const spec = makeSpec({
      name: 'Ship the parser',
      actionName: ' Local/Ship ',
      description: 'all the way',
      projects: [
        { projectName: 'org/parser', alias: ' Main ', readOnly: false },
        { projectName: 'org/docs', alias: 'docs', readOnly: true },
        { projectName: 'org/infra' },
      ],
      automationLevel: 'REVIEW_BEFORE_APPLY',
      arguments: { target: 'src', depth: 3, strict: false, note: null },
      argumentsOrder: ['target', 'depth', 'strict', 'note'],
      definitionOfDone: 'all tests pass',
      automationProfileName: 'org/careful',
      effectiveProfileSnapshot: {
        name: 'org/careful',
        automationLevel: 'REVIEW_BEFORE_APPLY',
        minDecisionConfidence: 0.9,
        maxAutoRetries: 1,
        approvalTimeoutSeconds: 3600,
      },
      // Not in precedence order: storage must keep the order they were given in.
      invariants: [
        { text: 'never touch prod', scope: 'PLAN', sourceName: null },
        {
          text: 'keep the API stable',
          scope: 'GLOBAL',
          id: '01KB0F5ZQ3S5G9X2N6W8Y4T7RA',
          rule: { protected_paths: ['api/**'], max_changed_files: 5 },
        },
        { text: 'tests stay green', scope: 'ACTION', sourceName: 'local/ship' },
        { text: 'docs build', scope: 'PROJECT', sourceName: 'org/docs' },
      ],
      actors: {
        strategyActor: 'openai/planner',
        executionActor: 'local/runner',
        estimationActor: 'local/estimator',
        invariantActor: 'local/checker',
      },
      tags: ['release', 'v2.1', 'team:core'],
      parentPlanId: parent.planId,
      rootPlanId: parent.planId,
      depth: 1,
      createdBy: 'carol',
    });
    await store.recordPlanCreated({ spec, eventSeq: 0 });

    expect(await store.getPlan(spec.planId)).toEqual({
      planId: spec.planId,
      workflowId: `plan-${spec.planId}`,
      name: 'Ship the parser',
      actionName: 'local/ship',
      description: 'all the way',
      projects: [
        { projectName: 'org/parser', alias: 'main', readOnly: false },
        { projectName: 'org/docs', alias: 'docs', readOnly: true },
        { projectName: 'org/infra', alias: null, readOnly: false },
      ],
      automationLevel: 'REVIEW_BEFORE_APPLY',
      arguments: { target: 'src', depth: 3, strict: false, note: null },
      argumentsOrder: ['target', 'depth', 'strict', 'note'],
      definitionOfDone: 'all tests pass',
      automationProfileName: 'org/careful',
      effectiveProfileSnapshot: {
        name: 'org/careful',
        automationLevel: 'REVIEW_BEFORE_APPLY',
        minDecisionConfidence: 0.9,
        maxAutoRetries: 1,
        approvalTimeoutSeconds: 3600,
      },
      invariants: [
        { text: 'never touch prod', scope: 'PLAN', sourceName: null, id: null, rule: null },
        {
          text: 'keep the API stable',
          scope: 'GLOBAL',
          sourceName: null,
          id: '01KB0F5ZQ3S5G9X2N6W8Y4T7RA',
          rule: { protected_paths: ['api/**'], max_changed_files: 5 },
        },
        { text: 'tests stay green', scope: 'ACTION', sourceName: 'local/ship', id: null, rule: null },
        { text: 'docs build', scope: 'PROJECT', sourceName: 'org/docs', id: null, rule: null },
      ],
      actors: {
        strategyActor: 'openai/planner',
        executionActor: 'local/runner',
        estimationActor: 'local/estimator',
        invariantActor: 'local/checker',
      },
      tags: ['release', 'v2.1', 'team:core'],
      phase: 'STRATEGIZE',
      state: 'QUEUED',
      changesetId: null,
      sandboxRefs: [],
      validationSummary: null,
      decisionRootId: null,
      error: null,
      gate: null,
      paused: null,
      parentPlanId: parent.planId,
      rootPlanId: parent.planId,
      depth: 1,
      childPlanIds: [],
      createdBy: 'carol',
      createdAt: spec.createdAt,
      updatedAt: spec.createdAt,
      applyStatistics: null,
    });

    // A retried write with the same fully populated spec (as Temporal delivers it, through JSON) is still the same plan.
    const before = await everything(spec.planId);
    await store.recordPlanCreated({ spec: JSON.parse(JSON.stringify(spec)) as PlanSpec, eventSeq: 0 });
    expect(await everything(spec.planId)).toEqual(before);
    await expect(
      store.recordPlanCreated({ spec: { ...spec, effectiveProfileSnapshot: null }, eventSeq: 0 }),
    ).rejects.toThrow(/different effectiveProfileSnapshot/);
  });

  it('derives childPlanIds from the children, oldest first, on get and list', async () => {
    const parent = await createPlan();
    const earlier = nextTime();
    const later = nextTime();
    const child = (createdAt: string) => ({
      parentPlanId: parent.planId,
      rootPlanId: parent.planId,
      depth: 1,
      createdAt,
    });
    // Created in the opposite order of their timestamps: the order is the plans' created time, not insertion.
    const second = await createPlan(child(later));
    const first = await createPlan(child(earlier));
    const grandchild = await createPlan({
      parentPlanId: first.planId,
      rootPlanId: parent.planId,
      depth: 2,
    });

    expect((await store.getPlan(parent.planId))?.childPlanIds).toEqual([first.planId, second.planId]);
    expect((await store.getPlan(first.planId))?.childPlanIds).toEqual([grandchild.planId]);
    expect((await store.getPlan(second.planId))?.childPlanIds).toEqual([]);
    const listed = await store.listPlans({ actionName: parent.actionName });
    expect(listed.find((p) => p.planId === parent.planId)?.childPlanIds).toEqual([
      first.planId,
      second.planId,
    ]);
    expect((await store.getPlan(grandchild.planId))?.depth).toBe(2);
  });

  it('refuses a child whose parent is not stored, and writes nothing', async () => {
    const missing = ulid();
    const spec = makeSpec({ parentPlanId: missing, rootPlanId: missing, depth: 1 });

    const err: unknown = await store.recordPlanCreated({ spec, eventSeq: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanNotFoundError);
    expect(err).toMatchObject({ planId: missing, message: `parent plan ${missing} not found` });
    expect(isTransientStorageError(err)).toBe(false);
    expect(await everything(spec.planId)).toEqual({ plan: null, events: [], decisions: [] });
  });
});

describe('reading', () => {
  let first: PlanSpec;
  let second: PlanSpec;
  let third: PlanSpec;
  const action = `local/listing-${Date.now()}`;

  beforeAll(async () => {
    first = await createPlan({
      actionName: action,
      projects: [{ projectName: 'org/alpha', alias: null, readOnly: true }],
    });
    second = await createPlan({
      actionName: action,
      projects: [
        { projectName: 'org/beta', alias: null, readOnly: false },
        { projectName: 'org/alpha', alias: 'a', readOnly: false },
      ],
    });
    third = await createPlan({
      actionName: action,
      projects: [{ projectName: 'org/gamma', alias: null, readOnly: false }],
    });
    await store.recordPlanState(stateInput(second.planId, 1, { phase: 'STRATEGIZE', state: 'COMPLETE' }));
    await store.recordPlanState(
      stateInput(third.planId, 1, { event: 'PLAN_CANCELLED', phase: 'STRATEGIZE', state: 'CANCELLED' }),
    );
  });

  const ids = (plans: { planId: string }[]) => plans.map((p) => p.planId);

  it('lists newest first', async () => {
    expect(ids(await store.listPlans({ actionName: action }))).toEqual([
      third.planId,
      second.planId,
      first.planId,
    ]);
    const all = await store.listPlans();
    expect(all.map((p) => p.createdAt)).toEqual([...all.map((p) => p.createdAt)].sort().reverse());
  });

  it('filters by state, phase, action, project and limit', async () => {
    expect(ids(await store.listPlans({ actionName: action, state: 'COMPLETE' }))).toEqual([second.planId]);
    expect(ids(await store.listPlans({ actionName: action, state: 'QUEUED', phase: 'STRATEGIZE' }))).toEqual([
      first.planId,
    ]);
    expect(await store.listPlans({ actionName: action, phase: 'EXECUTE' })).toEqual([]);
    expect(ids(await store.listPlans({ projectName: 'org/alpha' }))).toEqual([second.planId, first.planId]);
    expect(ids(await store.listPlans({ projectName: ' ORG/Gamma ' }))).toEqual([third.planId]);
    expect(await store.listPlans({ projectName: 'org/nowhere' })).toEqual([]);
    expect(await store.listPlans({ projectName: 'not a project name' })).toEqual([]);
    expect(ids(await store.listPlans({ actionName: action, limit: 2 }))).toEqual([
      third.planId,
      second.planId,
    ]);
    expect(ids(await store.listPlans({ projectName: 'org/alpha', state: 'QUEUED', limit: 5 }))).toEqual([
      first.planId,
    ]);
    expect(await store.listPlans({ limit: 0 })).toEqual([]);
    await expect(store.listPlans({ limit: -1 })).rejects.toThrow(RangeError);
  });

  it('returns null and empty lists for an unknown plan', async () => {
    const planId = ulid();
    expect(await store.getPlan(planId)).toBeNull();
    expect(await store.listEvents(planId)).toEqual([]);
    expect(await store.listDecisions(planId)).toEqual([]);
  });
});

describe('findPlanRefs (ADR 0020)', () => {
  /** Ten characters no other test's ULID starts with (the 7 is a timestamp thousands of years away). */
  const base = `7${ulid().slice(-9)}`;
  const low = `${base}${'0'.repeat(16)}`;
  const mid = `${base}${'M'.repeat(16)}`;
  const high = `${base}${'Z'.repeat(16)}`;
  /** Just past the prefix's range on either side. */
  const after = `${base.slice(0, 9)}${base[9] === 'Z' ? 'Y' : 'Z'}${'0'.repeat(16)}`;
  const name = `refs ${base} 100%_sure`;

  beforeAll(async () => {
    await createPlan({ planId: low, name });
    await createPlan({ planId: mid, name });
    await createPlan({ planId: high, name: `${base}` });
    await createPlan({ planId: after, name: `refs ${base} 100%` });
  });

  const ids = (found: { planId: string }[]) => found.map((f) => f.planId).sort();

  it('finds a plan by its whole id, with what a person needs to tell plans apart', async () => {
    expect(await store.findPlanRefs({ id: mid, limit: 5 })).toEqual([
      { planId: mid, name, phase: 'STRATEGIZE', state: 'QUEUED', createdAt: expect.any(String) },
    ]);
    expect(await store.findPlanRefs({ id: ulid(), limit: 5 })).toEqual([]);
  });

  it('finds the plans whose id starts with a prefix: both ends of its range, nothing past them', async () => {
    const inRange = [low, mid, high].sort();
    expect(ids(await store.findPlanRefs({ idPrefix: base, limit: 5 }))).toEqual(inRange);
    if (base[9] !== 'Z')
      expect(ids(await store.findPlanRefs({ idPrefix: base, limit: 5 }))).not.toContain(after);
    expect(ids(await store.findPlanRefs({ idPrefix: `${base}M`, limit: 5 }))).toEqual([mid]);
    expect(ids(await store.findPlanRefs({ idPrefix: high, limit: 5 }))).toEqual([high]);
    expect(await store.findPlanRefs({ idPrefix: `${base}1`, limit: 5 })).toEqual([]);
    expect(await store.findPlanRefs({ idPrefix: base, limit: 2 })).toHaveLength(2);
  });

  it('compares names exactly: no wildcard, case or prefix matching', async () => {
    expect(ids(await store.findPlanRefs({ name, limit: 5 }))).toEqual([low, mid].sort());
    expect(ids(await store.findPlanRefs({ name: `refs ${base} 100%`, limit: 5 }))).toEqual([after]);
    expect(await store.findPlanRefs({ name: `refs ${base} 100__sure`, limit: 5 })).toEqual([]);
    expect(await store.findPlanRefs({ name: `refs ${base}%`, limit: 5 })).toEqual([]);
    expect(await store.findPlanRefs({ name: name.toUpperCase(), limit: 5 })).toEqual([]);
    expect(await store.findPlanRefs({ name: "x' OR '1'='1", limit: 5 })).toEqual([]);
  });

  it('answers every part at once, each plan once', async () => {
    const found = await store.findPlanRefs({ id: high, idPrefix: base, name: base, limit: 5 });
    expect(ids(found)).toEqual([low, mid, high].sort());
  });

  it('refuses a prefix outside the id alphabet (it could widen the range) and a limit that is not positive', async () => {
    for (const idPrefix of ['7%', base.toLowerCase(), `${base}_`, '', `${high}0`]) {
      await expect(store.findPlanRefs({ idPrefix, limit: 5 })).rejects.toThrow(RangeError);
    }
    await expect(store.findPlanRefs({ name, limit: 0 })).rejects.toThrow(RangeError);
  });

  (TEST_BACKEND === 'sqlite' ? it : it.skip)('reads an index, not the whole table, for both', async () => {
    const plan = (sql: string) =>
      prisma.$queryRawUnsafe<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${sql}`, base, high);
    const byPrefix = await plan('SELECT plan_id FROM plans WHERE plan_id >= ? AND plan_id <= ?');
    expect(byPrefix.map((r) => r.detail).join('\n')).toMatch(/USING (COVERING |PRIMARY KEY )?INDEX/);
    const byName = await prisma.$queryRawUnsafe<{ detail: string }[]>(
      'EXPLAIN QUERY PLAN SELECT plan_id FROM plans WHERE name = ?',
      name,
    );
    expect(byName.map((r) => r.detail).join('\n')).toMatch(/plans_name_idx/);
  });
});

// Its PostgreSQL twin is test/postgresql/connection.test.ts.
(TEST_BACKEND === 'sqlite' ? describe : describe.skip)('the SQLite connection', () => {
  it('runs in WAL mode with foreign keys and a busy timeout', async () => {
    const pragma = async (name: string) => {
      const rows = await prisma.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`);
      return Object.values(rows[0] ?? {})[0];
    };
    expect(await pragma('journal_mode')).toBe('wal');
    expect(Number(await pragma('foreign_keys'))).toBe(1);
    expect(Number(await pragma('busy_timeout'))).toBe(5000);
  });

  it('shares one client per database file within a process', async () => {
    const relative = path.relative(path.resolve(__dirname, '..', '..'), path.join(dir, 'agents.db'));
    const client = sharedPrismaClient(databaseUrl);
    try {
      expect(sharedPrismaClient(`file:${relative}`)).toBe(client);
      expect(await client.plan.count()).toBeGreaterThan(0);
    } finally {
      await disconnectSharedPrismaClients();
    }
    expect(sharedPrismaClient(databaseUrl)).not.toBe(client);
    await disconnectSharedPrismaClients();
  });

  it('takes the write lock with the first statement of a recording, fresh or retried', async () => {
    // A transaction that reads before another process commits and writes afterwards gets SQLITE_BUSY_SNAPSHOT at
    // once, whatever the busy timeout (storage/lock.ts). So right after a recording's first statement, another
    // connection must already be unable to write.
    const spec = await createPlan();
    const other = new Database(path.join(dir, 'agents.db'), { timeout: 0 });
    const probes: string[] = [];
    const probe = () => {
      try {
        other.prepare('UPDATE plans SET name = name WHERE plan_id = ?').run(spec.planId);
        probes.push('other connection wrote');
      } catch (err) {
        probes.push((err as { code?: string }).code ?? String(err));
      }
    };
    try {
      const probing = createPlanStore(probeAfterFirstStatement(prisma, probe));
      const input = stateInput(spec.planId, 1, { decisions: [decision(0, 'prompt_definition', null)] });
      const first = await probing.recordPlanState(input);
      expect(await probing.recordPlanState(input)).toEqual(first);
      await probing.recordPlanState(
        stateInput(spec.planId, 2, { decisions: [decision(1, 'strategy_choice', 0)] }),
      );
      expect(probes).toEqual(['SQLITE_BUSY', 'SQLITE_BUSY', 'SQLITE_BUSY']);
    } finally {
      other.close();
    }
  });

  it('reports a write blocked by another process as transient, and the retry succeeds', async () => {
    const spec = await createPlan();
    const impatient = createPrismaClient(databaseUrl, { busyTimeoutMs: 50 });
    const other = new Database(path.join(dir, 'agents.db'));
    try {
      other.exec('BEGIN IMMEDIATE');
      const input = stateInput(spec.planId, 1, { decisions: [decision(0, 'prompt_definition', null)] });
      const err: unknown = await createPlanStore(impatient)
        .recordPlanState(input)
        .catch((e: unknown) => e);
      // SQLITE_BUSY after the busy timeout, as Prisma reports it (P2010 with the driver's code in meta).
      expect(err).toMatchObject({ meta: { driverAdapterError: { cause: { originalCode: 'SQLITE_BUSY' } } } });
      expect(isTransientStorageError(err)).toBe(true);
      other.exec('ROLLBACK');

      const { decisionIds } = await createPlanStore(impatient).recordPlanState(input);
      expect(Object.keys(decisionIds)).toEqual(['0']);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await impatient.$disconnect();
    }
  });
});

/**
 * The client, but each interactive transaction runs `probe` once, right after its first statement has answered
 * (between two statements the transaction is suspended, so another connection can act then).
 */
function probeAfterFirstStatement(client: PrismaClient, probe: () => void): PrismaClient {
  const afterFirst = (tx: object): object => {
    let probed = false;
    const wrap = (target: object, depth: number): object =>
      new Proxy(target, {
        get(obj, prop, receiver) {
          const value: unknown = Reflect.get(obj, prop, receiver);
          if (typeof value === 'function') {
            return async (...args: unknown[]) => {
              const result: unknown = await (value as (...a: unknown[]) => unknown).apply(obj, args);
              if (!probed) {
                probed = true;
                probe();
              }
              return result;
            };
          }
          // Model delegates (tx.plan, tx.decision, ...) are one level down.
          return depth === 0 && typeof value === 'object' && value !== null ? wrap(value, 1) : value;
        },
      });
    return wrap(tx, 0);
  };
  return new Proxy(client, {
    get(obj, prop, receiver) {
      if (prop !== '$transaction') return Reflect.get(obj, prop, receiver) as unknown;
      return (fn: (tx: object) => Promise<unknown>, options?: unknown) =>
        obj.$transaction((tx) => fn(afterFirst(tx)), options as never);
    },
  });
}

describe("Apply's statistics (seed 001's PlanResult)", () => {
  it('are null until Apply records them, then read back by a new client, untouched by other execution writes', async () => {
    const spec = await createPlan();
    expect((await store.getPlan(spec.planId))?.applyStatistics).toBeNull();
    const statistics = { filesCreated: 3, filesModified: 0, filesDeleted: 1, filesMoved: 2 };
    await store.recordExecution(spec.planId, { validationSummary: 'applied', applyStatistics: statistics });
    // A retried Apply writes the same again.
    await store.recordExecution(spec.planId, { validationSummary: 'applied', applyStatistics: statistics });
    await store.recordExecution(spec.planId, { sandboxRefs: [] });
    const restarted = createPrismaClient(databaseUrl);
    try {
      const reread = await createPlanStore(restarted).getPlan(spec.planId);
      expect(reread).toMatchObject({ validationSummary: 'applied', applyStatistics: statistics });
      expect(
        (await createPlanStore(restarted).listPlans()).find((p) => p.planId === spec.planId),
      ).toMatchObject({
        applyStatistics: statistics,
      });
    } finally {
      await restarted.$disconnect();
    }
  });

  it('refuses to read a row holding only some of them, instead of inventing the rest', async () => {
    const spec = await createPlan();
    await prisma.plan.update({ where: { id: spec.planId }, data: { filesCreated: 1 } });
    await expect(store.getPlan(spec.planId)).rejects.toThrow(/Apply statistics are incomplete or invalid/);
    await prisma.plan.delete({ where: { id: spec.planId } });
  });
});
