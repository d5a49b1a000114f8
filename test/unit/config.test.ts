import { loadClientConfig } from '../../client/config';
import { PlanClientError } from '../../client/errors';
import { ConfigError, loadWorkerConfig } from '../../worker/config';

describe('worker and client configuration', () => {
  it('defaults everything, treating empty values as unset', () => {
    expect(loadWorkerConfig({ TEMPORAL_NAMESPACE: '' })).toEqual({
      temporalAddress: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'cleveragents-plans',
      databaseUrl: undefined,
      logLevel: 'info',
    });
    expect(loadClientConfig({})).toEqual({
      temporalAddress: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'cleveragents-plans',
      databaseUrl: undefined,
    });
  });

  it('fails fast naming every bad variable', () => {
    const env = { TEMPORAL_ADDRESS: 'localhost', DATABASE_URL: 'postgres://x', LOG_LEVEL: 'loud' };
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(
      /TEMPORAL_ADDRESS: must be host:port.*\(got "localhost"\); DATABASE_URL: must be a file: URL.*; LOG_LEVEL: .*\(got "loud"\)/,
    );
    expect(() => loadClientConfig(env)).toThrow(PlanClientError);
    expect(() => loadClientConfig(env)).toThrow(/TEMPORAL_ADDRESS: must be host:port/);
  });
});
