/**
 * How tests run plans' commands: in the box, as a worker does by default (CI installs bubblewrap). On a machine
 * without it, `SANDBOX_ISOLATION=none` runs them unisolated, as `npm test` explains; the tests of the box itself
 * then skip (test/sandbox/isolation.test.ts).
 */
import { sharedEnvFields } from '../../config/env';
import type { Isolation } from '../../sandbox/isolation';
import { detectIsolation } from '../../sandbox/isolation';

/** Long enough for any test's command: the CPU limit is tested with its own, short one. */
export const TEST_CPU_SECONDS = 120;

let detected: Promise<Isolation> | undefined;

export function testIsolation(): Promise<Isolation> {
  detected ??= detectIsolation({
    mode: sharedEnvFields.SANDBOX_ISOLATION.parse(process.env.SANDBOX_ISOLATION || undefined),
    cpuSeconds: TEST_CPU_SECONDS,
  });
  return detected;
}
