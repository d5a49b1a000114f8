/**
 * The engine's own metrics, named once: the workflow and the activities emit them through Temporal's meter, and the
 * worker gives their histograms buckets (worker/metrics.ts). Each is served beside the SDK's `temporal_*` metrics
 * on the worker's one Prometheus endpoint (ADR 0012). Counters carry no `_total` suffix, like the SDK's.
 */
export const ENGINE_METRICS = {
  /** Plans whose first run began; label `action`. A run continued as new is the same plan, not counted again. */
  plansStarted: 'agents_plans_started',
  /** Plans that ended: APPLIED or cancelled; labels `action`, `phase`, `state` (the final ones). */
  plansFinished: 'agents_plans_finished',
  /** Seconds from a gate opening to a person's approval; label `gate` (the phase it leads into). */
  gateWaitSeconds: 'agents_gate_wait_seconds',
  /** Seconds each run of a phase's work took; labels `phase`, `outcome` (`completed` or `failed`). */
  phaseDurationSeconds: 'agents_phase_duration_seconds',
  /** Invariants found violated by a check; labels `action`, `phase`. */
  invariantViolations: 'agents_invariant_violations',
  /** Changesets Apply refused to write (nothing written); label `action`. */
  applyRefusals: 'agents_apply_refusals',
} as const;

/**
 * Histogram buckets, in seconds. The SDK's default for a metric it does not know is milliseconds-sized (50 to
 * 10,000), useless for phases that run for minutes and gates that wait for days.
 */
export const ENGINE_HISTOGRAM_BUCKETS: Record<string, number[]> = {
  [ENGINE_METRICS.phaseDurationSeconds]: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600],
  [ENGINE_METRICS.gateWaitSeconds]: [1, 10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600],
};
