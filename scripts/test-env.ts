/**
 * What workflow tests use to get a private Temporal server: the CLI found by the jest global setup, started by the
 * SDK on free ports with the engine's search attributes. Never the `npm start` server on 7233.
 */
import fs from 'node:fs';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { searchAttributeArgs } from './dev-server';

/** The Temporal CLI path that test/global-setup.ts found (or built) and put in the environment. */
export function temporalCliPathForTests(): string {
  const cliPath = process.env.TEMPORAL_CLI_PATH;
  if (cliPath === undefined || cliPath === '') {
    throw new Error(
      'TEMPORAL_CLI_PATH is not set: run the tests with `npm test` (or `npx jest`, whose global setup sets it), ' +
        'not with a runner that skips jest.config.js.',
    );
  }
  if (!fs.existsSync(cliPath)) {
    throw new Error(
      `TEMPORAL_CLI_PATH=${cliPath} does not exist; rerun \`npm test\` to find or build the Temporal CLI.`,
    );
  }
  return cliPath;
}

/** A fresh in-memory dev server on free ports; call `teardown()` when done. About 0.2 s to start. */
export async function createLocalTestEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: temporalCliPathForTests() },
      ip: '127.0.0.1',
      extraArgs: searchAttributeArgs(),
    },
  });
}
