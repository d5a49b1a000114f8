import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig, REPO_ROOT } from '../../scripts/config';

describe('loadConfig', () => {
  it('has working defaults', () => {
    expect(loadConfig({})).toEqual({
      temporalAddress: '127.0.0.1:7233',
      temporalHost: '127.0.0.1',
      temporalPort: 7233,
      namespace: 'default',
      taskQueue: 'cleveragents-plans',
      uiPort: 8233,
      temporalDbFile: path.join(REPO_ROOT, '.data', 'temporal.db'),
      databaseUrl: `file:${path.join(REPO_ROOT, '.data', 'agents.db')}`,
      temporalCli: undefined,
      logLevel: 'info',
      sandboxDir: path.join(os.homedir(), '.cache', 'cleveragents', 'sandboxes'),
      sandboxIsolation: 'bwrap',
      sandboxCpuSeconds: 600,
      maxCachedWorkflows: 250,
      model: null,
      tracing: null,
    });
  });

  it('treats empty values as unset and :memory: as an in-memory server', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: '',
      TEMPORAL_DB_FILE: ':memory:',
      TEMPORAL_UI_PORT: '9000',
    });
    expect(config.temporalAddress).toBe('127.0.0.1:7233');
    expect(config.temporalDbFile).toBeNull();
    expect(config.uiPort).toBe(9000);
  });

  it('reports every bad field at once', () => {
    let error: unknown;
    try {
      loadConfig({
        TEMPORAL_ADDRESS: 'localhost',
        TEMPORAL_UI_PORT: '99999',
        DATABASE_URL: 'postgres://x',
        LOG_LEVEL: 'loud',
        WORKER_MAX_CACHED_WORKFLOWS: '-5',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const fields = (error as ConfigError).problems.map((p) => p.split(':')[0]).sort();
    expect(fields).toEqual([
      'DATABASE_URL',
      'LOG_LEVEL',
      'TEMPORAL_ADDRESS',
      'TEMPORAL_UI_PORT',
      'WORKER_MAX_CACHED_WORKFLOWS',
    ]);
    expect((error as ConfigError).message).toMatch(/TEMPORAL_UI_PORT: .*\(got "99999"\)/);
  });
});
