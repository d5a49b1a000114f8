/**
 * Finding a test's processes from outside any box: by a marker in their command line, since a boxed command's own
 * idea of its PID belongs to its PID namespace and means nothing here.
 */
import { promises as fs } from 'node:fs';

/** PIDs (in this namespace) of live processes whose command line contains `marker`; zombies count as ended. */
export async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(marker)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (stat !== null && !/\) Z /.test(stat)) found.push(Number(entry));
  }
  return found;
}

/** Whether every process with `marker` has ended, waiting up to `ms`. */
export async function allEnded(marker: string, ms = 2_000): Promise<boolean> {
  return waitFor(async () => (await processesWith(marker)).length === 0, ms);
}

/** Whether a process with `marker` runs, waiting up to `ms` for one to start. */
export async function started(marker: string, ms = 5_000): Promise<boolean> {
  return waitFor(async () => (await processesWith(marker)).length > 0, ms);
}

async function waitFor(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A number no other process has on its command line: `sleep <it>` is then findable. */
export function uniqueSeconds(): string {
  return `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}
