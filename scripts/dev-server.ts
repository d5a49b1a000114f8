/**
 * Runs (or reuses) the Temporal dev server that `npm start` and the provisioning tests talk to, with the engine's
 * search attributes registered.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../workflows/definitions';

export interface DevServerOptions {
  cliPath: string;
  host: string;
  port: number;
  uiPort: number;
  /** SQLite file that keeps workflows across restarts; null keeps everything in memory. */
  dbFile: string | null;
  namespace: string;
  log?: (line: string) => void;
}

export interface DevServer {
  /** gRPC address, host:port. */
  address: string;
  uiUrl: string;
  /** True when a server was already answering: then stop() leaves it alone, since we did not start it. */
  reused: boolean;
  stop(): Promise<void>;
  /** Kills the server outright (SIGKILL), as a crash would; its state file keeps what it had committed. */
  crash(): Promise<void>;
}

export class DevServerError extends Error {
  override name = 'DevServerError';
}

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;
const STDERR_TAIL_LINES = 40;

/** `--search-attribute Name=Type` pairs for `temporal server start-dev`, from the workflow definitions. */
export function searchAttributeArgs(): string[] {
  return SEARCH_ATTRIBUTE_DEFINITIONS.flatMap(({ name, type }) => ['--search-attribute', `${name}=${type}`]);
}

function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A wildcard bind address is not something a browser or client can dial. */
function dialHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const address = formatAddress(dialHost(opts.host), opts.port);
  const uiUrl = `http://${formatAddress(dialHost(opts.host), opts.uiPort)}`;

  if (await tcpAnswers(dialHost(opts.host), opts.port)) {
    const connection = await connectOrUndefined(address, 3_000);
    if (!connection) {
      throw new DevServerError(
        `Port ${opts.port} on ${opts.host} is in use by something that is not a Temporal server ` +
          `(no answer to GetSystemInfo). Stop that program or choose another port (TEMPORAL_ADDRESS).`,
      );
    }
    try {
      await ensureNamespace(connection, opts.namespace, log);
      await ensureSearchAttributes(connection, opts.namespace, log);
    } finally {
      await connection.close();
    }
    if ((await httpStatus(uiUrl, 2_000)) !== 200) {
      log(`Note: reusing the Temporal server at ${address}, but no Web UI answers at ${uiUrl}.`);
    }
    return {
      address,
      uiUrl,
      reused: true,
      stop: async () => {},
      crash: async () => {
        throw new DevServerError(`the Temporal server at ${address} was not started here; it is not killed`);
      },
    };
  }

  const server = spawnServer(opts, log);
  try {
    await waitUntilReady(server, address, uiUrl);
    const connection = await Connection.connect({ address, connectTimeout: 5_000 });
    try {
      // start-dev registers --search-attribute only when it creates the namespace: an existing db file from an
      // older version of the engine would otherwise lack attributes added since.
      await ensureSearchAttributes(connection, opts.namespace, log);
    } finally {
      await connection.close();
    }
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { address, uiUrl, reused: false, stop: server.stop, crash: server.crash };
}

interface SpawnedServer {
  child: ChildProcess;
  exited: Promise<void>;
  hasExited(): boolean;
  outputTail(): string;
  stop(): Promise<void>;
  crash(): Promise<void>;
}

function spawnServer(opts: DevServerOptions, log: (line: string) => void): SpawnedServer {
  const args = [
    'server',
    'start-dev',
    '--ip',
    opts.host,
    '--port',
    String(opts.port),
    '--ui-port',
    String(opts.uiPort),
    '--namespace',
    opts.namespace,
    '--log-level',
    'warn',
    ...searchAttributeArgs(),
  ];
  if (opts.dbFile !== null) {
    fs.mkdirSync(path.dirname(path.resolve(opts.dbFile)), { recursive: true });
    args.push('--db-filename', path.resolve(opts.dbFile));
  }

  // Its own process group: a terminal Ctrl-C must reach the worker first so it can drain against a live server;
  // stop() ends the server afterwards.
  const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const tail: string[] = [];
  let exited = false;
  let stopRequested = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      tail.push(`failed to run ${opts.cliPath}: ${err.message}`);
      exited = true;
      resolve();
    });
  });
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        tail.push(line);
        if (tail.length > STDERR_TAIL_LINES) tail.shift();
        // A server shutting down warns about every connection it is closing: noise, not news.
        if (!stopRequested) log(`[temporal] ${line}`);
      }
    });
  }

  // Last resort if this process exits without calling stop() (uncaught error, process.exit): a detached server
  // would otherwise outlive it. 'exit' handlers must be synchronous, hence SIGKILL.
  const killOnExit = (): void => {
    if (!exited && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
  };
  process.on('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopRequested = true;
    stopping ??= (async () => {
      if (!exited && child.pid !== undefined) {
        signalGroup(child.pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (!exited && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
        }, STOP_GRACE_MS);
        await exitedPromise;
        clearTimeout(timer);
      }
      process.off('exit', killOnExit);
    })();
    return stopping;
  };

  const crash = async (): Promise<void> => {
    stopRequested = true;
    if (!exited && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    await exitedPromise;
    process.off('exit', killOnExit);
  };

  return {
    child,
    exited: exitedPromise,
    hasExited: () => exited,
    outputTail: () => tail.join('\n'),
    stop,
    crash,
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

async function waitUntilReady(server: SpawnedServer, address: string, uiUrl: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let grpcReady = false;
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline) {
    if (server.hasExited()) {
      throw new DevServerError(
        `temporal server start-dev exited before it was ready (exit code ${String(server.child.exitCode)}).\n` +
          `Its last output:\n${server.outputTail() || '(none)'}`,
      );
    }
    if (!grpcReady) {
      const connection = await connectOrUndefined(address, 1_000);
      if (connection) {
        grpcReady = true;
        await connection.close();
      } else {
        lastProblem = `gRPC at ${address} does not answer`;
      }
    }
    if (grpcReady) {
      const status = await httpStatus(uiUrl, 1_000);
      if (status === 200) return;
      lastProblem = `Web UI at ${uiUrl} answered ${status === undefined ? 'nothing' : `HTTP ${status}`}`;
    }
    await Promise.race([sleep(250), server.exited]);
  }
  throw new DevServerError(
    `temporal server start-dev was not ready within ${READY_TIMEOUT_MS / 1000} s (${lastProblem}).\n` +
      `Its last output:\n${server.outputTail() || '(none)'}`,
  );
}

/** Cheap first look, so that a free port does not cost a gRPC connect timeout. */
function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function connectOrUndefined(address: string, timeoutMs: number): Promise<Connection | undefined> {
  // lazy + close on failure: a failed Connection.connect() would keep its channel (and a socket into whatever
  // holds the port) open.
  const connection = Connection.lazy({ address, connectTimeout: timeoutMs });
  try {
    await connection.ensureConnected();
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
    return connection;
  } catch {
    await connection.close().catch(() => undefined);
    return undefined;
  }
}

function httpStatus(url: string, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

const GRPC_NOT_FOUND = 5;

/** Registers the namespace when the server does not know it (a reused server, a compose deployment). */
export async function ensureNamespace(
  connection: Connection,
  namespace: string,
  log: (line: string) => void,
): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return;
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_NOT_FOUND) throw err;
  }
  log(`Registering namespace ${namespace} on the running Temporal server`);
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
}

/**
 * Adds whichever of the engine's search attributes the namespace lacks. A namespace registered a moment ago may
 * not be visible to every server component yet, hence the short retry.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  log: (line: string) => void = () => {},
): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const existing = customAttributes ?? {};
      const missing: Record<string, number> = {};
      for (const { name, type } of SEARCH_ATTRIBUTE_DEFINITIONS) {
        const wanted = encodeSearchAttributeIndexedValueType(
          (type === 'KeywordList' ? 'KEYWORD_LIST' : type.toUpperCase()) as Parameters<
            typeof encodeSearchAttributeIndexedValueType
          >[0],
        );
        if (wanted === undefined) throw new DevServerError(`unknown search attribute type ${type}`);
        const have = existing[name];
        if (have === undefined) missing[name] = wanted;
        else if (have !== wanted) {
          throw new DevServerError(
            `Search attribute ${name} exists in namespace ${namespace} with another type (${String(have)}, wanted ${type}); ` +
              'use a fresh TEMPORAL_DB_FILE or another namespace.',
          );
        }
      }
      if (Object.keys(missing).length === 0) return;
      log(`Registering search attributes ${Object.keys(missing).join(', ')} in namespace ${namespace}`);
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
      return;
    } catch (err) {
      if (err instanceof DevServerError || Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
