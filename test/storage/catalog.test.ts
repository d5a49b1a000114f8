/**
 * The catalog store against a real migrated SQLite file, as in plans.test.ts: what comes back must be a valid
 * domain object, and replacing an entry must keep when it was first created.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import type { z } from 'zod';
import { actionSchema, automationProfileSchema, projectSchema } from '../../domain/catalog';
import { planSpecSchema } from '../../domain/schemas';
import { asPlanInvariant } from '../../domain/invariant';
import { createCatalogStore } from '../../storage/catalog';
import { createInvariantStore } from '../../storage/invariants';
import { createPlanStore } from '../../storage/plans';
import { createPrismaClient } from '../../storage/prisma';
import type { PrismaClient } from '../../storage/prisma';
import type { CatalogStore } from '../../storage/types';
import { createTestDatabase } from '../helpers/database';

let dir: string;
let prisma: PrismaClient;
let catalog: CatalogStore;

/** A fake clock that moves one second per reading, so "updated later" is visible at millisecond precision. */
let clock = Date.parse('2026-03-01T00:00:00.000Z');
const tick = () => new Date((clock += 1000));
const lastTick = () => new Date(clock).toISOString();

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-store-'));
  const databaseUrl = await createTestDatabase(dir);
  prisma = createPrismaClient(databaseUrl);
  catalog = createCatalogStore(prisma, { now: tick });
});

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

const action = (input: z.input<typeof actionSchema>) => actionSchema.parse(input);
const project = (input: z.input<typeof projectSchema>) => projectSchema.parse(input);
const profile = (input: z.input<typeof automationProfileSchema>) => automationProfileSchema.parse(input);

describe('actions', () => {
  it('round-trips a fully populated action as a valid domain object', async () => {
    const value = action({
      name: 'local/code-review',
      description: 'review a change',
      arguments: [
        {
          name: 'target',
          type: 'string',
          required: true,
          description: 'what to review',
          allowedValues: ['src', 'test'],
        },
        { name: 'depth', type: 'integer', default: 2, allowedValues: [1, 2, 3] },
        { name: 'ratio', type: 'number', default: 0.5 },
        { name: 'strict', type: 'boolean', default: false },
      ],
      defaultAutomationLevel: 'REVIEW_BEFORE_APPLY',
      defaultProfile: 'local/careful',
      actors: { strategyActor: 'openai/planner', invariantActor: 'local/checker' },
      invariants: ['no new dependencies', 'keep the public API'],
      definitionOfDone: 'every finding has a fix or a reason',
      tags: ['review', 'team:core'],
    });

    expect(await catalog.putAction(value)).toBe(true);
    const createdAt = lastTick();

    const stored = await catalog.getAction('local/code-review');
    expect(stored).toEqual({ value, builtIn: false, createdAt, updatedAt: createdAt });
    expect(actionSchema.parse(stored?.value)).toEqual(stored?.value);
    // Declaration order of the arguments is what `arguments_order` follows later.
    expect(stored?.value.arguments.map((a) => a.name)).toEqual(['target', 'depth', 'ratio', 'strict']);
  });

  it('replaces by name: false, createdAt kept, updatedAt moved, content replaced', async () => {
    expect(
      await catalog.putAction(action({ name: 'local/replace-me', description: 'first', tags: ['a'] })),
    ).toBe(true);
    const createdAt = lastTick();
    const second = action({ name: 'local/replace-me', description: 'second', invariants: ['be careful'] });

    expect(await catalog.putAction(second)).toBe(false);

    expect(await catalog.getAction('local/replace-me')).toEqual({
      value: second,
      builtIn: false,
      createdAt,
      updatedAt: lastTick(),
    });
    expect(lastTick()).not.toBe(createdAt);
    expect(await prisma.action.count({ where: { name: 'local/replace-me' } })).toBe(1);
  });

  it('records the built-in flag; a replace that does not mention it keeps it', async () => {
    const value = action({ name: 'builtin/summarize' });
    expect(await catalog.putAction(value, { builtIn: true })).toBe(true);
    expect((await catalog.getAction(value.name))?.builtIn).toBe(true);

    expect(await catalog.putAction({ ...value, description: 'edited' })).toBe(false);
    expect(await catalog.getAction(value.name)).toMatchObject({
      builtIn: true,
      value: { description: 'edited' },
    });

    expect(await catalog.putAction(value, { builtIn: false })).toBe(false);
    expect((await catalog.getAction(value.name))?.builtIn).toBe(false);
  });

  it('lists by name, finds names the way the domain normalises them, and removes', async () => {
    for (const name of ['zeta/last', 'alpha/first', 'mid/dle']) {
      await catalog.putAction(action({ name }));
    }
    const names = (await catalog.listActions()).map((a) => a.value.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['zeta/last', 'alpha/first', 'mid/dle']));

    expect((await catalog.getAction('  Alpha/First '))?.value.name).toBe('alpha/first');
    expect(await catalog.getAction('alpha/nothing')).toBeNull();
    expect(await catalog.getAction('not a name')).toBeNull();

    expect(await catalog.removeAction(' MID/dle')).toBe(true);
    expect(await catalog.removeAction('mid/dle')).toBe(false);
    expect(await catalog.removeAction('not a name')).toBe(false);
    expect(await catalog.getAction('mid/dle')).toBeNull();
    expect((await catalog.listActions()).map((a) => a.value.name)).not.toContain('mid/dle');
  });
});

describe('projects', () => {
  it('puts, replaces, lists, gets and removes', async () => {
    const first = project({ name: 'org/parser', path: '/srv/parser' });
    expect(await catalog.putProject(first)).toBe(true);
    const createdAt = lastTick();
    expect(await catalog.getProject('org/parser')).toEqual({
      value: { name: 'org/parser', path: '/srv/parser', description: '' },
      builtIn: false,
      createdAt,
      updatedAt: createdAt,
    });

    const moved = project({ name: 'org/parser', path: '/srv/parser-v2', description: 'moved' });
    expect(await catalog.putProject(moved)).toBe(false);
    expect(await catalog.getProject('ORG/parser')).toEqual({
      value: moved,
      builtIn: false,
      createdAt,
      updatedAt: lastTick(),
    });

    await catalog.putProject(project({ name: 'org/api', path: '/srv/api' }));
    expect((await catalog.listProjects()).map((p) => p.value.name)).toEqual(['org/api', 'org/parser']);
    expect(projectSchema.parse((await catalog.listProjects())[1]?.value)).toEqual(moved);

    expect(await catalog.removeProject('org/api')).toBe(true);
    expect(await catalog.removeProject('org/api')).toBe(false);
    expect(await catalog.getProject('org/api')).toBeNull();
    expect(await catalog.getProject('not a name')).toBeNull();
  });
});

describe('automation profiles', () => {
  it('puts, replaces, lists, gets and removes', async () => {
    const careful = profile({
      name: 'local/careful',
      description: 'ask often',
      automationLevel: 'REVIEW_BEFORE_APPLY',
      minDecisionConfidence: 0.95,
      maxAutoRetries: 0,
      approvalTimeoutSeconds: 86_400,
    });
    expect(await catalog.putProfile(careful)).toBe(true);
    const createdAt = lastTick();
    expect(await catalog.getProfile('local/careful')).toEqual({
      value: careful,
      builtIn: false,
      createdAt,
      updatedAt: createdAt,
    });

    const relaxed = profile({ name: 'local/careful', automationLevel: 'FULL_AUTOMATION' });
    expect(relaxed).toMatchObject({
      minDecisionConfidence: 0.8,
      maxAutoRetries: 2,
      approvalTimeoutSeconds: null,
    });
    expect(await catalog.putProfile(relaxed)).toBe(false);
    const stored = await catalog.getProfile('local/careful');
    expect(stored).toEqual({ value: relaxed, builtIn: false, createdAt, updatedAt: lastTick() });
    expect(automationProfileSchema.parse(stored?.value)).toEqual(relaxed);

    await catalog.putProfile(profile({ name: 'local/auto', automationLevel: 'FULL_AUTOMATION' }));
    expect((await catalog.listProfiles()).map((p) => p.value.name)).toEqual(['local/auto', 'local/careful']);

    expect(await catalog.removeProfile('local/auto')).toBe(true);
    expect(await catalog.removeProfile('local/auto')).toBe(false);
    expect((await catalog.listProfiles()).map((p) => p.value.name)).toEqual(['local/careful']);
  });
});

describe('the default clock', () => {
  it('stamps entries with the current time', async () => {
    const before = Date.now();
    await createCatalogStore(prisma).putProject(project({ name: 'org/now', path: '/srv/now' }));
    const stored = await catalog.getProject('org/now');
    expect(Date.parse(stored?.createdAt ?? '')).toBeGreaterThanOrEqual(before);
    expect(Date.parse(stored?.createdAt ?? '')).toBeLessThanOrEqual(Date.now());
  });
});

describe('entries that plans were made from', () => {
  it('can be removed; the plan keeps its own links and snapshot', async () => {
    const plans = createPlanStore(prisma);
    await catalog.putAction(action({ name: 'org/deploy' }));
    await catalog.putProject(project({ name: 'org/service', path: '/srv/service' }));
    const strict = profile({ name: 'org/strict', automationLevel: 'MANUAL', approvalTimeoutSeconds: 60 });
    await catalog.putProfile(strict);
    const spec = planSpecSchema.parse({
      planId: ulid(),
      name: 'Deploy',
      actionName: 'org/deploy',
      projects: [{ projectName: 'org/service', alias: 'svc', readOnly: true }],
      automationLevel: 'MANUAL',
      automationProfileName: strict.name,
      effectiveProfileSnapshot: {
        name: strict.name,
        automationLevel: strict.automationLevel,
        minDecisionConfidence: strict.minDecisionConfidence,
        maxAutoRetries: strict.maxAutoRetries,
        approvalTimeoutSeconds: strict.approvalTimeoutSeconds,
      },
      createdAt: tick().toISOString(),
    });
    await plans.recordPlanCreated({ spec, eventSeq: 0 });
    const before = await plans.getPlan(spec.planId);

    expect(await catalog.removeAction('org/deploy')).toBe(true);
    expect(await catalog.removeProject('org/service')).toBe(true);
    expect(await catalog.removeProfile('org/strict')).toBe(true);

    expect(await plans.getPlan(spec.planId)).toEqual(before);
    expect(before).toMatchObject({
      actionName: 'org/deploy',
      projects: [{ projectName: 'org/service', alias: 'svc', readOnly: true }],
      effectiveProfileSnapshot: { name: 'org/strict', approvalTimeoutSeconds: 60 },
    });
  });
});

describe('invariant descriptions (seed 004 --description)', () => {
  it('are stored trimmed, read back, and null when none was given', async () => {
    const invariants = createInvariantStore(prisma);
    const at = new Date(clock).toISOString();
    const described = await invariants.add({
      text: ' Never touch the migrations ',
      description: '  Reviewed by the DBA team.  ',
      scope: 'GLOBAL',
      target: null,
      rule: null,
      author: 'ada',
      at,
    });
    const plain = await invariants.add({
      text: 'Keep it',
      scope: 'GLOBAL',
      target: null,
      rule: null,
      author: 'ada',
      at,
    });
    expect(await invariants.get(described.id)).toMatchObject({
      text: 'Never touch the migrations',
      description: 'Reviewed by the DBA team.',
    });
    expect((await invariants.get(plain.id))?.description).toBeNull();
    expect(asPlanInvariant(described)).toMatchObject({ description: 'Reviewed by the DBA team.' });
    expect(asPlanInvariant(plain)).not.toHaveProperty('description');
    await invariants.remove(described.id);
    await invariants.remove(plain.id);
  });
});
