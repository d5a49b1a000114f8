/**
 * The few statistics the bench reports. Medians and percentiles, never means: one slow outlier on a shared
 * machine (a GC pause, a neighbour's build) must not move a figure.
 */

/** The nearest-rank percentile (p in 0..100) of a non-empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Milliseconds since an arbitrary origin, monotonic (wall-clock jumps would corrupt a timing). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export async function timeMs(run: () => Promise<unknown>): Promise<number> {
  const start = nowMs();
  await run();
  return nowMs() - start;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}=${raw}: expected a positive number`);
  return value;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
