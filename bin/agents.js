#!/usr/bin/env node
// The `agents` CLI. tsx compiles the TypeScript sources on the fly, so a fresh clone needs no build step and the
// CLI can never run stale compiled code.
require('tsx/cjs');
void require('../client/cli/main.ts').main();
