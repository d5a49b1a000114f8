import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadClientConfig } from '../../client/config';
import { REPO_ROOT } from '../../config/paths';
import { PlanClientError } from '../../client/errors';
import { ConfigError, loadWorkerConfig } from '../../worker/config';
import { defaultMaxCachedWorkflows } from '../../config/worker-memory';
import { describeTemporalSecurity, temporalConnectionOptions } from '../../config/temporal-connection';

describe('worker and client configuration', () => {
  it('defaults everything, treating empty values as unset', () => {
    expect(loadWorkerConfig({ TEMPORAL_NAMESPACE: '' })).toEqual({
      temporalAddress: '127.0.0.1:7233',
      temporalTls: null,
      temporalApiKey: null,
      namespace: 'default',
      taskQueue: 'cleveragents-plans',
      databaseUrl: undefined,
      logLevel: 'info',
      logFormat: 'text',
      sandboxDir: path.join(os.homedir(), '.cache', 'cleveragents', 'sandboxes'),
      sandboxIsolation: 'bwrap',
      sandboxCpuSeconds: 600,
      maxCachedWorkflows: defaultMaxCachedWorkflows(),
      model: null,
      health: null,
      metrics: null,
      shutdownGraceSeconds: 25,
      tracing: null,
    });
    expect(loadClientConfig({})).toEqual({
      temporalAddress: '127.0.0.1:7233',
      temporalTls: null,
      temporalApiKey: null,
      namespace: 'default',
      taskQueue: 'cleveragents-plans',
      databaseUrl: undefined,
      tracing: null,
    });
  });

  it('traces only where an OTLP endpoint is set, each process under its own service name', () => {
    // The base endpoint gets the traces path (a trailing slash or not); the traces endpoint is taken as given.
    expect(loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'cleveragents-worker',
    });
    expect(loadClientConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com' }).tracing).toEqual({
      tracesUrl: 'https://otel.example.com/v1/traces',
      serviceName: 'cleveragents-cli',
    });
    expect(
      loadClientConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
        OTEL_SERVICE_NAME: 'ci-agents',
      }).tracing,
    ).toEqual({ tracesUrl: 'http://traces:4318/custom', serviceName: 'ci-agents' });
    // Empty counts as unset: off.
    expect(loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SERVICE_NAME: 'x' }).tracing).toBeNull();
    expect(() => loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL .*\(got "collector:4318"\)/,
    );
    expect(() => loadClientConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http\(s\) URL/,
    );
  });

  it('resolves SANDBOX_DIR from the repository root and reads the model endpoint', () => {
    const config = loadWorkerConfig({
      SANDBOX_DIR: 'tmp/boxes',
      CLEVERAGENTS_MODEL_BASE_URL: 'http://127.0.0.1:11434/v1',
      CLEVERAGENTS_MODEL: 'llama3.1',
    });
    expect(config.sandboxDir).toBe(path.join(REPO_ROOT, 'tmp', 'boxes'));
    expect(config.model).toMatchObject({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.1' });
  });

  it('keeps sandboxes in the user cache directory, outside the checkout, by default', () => {
    expect(loadWorkerConfig({ XDG_CACHE_HOME: '/var/cache/me' }).sandboxDir).toBe(
      '/var/cache/me/cleveragents/sandboxes',
    );
    // The XDG spec ignores a relative XDG_CACHE_HOME.
    expect(loadWorkerConfig({ XDG_CACHE_HOME: 'cache', HOME: '/home/me' }).sandboxDir).toBe(
      '/home/me/.cache/cleveragents/sandboxes',
    );
  });

  it('isolates commands unless SANDBOX_ISOLATION=none says otherwise, and knows no third way', () => {
    expect(loadWorkerConfig({ SANDBOX_ISOLATION: 'none', SANDBOX_CPU_SECONDS: '30' })).toMatchObject({
      sandboxIsolation: 'none',
      sandboxCpuSeconds: 30,
    });
    expect(() => loadWorkerConfig({ SANDBOX_ISOLATION: 'off' })).toThrow(
      /SANDBOX_ISOLATION: .*"bwrap".*"none".*\(got "off"\)/,
    );
    expect(() => loadWorkerConfig({ SANDBOX_CPU_SECONDS: '0' })).toThrow(/SANDBOX_CPU_SECONDS/);
  });

  it('bounds the workflow cache by default, from the heap, and takes WORKER_MAX_CACHED_WORKFLOWS as given', () => {
    // Jest's heap (Node's default, a quarter of the memory up to 4 GB) holds far more than the ceiling.
    expect(loadWorkerConfig({}).maxCachedWorkflows).toBe(250);
    expect(defaultMaxCachedWorkflows(4144)).toBe(250);
    // A 384 MB heap (the worker's before scripts/worker-process.js raised it to 1,536 MB) still holds 250.
    expect(defaultMaxCachedWorkflows(396)).toBe(250);
    expect(defaultMaxCachedWorkflows(320)).toBe(200);
    expect(defaultMaxCachedWorkflows(100)).toBe(40);
    expect(loadWorkerConfig({ WORKER_MAX_CACHED_WORKFLOWS: '1000' }).maxCachedWorkflows).toBe(1000);
    expect(loadWorkerConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }).maxCachedWorkflows).toBe(0);
    expect(loadWorkerConfig({ WORKER_MAX_CACHED_WORKFLOWS: '' }).maxCachedWorkflows).toBe(250);
    expect(() => loadWorkerConfig({ WORKER_MAX_CACHED_WORKFLOWS: '-1' })).toThrow(
      /WORKER_MAX_CACHED_WORKFLOWS: must be 0 \(no cache\) or more \(got "-1"\)/,
    );
    expect(() => loadWorkerConfig({ WORKER_MAX_CACHED_WORKFLOWS: '2.5' })).toThrow(
      /WORKER_MAX_CACHED_WORKFLOWS: must be a whole number of workflows \(got "2.5"\)/,
    );
    expect(() => loadWorkerConfig({ WORKER_MAX_CACHED_WORKFLOWS: 'many' })).toThrow(
      /WORKER_MAX_CACHED_WORKFLOWS: .*\(got "many"\)/,
    );
  });

  it('serves health endpoints only where WORKER_HEALTH_PORT says, on every interface unless told', () => {
    expect(loadWorkerConfig({}).health).toBeNull();
    expect(loadWorkerConfig({ WORKER_HEALTH_PORT: '9464' }).health).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(loadWorkerConfig({ WORKER_HEALTH_PORT: '0', WORKER_HEALTH_HOST: '127.0.0.1' }).health).toEqual({
      port: 0,
      host: '127.0.0.1',
    });
    expect(() => loadWorkerConfig({ WORKER_HEALTH_PORT: '70000' })).toThrow(
      /WORKER_HEALTH_PORT: must be a port number \(0 to 65535\) \(got "70000"\)/,
    );
    expect(loadWorkerConfig({ WORKER_SHUTDOWN_GRACE_SECONDS: '0' }).shutdownGraceSeconds).toBe(0);
    expect(() => loadWorkerConfig({ WORKER_SHUTDOWN_GRACE_SECONDS: '-5' })).toThrow(
      /WORKER_SHUTDOWN_GRACE_SECONDS: must be 0 or more seconds \(got "-5"\)/,
    );
    expect(() => loadWorkerConfig({ WORKER_HEALTH_PORT: 'http' })).toThrow(
      /WORKER_HEALTH_PORT: .*\(got "http"\)/,
    );
  });

  it('serves metrics only where WORKER_METRICS_PORT says, and prints JSON only when LOG_FORMAT=json', () => {
    expect(loadWorkerConfig({}).metrics).toBeNull();
    expect(loadWorkerConfig({ WORKER_METRICS_PORT: '9464' }).metrics).toEqual({
      port: 9464,
      host: '0.0.0.0',
    });
    expect(loadWorkerConfig({ WORKER_METRICS_PORT: '0', WORKER_METRICS_HOST: '::1' }).metrics).toEqual({
      port: 0,
      host: '::1',
    });
    expect(() => loadWorkerConfig({ WORKER_METRICS_PORT: '65536' })).toThrow(
      /WORKER_METRICS_PORT: must be a port number \(0 to 65535\) \(got "65536"\)/,
    );
    expect(loadWorkerConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadWorkerConfig({ LOG_FORMAT: 'yaml' })).toThrow(
      /LOG_FORMAT: .*"text".*"json".*\(got "yaml"\)/,
    );
  });

  describe('TLS to Temporal', () => {
    let dir: string;
    let files: { ca: string; cert: string; key: string };
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'tls-config-'));
      files = {
        ca: path.join(dir, 'ca.pem'),
        cert: path.join(dir, 'client.pem'),
        key: path.join(dir, 'client.key'),
      };
      for (const [name, file] of Object.entries(files)) writeFileSync(file, `-----${name}-----\n`);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads the CA, the client pair and the server name into one TLS setting for worker and CLI alike', () => {
      const env = {
        TEMPORAL_ADDRESS: 'temporal.example.com:7233',
        TEMPORAL_TLS_CA: files.ca,
        TEMPORAL_TLS_CERT: files.cert,
        TEMPORAL_TLS_KEY: files.key,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      };
      const worker = loadWorkerConfig(env);
      expect(worker.temporalTls).toEqual({
        serverRootCACertificate: Buffer.from('-----ca-----\n'),
        clientCertPair: { crt: Buffer.from('-----cert-----\n'), key: Buffer.from('-----key-----\n') },
        serverNameOverride: 'temporal.internal',
      });
      expect(loadClientConfig(env)).toMatchObject({ temporalTls: worker.temporalTls, temporalApiKey: null });
      expect(temporalConnectionOptions(worker)).toEqual({
        address: 'temporal.example.com:7233',
        tls: worker.temporalTls,
      });
      expect(describeTemporalSecurity(worker)).toBe('mTLS');
    });

    it('turns TLS on for an API key (Temporal Cloud) or TEMPORAL_TLS=true, and leaves it off otherwise', () => {
      const cloud = loadWorkerConfig({ TEMPORAL_API_KEY: 'secret-key' });
      expect(temporalConnectionOptions(cloud)).toEqual({
        address: '127.0.0.1:7233',
        tls: {},
        apiKey: 'secret-key',
      });
      expect(describeTemporalSecurity(cloud)).toBe('TLS, API key');
      expect(loadClientConfig({ TEMPORAL_API_KEY: 'secret-key' })).toMatchObject({
        temporalTls: {},
        temporalApiKey: 'secret-key',
      });
      expect(loadWorkerConfig({ TEMPORAL_TLS: 'true' }).temporalTls).toEqual({});
      const plain = loadWorkerConfig({ TEMPORAL_TLS: 'false' });
      expect(temporalConnectionOptions(plain)).toEqual({ address: '127.0.0.1:7233', tls: false });
      expect(describeTemporalSecurity(plain)).toBe('plaintext');
    });

    it('refuses half a client pair, an unreadable file and contradictions, naming the variables', () => {
      expect(() => loadWorkerConfig({ TEMPORAL_TLS_CERT: files.cert })).toThrow(
        /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY: mTLS needs both .*\(got only TEMPORAL_TLS_CERT\)/,
      );
      expect(() => loadClientConfig({ TEMPORAL_TLS_KEY: files.key })).toThrow(
        /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY: .*\(got only TEMPORAL_TLS_KEY\)/,
      );
      const missing = path.join(dir, 'nope.pem');
      expect(() => loadWorkerConfig({ TEMPORAL_TLS_CA: missing })).toThrow(
        new RegExp(`TEMPORAL_TLS_CA: cannot read "${missing}" \\(ENOENT\\)`),
      );
      expect(() => loadClientConfig({ TEMPORAL_TLS_CA: dir })).toThrow(PlanClientError);
      expect(() => loadClientConfig({ TEMPORAL_TLS_CA: dir })).toThrow(
        /TEMPORAL_TLS_CA: cannot read .*\(EISDIR\)/,
      );
      expect(() => loadWorkerConfig({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' })).toThrow(
        /TEMPORAL_TLS: is false, but TEMPORAL_API_KEY needs TLS/,
      );
      expect(() => loadWorkerConfig({ TEMPORAL_TLS: 'yes' })).toThrow(
        /TEMPORAL_TLS: must be true or false \(got "yes"\)/,
      );
    });
  });

  it('refuses a model endpoint without a model name', () => {
    expect(() => loadWorkerConfig({ CLEVERAGENTS_MODEL_BASE_URL: 'http://127.0.0.1:1/v1' })).toThrow(
      /invalid worker configuration: .*CLEVERAGENTS_MODEL/,
    );
  });

  it('fails fast naming every bad variable', () => {
    const env = {
      TEMPORAL_ADDRESS: 'localhost',
      DATABASE_URL: 'mysql://root:s3cret@x/db',
      LOG_LEVEL: 'loud',
    };
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(
      /TEMPORAL_ADDRESS: must be host:port.*\(got "localhost"\); DATABASE_URL: must be file:\/path\/to\/agents\.db \(SQLite\) or postgresql:\/\/.* \(got "mysql:\/\/root:\*\*\*@x\/db"\); LOG_LEVEL: .*\(got "loud"\)/,
    );
    expect(loadWorkerConfig({ DATABASE_URL: 'postgresql://agents@db/agents' }).databaseUrl).toBe(
      'postgresql://agents@db/agents',
    );
    expect(() => loadClientConfig(env)).toThrow(PlanClientError);
    expect(() => loadClientConfig(env)).toThrow(/TEMPORAL_ADDRESS: must be host:port/);
  });
});
