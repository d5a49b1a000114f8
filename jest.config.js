/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // CommonJS output turns `import()` (used by the generated Prisma client) into require(); jest's VM cannot
  // run a native dynamic import without --experimental-vm-modules.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  // Workflow tests share one dev server per file and can take a few seconds each.
  testTimeout: 60_000,
  setupFiles: ['<rootDir>/test/setup-runtime.ts'],
  // Finds (or builds, once per machine) the Temporal CLI and generates the Prisma client before any test runs.
  globalSetup: '<rootDir>/test/global-setup.ts',
  // Two cores: more workers than that only makes Temporal tests time out.
  maxWorkers: process.env.CI ? 2 : '50%',
};
