/**
 * The plan lifecycle of seed 000 as pure functions. The workflow, the activities and the CLI call these and never
 * re-implement a rule, so a rule changes in one place.
 */

export const PHASES = ['STRATEGIZE', 'EXECUTE', 'APPLY', 'APPLIED'] as const;
export type Phase = (typeof PHASES)[number];

export const PROCESSING_STATES = ['QUEUED', 'PROCESSING', 'ERRORED', 'COMPLETE', 'CANCELLED'] as const;
export type ProcessingState = (typeof PROCESSING_STATES)[number];

export const AUTOMATION_LEVELS = ['MANUAL', 'REVIEW_BEFORE_APPLY', 'FULL_AUTOMATION'] as const;
export type AutomationLevel = (typeof AUTOMATION_LEVELS)[number];

/** The phases in which work is done; APPLIED is the terminal marker, not a phase that runs. */
export type WorkPhase = Exclude<Phase, 'APPLIED'>;

export interface PhaseStatus {
  phase: Phase;
  state: ProcessingState;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

export function isAutomationLevel(value: unknown): value is AutomationLevel {
  return typeof value === 'string' && (AUTOMATION_LEVELS as readonly string[]).includes(value);
}

export function isPhase(value: string): value is Phase {
  return (PHASES as readonly string[]).includes(value);
}

export function isTerminalPhase(phase: Phase): boolean {
  return phase === 'APPLIED';
}

/** A plan has ended when it reached APPLIED or was cancelled; nothing may change it afterwards. */
export function isFinished(status: PhaseStatus): boolean {
  return isTerminalPhase(status.phase) || status.state === 'CANCELLED';
}

export function nextPhase(phase: Phase): Phase | undefined {
  return PHASES[PHASES.indexOf(phase) + 1];
}

/**
 * `can_transition(from_phase, to_phase)` of seed 000: only one step forward, never backwards, never skipping,
 * and only once the current phase is COMPLETE.
 */
export function canTransition(from: PhaseStatus, to: Phase): Verdict {
  if (isTerminalPhase(from.phase)) {
    return { ok: false, reason: `the plan is ${from.phase}, a terminal phase` };
  }
  if (from.state === 'CANCELLED') {
    return { ok: false, reason: 'the plan is CANCELLED' };
  }
  const expected = nextPhase(from.phase);
  if (to !== expected) {
    return {
      ok: false,
      reason: `${from.phase} can only move to ${expected ?? 'nothing'}, not to ${to} (no skipping, no going back)`,
    };
  }
  if (from.state !== 'COMPLETE') {
    return {
      ok: false,
      reason: `${from.phase} is ${from.state}; a plan moves to ${to} only when its state is COMPLETE`,
    };
  }
  return { ok: true };
}

/**
 * Gate policy: does a person have to approve the transition into `to`?
 * MANUAL: every transition. REVIEW_BEFORE_APPLY: only the one into APPLY. FULL_AUTOMATION: none.
 */
export function requiresApproval(level: AutomationLevel, to: Phase): boolean {
  switch (level) {
    case 'MANUAL':
      return true;
    case 'REVIEW_BEFORE_APPLY':
      return to === 'APPLY';
    case 'FULL_AUTOMATION':
      return false;
  }
}

/**
 * The message of a gate into `to`: the automation level's, or, when the strategy proposes commands nobody has
 * reviewed, the commands themselves (a person sees what will run before it runs, whatever the level).
 */
export function gateMessage(to: Phase, commandsForReview: readonly string[]): string {
  if (commandsForReview.length === 0) return `waiting for approval to enter ${to}`;
  return (
    `waiting for approval to enter ${to}: the strategy proposes ${commandsForReview.length} command(s) the ` +
    `action does not contain; review them first: ${commandsForReview.map((c) => JSON.stringify(c)).join('; ')}`
  );
}

export interface AdvanceRequestCheck extends PhaseStatus {
  awaitingApproval: boolean;
  automationLevel: AutomationLevel;
}

/**
 * Whether a person's `advance` is acceptable now. Refusals explain the situation in words a CLI user can act on.
 * `expectedPhase` lets a caller say which phase it believes the plan is in, so a stale advance is refused
 * instead of skipping a gate the caller never saw.
 */
export function canAdvance(plan: AdvanceRequestCheck, expectedPhase?: Phase): Verdict {
  if (isFinished(plan)) {
    return { ok: false, reason: `the plan has finished (${plan.phase}, ${plan.state}); nothing to advance` };
  }
  if (expectedPhase !== undefined && expectedPhase !== plan.phase) {
    return { ok: false, reason: `the plan is in ${plan.phase}, not in ${expectedPhase}` };
  }
  const to = nextPhase(plan.phase);
  if (to === undefined) {
    return { ok: false, reason: `the plan is in ${plan.phase}; there is no next phase` };
  }
  const transition = canTransition(plan, to);
  if (!transition.ok) {
    return transition;
  }
  if (!plan.awaitingApproval) {
    return {
      ok: false,
      reason: requiresApproval(plan.automationLevel, to)
        ? `the plan is finishing ${plan.phase} and will wait for approval to enter ${to} in a moment; try again`
        : `the plan does not wait for approval to enter ${to} (automation ${plan.automationLevel} moves on by itself)`,
    };
  }
  return { ok: true };
}

/** A person may retry a phase only after it failed. */
export function canRetry(plan: PhaseStatus): Verdict {
  if (isFinished(plan)) {
    return { ok: false, reason: `the plan has finished (${plan.phase}, ${plan.state}); nothing to retry` };
  }
  if (plan.state !== 'ERRORED') {
    return { ok: false, reason: `${plan.phase} is ${plan.state}; only an ERRORED phase can be retried` };
  }
  return { ok: true };
}

/** CLI spelling of automation levels: short words people type, plus the canonical enum names. */
const AUTOMATION_ALIASES: Record<string, AutomationLevel> = {
  manual: 'MANUAL',
  review: 'REVIEW_BEFORE_APPLY',
  review_before_apply: 'REVIEW_BEFORE_APPLY',
  'review-before-apply': 'REVIEW_BEFORE_APPLY',
  full: 'FULL_AUTOMATION',
  full_automation: 'FULL_AUTOMATION',
  'full-automation': 'FULL_AUTOMATION',
  auto: 'FULL_AUTOMATION',
};

export function parseAutomationLevel(input: string): AutomationLevel | undefined {
  return AUTOMATION_ALIASES[input.trim().toLowerCase()];
}

export const AUTOMATION_CHOICES = ['manual', 'review', 'full'] as const;

/**
 * Whether an advance into APPLY names the changeset its sender reviewed (issue 6's confirmation, enforced by the
 * workflow so no client can slip past it): `undefined` makes no claim (API callers, `--yes`); a changeset id must
 * be the plan's current one (it may have been recomputed since); `null` says nothing was reviewed, which is
 * refused when the advance would write a changeset.
 */
export function checkReviewedChangeset(
  plan: { phase: Phase; changesetId: string | null },
  reviewed: string | null | undefined,
): Verdict {
  if (reviewed === undefined || nextPhase(plan.phase) !== 'APPLY' || plan.changesetId === null) {
    return { ok: true };
  }
  if (reviewed === null) {
    return {
      ok: false,
      reason: `entering APPLY writes changeset ${plan.changesetId}, which was not shown for confirmation; try again`,
    };
  }
  if (reviewed !== plan.changesetId) {
    return {
      ok: false,
      reason: `the changeset changed since it was reviewed (reviewed ${reviewed}, the plan has ${plan.changesetId})`,
    };
  }
  return { ok: true };
}
