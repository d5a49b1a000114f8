/**
 * TLS to Temporal for real: the dev server speaks only plaintext (`temporal server start-dev` has no TLS flags), so
 * a TLS terminator that demands a client certificate (mTLS) stands in front of it, with certificates made here by
 * openssl. The worker's connection (NativeConnection, Rust) and the CLI's (Connection, grpc-js) are both built from
 * the configuration the way the processes build them, and must get through with the right certificates only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { loadClientConfig } from '../../client/config';
import { connectPlanClient } from '../../client/plans';
import { temporalConnectionOptions } from '../../config/temporal-connection';
import { createLocalTestEnv } from '../../scripts/test-env';
import { disconnectSharedPrismaClients } from '../../storage/prisma';
import { loadWorkerConfig } from '../../worker/config';

const SERVER_NAME = 'temporal.test';

let env: TestWorkflowEnvironment;
let dir: string;
let proxy: tls.Server;
/** host:port of the TLS terminator in front of the dev server. */
let tlsAddress: string;
let pem: (name: string) => string;
/** Whether the terminator saw a client certificate it verified, per connection. */
const verifiedClients: boolean[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A P-256 key and a certificate for it signed by the test CA, with the given extensions. */
function issue(name: string, subject: string, extensions: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${subject}`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-out',
    `${name}.pem`,
    '-extfile',
    `${name}.ext`,
  );
}

beforeAll(async () => {
  env = await createLocalTestEnv();
  dir = mkdtempSync(path.join(tmpdir(), 'temporal-tls-'));
  pem = (name) => path.join(dir, name);
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=test CA',
  );
  issue('server', SERVER_NAME, `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth\n`);
  issue('client', 'worker', 'extendedKeyUsage=clientAuth\n');
  const [host, port] = env.address.split(':') as [string, string];
  proxy = tls.createServer(
    {
      key: readFileSync(pem('server.key')),
      cert: readFileSync(pem('server.pem')),
      ca: readFileSync(pem('ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      // gRPC clients insist on HTTP/2 being negotiated; behind the terminator it is plaintext HTTP/2.
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      verifiedClients.push(socket.authorized);
      const upstream = net.connect(Number(port), host);
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    },
  );
  proxy.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  tlsAddress = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await env?.teardown();
  await disconnectSharedPrismaClients();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function mtlsEnv(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: tlsAddress,
    TEMPORAL_TLS_CA: pem('ca.pem'),
    TEMPORAL_TLS_CERT: pem('client.pem'),
    TEMPORAL_TLS_KEY: pem('client.key'),
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    ...overrides,
  };
}

/** The worker's connection, as worker/main.ts opens it; resolves with the server's version. */
async function workerConnects(processEnv: NodeJS.ProcessEnv): Promise<string> {
  const connection = await NativeConnection.connect(temporalConnectionOptions(loadWorkerConfig(processEnv)));
  try {
    const info = await connection.workflowService.getSystemInfo({});
    return info.serverVersion ?? '';
  } finally {
    await connection.close();
  }
}

/** The CLI's connection, as client/plans.ts opens it. */
async function cliConnects(processEnv: NodeJS.ProcessEnv): Promise<string> {
  const connection = await Connection.connect({
    ...temporalConnectionOptions(loadClientConfig(processEnv)),
    connectTimeout: '5 seconds',
  });
  try {
    const info = await connection.workflowService.getSystemInfo({});
    return info.serverVersion ?? '';
  } finally {
    await connection.close();
  }
}

it('gets the worker and the CLI through mutual TLS with the configured CA, client pair and server name', async () => {
  const seen = verifiedClients.length;
  expect(await workerConnects(mtlsEnv())).toMatch(/^\d+\.\d+/);
  expect(await cliConnects(mtlsEnv())).toMatch(/^\d+\.\d+/);
  // Both went through the terminator, each with a client certificate it verified.
  expect(verifiedClients.slice(seen)).toEqual(expect.arrayContaining([true]));
  expect(verifiedClients.slice(seen).every(Boolean)).toBe(true);
});

it('is refused without its client certificate, or when it does not trust the server', async () => {
  const noClientCert = mtlsEnv({ TEMPORAL_TLS_CERT: undefined, TEMPORAL_TLS_KEY: undefined });
  // rustls names the reason when it reads the terminator's alert. Under TLS 1.3 the client finishes its handshake
  // before the server has checked for a certificate, so the first request may instead meet the closed connection
  // (BrokenPipe): either way the worker is refused (CI saw both). grpc-js only gives up at its deadline.
  await expect(workerConnects(noClientCert)).rejects.toThrow(/CertificateRequired|BrokenPipe/);
  await expect(cliConnects(noClientCert)).rejects.toThrow(/Failed to connect before the deadline/);
  // The system's CAs do not know the test CA.
  const systemCas = mtlsEnv({ TEMPORAL_TLS_CA: undefined });
  await expect(workerConnects(systemCas)).rejects.toThrow(/InvalidCertificate\(UnknownIssuer\)/);
  await expect(cliConnects(systemCas)).rejects.toThrow(/Failed to connect before the deadline/);
});

it('speaks TLS when told to: a plaintext server then fails the handshake, plaintext still works', async () => {
  const plainServer = { TEMPORAL_ADDRESS: env.address };
  // A plaintext HTTP/2 reply where a TLS record was expected.
  await expect(workerConnects({ ...plainServer, TEMPORAL_TLS: 'true' })).rejects.toThrow(
    /InvalidContentType/,
  );
  await expect(cliConnects({ ...plainServer, TEMPORAL_API_KEY: 'not-sent-in-clear' })).rejects.toThrow(
    /Failed to connect before the deadline/,
  );
  expect(await workerConnects(plainServer)).toMatch(/^\d+\.\d+/);
});

it("tells the CLI's user to check the TLS settings, not to start a server, when the handshake fails", async () => {
  const config = loadClientConfig({
    ...mtlsEnv({ TEMPORAL_TLS_CERT: undefined, TEMPORAL_TLS_KEY: undefined }),
    DATABASE_URL: `file:${path.join(dir, 'agents.db')}`,
  });
  await expect(connectPlanClient(config)).rejects.toThrow(
    /^cannot reach the Temporal server at 127\.0\.0\.1:\d+ over TLS \(.*\); check the server and TEMPORAL_TLS_CA, /,
  );
});
