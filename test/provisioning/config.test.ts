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
      worker: { logFormat: 'text', metrics: null, health: null, shutdownGraceSeconds: 25 },
    });
  });

  it('gives the worker it runs what `npm run worker` would read: metrics, health, log format, grace', () => {
    expect(
      loadConfig({
        WORKER_METRICS_PORT: '9464',
        WORKER_HEALTH_PORT: '0',
        WORKER_HEALTH_HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        WORKER_SHUTDOWN_GRACE_SECONDS: '5',
      }).worker,
    ).toEqual({
      logFormat: 'json',
      metrics: { port: 9464, host: '0.0.0.0' },
      health: { port: 0, host: '127.0.0.1' },
      shutdownGraceSeconds: 5,
    });
  });

  it('accepts a PostgreSQL DATABASE_URL and refuses TLS settings for its local plaintext server', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://agents@db:5432/agents' }).databaseUrl).toBe(
      'postgresql://agents@db:5432/agents',
    );
    expect(() => loadConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'true' })).toThrow(
      /TEMPORAL_TLS: npm start runs a local Temporal dev server without TLS[\s\S]*TEMPORAL_API_KEY: npm start/,
    );
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
        DATABASE_URL: 'mysql://root:s3cret@x/agents',
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
    expect((error as ConfigError).message).toMatch(
      /DATABASE_URL: .*\(got "mysql:\/\/root:\*\*\*@x\/agents"\)/,
    );
  });
});
