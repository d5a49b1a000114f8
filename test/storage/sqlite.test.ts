/** Where the database file is: the CLI, the worker and `prisma migrate deploy` must all agree on it. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../config/paths';
import { databaseFilePath, DEFAULT_DATABASE_URL, resolveDatabaseUrl } from '../../storage/sqlite';

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

  it('refuses anything but a file: URL', () => {
    expect(() => resolveDatabaseUrl('postgresql://localhost/agents')).toThrow(/file:/);
  });

  it('drops query parameters from the file path', () => {
    expect(databaseFilePath('file:/tmp/a.db?connection_limit=1')).toBe('/tmp/a.db');
  });
});
