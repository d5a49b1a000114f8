import { createLocalTestEnv, temporalCliPathForTests } from '../../scripts/test-env';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../workflows/definitions';

describe('test environment helpers', () => {
  it('gives the CLI path the global setup found', () => {
    expect(temporalCliPathForTests()).toBe(process.env.TEMPORAL_CLI_PATH);
  });

  it('explains how to get TEMPORAL_CLI_PATH when it is missing', () => {
    const saved = process.env.TEMPORAL_CLI_PATH;
    delete process.env.TEMPORAL_CLI_PATH;
    try {
      expect(() => temporalCliPathForTests()).toThrow(/npm test/);
    } finally {
      process.env.TEMPORAL_CLI_PATH = saved;
    }
  });

  it('starts a private server on a free port with the search attributes', async () => {
    const env = await createLocalTestEnv();
    try {
      expect(env.address).not.toMatch(/:7233$/);
      const { customAttributes } = await env.connection.operatorService.listSearchAttributes({
        namespace: 'default',
      });
      for (const { name } of SEARCH_ATTRIBUTE_DEFINITIONS) expect(customAttributes).toHaveProperty(name);
    } finally {
      await env.teardown();
    }
  });
});
