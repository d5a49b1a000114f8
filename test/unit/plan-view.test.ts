import YAML from 'yaml';
import { asCliDict, planListRow, PLAN_LIST_COLUMNS, projectLinkCliDict } from '../../client/render/plan-view';
import { projectNames } from '../../domain/plan';
import type { PlanFields } from '../../domain/plan';
import {
  CHILD_ID,
  CREATED_AT,
  DECISION_ID,
  PARENT_ID,
  PLAN_ID,
  ROOT_ID,
  TRACE_ID,
  UPDATED_AT,
  fullPlan,
  minimalPlan,
} from './fixtures';

describe('asCliDict golden documents', () => {
  it('renders a minimal plan: only the always-present keys, in seed order', () => {
    const dict = asCliDict(minimalPlan());
    expect(Object.keys(dict)).toEqual([
      'plan_id',
      'name',
      'action_name',
      'phase',
      'state',
      'description',
      'projects',
      'automation_level',
      'created_at',
      'updated_at',
    ]);
    expect(dict).toEqual({
      plan_id: PLAN_ID,
      name: 'code-review on acme/api',
      action_name: 'local/code-review',
      phase: 'STRATEGIZE',
      state: 'QUEUED',
      description: '',
      projects: [{ project_name: 'acme/api', read_only: false }],
      automation_level: 'MANUAL',
      created_at: CREATED_AT,
      updated_at: UPDATED_AT,
    });
  });

  it('renders a fully populated plan: all 11 groups in seed order', () => {
    const dict = asCliDict(fullPlan());
    expect(Object.keys(dict)).toEqual([
      // 1
      'plan_id',
      'name',
      'action_name',
      // 2 (+ live awaiting_approval after state)
      'phase',
      'state',
      'awaiting_approval',
      'waiting_for',
      'description',
      // 3
      'definition_of_done',
      // 4
      'projects',
      'automation_profile',
      'automation_level',
      // 5
      'strategy_actor',
      'execution_actor',
      'estimation_actor',
      'invariant_actor',
      // 6
      'arguments',
      'invariants',
      // 7
      'changeset_id',
      'sandbox_refs',
      'validation_summary',
      'decision_root_id',
      'trace_id',
      // 8
      'error_type',
      'error_message',
      'error_details',
      'errored_at',
      // 9
      'tags',
      // 10
      'created_at',
      'updated_at',
      // 11
      'parent_plan_id',
      'root_plan_id',
      'depth',
      'child_plan_ids',
    ]);
    expect(dict).toEqual({
      plan_id: PLAN_ID,
      name: 'code-review on acme/api',
      action_name: 'local/code-review',
      phase: 'APPLY',
      state: 'ERRORED',
      awaiting_approval: true,
      waiting_for: 'retry or cancel: APPLY is ERRORED (PhaseFailed: boom)',
      description: 'tidy up',
      definition_of_done: 'All files reviewed.',
      projects: [
        { project_name: 'acme/api', alias: 'api', read_only: false },
        { project_name: 'acme/docs', read_only: true },
      ],
      automation_profile: {
        name: 'team/careful',
        automation_level: 'MANUAL',
        min_decision_confidence: 0.9,
        max_auto_retries: 1,
        approval_timeout_seconds: 3600,
        max_subplan_depth: 3,
      },
      automation_level: 'REVIEW_BEFORE_APPLY',
      strategy_actor: 'local/planner',
      execution_actor: 'local/coder',
      estimation_actor: 'local/estimator',
      invariant_actor: 'local/guard',
      arguments: { path: 'src', depth: 3, strict: true },
      invariants: [
        { text: 'plan rule 1', scope: 'PLAN', source_name: 'local/code-review' },
        { text: 'plan rule 2', scope: 'PLAN' },
        { text: 'action rule', scope: 'ACTION', source_name: 'local/code-review' },
        { text: 'project rule', scope: 'PROJECT', source_name: 'acme/api' },
        { text: 'global rule', scope: 'GLOBAL' },
      ],
      changeset_id: 'cs-1',
      sandbox_refs: ['sandbox-1', 'sandbox-2'],
      validation_summary: '3 checks passed',
      decision_root_id: DECISION_ID,
      trace_id: TRACE_ID,
      error_type: 'PhaseFailed',
      error_message: 'boom',
      error_details: 'stack',
      errored_at: UPDATED_AT,
      tags: ['review', 'nightly'],
      created_at: CREATED_AT,
      updated_at: UPDATED_AT,
      parent_plan_id: PARENT_ID,
      root_plan_id: ROOT_ID,
      depth: 1,
      child_plan_ids: [CHILD_ID],
    });
  });

  it('keeps the nested orders too: arguments by arguments_order, automation_profile name first', () => {
    const dict = asCliDict(fullPlan());
    expect(Object.keys(dict.arguments as object)).toEqual(['path', 'depth', 'strict']);
    expect(Object.keys(dict.automation_profile as object)).toEqual([
      'name',
      'automation_level',
      'min_decision_confidence',
      'max_auto_retries',
      'approval_timeout_seconds',
      'max_subplan_depth',
    ]);
  });

  it('survives JSON and YAML with the key order intact', () => {
    const dict = asCliDict(fullPlan());
    expect(Object.keys(JSON.parse(JSON.stringify(dict)))).toEqual(Object.keys(dict));
    expect(Object.keys(YAML.parse(YAML.stringify(dict)))).toEqual(Object.keys(dict));
  });
});

describe('asCliDict omission rules', () => {
  const full = fullPlan();
  const allKeys = Object.keys(asCliDict(full));

  it.each<[string, Partial<PlanFields & { awaitingApproval: boolean; traceId: string | null }>, string[]]>([
    ['awaiting_approval when false', { awaitingApproval: false }, ['awaiting_approval']],
    ['definition_of_done when null', { definitionOfDone: null }, ['definition_of_done']],
    [
      'automation_profile when no profile',
      { automationProfileName: null, effectiveProfileSnapshot: null },
      ['automation_profile'],
    ],
    ['strategy_actor when null', { actors: { ...full.actors, strategyActor: null } }, ['strategy_actor']],
    ['execution_actor when null', { actors: { ...full.actors, executionActor: null } }, ['execution_actor']],
    [
      'estimation_actor when null',
      { actors: { ...full.actors, estimationActor: null } },
      ['estimation_actor'],
    ],
    ['invariant_actor when null', { actors: { ...full.actors, invariantActor: null } }, ['invariant_actor']],
    ['arguments when empty', { arguments: {}, argumentsOrder: [] }, ['arguments']],
    ['invariants when empty', { invariants: [] }, ['invariants']],
    ['changeset_id when null', { changesetId: null }, ['changeset_id']],
    ['sandbox_refs when empty', { sandboxRefs: [] }, ['sandbox_refs']],
    ['validation_summary when null', { validationSummary: null }, ['validation_summary']],
    ['decision_root_id when null', { decisionRootId: null }, ['decision_root_id']],
    ['trace_id when the plan was started untraced', { traceId: null }, ['trace_id']],
    [
      'all error fields when no error',
      { error: null },
      ['error_type', 'error_message', 'error_details', 'errored_at'],
    ],
    [
      'error_details alone when null',
      { error: { type: 'X', message: 'm', details: null, at: UPDATED_AT } },
      ['error_details'],
    ],
    ['tags when empty', { tags: [] }, ['tags']],
    ['parent_plan_id when null', { parentPlanId: null }, ['parent_plan_id']],
    ['root_plan_id when null', { rootPlanId: null }, ['root_plan_id']],
    ['depth when 0', { depth: 0 }, ['depth']],
    ['child_plan_ids when empty', { childPlanIds: [] }, ['child_plan_ids']],
  ])('omits %s', (_label, patch, omitted) => {
    const keys = Object.keys(asCliDict({ ...full, ...patch }));
    expect(keys).toEqual(allKeys.filter((k) => !omitted.includes(k)));
  });

  it('omits awaiting_approval and trace_id when the fields are absent (a stored record)', () => {
    const { awaitingApproval: _unused, traceId: _untraced, ...record } = full;
    expect(Object.keys(asCliDict(record))).not.toContain('awaiting_approval');
    expect(Object.keys(asCliDict(record))).not.toContain('trace_id');
  });

  it('always shows description, projects and automation_level, even when description is empty', () => {
    const dict = asCliDict({ ...full, description: '' });
    expect(dict).toMatchObject({ description: '', automation_level: 'REVIEW_BEFORE_APPLY' });
  });

  it('shows the profile name alone when a plan has a profile name but no snapshot', () => {
    expect(asCliDict({ ...full, effectiveProfileSnapshot: null }).automation_profile).toEqual({
      name: 'team/careful',
    });
  });

  it('leaves approval_timeout_seconds out of the profile snapshot when unset', () => {
    const snapshot = { ...full.effectiveProfileSnapshot!, approvalTimeoutSeconds: null };
    expect(asCliDict({ ...full, effectiveProfileSnapshot: snapshot }).automation_profile).toEqual({
      name: 'team/careful',
      automation_level: 'MANUAL',
      min_decision_confidence: 0.9,
      max_auto_retries: 1,
      max_subplan_depth: 3,
    });
  });

  it('shows the profile depth a snapshot froze, and the default for one frozen before subplans', () => {
    const snapshot = { ...full.effectiveProfileSnapshot!, maxSubplanDepth: 1 };
    expect(asCliDict({ ...full, effectiveProfileSnapshot: snapshot }).automation_profile).toMatchObject({
      max_subplan_depth: 1,
    });
    const { maxSubplanDepth: _none, ...older } = snapshot;
    expect(asCliDict({ ...full, effectiveProfileSnapshot: older }).automation_profile).toMatchObject({
      max_subplan_depth: 3,
    });
  });

  it('shows arguments missing from arguments_order after the ordered ones rather than hiding them', () => {
    const dict = asCliDict({ ...full, arguments: { b: 1, a: 2 }, argumentsOrder: ['a'] });
    expect(dict.arguments).toEqual({ a: 2, b: 1 });
    expect(Object.keys(dict.arguments as object)).toEqual(['a', 'b']);
  });

  it('does not share arrays with the plan', () => {
    const plan = fullPlan();
    const dict = asCliDict(plan);
    (dict.tags as string[]).push('x');
    (dict.sandbox_refs as string[]).push('x');
    expect(plan.tags).toEqual(['review', 'nightly']);
    expect(plan.sandboxRefs).toEqual(['sandbox-1', 'sandbox-2']);
  });
});

describe('project links in views', () => {
  it('renders project_name, alias only when set, read_only always', () => {
    expect(projectLinkCliDict({ projectName: 'a/b', alias: null, readOnly: false })).toEqual({
      project_name: 'a/b',
      read_only: false,
    });
    expect(Object.keys(projectLinkCliDict({ projectName: 'a/b', alias: 'x', readOnly: true }))).toEqual([
      'project_name',
      'alias',
      'read_only',
    ]);
  });

  it('computes project_names from the links, in order', () => {
    expect(projectNames(fullPlan())).toEqual(['acme/api', 'acme/docs']);
  });
});

describe('planListRow', () => {
  it('has a value for every column, projects included', () => {
    const row = planListRow(fullPlan());
    expect(PLAN_LIST_COLUMNS).toContain('projects');
    for (const column of PLAN_LIST_COLUMNS) expect(row).toHaveProperty(column);
    expect(row.projects).toBe('acme/api,acme/docs');
    expect(Object.values(row).every((v) => typeof v !== 'object')).toBe(true);
  });
  it('shows the short id where people read (plain, table, rich) and keeps the whole id beside it for scripts', () => {
    const row = planListRow(fullPlan(), PLAN_ID.slice(0, 8));
    expect(Object.keys(row).slice(0, 3)).toEqual(['plan_id', 'short_id', 'name']);
    expect(row).toMatchObject({ plan_id: PLAN_ID, short_id: PLAN_ID.slice(0, 8) });
    expect(PLAN_LIST_COLUMNS[0]).toBe('short_id');
    expect(PLAN_LIST_COLUMNS).not.toContain('plan_id');
    expect(planListRow(fullPlan()).short_id).toBe(PLAN_ID);
  });
});

describe("Apply's statistics and invariant descriptions (issue 15)", () => {
  const applied = {
    ...fullPlan(),
    applyStatistics: { filesCreated: 2, filesModified: 5, filesDeleted: 1, filesMoved: 0 },
  };

  it('shows files_created, files_modified, files_deleted, files_moved after validation_summary, zeros included', () => {
    const keys = Object.keys(asCliDict(applied));
    const at = keys.indexOf('validation_summary');
    expect(keys.slice(at, at + 6)).toEqual([
      'validation_summary',
      'files_created',
      'files_modified',
      'files_deleted',
      'files_moved',
      'decision_root_id',
    ]);
    expect(asCliDict(applied)).toMatchObject({
      files_created: 2,
      files_modified: 5,
      files_deleted: 1,
      files_moved: 0,
    });
    // YAML keeps the numbers numbers.
    expect(YAML.parse(YAML.stringify(asCliDict(applied))).files_moved).toBe(0);
  });

  it('leaves them out before Apply (null) and for the live snapshot, which does not know them', () => {
    for (const plan of [{ ...fullPlan(), applyStatistics: null }, fullPlan()]) {
      expect(Object.keys(asCliDict(plan)).filter((k) => k.startsWith('files_'))).toEqual([]);
    }
  });

  it("shows an invariant's description last among its keys, only when it has one", () => {
    const plan = {
      ...minimalPlan(),
      invariants: [
        {
          text: 'Never touch migrations',
          scope: 'GLOBAL' as const,
          sourceName: null,
          id: null,
          rule: null,
          description: 'Migrations are reviewed by the DBA team.',
        },
        { text: 'Keep tests green', scope: 'GLOBAL' as const, sourceName: null, id: null, rule: null },
      ],
    };
    expect(asCliDict(plan).invariants).toEqual([
      {
        text: 'Never touch migrations',
        scope: 'GLOBAL',
        description: 'Migrations are reviewed by the DBA team.',
      },
      { text: 'Keep tests green', scope: 'GLOBAL' },
    ]);
  });
});
