/**
 * Decision rows for the storage parts (P3, P4) and a database to write them to. The shape is a long plan's: a
 * bushy tree, strategy choices under the root, implementation steps under those, and so on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import type { DecisionWrite } from '../../activities/contracts';
import type { DecisionType } from '../../domain/decision';
import { planSpecSchema } from '../../domain/schemas';
import { migrateDatabase } from '../../storage/migrate';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/generated/prisma/client';
import type { PlanStore } from '../../storage/types';

const TYPES: DecisionType[] = [
  'strategy_choice',
  'implementation_choice',
  'resource_selection',
  'tool_invocation',
];

export function decisionBatch(first: number, count: number): DecisionWrite[] {
  const writes: DecisionWrite[] = [];
  for (let seq = first; seq < first + count; seq++) {
    const root = seq === 0;
    writes.push({
      seq,
      draft: {
        type: root ? 'prompt_definition' : (TYPES[seq % TYPES.length] as DecisionType),
        question: `question ${seq}`,
        chosenOption: `option ${seq}`,
        alternatives: [`alternative ${seq}a`, `alternative ${seq}b`],
        confidence: root ? null : (seq % 100) / 100,
        rationale: `because ${seq}`,
        // Each decision hangs under one of the decisions before it: about 5 children per parent.
        parentSeq: root ? null : Math.floor((seq - 1) / 5),
        phase: 'STRATEGIZE',
        actor: 'bench',
      },
    });
  }
  return writes;
}

export interface StorageWorld {
  url: string;
  file: string;
  prisma: PrismaClient;
  plans: PlanStore;
  /** A new plan row, created the way the client creates one, ready for decisions. */
  newPlan(name: string): Promise<string>;
}

/** A migrated database in a temp dir for fn's lifetime; removed afterwards whatever happened. */
export async function withStorage<T>(fn: (world: StorageWorld) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agents-bench-'));
  try {
    const file = path.join(dir, 'bench.db');
    const url = `file:${file}`;
    await migrateDatabase(url);
    const prisma = createPrismaClient(url);
    try {
      const plans = createPlanStore(prisma);
      const newPlan = async (name: string) => {
        const planId = ulid();
        await plans.recordPlanCreated({
          eventSeq: 0,
          spec: planSpecSchema.parse({
            planId,
            name,
            actionName: 'local/example',
            projects: [{ projectName: 'local/demo' }],
            automationLevel: 'FULL_AUTOMATION',
            createdAt: new Date().toISOString(),
          }),
        });
        return planId;
      };
      return await fn({ url, file, prisma, plans, newPlan });
    } finally {
      await prisma.$disconnect();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes decisions 0..count-1 the way the workflow does: one recordPlanState (one event) per batch. */
export async function recordDecisions(
  plans: PlanStore,
  planId: string,
  count: number,
  batch: number,
  firstEventSeq = 1,
): Promise<void> {
  for (let first = 0, eventSeq = firstEventSeq; first < count; first += batch, eventSeq++) {
    await plans.recordPlanState({
      planId,
      eventSeq,
      at: new Date().toISOString(),
      event: 'PHASE_STARTED',
      phase: 'STRATEGIZE',
      state: 'PROCESSING',
      recordedBy: 'bench',
      message: null,
      error: null,
      decisions: decisionBatch(first, Math.min(batch, count - first)),
    });
  }
}
