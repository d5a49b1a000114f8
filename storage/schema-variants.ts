/**
 * prisma/postgresql/schema.prisma is derived from prisma/schema.prisma, never edited by hand: the models are
 * written once, and only the datasource and the generated client's folder differ. Prisma 6 ties a generated client
 * and its migrations to one provider, so each backend has its own (ADR 0013). Imports nothing from the generated
 * clients: `prisma generate` runs this before they exist.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../config/paths';

export const SQLITE_SCHEMA_FILE = path.join(REPO_ROOT, 'prisma', 'schema.prisma');
export const POSTGRES_SCHEMA_FILE = path.join(REPO_ROOT, 'prisma', 'postgresql', 'schema.prisma');

const HEADER = [
  '// GENERATED from prisma/schema.prisma by `npm run prisma:schemas`: edit that file, not this one.',
  '// The same models for PostgreSQL (DATABASE_URL=postgresql://…), with their own migrations next to this file.',
  '',
].join('\n');

/** Each replacement must match exactly once, so a reworded schema fails loudly instead of deriving nonsense. */
const REPLACEMENTS: readonly [RegExp, string][] = [
  [/^(\s*output\s*=\s*)"\.\.\/storage\/generated\/prisma"$/m, '$1"../../storage/generated/prisma-pg"'],
  [/^(\s*provider\s*=\s*)"sqlite"$/m, '$1"postgresql"'],
  // The PostgreSQL parser insists on a postgresql:// URL even though the driver adapter connects; the SQLite
  // schema's env("DATABASE_URL") is a file: URL whenever the Prisma CLI runs for SQLite (prisma.config.ts).
  [/^(\s*url\s*=\s*)env\("DATABASE_URL"\)$/m, '$1"postgresql://never-used.invalid/adapter-connects"'],
];

export function derivePostgresSchema(sqliteSchema: string): string {
  let schema = sqliteSchema;
  for (const [pattern, replacement] of REPLACEMENTS) {
    const matches = schema.match(new RegExp(pattern.source, 'gm'))?.length ?? 0;
    if (matches !== 1) {
      throw new Error(`prisma/schema.prisma: expected one match of ${pattern.source}, found ${matches}`);
    }
    schema = schema.replace(pattern, replacement);
  }
  return HEADER + schema;
}

/** Rewrites prisma/postgresql/schema.prisma when it differs; true when it changed. */
export function writePostgresSchema(): boolean {
  const wanted = derivePostgresSchema(readFileSync(SQLITE_SCHEMA_FILE, 'utf8'));
  const current = existsSync(POSTGRES_SCHEMA_FILE) ? readFileSync(POSTGRES_SCHEMA_FILE, 'utf8') : null;
  if (current === wanted) return false;
  writeFileSync(POSTGRES_SCHEMA_FILE, wanted);
  return true;
}

if (require.main === module) {
  console.log(
    writePostgresSchema()
      ? `wrote ${path.relative(REPO_ROOT, POSTGRES_SCHEMA_FILE)}`
      : `${path.relative(REPO_ROOT, POSTGRES_SCHEMA_FILE)} is up to date`,
  );
}
