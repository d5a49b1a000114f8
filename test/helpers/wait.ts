/**
 * Waiting for what a test needs to be true, not for a fixed time: a fixed sleep is too long on a quiet machine
 * and too short on a loaded one (two shared cores), and when it is too short the test fails somewhere unrelated.
 */

/** What `waitUntil` accepts as "not yet". */
type NotYet = undefined | null | false;

/**
 * Polls `probe` until it answers something other than undefined, null or false, and resolves with that answer.
 * Rejects naming `what` it waited for once `timeoutMs` has passed (or with the probe's own error, if it throws),
 * so a condition that never comes fails the test with a reason instead of jest's bare timeout. `what` may be a
 * function, to report the state last seen.
 */
export async function waitUntil<T>(
  what: string | (() => string),
  probe: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Exclude<T, NotYet>> {
  const { timeoutMs = 20_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, NotYet>;
    if (Date.now() > deadline) {
      const described = typeof what === 'string' ? what : what();
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${described}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
