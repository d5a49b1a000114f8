/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // Workflow tests share one dev server per file and can take a few seconds each.
  testTimeout: 60_000,
  // Two cores: more workers than that only makes Temporal tests time out.
  maxWorkers: process.env.CI ? 2 : '50%',
};
