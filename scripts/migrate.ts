/**
 * `npm run db:migrate`: brings DATABASE_URL's database (SQLite or PostgreSQL; default .data/agents.db) up to this
 * engine's schema and says what it applied. Safe to run again and from several places at once (a deployment's
 * one-shot migration job, `npm start`): applied migrations are recorded and skipped.
 */
import { z } from 'zod';
import { describeEnvIssues, presentVariables, sharedEnvFields } from '../config/env';
import { redactDatabaseUrl, resolveDatabaseUrl } from '../storage/database-url';
import { migrateDatabase } from '../storage/migrate';

const envSchema = z.object({ DATABASE_URL: sharedEnvFields.DATABASE_URL });

async function main(): Promise<void> {
  const parsed = envSchema.safeParse(presentVariables(process.env));
  if (!parsed.success) {
    throw new Error(`invalid configuration: ${describeEnvIssues(parsed.error, process.env).join('; ')}`);
  }
  const url = resolveDatabaseUrl(parsed.data.DATABASE_URL);
  const { applied } = await migrateDatabase(url);
  const where = redactDatabaseUrl(url);
  console.log(
    applied.length === 0
      ? `db:migrate: ${where} is up to date`
      : `db:migrate: applied ${applied.join(', ')} to ${where}`,
  );
}

main().catch((err: unknown) => {
  console.error(`db:migrate: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
