import {
  ACTION_LIST_COLUMNS,
  PROFILE_LIST_COLUMNS,
  PROJECT_LIST_COLUMNS,
  actionCliDict,
  actionListRow,
  profileCliDict,
  profileListRow,
  projectCliDict,
  projectListRow,
  storedActionCliDict,
} from '../../client/render/catalog-view';
import { profileSnapshot } from '../../domain/catalog';
import { profileSnapshotSchema } from '../../domain/schemas';
import { CREATED_AT, UPDATED_AT, careful, codeReviewAction, project, stored } from './fixtures';

describe('projectCliDict', () => {
  it('shows name, path, description, timestamps in order', () => {
    const dict = projectCliDict(stored(project('acme/api', { description: 'the API' })));
    expect(dict).toEqual({
      name: 'acme/api',
      path: '/srv/acme/api',
      description: 'the API',
      created_at: CREATED_AT,
      updated_at: UPDATED_AT,
    });
    expect(Object.keys(dict)).toEqual(['name', 'path', 'description', 'created_at', 'updated_at']);
  });

  it('omits an empty description and shows built_in only when true', () => {
    expect(Object.keys(projectCliDict(stored(project('acme/api'))))).toEqual([
      'name',
      'path',
      'created_at',
      'updated_at',
    ]);
    expect(Object.keys(projectCliDict(stored(project('acme/api'), true)))).toEqual([
      'name',
      'path',
      'built_in',
      'created_at',
      'updated_at',
    ]);
  });
});

describe('profileCliDict', () => {
  it('shows the thresholds in a fixed order', () => {
    const dict = profileCliDict(stored(careful()));
    expect(Object.keys(dict)).toEqual([
      'name',
      'description',
      'automation_level',
      'min_decision_confidence',
      'max_auto_retries',
      'approval_timeout_seconds',
      'max_subplan_depth',
      'created_at',
      'updated_at',
    ]);
    expect(dict).toMatchObject({
      automation_level: 'MANUAL',
      min_decision_confidence: 0.9,
      max_auto_retries: 1,
    });
  });

  it('omits an empty description and an unset approval timeout', () => {
    const dict = profileCliDict(stored(careful({ description: '', approvalTimeoutSeconds: null }), true));
    expect(Object.keys(dict)).toEqual([
      'name',
      'automation_level',
      'min_decision_confidence',
      'max_auto_retries',
      'max_subplan_depth',
      'built_in',
      'created_at',
      'updated_at',
    ]);
  });
});

describe('storedActionCliDict', () => {
  it('is actionCliDict followed by catalog metadata', () => {
    const action = codeReviewAction();
    const dict = storedActionCliDict(stored(action, true));
    expect(Object.keys(dict)).toEqual([
      ...Object.keys(actionCliDict(action)),
      'built_in',
      'created_at',
      'updated_at',
    ]);
  });
});

describe('list rows', () => {
  it.each([
    ['action', actionListRow(stored(codeReviewAction())), ACTION_LIST_COLUMNS],
    ['project', projectListRow(stored(project('acme/api'))), PROJECT_LIST_COLUMNS],
    ['profile', profileListRow(stored(careful())), PROFILE_LIST_COLUMNS],
  ])('%s rows are flat and have every column, in column order', (_kind, row, columns) => {
    expect(Object.keys(row)).toEqual(columns);
    expect(Object.values(row).every((v) => v === null || typeof v !== 'object')).toBe(true);
  });

  it('lists action arguments with * for required, and tags', () => {
    expect(actionListRow(stored(codeReviewAction()))).toMatchObject({
      name: 'local/code-review',
      arguments: 'path*,depth,strict',
      tags: 'review,quality',
      default_profile: '',
      built_in: false,
    });
  });
});

describe('profileSnapshot', () => {
  it('keeps the name, level and thresholds, and passes the snapshot schema', () => {
    const snapshot = profileSnapshot(careful());
    expect(snapshot).toEqual({
      name: 'team/careful',
      automationLevel: 'MANUAL',
      minDecisionConfidence: 0.9,
      maxAutoRetries: 1,
      approvalTimeoutSeconds: 3600,
      maxSubplanDepth: 3,
    });
    expect(profileSnapshotSchema.parse(snapshot)).toEqual(snapshot);
  });

  it('is a copy: changing the profile afterwards leaves it alone', () => {
    const profile = careful();
    const snapshot = profileSnapshot(profile);
    profile.maxAutoRetries = 7;
    expect(snapshot.maxAutoRetries).toBe(1);
  });
});
