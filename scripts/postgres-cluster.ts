/**
 * A private PostgreSQL cluster for tests and benchmarks: `initdb` into a temporary directory, started on a free
 * port that listens on 127.0.0.1 only, trusted for local connections, gone when stopped. Uses the PostgreSQL
 * server installed on the machine (Debian: `apt-get install postgresql`); nothing is downloaded.
 *
 * PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` account the Debian package
 * creates (through `runuser`), and its directory is handed to that account.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../lib/net';
import { findPostgresBin, postgresUnavailableReason } from './postgres-bin';

export { findPostgresBin, postgresUnavailableReason };

export interface PostgresCluster {
  /** A superuser URL of the `postgres` database, e.g. postgresql://agents@127.0.0.1:PORT/postgres. */
  adminUrl: string;
  port: number;
  dataDir: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: open connections are cut), keeping its data. */
  stop(): void;
  /** Starts it again on the same port and data. */
  start(): void;
  /** Stops it and removes its directory. */
  destroy(): void;
}

export const CLUSTER_USER = 'agents';

/**
 * Creates and starts a cluster. Durability is traded for speed (fsync off): the data is a test's, and
 * nothing here survives a machine crash anyway.
 */
export async function startPostgresCluster(
  options: {
    /** Where its directory is made (default: the system's temp dir); as root, the postgres account must reach it. */
    parentDir?: string;
    log?: (line: string) => void;
  } = {},
): Promise<PostgresCluster> {
  const reason = postgresUnavailableReason();
  if (reason !== null) throw new Error(`cannot start PostgreSQL: ${reason}`);
  const bin = findPostgresBin() as string;
  const root = mkdtempSync(path.join(options.parentDir ?? os.tmpdir(), 'agents-pg-'));
  const dataDir = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(root, uid, gid);
  }
  const run = (program: string, args: string[]): void => {
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', path.join(bin, program), ...args]]
      : [path.join(bin, program), args];
    const result = spawnSync(command, argv, { encoding: 'utf8', cwd: root, timeout: 120_000 });
    if (result.status !== 0) {
      const logFile = path.join(root, 'server.log');
      const serverLog = existsSync(logFile) ? `\n${readFileSync(logFile, 'utf8').slice(-2_000)}` : '';
      throw new Error(
        `${program} ${args.join(' ')} failed (${result.status ?? result.signal}): ` +
          `${result.stderr || result.stdout || result.error?.message}${serverLog}`,
      );
    }
  };

  run('initdb', [
    '-D',
    dataDir,
    '-U',
    CLUSTER_USER,
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  const port = await freePort();
  const serverOptions = [
    `-p ${port}`,
    `-k ${root}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=300',
  ].join(' ');
  const start = (): void =>
    run('pg_ctl', [
      '-D',
      dataDir,
      '-o',
      serverOptions,
      '-l',
      path.join(root, 'server.log'),
      '-w',
      '-t',
      '60',
      'start',
    ]);
  const stop = (): void => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  start();
  options.log?.(`PostgreSQL (${path.basename(path.dirname(bin))}) on 127.0.0.1:${port}, data in ${dataDir}`);

  const urlOf = (database: string): string => `postgresql://${CLUSTER_USER}@127.0.0.1:${port}/${database}`;
  let running = true;
  return {
    adminUrl: urlOf('postgres'),
    port,
    dataDir,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const client = new pg.Client({ connectionString: urlOf('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return urlOf(name);
    },
    stop() {
      stop();
      running = false;
    },
    start() {
      start();
      running = true;
    },
    destroy() {
      if (running) {
        try {
          stop();
        } catch {
          // Already gone (the machine's tmp was cleaned, the process was killed): remove what is left anyway.
        }
        running = false;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** For a standalone cluster while developing: prints its URL and keeps it until Ctrl-C. */
if (require.main === module) {
  mkdirSync(os.tmpdir(), { recursive: true });
  startPostgresCluster({ log: console.log })
    .then((cluster) => {
      console.log(`DATABASE_URL=${cluster.adminUrl}`);
      const end = () => {
        cluster.destroy();
        process.exit(0);
      };
      process.on('SIGINT', end);
      process.on('SIGTERM', end);
    })
    .catch((err: unknown) => {
      console.error((err as Error).message);
      process.exit(1);
    });
}
