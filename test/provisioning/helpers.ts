import { spawnSync } from 'node:child_process';
import net from 'node:net';

/** Ports the OS just handed out; closed again before use, so the server under test can bind them. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** PIDs of running processes whose command line contains `needle` (e.g. a test's unique db file path). */
export function processesMatching(needle: string): string[] {
  const result = spawnSync('pgrep', ['-f', '--', needle], { encoding: 'utf8' });
  return result.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && l !== String(process.pid));
}

export function realTemporalCli(): string {
  const cli = process.env.TEMPORAL_CLI_PATH;
  if (!cli) throw new Error('TEMPORAL_CLI_PATH is not set: run through jest (its global setup sets it)');
  return cli;
}
