/**
 * Decision contexts by reference (ADR 0011): the activity that produced a context stores it and returns only its
 * `sha256:` reference; recording the decision keeps the reference. A reference to a context never stored is
 * refused with the whole write, and a context that is both given and referenced is ambiguous.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import { contextsByReference } from '../../activities/contexts';
import type { DecisionDraft } from '../../domain/decision';
import { canonicalJson } from '../../domain/decision-context';
import { planSpecSchema } from '../../domain/schemas';
import { sha256 } from '../../lib/sha256';
import { createDecisionStore } from '../../storage/decisions';
import { DecisionRuleError } from '../../storage/errors';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import type { DecisionStore, PlanStore } from '../../storage/types';
import { createTestDatabase } from '../helpers/database';

let dir: string;
let prisma: PrismaClient;
let plans: PlanStore;
let decisions: DecisionStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'context-refs-'));
  const url = await createTestDatabase(dir);
  prisma = createPrismaClient(url);
  plans = createPlanStore(prisma);
  decisions = createDecisionStore(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function newPlan(): Promise<string> {
  const planId = ulid();
  await plans.recordPlanCreated({
    eventSeq: 0,
    spec: planSpecSchema.parse({
      planId,
      name: 'context refs',
      actionName: 'local/example',
      projects: [{ projectName: 'local/demo' }],
      automationLevel: 'MANUAL',
      createdAt: new Date().toISOString(),
    }),
  });
  return planId;
}

function draft(seq: number, context: DecisionDraft['context']): DecisionDraft {
  return {
    type: seq === 0 ? 'prompt_definition' : 'strategy_choice',
    question: `question ${seq}`,
    chosenOption: `option ${seq}`,
    alternatives: [],
    confidence: seq === 0 ? null : 0.9,
    rationale: 'because',
    parentSeq: seq === 0 ? null : 0,
    phase: 'STRATEGIZE',
    actor: 'tester',
    ...(context === undefined ? {} : { context }),
  };
}

const record = (planId: string, eventSeq: number, drafts: DecisionDraft[], first = 0) =>
  plans.recordPlanState({
    planId,
    eventSeq,
    at: new Date().toISOString(),
    event: 'PHASE_STARTED',
    phase: 'STRATEGIZE',
    state: 'PROCESSING',
    recordedBy: 'tester',
    message: null,
    error: null,
    decisions: drafts.map((d, i) => ({ seq: first + i, draft: d })),
  });

it('stores contexts in the activity and records decisions that keep only their references', async () => {
  const planId = await newPlan();
  const prompt = { prompt: 'write a greeting', files: ['a.md'] };
  const strategy = { steps: ['create GREETING.md'], note: 'x'.repeat(10_000) };
  const returned = await contextsByReference(decisions, planId, [
    draft(0, { content: prompt }),
    draft(1, { content: strategy, actorStateRef: 'checkpoint-1' }),
    draft(2, undefined),
  ]);
  // What travels back to the workflow: references, no content.
  expect(returned.map((d) => d.context)).toEqual([
    { ref: `sha256:${sha256(Buffer.from(canonicalJson(prompt)))}` },
    { ref: `sha256:${sha256(Buffer.from(canonicalJson(strategy)))}`, actorStateRef: 'checkpoint-1' },
    undefined,
  ]);
  expect(JSON.stringify(returned)).not.toContain('xxxxxxxxxx');

  await record(planId, 1, returned);
  const rows = await plans.listDecisions(planId);
  expect(rows.map((r) => r.hotContextRef)).toEqual([
    returned[0]?.context?.ref,
    returned[1]?.context?.ref,
    null,
  ]);
  expect(rows[1]?.actorStateRef).toBe('checkpoint-1');
  await expect(decisions.getContext(rows[1]?.hotContextRef ?? '')).resolves.toBe(canonicalJson(strategy));
});

it('refuses a reference to a context that was never stored, and writes nothing of the batch', async () => {
  const planId = await newPlan();
  const dangling = `sha256:${sha256(Buffer.from('never stored'))}`;
  await expect(
    record(planId, 1, [draft(0, { content: 'the prompt' }), draft(1, { ref: dangling })]),
  ).rejects.toThrow(new DecisionRuleError(`decision 1: context ${dangling} is not stored`, planId, 1));
  expect(await plans.listDecisions(planId)).toEqual([]);
  expect(await plans.listEvents(planId)).toHaveLength(1);
});

it('refuses a context that has both content and a reference, or a reference that is not one', async () => {
  const planId = await newPlan();
  const [ref] = await decisions.storeContexts(planId, ['stored']);
  await expect(record(planId, 1, [draft(0, { content: 'stored', ref: ref as string })])).rejects.toThrow(
    /either its content or the ref of a stored one/,
  );
  await expect(record(planId, 1, [draft(0, { ref: 'sha256:not-a-hash' })])).rejects.toThrow(
    /context.ref: sha256:not-a-hash is not a sha256: reference/,
  );
  await expect(decisions.storeContexts(planId, [10n])).rejects.toBeInstanceOf(DecisionRuleError);
});
