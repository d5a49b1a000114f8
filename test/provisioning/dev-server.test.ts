import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributeArgs, startDevServer } from '../../scripts/dev-server';
import type { DevServer } from '../../scripts/dev-server';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../workflows/definitions';
import { freePorts, processesMatching, realTemporalCli } from './helpers';

const NAMESPACE = 'provisioning-test';
const quiet = () => {};

function httpStatus(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    http
      .get(url, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
      .on('error', () => resolve(undefined));
  });
}

async function listCustomSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.keys(customAttributes ?? {}).sort();
  } finally {
    await connection.close();
  }
}

function tcpAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A TCP listener that accepts and never answers, like a stuck service. close() destroys its sockets: a server's
 * close() alone waits for them, and gRPC never closes a connection whose HTTP/2 handshake did not complete.
 */
async function squat(port: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('startDevServer', () => {
  let tmp: string;
  const started: DevServer[] = [];

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-server-test-'));
  });

  afterAll(async () => {
    for (const server of started) await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('derives one --search-attribute pair per workflow search attribute', () => {
    expect(searchAttributeArgs()).toEqual(
      SEARCH_ATTRIBUTE_DEFINITIONS.flatMap((d) => ['--search-attribute', `${d.name}=${d.type}`]),
    );
  });

  it('starts a server with UI and search attributes, is reused on the same port, and stops without a trace', async () => {
    const [port, uiPort] = await freePorts(2);
    // A parent directory that does not exist yet: startDevServer creates it.
    const dbFile = path.join(tmp, 'nested', 'dir', 'temporal.db');
    const opts = {
      cliPath: realTemporalCli(),
      host: '127.0.0.1',
      port: port!,
      uiPort: uiPort!,
      dbFile,
      namespace: NAMESPACE,
      log: quiet,
    };

    const first = await startDevServer(opts);
    started.push(first);
    expect(first).toMatchObject({
      address: `127.0.0.1:${port}`,
      uiUrl: `http://127.0.0.1:${uiPort}`,
      reused: false,
    });
    expect(await httpStatus(first.uiUrl)).toBe(200);
    expect(fs.existsSync(dbFile)).toBe(true);
    const expected = SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => d.name).sort();
    expect(await listCustomSearchAttributes(first.address, NAMESPACE)).toEqual(
      expect.arrayContaining(expected),
    );
    expect(processesMatching(dbFile)).toHaveLength(1);

    const second = await startDevServer(opts);
    expect(second.reused).toBe(true);
    expect(second.address).toBe(first.address);
    await second.stop();
    // Stopping the reuser must leave the real server running.
    expect(await tcpAnswers(port!)).toBe(true);

    await first.stop();
    expect(processesMatching(dbFile)).toEqual([]);
    expect(await tcpAnswers(port!)).toBe(false);
    await first.stop(); // idempotent

    // Same db file again: state survives, attributes are still there.
    const again = await startDevServer(opts);
    started.push(again);
    expect(again.reused).toBe(false);
    expect(await listCustomSearchAttributes(again.address, NAMESPACE)).toEqual(
      expect.arrayContaining(expected),
    );
    await again.stop();
    expect(processesMatching(dbFile)).toEqual([]);
  });

  it('refuses a port held by something that is not a Temporal server', async () => {
    const [port, uiPort] = await freePorts(2);
    const squatter = await squat(port!);
    try {
      await expect(
        startDevServer({
          cliPath: realTemporalCli(),
          host: '127.0.0.1',
          port: port!,
          uiPort: uiPort!,
          dbFile: null,
          namespace: 'default',
          log: quiet,
        }),
      ).rejects.toThrow(
        new RegExp(`Port ${port} on 127.0.0.1 is in use by something that is not a Temporal server`),
      );
    } finally {
      await squatter.close();
    }
  });

  it("reports the server's own output when it exits early (UI port taken)", async () => {
    const [port, uiPort] = await freePorts(2);
    const squatter = await squat(uiPort!);
    try {
      await expect(
        startDevServer({
          cliPath: realTemporalCli(),
          host: '127.0.0.1',
          port: port!,
          uiPort: uiPort!,
          dbFile: null,
          namespace: 'default',
          log: quiet,
        }),
      ).rejects.toThrow(new RegExp(`exited before it was ready[\\s\\S]*${uiPort}`));
    } finally {
      await squatter.close();
    }
    expect(await tcpAnswers(port!)).toBe(false);
  });
});
