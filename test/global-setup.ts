/**
 * Jest global setup: runs once, in the parent jest process, before any test file. Workers inherit the environment
 * it sets, so each workflow test can start a private dev server without searching for the CLI again.
 */
import { ensureTemporalCli } from '../scripts/temporal-cli';
import { ensurePrismaClientGenerated } from '../storage/migrate';

export default async function globalSetup(): Promise<void> {
  // `npm test` has already done this (and shown build progress); a bare `npx jest` gets the same result here.
  process.env.TEMPORAL_CLI_PATH = process.env.TEMPORAL_CLI_PATH || (await ensureTemporalCli());
  await ensurePrismaClientGenerated();
}
