// The postgresql jest project's marker (see test/helpers/database.ts). Jest copies process.env per test file, so
// this does not leak into the sqlite project's files that share a worker process.
process.env.AGENTS_TEST_BACKEND = 'postgresql';
