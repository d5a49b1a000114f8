#!/usr/bin/env node
// The `agents` CLI. It runs the compiled dist/ when that was built from exactly the sources here (`npm run build`,
// and `npm start` / `npm test` build when stale), which starts in about half the time; otherwise tsx compiles
// the sources on the fly, so a fresh clone needs no build step and an edited source is never run stale.
'use strict';
const path = require('node:path');
const { checkBuild, ENTRY } = require('../scripts/build-freshness');

const root = path.resolve(__dirname, '..');
if (checkBuild(root).fresh) {
  void require(path.join(root, ENTRY)).main();
} else {
  require('tsx/cjs');
  void require('../client/cli/main.ts').main();
}
