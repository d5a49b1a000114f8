const { postgresUnavailableReason } = require('./scripts/postgres-bin');

/**
 * Two projects: every test on the embedded SQLite database, and the storage and end-to-end suites again on
 * PostgreSQL (a private cluster the project's global setup starts). The second runs wherever PostgreSQL's server
 * programs are installed; elsewhere it is left out with the reason printed, except under CI, which must run both.
 */

/** The suites that run on both backends: storage, activities on storage, and plans end to end. */
const BOTH_BACKENDS = [
  '<rootDir>/test/storage/catalog.test.ts',
  '<rootDir>/test/storage/context-refs.test.ts',
  '<rootDir>/test/storage/decisions.test.ts',
  '<rootDir>/test/storage/plans.test.ts',
  '<rootDir>/test/activities/specs.test.ts',
  '<rootDir>/test/workflows/lifecycle.test.ts',
  '<rootDir>/test/workflows/execute-apply.test.ts',
  '<rootDir>/test/workflows/invariants.test.ts',
  '<rootDir>/test/workflows/continue-as-new.test.ts',
  '<rootDir>/test/workflows/subplans.test.ts',
  '<rootDir>/test/cli/plan-use-context.test.ts',
  '<rootDir>/test/workflows/corrections.test.ts',
  '<rootDir>/test/workflows/gates.test.ts',
  '<rootDir>/test/cli/plan-refs.test.ts',
  '<rootDir>/test/workflows/refusals.test.ts',
];

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // CommonJS output turns `import()` (used by the generated Prisma client) into require(); jest's VM cannot
  // run a native dynamic import without --experimental-vm-modules.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
};

const sqlite = {
  ...common,
  displayName: 'sqlite',
  testMatch: ['**/*.test.ts'],
  // PostgreSQL's own tests (its migration runner, its cluster) need the cluster: they live in that project only.
  testPathIgnorePatterns: ['/node_modules/', '/test/postgresql/'],
  setupFiles: ['<rootDir>/test/setup-runtime.ts'],
  // Finds (or builds, once per machine) the Temporal CLI and generates the Prisma clients before any test runs.
  globalSetup: '<rootDir>/test/global-setup.ts',
};

const postgresql = {
  ...common,
  displayName: 'postgresql',
  testMatch: [...BOTH_BACKENDS, '<rootDir>/test/postgresql/**/*.test.ts'],
  setupFiles: ['<rootDir>/test/setup-runtime.ts', '<rootDir>/test/setup-postgresql.ts'],
  globalSetup: '<rootDir>/test/global-setup-postgresql.ts',
  globalTeardown: '<rootDir>/test/global-teardown-postgresql.ts',
};

const unavailable = process.env.AGENTS_TEST_POSTGRES_URL ? null : postgresUnavailableReason();
if (unavailable !== null) {
  if (process.env.CI) {
    throw new Error(`CI runs the tests on PostgreSQL too, and cannot here: ${unavailable}`);
  }
  process.stderr.write(`\n[jest] PostgreSQL tests left out: ${unavailable}\n\n`);
}

/** @type {import('jest').Config} */
module.exports = {
  projects: unavailable === null ? [sqlite, postgresql] : [sqlite],
  // Workflow tests share one dev server per file and can take a few seconds each.
  testTimeout: 60_000,
  // Two cores: more workers than that only makes Temporal tests time out.
  maxWorkers: process.env.CI ? 2 : '50%',
};
