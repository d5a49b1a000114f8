/**
 * The decision tree in storage (seed 004) against a real SQLite file, migrated the way `npm start` migrates it:
 * the write rules, content-addressed contexts, the tree reads, corrections, and replays.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import type { DecisionWrite, RecordPlanStateInput } from '../../activities/contracts';
import type { DecisionDraft, DecisionType } from '../../domain/decision';
import { canonicalJson } from '../../domain/decision-context';
import { depthFirst } from '../../domain/decision-tree';
import { planSpecSchema } from '../../domain/schemas';
import { createDecisionStore } from '../../storage/decisions';
import {
  DecisionNotFoundError,
  DecisionRuleError,
  DecisionSupersededError,
  isTransientStorageError,
  PlanConflictError,
  PlanNotFoundError,
} from '../../storage/errors';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import type { CorrectDecisionInput, DecisionStore, PlanStore } from '../../storage/types';
import { createTestDatabase } from '../helpers/database';

let dir: string;
let prisma: PrismaClient;
let plans: PlanStore;
let decisions: DecisionStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'decisions-store-'));
  const databaseUrl = await createTestDatabase(dir);
  prisma = createPrismaClient(databaseUrl);
  plans = createPlanStore(prisma);
  decisions = createDecisionStore(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

let clock = Date.parse('2026-03-01T00:00:00.000Z');
function nextTime(): string {
  clock += 1000;
  return new Date(clock).toISOString();
}

async function createPlan(): Promise<string> {
  const spec = planSpecSchema.parse({
    planId: ulid(),
    name: 'Decide things',
    actionName: 'local/code-review',
    projects: [{ projectName: 'local/parser' }],
    automationLevel: 'MANUAL',
    createdBy: 'alice',
    createdAt: nextTime(),
  });
  await plans.recordPlanCreated({ spec, eventSeq: 0 });
  return spec.planId;
}

function decision(
  seq: number,
  type: DecisionType,
  parentSeq: number | null,
  extra: Partial<DecisionDraft> = {},
): DecisionWrite {
  return {
    seq,
    draft: {
      type,
      question: `question ${seq}`,
      chosenOption: `option ${seq}`,
      alternatives: [`alternative ${seq}`],
      confidence: 0.5,
      rationale: `because ${seq}`,
      parentSeq,
      phase: 'STRATEGIZE',
      actor: 'workflow',
      ...extra,
    },
  };
}

let eventSeqs = new Map<string, number>();
/** A recordPlanState input with the plan's next event number. */
function stateInput(planId: string, writes: DecisionWrite[]): RecordPlanStateInput {
  const eventSeq = (eventSeqs.get(planId) ?? 0) + 1;
  eventSeqs.set(planId, eventSeq);
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
    decisions: writes,
  };
}
beforeEach(() => {
  eventSeqs = new Map();
});

async function write(planId: string, writes: DecisionWrite[]): Promise<Record<number, string>> {
  return (await plans.recordPlanState(stateInput(planId, writes))).decisionIds;
}

/** Everything a decision write can touch, to show that a refused write left no trace. */
async function everything(planId: string) {
  return {
    plan: await plans.getPlan(planId),
    events: await plans.listEvents(planId),
    decisions: await plans.listDecisions(planId),
    contexts: await prisma.decisionContext.findMany({ orderBy: { hash: 'asc' } }),
  };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('the seed 004 fields', () => {
  it('stores every field of a decision and reads it back', async () => {
    const planId = await createPlan();
    const childPlan = ulid();
    const context = { window: [{ role: 'user', text: 'review src/' }], tokens: 812 };
    const input = stateInput(planId, [
      decision(0, 'prompt_definition', null, { confidence: null, alternatives: [] }),
      decision(1, 'subplan_spawn', 0, {
        confidence: 0.9,
        context: {
          content: context,
          relevantResources: [
            { kind: 'file', uri: 'src/parser.ts', description: 'the parser' },
            { kind: 'project', uri: 'local/parser' },
          ],
          actorStateRef: 'langgraph://thread/7/checkpoint/3',
        },
        actorReasoning: 'The parser is large; split the review.',
        downstreamPlanIds: [childPlan],
        artifactsProduced: [{ kind: 'report', uri: 'reports/1.md' }],
        model: { modelName: 'gpt-test-2026', promptTokens: 1234, completionTokens: 56 },
      }),
    ]);
    const { decisionIds } = await plans.recordPlanState(input);

    const hash = sha256(canonicalJson(context));
    const spawned = await decisions.getDecision(decisionIds[1] as string);
    expect(spawned).toEqual({
      decisionId: decisionIds[1],
      planId,
      seq: 1,
      parentDecisionId: decisionIds[0],
      type: 'subplan_spawn',
      phase: 'STRATEGIZE',
      question: 'question 1',
      chosenOption: 'option 1',
      alternatives: ['alternative 1'],
      confidence: 0.9,
      hotContextHash: hash,
      hotContextRef: `sha256:${hash}`,
      relevantResources: [
        { kind: 'file', uri: 'src/parser.ts', description: 'the parser' },
        { kind: 'project', uri: 'local/parser' },
      ],
      actorStateRef: 'langgraph://thread/7/checkpoint/3',
      rationale: 'because 1',
      actorReasoning: 'The parser is large; split the review.',
      downstreamDecisionIds: [],
      downstreamPlanIds: [childPlan],
      artifactsProduced: [{ kind: 'report', uri: 'reports/1.md' }],
      isCorrection: false,
      correctsDecisionId: null,
      correctionReason: null,
      supersededBy: null,
      modelName: 'gpt-test-2026',
      promptTokens: 1234,
      completionTokens: 56,
      actor: 'workflow',
      createdAt: input.at,
    });
    // A decision no model made has none.
    expect(await decisions.getDecision(decisionIds[0] as string)).toMatchObject({
      modelName: null,
      promptTokens: null,
      completionTokens: null,
    });

    // The root lists its child; the full context comes back from the reference, byte for byte what was hashed.
    expect((await decisions.getDecision(decisionIds[0] as string)).downstreamDecisionIds).toEqual([
      decisionIds[1],
    ]);
    const stored = await decisions.getContext(spawned.hotContextRef as string);
    expect(stored).toBe('{"tokens":812,"window":[{"role":"user","text":"review src/"}]}');
    expect(sha256(stored as string)).toBe(hash);
    expect(JSON.parse(stored as string)).toEqual(context);
    expect(await prisma.decisionContext.findUnique({ where: { hash } })).toMatchObject({
      size: Buffer.byteLength(stored as string),
      createdAt: new Date(input.at),
    });
  });

  it('keeps the downstream lists in sequence order across batches', async () => {
    const planId = await createPlan();
    const first = await write(planId, [
      decision(0, 'prompt_definition', null),
      decision(1, 'strategy_choice', 0),
    ]);
    const second = await write(planId, [
      decision(2, 'strategy_choice', 0),
      decision(3, 'implementation_choice', 1),
      decision(4, 'tool_invocation', 1),
    ]);
    const third = await write(planId, [decision(5, 'invariant_enforced', 0)]);
    const all = await decisions.listDecisions(planId);
    expect(all.map((d) => d.downstreamDecisionIds)).toEqual([
      [first[1], second[2], third[5]],
      [second[3], second[4]],
      [],
      [],
      [],
      [],
    ]);
  });
});

describe('context storage', () => {
  it('stores a context once however many decisions, batches and plans share it', async () => {
    const a = { files: ['a.ts', 'b.ts'], prompt: 'review', settings: { strict: true, depth: 2 } };
    // The same value with its keys built in another order: same canonical JSON, same hash.
    const sameAsA = { settings: { depth: 2, strict: true }, prompt: 'review', files: ['a.ts', 'b.ts'] };
    const b = { ...a, prompt: 'something else' };
    const before = await prisma.decisionContext.count();

    const planId = await createPlan();
    const ids = await write(planId, [
      decision(0, 'prompt_definition', null, { context: { content: a } }),
      decision(1, 'strategy_choice', 0, { context: { content: sameAsA } }),
      decision(2, 'strategy_choice', 0, { context: { content: b } }),
    ]);
    await write(planId, [decision(3, 'implementation_choice', 1, { context: { content: a } })]);
    const otherPlan = await createPlan();
    await write(otherPlan, [decision(0, 'prompt_definition', null, { context: { content: sameAsA } })]);

    expect(await prisma.decisionContext.count()).toBe(before + 2);
    const stored = await decisions.listDecisions(planId);
    expect(new Set(stored.map((d) => d.hotContextRef)).size).toBe(2);
    expect(stored[0]?.hotContextHash).toBe(stored[1]?.hotContextHash);
    expect(stored[0]?.hotContextHash).toBe(stored[3]?.hotContextHash);
    expect((await decisions.listDecisions(otherPlan))[0]?.hotContextRef).toBe(stored[0]?.hotContextRef);
    // The blob keeps the time of the first decision that brought it.
    const blob = await prisma.decisionContext.findUnique({
      where: { hash: stored[0]?.hotContextHash as string },
    });
    expect(blob?.createdAt.toISOString()).toBe(stored[0]?.createdAt);
    // The write answers the id each of its decisions was stored under, by sequence number (the later write's
    // decision 3 is not among them).
    expect(stored.map((d) => d.seq)).toEqual([0, 1, 2, 3]);
    expect(ids).toEqual({ 0: stored[0]?.decisionId, 1: stored[1]?.decisionId, 2: stored[2]?.decisionId });
  });

  it('leaves decisions without a context at none', async () => {
    const planId = await createPlan();
    await write(planId, [decision(0, 'prompt_definition', null)]);
    expect((await decisions.listDecisions(planId))[0]).toMatchObject({
      hotContextHash: null,
      hotContextRef: null,
      relevantResources: [],
      actorStateRef: null,
    });
  });

  it('answers null for an unknown or malformed reference', async () => {
    expect(await decisions.getContext(`sha256:${'0'.repeat(64)}`)).toBeNull();
    expect(await decisions.getContext('not a ref')).toBeNull();
  });
});

describe('write rules', () => {
  /** A plan with a root (0) and a strategy choice (1), and its stored state. */
  async function planWithRoot() {
    const planId = await createPlan();
    await write(planId, [decision(0, 'prompt_definition', null), decision(1, 'strategy_choice', 0)]);
    return { planId, before: await everything(planId) };
  }

  async function refused(planId: string, writes: DecisionWrite[]): Promise<DecisionRuleError> {
    const viaPlans: unknown = await plans
      .recordPlanState(stateInput(planId, writes))
      .catch((e: unknown) => e);
    const viaRecord: unknown = await decisions
      .record({ planId, at: nextTime(), decisions: writes })
      .catch((e: unknown) => e);
    expect(viaPlans).toBeInstanceOf(DecisionRuleError);
    expect(viaRecord).toBeInstanceOf(DecisionRuleError);
    expect(isTransientStorageError(viaRecord)).toBe(false);
    return viaRecord as DecisionRuleError;
  }

  it('refuses a second root, with its context, and writes nothing', async () => {
    const { planId, before } = await planWithRoot();
    const err = await refused(planId, [
      decision(2, 'strategy_choice', 0, { context: { content: { brand: 'new context' } } }),
      decision(3, 'prompt_definition', null, { context: { content: { another: 'one' } } }),
    ]);
    expect(err.message).toMatch(/exactly one/);
    expect(err).toMatchObject({ planId, seq: 3 });
    expect(await everything(planId)).toEqual(before);
  });

  it('refuses a parent from another plan and writes nothing', async () => {
    const other = await planWithRoot();
    await write(other.planId, [decision(2, 'strategy_choice', 0), decision(3, 'tool_invocation', 2)]);
    const { planId, before } = await planWithRoot();
    // Seq 3 exists only in the other plan: parents are looked up in this plan only.
    const err = await refused(planId, [decision(4, 'implementation_choice', 3)]);
    expect(err.message).toMatch(/parent 3 not found in plan/);
    expect(await everything(planId)).toEqual(before);
  });

  it('refuses a confidence of 1.5 and writes nothing', async () => {
    const { planId, before } = await planWithRoot();
    const err = await refused(planId, [
      decision(2, 'strategy_choice', 0, { context: { content: { only: 'here' } } }),
      decision(3, 'strategy_choice', 0, { confidence: 1.5 }),
    ]);
    expect(err.message).toMatch(/decision 3: confidence must be between 0.0 and 1.0, got 1.5/);
    expect(await everything(planId)).toEqual(before);
  });

  it('refuses a root with a parent, a non-root without one, and malformed seed 004 fields', async () => {
    const { planId, before } = await planWithRoot();
    await refused(planId, [decision(2, 'strategy_choice', null)]);
    await refused(planId, [decision(2, 'prompt_definition', 0)]);
    await refused(planId, [decision(2, 'strategy_choice', 0, { context: { content: { n: 10n } } })]);
    await refused(planId, [decision(2, 'strategy_choice', 0, { downstreamPlanIds: ['not-a-plan-id'] })]);
    await refused(planId, [
      decision(2, 'strategy_choice', 0, {
        artifactsProduced: [{ kind: 'file' } as { kind: string; uri: string }],
      }),
    ]);
    await refused(planId, [decision(2, 'bogus' as DecisionType, 0)]);
    await refused(planId, [
      decision(2, 'strategy_choice', 0, { model: { modelName: 'm', promptTokens: -1, completionTokens: 2 } }),
    ]);
    await refused(planId, [
      decision(2, 'strategy_choice', 0, {
        model: { modelName: ' ', promptTokens: null, completionTokens: null },
      }),
    ]);
    expect(await everything(planId)).toEqual(before);
  });

  it('refuses a reused sequence number through record as well', async () => {
    const { planId, before } = await planWithRoot();
    const err = await refused(planId, [decision(1, 'implementation_choice', 0)]);
    expect(err.message).toMatch(/already used|never reused/);
    expect(await everything(planId)).toEqual(before);
  });
});

describe('replays', () => {
  it('writing the same batches again (a retried write) gives the same ids and sequence numbers exactly 0..N-1', async () => {
    const planId = await createPlan();
    const batches = [
      [decision(0, 'prompt_definition', null, { context: { content: { p: 1 } } })],
      [decision(1, 'strategy_choice', 0), decision(2, 'invariant_enforced', 0)],
      [decision(3, 'implementation_choice', 1, { phase: 'EXECUTE', context: { content: { p: 2 } } })],
      [decision(4, 'resource_selection', 3), decision(5, 'tool_invocation', 3)],
    ];
    const firstIds: Record<number, string>[] = [];
    for (const [i, batch] of batches.entries()) {
      // Odd batches through the decision service, even ones with a plan event, as the workflow's activities do.
      if (i % 2 === 0) {
        const input = stateInput(planId, batch);
        const first = await plans.recordPlanState(input);
        expect(await plans.recordPlanState(input)).toEqual(first);
        expect(
          await plans.recordPlanState(JSON.parse(JSON.stringify(input)) as RecordPlanStateInput),
        ).toEqual(first);
        firstIds.push(first.decisionIds);
      } else {
        const input = { planId, at: nextTime(), decisions: batch };
        const first = await decisions.record(input);
        const before = await everything(planId);
        expect(await decisions.record(input)).toEqual(first);
        expect(await decisions.record(JSON.parse(JSON.stringify(input)) as typeof input)).toEqual(first);
        expect(await everything(planId)).toEqual(before);
        firstIds.push(first.decisionIds);
      }
    }
    const stored = await decisions.listDecisions(planId);
    expect(stored.map((d) => d.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(Object.assign({}, ...firstIds)).toEqual(
      Object.fromEntries(stored.map((d) => [d.seq, d.decisionId])),
    );
    expect(stored[3]?.downstreamDecisionIds).toEqual([stored[4]?.decisionId, stored[5]?.decisionId]);
  });

  it('refuses a retried record whose decisions differ', async () => {
    const planId = await createPlan();
    const at = nextTime();
    await decisions.record({ planId, at, decisions: [decision(0, 'prompt_definition', null)] });
    const root = await decisions.listDecisions(planId);
    await expect(
      decisions.record({
        planId,
        at,
        decisions: [decision(0, 'prompt_definition', null, { chosenOption: 'something else' })],
      }),
    ).rejects.toThrow(/already used in plan .* by a different decision/);
    // A batch that is partly stored was not written by this call: refused too, naming the used numbers.
    await expect(
      decisions.record({
        planId,
        at,
        decisions: [decision(0, 'prompt_definition', null), decision(1, 'strategy_choice', 0)],
      }),
    ).rejects.toThrow(/sequence number\(s\) 0 already used/);
    expect(await decisions.listDecisions(planId)).toEqual(root);
    // record() set the plan's root like recordPlanState does.
    expect((await plans.getPlan(planId))?.decisionRootId).toBe(root[0]?.decisionId);
  });
});

/**
 *            0 prompt
 *     ┌──────┼────────┐
 *     1      2        6
 *   ┌─┴─┐    │
 *   3   4    5
 *   │
 *   7
 *   │
 *   8
 */
async function sampleTree() {
  const planId = await createPlan();
  const ids = {
    ...(await write(planId, [
      decision(0, 'prompt_definition', null),
      decision(1, 'strategy_choice', 0),
      decision(2, 'strategy_choice', 0),
      decision(3, 'implementation_choice', 1),
    ])),
    ...(await write(planId, [
      decision(4, 'implementation_choice', 1),
      decision(5, 'subplan_spawn', 2),
      decision(6, 'invariant_enforced', 0),
      decision(7, 'resource_selection', 3),
      decision(8, 'tool_invocation', 7),
    ])),
  };
  const seqOf = new Map(Object.entries(ids).map(([seq, id]) => [id, Number(seq)]));
  return { planId, ids, seqOf };
}

describe('getTree', () => {
  it('is breadth-first from the root, level by level, siblings by sequence number', async () => {
    const { planId, seqOf } = await sampleTree();
    const tree = await decisions.getTree(planId);
    expect(tree.nodes.map((n) => [n.decision.seq, n.depth])).toEqual([
      [0, 0],
      [1, 1],
      [2, 1],
      [6, 1],
      [3, 2],
      [4, 2],
      [5, 2],
      [7, 3],
      [8, 4],
    ]);
    expect(tree.nodes[0]?.childIds.map((id) => seqOf.get(id))).toEqual([1, 2, 6]);
    expect(depthFirst(tree).map((n) => n.decision.seq)).toEqual([0, 1, 3, 7, 8, 4, 2, 5, 6]);
    expect(tree).toMatchObject({ hiddenByDepth: 0, hiddenSuperseded: 0 });
  });

  it('limits the depth', async () => {
    const { planId } = await sampleTree();
    const tree = await decisions.getTree(planId, { depth: 2 });
    expect(tree.nodes.map((n) => n.decision.seq)).toEqual([0, 1, 2, 6, 3, 4, 5]);
    expect(tree.hiddenByDepth).toBe(2);
    expect((await decisions.getTree(planId, { depth: 1 })).nodes.map((n) => n.decision.seq)).toEqual([
      0, 1, 2, 6,
    ]);
    await expect(decisions.getTree(planId, { depth: -1 })).rejects.toThrow(RangeError);
  });

  it('is empty for a plan without decisions and throws PlanNotFoundError for an unknown plan', async () => {
    const planId = await createPlan();
    expect((await decisions.getTree(planId)).nodes).toEqual([]);
    expect(await decisions.listDecisions(planId)).toEqual([]);
    const unknown = ulid();
    await expect(decisions.getTree(unknown)).rejects.toThrow(PlanNotFoundError);
    await expect(decisions.listDecisions(unknown)).rejects.toMatchObject({
      name: 'PlanNotFoundError',
      planId: unknown,
    });
  });
});

describe('getPathToRoot and getDecision', () => {
  it('walks from a decision up to the root', async () => {
    const { ids } = await sampleTree();
    const walk = await decisions.getPathToRoot(ids[8] as string);
    expect(walk.map((d) => d.seq)).toEqual([8, 7, 3, 1, 0]);
    expect(walk[0]).toEqual(await decisions.getDecision(ids[8] as string));
    expect((await decisions.getPathToRoot(ids[0] as string)).map((d) => d.seq)).toEqual([0]);
  });

  it('throws DecisionNotFoundError for an unknown decision', async () => {
    const unknown = ulid();
    const err: unknown = await decisions.getPathToRoot(unknown).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecisionNotFoundError);
    expect(err).toMatchObject({ name: 'DecisionNotFoundError', decisionId: unknown });
    expect(isTransientStorageError(err)).toBe(false);
    await expect(decisions.getDecision(unknown)).rejects.toThrow(DecisionNotFoundError);
  });
});

describe('correct', () => {
  function correction(planId: string, decisionId: string, patch: Partial<CorrectDecisionInput> = {}) {
    return {
      planId,
      decisionId,
      interventionSeq: 9,
      correctionSeq: 10,
      by: 'bob',
      chosenOption: 'the better option',
      reason: 'the first choice ignored the invariant',
      at: nextTime(),
      ...patch,
    } satisfies CorrectDecisionInput;
  }

  it('writes the intervention and the correction under the original parent and supersedes the original', async () => {
    const { planId, ids } = await sampleTree();
    const original = await decisions.getDecision(ids[3] as string);
    const input = correction(planId, original.decisionId);
    const result = await decisions.correct(input);

    expect(result.intervention).toMatchObject({
      seq: 9,
      type: 'user_intervention',
      parentDecisionId: ids[1],
      actor: 'bob',
      rationale: 'the first choice ignored the invariant',
      chosenOption: 'Replace "option 3" with "the better option"',
      phase: 'STRATEGIZE',
      isCorrection: false,
      createdAt: input.at,
    });
    expect(result.correction).toMatchObject({
      seq: 10,
      type: 'implementation_choice',
      question: original.question,
      chosenOption: 'the better option',
      alternatives: ['option 3', 'alternative 3'],
      confidence: null,
      parentDecisionId: ids[1],
      isCorrection: true,
      correctsDecisionId: original.decisionId,
      correctionReason: 'the first choice ignored the invariant',
      supersededBy: null,
      hotContextHash: original.hotContextHash,
      actor: 'bob',
    });
    expect(result.original).toEqual({ ...original, supersededBy: result.correction.decisionId });
    expect(await decisions.getDecision(original.decisionId)).toEqual(result.original);
    expect((await decisions.getDecision(ids[1] as string)).downstreamDecisionIds).toEqual([
      ids[3],
      ids[4],
      result.intervention.decisionId,
      result.correction.decisionId,
    ]);

    // The current tree: 3 and everything under it (7, 8) are gone; the correction stands in 3's place.
    const current = await decisions.getTree(planId);
    expect(current.nodes.map((n) => n.decision.seq)).toEqual([0, 1, 2, 6, 4, 9, 10, 5]);
    expect(current.hiddenSuperseded).toBe(3);
    const full = await decisions.getTree(planId, { showSuperseded: true });
    expect(full.nodes.map((n) => [n.decision.seq, n.superseded, n.current])).toEqual([
      [0, false, true],
      [1, false, true],
      [2, false, true],
      [6, false, true],
      [3, true, false],
      [4, false, true],
      [9, false, true],
      [10, false, true],
      [5, false, true],
      [7, false, false],
      [8, false, false],
    ]);
    expect((await decisions.listDecisions(planId)).map((d) => d.seq)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);

    // A retried activity writes nothing new and answers the same.
    const before = await everything(planId);
    expect(await decisions.correct(input)).toEqual(result);
    expect(await everything(planId)).toEqual(before);
  });

  it('keeps the original context with the correction, and a correction can itself be corrected', async () => {
    const planId = await createPlan();
    const ids = await write(planId, [
      decision(0, 'prompt_definition', null),
      decision(1, 'strategy_choice', 0, {
        context: { content: { seen: 'all of it' }, relevantResources: [{ kind: 'file', uri: 'a.ts' }] },
      }),
    ]);
    const first = await decisions.correct(
      correction(planId, ids[1] as string, { interventionSeq: 2, correctionSeq: 3, chosenOption: 'B' }),
    );
    expect(first.correction).toMatchObject({
      hotContextRef: first.original.hotContextRef,
      relevantResources: [{ kind: 'file', uri: 'a.ts' }],
      actorStateRef: null,
    });
    const second = await decisions.correct(
      correction(planId, first.correction.decisionId, {
        interventionSeq: 4,
        correctionSeq: 5,
        chosenOption: 'C',
      }),
    );
    expect(second.correction).toMatchObject({
      correctsDecisionId: first.correction.decisionId,
      chosenOption: 'C',
    });
    expect(second.correction.alternatives).toEqual(['B', 'option 1', 'alternative 1']);
    const current = await decisions.getTree(planId);
    expect(current.nodes.map((n) => n.decision.seq)).toEqual([0, 2, 4, 5]);
  });

  it('appends a plan event in the same transaction when asked', async () => {
    const { planId, ids } = await sampleTree();
    const input = correction(planId, ids[5] as string, {
      event: { seq: 3, type: 'PHASE_RETRIED', message: 'corrected decision 5' },
    });
    await decisions.correct(input);
    await decisions.correct(input);
    const events = await plans.listEvents(planId);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(events[3]).toEqual({
      planId,
      seq: 3,
      type: 'PHASE_RETRIED',
      phase: 'STRATEGIZE',
      state: 'PROCESSING',
      recordedBy: 'bob',
      message: 'corrected decision 5',
      at: input.at,
    });
    expect((await plans.getPlan(planId))?.updatedAt).toBe(input.at);
  });

  it('refuses the root, superseded decisions and what hangs under them, writing nothing', async () => {
    const { planId, ids } = await sampleTree();
    await decisions.correct(correction(planId, ids[3] as string));
    const before = await everything(planId);
    const next = { interventionSeq: 11, correctionSeq: 12 };

    await expect(decisions.correct(correction(planId, ids[0] as string, next))).rejects.toThrow(
      /prompt_definition root .* cannot be corrected/,
    );
    const again: unknown = await decisions
      .correct(correction(planId, ids[3] as string, next))
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(DecisionSupersededError);
    expect(again).toBeInstanceOf(DecisionRuleError);
    expect(again).toMatchObject({ decisionId: ids[3], supersededDecisionId: ids[3], planId });
    expect((again as DecisionSupersededError).supersededBy).toBe(
      (await decisions.getDecision(ids[3] as string)).supersededBy,
    );
    const below: unknown = await decisions
      .correct(correction(planId, ids[8] as string, next))
      .catch((e: unknown) => e);
    expect(below).toMatchObject({
      name: 'DecisionSupersededError',
      decisionId: ids[8],
      supersededDecisionId: ids[3],
    });
    expect((below as Error).message).toMatch(/not in the current tree/);
    expect(await everything(planId)).toEqual(before);
  });

  it('refuses reused or out-of-order sequence numbers and unknown plans or decisions, writing nothing', async () => {
    const { planId, ids } = await sampleTree();
    const other = await sampleTree();
    const before = await everything(planId);

    await expect(
      decisions.correct(correction(planId, ids[4] as string, { interventionSeq: 8, correctionSeq: 10 })),
    ).rejects.toThrow(/sequence number 8 is already used/);
    await expect(
      decisions.correct(correction(planId, ids[4] as string, { interventionSeq: 10, correctionSeq: 9 })),
    ).rejects.toThrow(/must come before/);
    await expect(
      decisions.correct(correction(planId, ids[4] as string, { event: { seq: 1, type: 'PHASE_RETRIED' } })),
    ).rejects.toThrow(PlanConflictError);
    await expect(decisions.correct(correction(planId, other.ids[4] as string))).rejects.toMatchObject({
      name: 'DecisionNotFoundError',
      decisionId: other.ids[4],
      planId,
    });
    await expect(decisions.correct(correction(planId, ulid()))).rejects.toThrow(DecisionNotFoundError);
    await expect(decisions.correct(correction(ulid(), ids[4] as string))).rejects.toThrow(PlanNotFoundError);
    expect(await everything(planId)).toEqual(before);
  });
});

describe('a 10,000-decision plan', () => {
  it('is written in a few batches and built into a tree with one query', async () => {
    const planId = await createPlan();
    const total = 10_000;
    const batchSize = 2_500;
    const types: DecisionType[] = [
      'strategy_choice',
      'implementation_choice',
      'tool_invocation',
      'resource_selection',
    ];
    const writeStart = performance.now();
    for (let first = 0; first < total; first += batchSize) {
      const batch: DecisionWrite[] = [];
      for (let seq = first; seq < first + batchSize; seq++) {
        batch.push(
          seq === 0
            ? decision(0, 'prompt_definition', null)
            : decision(seq, types[seq % types.length] as DecisionType, Math.floor((seq - 1) / 4), {
                // One context per ten decisions: the blobs are shared.
                context: { content: { window: `context ${seq % 10}`, seq: seq % 10 } },
              }),
        );
      }
      const input = stateInput(planId, batch);
      await plans.recordPlanState(input);
      await plans.recordPlanState(input); // the retry that changes nothing
    }
    const writeMs = performance.now() - writeStart;

    // Every Prisma operation the read makes, counted: the tree must not cost a query per node.
    const queries: string[] = [];
    const counting = prisma.$extends({
      query: {
        async $allOperations({ model, operation, args, query }) {
          queries.push(`${model ?? ''}.${operation}`);
          return query(args);
        },
      },
    }) as unknown as PrismaClient;
    const readStart = performance.now();
    const tree = await createDecisionStore(counting).getTree(planId);
    const treeMs = performance.now() - readStart;
    const serialiseStart = performance.now();
    const json = JSON.stringify(tree);
    const serialiseMs = performance.now() - serialiseStart;
    const indented = depthFirst(tree);
    console.log(
      `10,000 decisions: written in ${Math.round(writeMs)} ms (4 batches, each written twice); ` +
        `getTree ${Math.round(treeMs)} ms; JSON.stringify ${Math.round(serialiseMs)} ms ` +
        `(${Math.round(json.length / 1024)} KiB); queries: ${queries.join(', ')}`,
    );

    expect(queries).toEqual(['Decision.findMany']);
    expect(tree.nodes).toHaveLength(total);
    expect(indented).toHaveLength(total);
    expect(tree.nodes.map((n) => n.decision.seq)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(tree.nodes.at(-1)?.depth).toBe(7);
    expect(tree.nodes[0]?.decision.downstreamDecisionIds).toHaveLength(4);
    expect(await prisma.decision.count({ where: { planId } })).toBe(total);
    expect(await prisma.decisionContext.count({ where: { decisions: { some: { planId } } } })).toBe(10);
  });
});
