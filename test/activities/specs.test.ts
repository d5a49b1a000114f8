/**
 * A lean plan's activities find its spec by id (ADR 0011): read back from a real database it is the spec the plan
 * was created with, field for field, and each worker reads a plan's row once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import { createSpecSource } from '../../activities/specs';
import type { PlanSpec } from '../../domain/plan';
import { planSpecSchema } from '../../domain/schemas';
import { PlanNotFoundError } from '../../storage/errors';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import type { PlanStore } from '../../storage/types';
import { createTestDatabase } from '../helpers/database';

let dir: string;
let prisma: PrismaClient;
let plans: PlanStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'plan-specs-'));
  const url = await createTestDatabase(dir);
  prisma = createPrismaClient(url);
  plans = createPlanStore(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** A spec with every optional part filled in, so a column left out of the read-back shows. */
function fullSpec(): PlanSpec {
  return planSpecSchema.parse({
    planId: ulid(),
    name: 'spec round trip',
    actionName: 'local/example',
    description: 'every field set',
    projects: [
      { projectName: 'local/demo', alias: 'demo', readOnly: false },
      { projectName: 'local/docs', alias: null, readOnly: true },
    ],
    automationLevel: 'REVIEW_BEFORE_APPLY',
    arguments: { greeting: 'hello', count: 3 },
    argumentsOrder: ['greeting', 'count'],
    definitionOfDone: 'the greeting is written',
    automationProfileName: 'local/careful',
    effectiveProfileSnapshot: {
      name: 'local/careful',
      automationLevel: 'REVIEW_BEFORE_APPLY',
      maxAutoRetries: 2,
      approvalTimeoutSeconds: 3600,
      minDecisionConfidence: 0.5,
    },
    invariants: [{ text: 'Leave README.md alone', scope: 'ACTION', sourceName: 'local/example', rule: null }],
    actors: {
      strategyActor: 'builtin',
      executionActor: 'builtin',
      estimationActor: 'builtin',
      invariantActor: 'builtin',
    },
    execution: { network: true, unattendedCommands: true, ignore: ['*.log'] },
    tags: ['bench'],
    steps: [
      {
        kind: 'create',
        path: 'GREETING.md',
        content: '{{greeting}}\n',
        overwrite: true,
        description: 'write the greeting',
        project: 'demo',
      },
      { kind: 'run', command: 'test -s GREETING.md', timeoutSeconds: 60, description: null, project: null },
    ],
    validation: 'test -s GREETING.md',
    createdBy: 'tester',
    createdAt: new Date().toISOString(),
  });
}

it('reads back the spec a plan was created with, every field', async () => {
  const spec = fullSpec();
  await plans.recordPlanCreated({ spec, eventSeq: 0 });
  await expect(plans.getSpec(spec.planId)).resolves.toEqual(spec);
  await expect(plans.getSpec(ulid())).resolves.toBeNull();
});

it('reads a plan’s row once per worker, and hands an older plan’s spec through untouched', async () => {
  const spec = fullSpec();
  await plans.recordPlanCreated({ spec, eventSeq: 0 });
  let reads = 0;
  const specOf = createSpecSource({
    getSpec: (planId) => {
      reads++;
      return plans.getSpec(planId);
    },
  });
  await expect(specOf({ planId: spec.planId })).resolves.toEqual(spec);
  await expect(specOf({ planId: spec.planId })).resolves.toEqual(spec);
  expect(reads).toBe(1);
  const older = fullSpec();
  await expect(specOf({ spec: older })).resolves.toBe(older);
  expect(reads).toBe(1);
  await expect(specOf({ planId: ulid() })).rejects.toBeInstanceOf(PlanNotFoundError);
});

it('forgets the least recently used spec beyond its capacity, and reads it again when asked', async () => {
  const specs = [fullSpec(), fullSpec(), fullSpec()];
  for (const spec of specs) await plans.recordPlanCreated({ spec, eventSeq: 0 });
  const read: string[] = [];
  const specOf = createSpecSource(
    {
      getSpec: (planId) => {
        read.push(planId);
        return plans.getSpec(planId);
      },
    },
    2,
  );
  const [a, b, c] = specs.map((s) => ({ planId: s.planId }));
  if (a === undefined || b === undefined || c === undefined) throw new Error('three specs');
  await specOf(a);
  await specOf(b);
  await specOf(a); // a is now the most recently used
  await specOf(c); // evicts b
  await specOf(a);
  await specOf(b);
  expect(read).toEqual([a.planId, b.planId, c.planId, b.planId]);
});
