/** Where the database file is: the CLI, the worker and `prisma migrate deploy` must all agree on it. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import { resolveDatabaseUrl } from '../../storage/database-url';
import { databaseFilePath, DEFAULT_DATABASE_URL } from '../../storage/sqlite';

describe('resolveDatabaseUrl', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'db-url-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps an absolute path and creates its folder', () => {
    const file = path.join(dir, 'nested', 'deeper', 'agents.db');
    expect(resolveDatabaseUrl(`file:${file}`)).toBe(`file:${file}`);
    expect(existsSync(path.dirname(file))).toBe(true);
  });

  it('accepts the file:// spelling', () => {
    const file = path.join(dir, 'slashes.db');
    expect(resolveDatabaseUrl(`file://${file}`)).toBe(`file:${file}`);
  });

  it('takes a relative path against the repo root, not the working directory', () => {
    const relative = path.relative(REPO_ROOT, path.join(dir, 'relative.db'));
    expect(resolveDatabaseUrl(`file:${relative}`)).toBe(`file:${path.join(dir, 'relative.db')}`);
    expect(REPO_ROOT).toBe(path.resolve(__dirname, '..', '..'));
  });

  it('defaults to .data/agents.db under the repo root', () => {
    expect(DEFAULT_DATABASE_URL).toBe(`file:${path.join(REPO_ROOT, '.data', 'agents.db')}`);
  });

  it('reads DATABASE_URL when no URL is given', () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = `file:${path.join(dir, 'from-env.db')}`;
    try {
      expect(resolveDatabaseUrl()).toBe(`file:${path.join(dir, 'from-env.db')}`);
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  });

  it('keeps a PostgreSQL URL as given and refuses any other scheme without echoing its password', () => {
    expect(resolveDatabaseUrl(' postgresql://agents:s3cret@db:5432/agents ')).toBe(
      'postgresql://agents:s3cret@db:5432/agents',
    );
    expect(resolveDatabaseUrl('postgres://db/agents')).toBe('postgres://db/agents');
    let message = '';
    try {
      resolveDatabaseUrl('mysql://root:s3cret@db/agents');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/file:.*postgresql:\/\//);
    expect(message).toContain('mysql://root:***@db/agents');
    expect(message).not.toContain('s3cret');
  });

  it('drops query parameters from the file path', () => {
    expect(databaseFilePath('file:/tmp/a.db?connection_limit=1')).toBe('/tmp/a.db');
  });
});
