import type { AutomationProfile, Project } from '../../domain/catalog';
import {
  chooseAutomationLevel,
  chooseProfileName,
  defaultPlanName,
  parseNamespacedName,
  resolvePlanSpec,
} from '../../domain/resolve';
import type { ResolvePlanInput } from '../../domain/resolve';
import { planSpecSchema } from '../../domain/schemas';
import type { PlanSpec, ProjectLink } from '../../domain/schemas';
import { CREATED_AT, PLAN_ID, careful, codeReviewAction, project } from './fixtures';

const link = (projectName: string, alias: string | null = null, readOnly = false): ProjectLink => ({
  projectName,
  alias,
  readOnly,
});

function input(patch: Partial<ResolvePlanInput> = {}): ResolvePlanInput {
  return {
    planId: PLAN_ID,
    createdAt: CREATED_AT,
    createdBy: 'ada',
    action: codeReviewAction(),
    projects: new Map([
      ['acme/api', project('acme/api')],
      ['acme/web', project('acme/web')],
    ]),
    links: [link('acme/api')],
    profile: null,
    rawArguments: { path: 'src' },
    tags: [],
    ...patch,
  };
}

function resolveOk(patch: Partial<ResolvePlanInput> = {}): PlanSpec {
  const result = resolvePlanSpec(input(patch));
  if (!result.ok) throw new Error(result.error);
  return result.spec;
}

function resolveError(patch: Partial<ResolvePlanInput>): string {
  const result = resolvePlanSpec(input(patch));
  if (result.ok) throw new Error('expected an error');
  return result.error;
}

describe('resolvePlanSpec: the resolved spec', () => {
  it('is a valid PlanSpec with everything resolved from the action', () => {
    const spec = resolveOk();
    expect(planSpecSchema.parse(spec)).toEqual(spec);
    expect(spec).toEqual({
      planId: PLAN_ID,
      name: 'code-review on acme/api',
      actionName: 'local/code-review',
      description: '',
      projects: [link('acme/api')],
      automationLevel: 'REVIEW_BEFORE_APPLY',
      arguments: { path: 'src', depth: 2, strict: false },
      argumentsOrder: ['path', 'depth', 'strict'],
      definitionOfDone: 'Every file under the path is reviewed.',
      automationProfileName: null,
      effectiveProfileSnapshot: null,
      invariants: [
        {
          text: 'Do not modify files outside the path.',
          scope: 'PLAN',
          sourceName: 'local/code-review',
          id: null,
          rule: null,
        },
        {
          text: 'Keep the public API.',
          scope: 'PLAN',
          sourceName: 'local/code-review',
          id: null,
          rule: null,
        },
      ],
      actors: {
        strategyActor: 'local/planner',
        executionActor: 'local/coder',
        estimationActor: null,
        invariantActor: null,
      },
      execution: { network: false, unattendedCommands: false, ignore: [] },
      tags: ['review', 'quality'],
      steps: [],
      validation: null,
      parentPlanId: null,
      rootPlanId: null,
      depth: 0,
      createdBy: 'ada',
      createdAt: CREATED_AT,
    });
  });

  it('orders arguments by the action, not by the order typed', () => {
    const spec = resolveOk({
      rawArguments: { strict: 'true', depth: '3', path: 'lib' },
      argumentsOrder: ['strict', 'depth', 'path'],
    });
    expect(spec.argumentsOrder).toEqual(['path', 'depth', 'strict']);
    expect(spec.arguments).toEqual({ path: 'lib', depth: 3, strict: true });
  });

  it('keeps links in order, normalised, with alias and read_only', () => {
    const spec = resolveOk({ links: [link('acme/web', 'WEB', true), link('acme/api', 'api')] });
    expect(spec.projects).toEqual([link('acme/web', 'web', true), link('acme/api', 'api')]);
    expect(spec.name).toBe('code-review on acme/web, acme/api');
  });

  it('accepts the projects as a plain record too', () => {
    expect(resolveOk({ projects: { 'acme/api': project('acme/api') } }).projects).toEqual([link('acme/api')]);
  });

  it('takes --name and --description', () => {
    const spec = resolveOk({ name: '  nightly review ', description: 'before release' });
    expect(spec.name).toBe('nightly review');
    expect(spec.description).toBe('before release');
  });

  it('adds --tag values after the action tags, without duplicates, order kept', () => {
    expect(resolveOk({ tags: ['nightly', 'review', ' nightly ', 'v1.2'] }).tags).toEqual([
      'review',
      'quality',
      'nightly',
      'v1.2',
    ]);
  });

  it('gives an action without invariants, actors or definition of done a plan without them', () => {
    const spec = resolveOk({
      action: codeReviewAction({ invariants: [], actors: undefined, definitionOfDone: null, tags: [] }),
    });
    expect(spec.invariants).toEqual([]);
    expect(spec.definitionOfDone).toBeNull();
    expect(spec.tags).toEqual([]);
    expect(spec.actors).toEqual({
      strategyActor: null,
      executionActor: null,
      estimationActor: null,
      invariantActor: null,
    });
  });
});

describe('resolvePlanSpec: automation level precedence', () => {
  it.each<[string, Partial<ResolvePlanInput>, string]>([
    ["the action's default when nothing else is given", {}, 'REVIEW_BEFORE_APPLY'],
    [
      "the profile's level over the action's default",
      { profile: careful({ automationLevel: 'MANUAL' }) },
      'MANUAL',
    ],
    [
      'explicit --automation over the profile',
      { profile: careful({ automationLevel: 'MANUAL' }), automationLevel: 'FULL_AUTOMATION' },
      'FULL_AUTOMATION',
    ],
    ['explicit --automation over the action', { automationLevel: 'MANUAL' }, 'MANUAL'],
  ])('%s', (_label, patch, level) => {
    expect(resolveOk(patch).automationLevel).toBe(level);
  });

  it('chooseAutomationLevel follows the same order', () => {
    const action = { defaultAutomationLevel: 'MANUAL' as const };
    expect(chooseAutomationLevel(undefined, null, action)).toBe('MANUAL');
    expect(chooseAutomationLevel(undefined, { automationLevel: 'FULL_AUTOMATION' }, action)).toBe(
      'FULL_AUTOMATION',
    );
    expect(chooseAutomationLevel('REVIEW_BEFORE_APPLY', { automationLevel: 'FULL_AUTOMATION' }, action)).toBe(
      'REVIEW_BEFORE_APPLY',
    );
  });
});

describe('resolvePlanSpec: profile', () => {
  it('chooseProfileName: explicit --profile > action default_profile > none', () => {
    expect(chooseProfileName('team/fast', { defaultProfile: 'team/careful' })).toBe('team/fast');
    expect(chooseProfileName(undefined, { defaultProfile: 'team/careful' })).toBe('team/careful');
    expect(chooseProfileName(undefined, { defaultProfile: null })).toBeNull();
  });

  it('freezes the profile into effective_profile_snapshot with its name', () => {
    const spec = resolveOk({ profile: careful() });
    expect(spec.automationProfileName).toBe('team/careful');
    expect(spec.effectiveProfileSnapshot).toEqual({
      name: 'team/careful',
      automationLevel: 'MANUAL',
      minDecisionConfidence: 0.9,
      maxAutoRetries: 1,
      approvalTimeoutSeconds: 3600,
      maxSubplanDepth: 3,
    });
  });

  it('is a deep copy: changing the profile object later does not change the spec', () => {
    const profile: AutomationProfile = careful();
    const spec = resolveOk({ profile });
    const before = structuredClone(spec);
    profile.minDecisionConfidence = 0.1;
    profile.automationLevel = 'FULL_AUTOMATION';
    profile.name = 'team/changed';
    expect(spec).toEqual(before);
    expect(spec.effectiveProfileSnapshot).not.toBe(profile);
  });

  it('shares no arrays or objects with the action either', () => {
    const action = codeReviewAction();
    const spec = resolveOk({ action });
    action.tags.push('later');
    action.actors.strategyActor = 'someone/else';
    action.invariants.push('later');
    expect(spec.tags).toEqual(['review', 'quality']);
    expect(spec.actors.strategyActor).toBe('local/planner');
    expect(spec.invariants).toHaveLength(2);
  });
});

describe('resolvePlanSpec: errors', () => {
  it.each<[string, Partial<ResolvePlanInput>, string | RegExp]>([
    [
      'no project',
      { links: [] },
      '--project: a plan targets at least one project (give --project name[:alias][:ro])',
    ],
    [
      'unknown project',
      { links: [link('acme/api'), link('acme/nope')] },
      '--project acme/nope: unknown project (see agents project list)',
    ],
    [
      'unknown project in a record',
      { projects: {}, links: [link('acme/api')] },
      '--project acme/api: unknown project (see agents project list)',
    ],
    [
      'a project linked twice',
      { links: [link('acme/api'), link('acme/api', 'x')] },
      'project acme/api is linked twice; a plan links each project once',
    ],
    [
      'a duplicate alias',
      { links: [link('acme/api', 'x'), link('acme/web', 'X')] },
      'alias "x" is used by both acme/api and acme/web; aliases must be unique within a plan',
    ],
    [
      'a missing required argument',
      { rawArguments: {} },
      '--arg path: required argument is missing (give --arg path=<string>)',
    ],
    [
      'an argument of the wrong type',
      { rawArguments: { path: 'p', depth: 'deep' } },
      '--arg depth: must be an integer (e.g. 2), got "deep"',
    ],
    [
      'an argument outside allowed values',
      { rawArguments: { path: 'p', depth: '9' } },
      '--arg depth: must be one of 1, 2, 3, got 9',
    ],
    [
      'an unknown argument',
      { rawArguments: { path: 'p', x: '1' } },
      '--arg x: unknown argument; known arguments: path, depth, strict',
    ],
    ['an empty --name', { name: '  ' }, '--name: must not be empty'],
    ['a too long --name', { name: 'n'.repeat(201) }, '--name: must be at most 200 characters'],
    ['a bad --tag', { tags: ['good', 'bad tag'] }, /^--tag "bad tag": must be letters, digits/],
    ['an empty --tag', { tags: [''] }, /^--tag "": must not be empty/],
    ['a bad plan id', { planId: 'nope' }, 'invalid plan: planId: must be a 26-character ULID'],
    ['a bad timestamp', { createdAt: 'yesterday' }, /^invalid plan: createdAt: /],
    [
      'an action with an empty invariant text',
      { action: { ...codeReviewAction(), invariants: ['  '] } },
      'invalid plan: invariants.0.text: must not be empty',
    ],
    [
      'a non-namespaced action name',
      { action: { ...codeReviewAction(), name: 'code-review' } },
      /^invalid plan: actionName: must look like namespace\/name/,
    ],
  ])('%s', (_label, patch, expected) => {
    const error = resolveError(patch);
    expect(error).not.toContain('\n');
    if (typeof expected === 'string') expect(error).toBe(expected);
    else expect(error).toMatch(expected);
  });
});

describe('helpers', () => {
  it('defaultPlanName uses the short action name and the project names', () => {
    expect(defaultPlanName('local/code-review', ['acme/api'])).toBe('code-review on acme/api');
    expect(defaultPlanName('org/deploy', ['a/b', 'c/d'])).toBe('deploy on a/b, c/d');
  });

  it('defaultPlanName stays within 200 characters', () => {
    const many = Array.from({ length: 40 }, (_, i) => `acme/project-${i}`);
    const name = defaultPlanName('local/code-review', many);
    expect(name).toHaveLength(200);
    expect(name.endsWith('…')).toBe(true);
    const spec = resolveOk({
      projects: new Map<string, Project>(many.map((n) => [n, project(n)])),
      links: many.map((n) => link(n)),
    });
    expect(spec.name).toBe(name);
  });

  it('parseNamespacedName normalises or names the rule', () => {
    expect(parseNamespacedName('action', ' Local/Code-Review ')).toEqual({
      ok: true,
      name: 'local/code-review',
    });
    expect(parseNamespacedName('action', 'code-review')).toEqual({
      ok: false,
      error: 'action "code-review": must look like namespace/name (lowercase letters, digits, - and _)',
    });
  });
});
