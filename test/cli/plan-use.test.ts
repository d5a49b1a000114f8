/**
 * A plan made from an action with typed arguments, two project links (one read-only) and a profile: everything is
 * resolved before the workflow starts, shown by `plan show` in every format and by the workflow's query, and the
 * frozen profile survives later edits of the profile.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { planWorkflowId } from '../../domain/ids';
import { getPlanQuery } from '../../workflows/definitions';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h?.teardown();
});

it('ships the example actions and lists them', async () => {
  const list = await h.cli('action', 'list', '--format', 'json');
  expect(list.code).toBe(0);
  const names = (JSON.parse(list.stdout) as Array<{ name: string }>).map((a) => a.name);
  expect(names).toEqual(['local/add-license-header', 'local/code-review', 'local/example']);
});

it('round-trips an action through `action show` and `action add`', async () => {
  const shown = await h.cli('action', 'show', 'local/code-review', '--format', 'yaml');
  expect(shown.code).toBe(0);
  const edited = YAML.parse(shown.stdout) as Record<string, unknown>;
  edited.name = 'team/review';
  edited.description = 'our review';
  const file = path.join(h.projectDir, '..', 'team-review.yaml');
  writeFileSync(file, YAML.stringify(edited));
  const added = await h.cli('action', 'add', '-f', file, '--format', 'json');
  expect(added.stderr).toBe('');
  expect(JSON.parse(added.stdout)).toMatchObject({ name: 'team/review', description: 'our review' });
  const again = await h.cli('action', 'show', 'team/review', '--format', 'json');
  const original = await h.cli('action', 'show', 'local/code-review', '--format', 'json');
  expect({ ...JSON.parse(again.stdout), name: 'x', description: 'x' }).toEqual({
    ...JSON.parse(original.stdout),
    name: 'x',
    description: 'x',
  });
  expect((await h.cli('action', 'remove', 'team/review')).code).toBe(0);
  expect((await h.cli('action', 'show', 'team/review')).code).toBe(3);
});

it('manages projects and profiles', async () => {
  const add = await h.cli(
    'project',
    'add',
    'acme/api',
    '--path',
    h.projectDir,
    '-d',
    'the API',
    '--format',
    'json',
  );
  expect(add.stderr).toBe('');
  expect(JSON.parse(add.stdout)).toMatchObject({
    name: 'acme/api',
    path: h.projectDir,
    description: 'the API',
  });
  const list = await h.cli('project', 'list', '--format', 'plain');
  expect(list.stdout).toContain('acme/api');
  expect((await h.cli('project', 'remove', 'acme/api')).code).toBe(0);
  expect((await h.cli('project', 'show', 'acme/api')).code).toBe(3);

  const profile = await h.cli(
    'profile',
    'add',
    'team/quick',
    '-a',
    'full',
    '--max-retries',
    '0',
    '--format',
    'json',
  );
  expect(profile.stderr).toBe('');
  expect(JSON.parse(profile.stdout)).toMatchObject({
    name: 'team/quick',
    automation_level: 'FULL_AUTOMATION',
  });
  expect((await h.cli('profile', 'remove', 'team/quick')).code).toBe(0);
});

describe('a fully resolved plan', () => {
  let planId: string;

  beforeAll(async () => {
    const profile = await h.cli(
      'profile',
      'add',
      'team/careful',
      '--automation',
      'manual',
      '--min-confidence',
      '0.9',
      '--max-retries',
      '1',
      '--approval-timeout',
      '3600',
    );
    expect(profile.stderr).toBe('');
    const use = await h.cli(
      'plan',
      'use',
      'local/code-review',
      '--project',
      'local/demo:API',
      '--project',
      'local/docs:docs:ro',
      '--profile',
      'team/careful',
      '--arg',
      'depth=3',
      '--arg',
      'path=src',
      '--tag',
      'nightly',
      '--description',
      'weekly review',
      '--format',
      'json',
    );
    expect(use.stderr).toBe('');
    planId = (JSON.parse(use.stdout) as { plan_id: string }).plan_id;
  });

  const expected = () => ({
    plan_id: planId,
    name: 'code-review on local/demo, local/docs',
    action_name: 'local/code-review',
    phase: expect.any(String),
    state: expect.any(String),
    description: 'weekly review',
    definition_of_done: 'Every file under the path is reviewed and each finding names its file and line.',
    projects: [
      { project_name: 'local/demo', alias: 'api', read_only: false },
      { project_name: 'local/docs', alias: 'docs', read_only: true },
    ],
    automation_profile: {
      name: 'team/careful',
      automation_level: 'MANUAL',
      min_decision_confidence: 0.9,
      max_auto_retries: 1,
      approval_timeout_seconds: 3600,
      max_subplan_depth: 3,
    },
    automation_level: 'MANUAL',
    arguments: { path: 'src', depth: 3, strict: false },
    invariants: [
      {
        text: 'Do not modify files outside the given path.',
        scope: 'PLAN',
        source_name: 'local/code-review',
      },
    ],
    tags: ['review', 'quality', 'nightly'],
  });

  it('shows every resolved field in json and yaml, with the action order of arguments', async () => {
    await h.withWorker(() => h.client.waitForInput(planId));
    const json = JSON.parse((await h.cli('plan', 'show', planId, '--format', 'json')).stdout);
    expect(json).toMatchObject(expected());
    expect(Object.keys(json.arguments)).toEqual(['path', 'depth', 'strict']);
    const yaml = YAML.parse((await h.cli('plan', 'show', planId, '--format', 'yaml')).stdout);
    expect(yaml).toEqual(json);
  });

  it.each(['plain', 'table', 'rich'])('shows it in %s', async (format) => {
    const out = await h.cli('plan', 'show', planId, '--format', format);
    expect(out.code).toBe(0);
    for (const text of [
      planId,
      'local/code-review',
      'team/careful',
      '"read_only":true',
      'nightly',
      'weekly review',
    ]) {
      expect(out.stdout).toContain(text);
    }
  });

  it('gives the workflow the same resolved plan (query)', async () => {
    const live = await h.withWorker(() =>
      h.env.client.workflow.getHandle(planWorkflowId(planId)).query(getPlanQuery),
    );
    expect(live).toMatchObject({
      planId,
      automationLevel: 'MANUAL',
      automationProfileName: 'team/careful',
      effectiveProfileSnapshot: { name: 'team/careful', minDecisionConfidence: 0.9, maxAutoRetries: 1 },
      projects: [
        { projectName: 'local/demo', alias: 'api', readOnly: false },
        { projectName: 'local/docs', alias: 'docs', readOnly: true },
      ],
      arguments: { path: 'src', depth: 3, strict: false },
      argumentsOrder: ['path', 'depth', 'strict'],
      invariants: [
        {
          text: 'Do not modify files outside the given path.',
          scope: 'PLAN',
          sourceName: 'local/code-review',
        },
      ],
    });
    const stored = await h.plans.getPlan(planId);
    expect(stored).toMatchObject({
      effectiveProfileSnapshot: live.effectiveProfileSnapshot,
      projects: live.projects,
      arguments: live.arguments,
      argumentsOrder: live.argumentsOrder,
      invariants: live.invariants,
      tags: live.tags,
    });
  });

  it('keeps its frozen profile after the profile is edited or removed', async () => {
    const edit = await h.cli('profile', 'add', 'team/careful', '-a', 'full', '--min-confidence', '0.1');
    expect(edit.code).toBe(0);
    const json = JSON.parse((await h.cli('plan', 'show', planId, '--format', 'json')).stdout);
    expect(json.automation_profile).toEqual(expected().automation_profile);
    expect(json.automation_level).toBe('MANUAL');
    expect((await h.cli('profile', 'remove', 'team/careful')).code).toBe(0);
    expect((await h.plans.getPlan(planId))?.effectiveProfileSnapshot).toMatchObject({
      minDecisionConfidence: 0.9,
    });
    await h.withWorker(() => h.client.cancel(planId));
    expect((await h.plans.getPlan(planId))?.state).toBe('CANCELLED');
  });
});
