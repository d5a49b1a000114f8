/**
 * Whether this machine can run a private PostgreSQL cluster, and where its programs are. Plain CommonJS on Node
 * built-ins only: jest.config.js asks it to decide whether the PostgreSQL test project runs at all.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** Where Debian and Ubuntu put each installed major version's server programs. */
const DEBIAN_ROOT = '/usr/lib/postgresql';
const PROGRAMS = ['initdb', 'pg_ctl', 'postgres'];

/**
 * The directory holding initdb, pg_ctl and postgres: PG_BIN when set; else the newest version under
 * /usr/lib/postgresql; else `pg_config --bindir`. Null when none has all three.
 */
function findPostgresBin(env = process.env) {
  const candidates = [];
  if (env.PG_BIN) candidates.push(env.PG_BIN);
  if (fs.existsSync(DEBIAN_ROOT)) {
    const versions = fs
      .readdirSync(DEBIAN_ROOT)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(DEBIAN_ROOT, v, 'bin')));
  }
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  return candidates.find((dir) => PROGRAMS.every((p) => fs.existsSync(path.join(dir, p)))) ?? null;
}

/** Why no cluster can start here (one sentence with the fix), or null when one can. */
function postgresUnavailableReason(env = process.env) {
  if (findPostgresBin(env) === null) {
    return (
      'no PostgreSQL server programs (initdb, pg_ctl, postgres) under /usr/lib/postgresql, in ' +
      '`pg_config --bindir` or in PG_BIN: install them (Debian: apt-get install -y postgresql)'
    );
  }
  // PostgreSQL refuses to run as root; as root the cluster runs as the account the Debian package creates.
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return 'running as root without a `postgres` account to run PostgreSQL as (it refuses root)';
  }
  return null;
}

module.exports = { findPostgresBin, postgresUnavailableReason };
