/**
 * The postgresql jest project's global setup: what every project needs (test/global-setup.ts), plus one private
 * PostgreSQL cluster for the whole run, whose URL the test workers inherit. Each test file makes its own database
 * in it (test/helpers/database.ts). AGENTS_TEST_POSTGRES_URL given from outside is used instead of a new cluster.
 */
import { startPostgresCluster } from '../scripts/postgres-cluster';
import type { PostgresCluster } from '../scripts/postgres-cluster';
import globalSetup from './global-setup';

declare global {
  var agentsTestPostgres: PostgresCluster | undefined;
}

export default async function globalSetupPostgresql(): Promise<void> {
  await globalSetup();
  if (process.env.AGENTS_TEST_POSTGRES_URL) return;
  const cluster = await startPostgresCluster({
    log: (line) => process.stderr.write(`\n[postgresql] ${line}\n`),
  });
  globalThis.agentsTestPostgres = cluster;
  process.env.AGENTS_TEST_POSTGRES_URL = cluster.adminUrl;
}
