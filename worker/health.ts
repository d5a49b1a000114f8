/**
 * The worker's health endpoints for orchestrators (issue 14): `GET /healthz` answers 200 while the process can
 * answer at all and its worker has not failed; `GET /readyz` answers 200 only while the worker polls (RUNNING), so
 * a rolling restart takes a draining worker out of rotation before it stops. Plain node:http: two routes need no
 * framework, and the probe must not depend on anything that can hang (the database, Temporal).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { State } from '@temporalio/worker';

export interface HealthServer {
  /** Where it listens: the port asked for, or the one the system chose for 0. */
  url: string;
  close(): Promise<void>;
}

export async function startHealthServer(options: {
  port: number;
  host: string;
  state: () => State;
}): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const state = options.state();
    const reply = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`${body}\n`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'only GET');
    const route = new URL(req.url ?? '/', 'http://worker').pathname;
    if (route === '/healthz') return reply(state === 'FAILED' ? 503 : 200, state);
    if (route === '/readyz') return reply(state === 'RUNNING' ? 200 : 503, state);
    return reply(404, 'not found: /healthz or /readyz');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    url: `http://${options.host}:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
