/**
 * The PostgreSQL schema is derived from the SQLite one (ADR 0014): the checked-in file must be exactly what the
 * derivation gives, or a model change reached one backend only.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import { dialectOfUrl, redactDatabaseUrl } from '../../storage/database-url';
import { postgresPoolConfig } from '../../storage/postgres';
import {
  POSTGRES_SCHEMA_FILE,
  SQLITE_SCHEMA_FILE,
  derivePostgresSchema,
} from '../../storage/schema-variants';

describe('prisma/postgresql/schema.prisma', () => {
  it('is what `npm run prisma:schemas` derives from prisma/schema.prisma', () => {
    const derived = derivePostgresSchema(readFileSync(SQLITE_SCHEMA_FILE, 'utf8'));
    expect(readFileSync(POSTGRES_SCHEMA_FILE, 'utf8')).toBe(derived);
  });

  it('differs from the SQLite schema only in its header, provider, client folder and URL', () => {
    const sqlite = readFileSync(SQLITE_SCHEMA_FILE, 'utf8').split('\n');
    const postgres = readFileSync(POSTGRES_SCHEMA_FILE, 'utf8').split('\n').slice(2);
    const differing = sqlite.flatMap((line, i) =>
      postgres[i] === line ? [] : [`${line} => ${postgres[i]}`],
    );
    expect(differing).toEqual([
      '  output              = "../storage/generated/prisma" =>   output              = "../../storage/generated/prisma-pg"',
      '  provider = "sqlite" =>   provider = "postgresql"',
      '  url      = env("DATABASE_URL") =>   url      = "postgresql://never-used.invalid/adapter-connects"',
    ]);
  });

  it('refuses to derive from a schema it does not recognise, instead of guessing', () => {
    const reworded = readFileSync(SQLITE_SCHEMA_FILE, 'utf8').replace(
      'provider = "sqlite"',
      'provider = "mysql"',
    );
    expect(() => derivePostgresSchema(reworded)).toThrow(/expected one match of .*sqlite.*found 0/);
  });

  it('has migrations of its own, locked to PostgreSQL', () => {
    const lock = readFileSync(
      path.join(REPO_ROOT, 'prisma', 'postgresql', 'migrations', 'migration_lock.toml'),
      'utf8',
    );
    expect(lock).toContain('provider = "postgresql"');
  });
});

describe('DATABASE_URL', () => {
  it('chooses the backend by its scheme', () => {
    expect(dialectOfUrl('file:/tmp/a.db')).toBe('sqlite');
    expect(dialectOfUrl('postgresql://db/agents')).toBe('postgresql');
    expect(dialectOfUrl('postgres://db/agents')).toBe('postgresql');
    expect(dialectOfUrl('mysql://db/agents')).toBeNull();
    expect(dialectOfUrl('postgresql:agents')).toBeNull();
  });

  it('never shows a password', () => {
    expect(redactDatabaseUrl('postgresql://agents:p%40ss@db:5432/agents')).toBe(
      'postgresql://agents:***@db:5432/agents',
    );
    expect(redactDatabaseUrl('postgresql://agents@db/agents')).toBe('postgresql://agents@db/agents');
    expect(redactDatabaseUrl('file:/tmp/a.db')).toBe('file:/tmp/a.db');
  });

  it("turns Prisma's schema and connection_limit parameters into pool settings pg understands", () => {
    const { pool, schema } = postgresPoolConfig(
      'postgresql://a:b@db:5432/agents?schema=engine&connection_limit=4',
    );
    expect(schema).toBe('engine');
    expect(pool).toMatchObject({
      connectionString: 'postgresql://a:b@db:5432/agents',
      max: 4,
      options: '-c search_path=engine',
    });
    expect(postgresPoolConfig('postgresql://db/agents').pool.max).toBe(10);
  });

  it('refuses a schema that is not a plain identifier, which would reach the connection options', () => {
    expect(() => postgresPoolConfig('postgresql://db/agents?schema=x%20-c%20log_statement%3Dall')).toThrow(
      /plain identifier/,
    );
    expect(() => postgresPoolConfig('postgresql://db/agents?connection_limit=0')).toThrow(/connection_limit/);
  });
});
