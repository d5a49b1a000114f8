/**
 * The plan workflow's metrics (domain/metrics.ts names them), through the workflow SDK's `metricMeter`. Emitting
 * adds nothing to history: the meter hands each value to the worker through an internal sink, not a command, so
 * every checked-in history replays as it did. It is replay-safe too: the SDK drops a value emitted while
 * `workflowInfo().unsafe.isReplaying` (@temporalio/workflow, metrics.ts), so a plan replayed on another worker, or
 * after leaving the cache, is not counted twice. Values are workflow time (Date is replayed from history).
 *
 * With no metrics exporter installed (tests, a worker without WORKER_METRICS_PORT) the runtime's meter is a no-op.
 * The SDK adds `namespace`, `taskQueue` and `workflowType` to every value.
 */
import { metricMeter } from '@temporalio/workflow';
import { ENGINE_METRICS } from '../domain/metrics';
import type { Phase, ProcessingState, WorkPhase } from '../domain/lifecycle';

export function countPlanStarted(labels: { action: string }): void {
  metricMeter
    .createCounter(ENGINE_METRICS.plansStarted, 'plans', 'Plans whose first run began')
    .add(1, labels);
}

export function countPlanFinished(labels: { action: string; phase: Phase; state: ProcessingState }): void {
  metricMeter
    .createCounter(ENGINE_METRICS.plansFinished, 'plans', 'Plans that ended: applied or cancelled')
    .add(1, labels);
}

/** `since`: when the gate opened (ISO time, the plan's updatedAt as the gate was recorded). */
export function recordGateWait(labels: { gate: Phase }, since: string): void {
  metricMeter
    .createHistogram(
      ENGINE_METRICS.gateWaitSeconds,
      'float',
      'seconds',
      'Seconds from a gate opening to its approval',
    )
    .record(secondsSince(since), labels);
}

export function recordPhaseDuration(
  labels: { phase: WorkPhase; outcome: 'completed' | 'failed' },
  startedMs: number,
): void {
  metricMeter
    .createHistogram(
      ENGINE_METRICS.phaseDurationSeconds,
      'float',
      'seconds',
      "Seconds each run of a phase's work took",
    )
    .record(Math.max(0, Date.now() - startedMs) / 1000, labels);
}

export function countInvariantViolations(labels: { action: string; phase: Phase }, count: number): void {
  metricMeter
    .createCounter(ENGINE_METRICS.invariantViolations, 'invariants', 'Invariants found violated by a check')
    .add(count, labels);
}

function secondsSince(iso: string): number {
  const then = Date.parse(iso);
  // A histogram refuses negative values; a clock that went backwards between two tasks reads as no wait.
  return Number.isNaN(then) ? 0 : Math.max(0, Date.now() - then) / 1000;
}
