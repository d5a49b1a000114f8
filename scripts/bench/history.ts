/**
 * Where a workflow's time went, read from its history: per activity type the wait in the queue (scheduled →
 * started) and the run (started → closed), and the same for workflow tasks. No instrumentation of the worker,
 * so it shows the engine as it runs, whatever its workflows look like this week.
 */
import type { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';
import { median, round } from './stats';

type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;

interface Timing {
  queuedMs: number[];
  runMs: number[];
}

function at(event: Event | undefined): number | undefined {
  return event?.eventTime ? tsToMs(event.eventTime) : undefined;
}

function idOf(event: Event): number {
  return Number(event.eventId ?? 0);
}

/** Timings of every activity (by type) and every workflow task in these histories. */
export function collectTimings(histories: History[]): Map<string, Timing> {
  const timings = new Map<string, Timing>();
  const add = (name: string, queued: number, run: number) => {
    const timing = timings.get(name) ?? { queuedMs: [], runMs: [] };
    timing.queuedMs.push(queued);
    timing.runMs.push(run);
    timings.set(name, timing);
  };
  for (const history of histories) {
    const byId = new Map<number, Event>();
    for (const event of history.events ?? []) {
      byId.set(idOf(event), event);
      const closed =
        event.activityTaskCompletedEventAttributes ??
        event.activityTaskFailedEventAttributes ??
        event.activityTaskTimedOutEventAttributes;
      if (closed) {
        const scheduled = byId.get(Number(closed.scheduledEventId ?? 0));
        const started = byId.get(Number(closed.startedEventId ?? 0));
        const name = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        const s = at(scheduled);
        const b = at(started);
        const c = at(event);
        if (s !== undefined && b !== undefined && c !== undefined) add(`activity ${name}`, b - s, c - b);
      }
      const task = event.workflowTaskCompletedEventAttributes;
      if (task) {
        const scheduled = byId.get(Number(task.scheduledEventId ?? 0));
        const started = byId.get(Number(task.startedEventId ?? 0));
        const s = at(scheduled);
        const b = at(started);
        const c = at(event);
        if (s !== undefined && b !== undefined && c !== undefined) add('workflow task', b - s, c - b);
      }
    }
  }
  return timings;
}

export interface TimingSummary {
  name: string;
  count: number;
  perPlan: number;
  queuedMedianMs: number;
  runMedianMs: number;
  /** Share of the summed queue + run time of everything listed: what dominates a plan's wall time. */
  share: number;
}

export function summarise(timings: Map<string, Timing>, plans: number): TimingSummary[] {
  const total = [...timings.values()].reduce(
    (sum, t) => sum + t.queuedMs.reduce((a, b) => a + b, 0) + t.runMs.reduce((a, b) => a + b, 0),
    0,
  );
  return [...timings.entries()]
    .map(([name, t]) => ({
      name,
      count: t.runMs.length,
      perPlan: round(t.runMs.length / plans, 1),
      queuedMedianMs: round(median(t.queuedMs), 1),
      runMedianMs: round(median(t.runMs), 1),
      share: round(
        (t.queuedMs.reduce((a, b) => a + b, 0) + t.runMs.reduce((a, b) => a + b, 0)) / (total || 1),
        3,
      ),
    }))
    .sort((a, b) => b.share - a.share);
}

export function printTimings(title: string, rows: TimingSummary[]): void {
  console.log(`\n${title}`);
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(34)} ${String(r.perPlan).padStart(5)}/plan  queued p50 ${String(r.queuedMedianMs).padStart(7)} ms  ` +
        `run p50 ${String(r.runMedianMs).padStart(7)} ms  share ${(r.share * 100).toFixed(0)}%`,
    );
  }
}
