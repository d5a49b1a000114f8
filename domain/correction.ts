/**
 * What a correction (`agents plan correct`) or an amendment (`agents plan amend`) of a running plan re-runs, as
 * pure functions of what the plan knows (RerunTracking, kept in the workflow's state) and of its decision tree.
 * The workflow's validators and handlers decide with them; `plan correct --dry-run` shows what they decide without
 * changing anything. ADR 0016.
 *
 * The rules: a correction re-runs only what depends on the corrected decision, and only at a gate (a plan waiting
 * for a person), where nothing runs meanwhile:
 * - a decision a strategy step came from, at the gate after Strategize: the option (one step, or `skip`) replaces
 *   the step in the strategy Execute will run; nothing has run yet, so nothing else changes;
 * - the same at the gate after Execute: the step is replaced and Execute runs again, from a fresh sandbox; its
 *   earlier decisions are superseded and its new changeset must be reviewed again;
 * - a decision of Execute at the gate after Execute: Execute runs again with the strategy as it stands;
 * - once Apply has begun (and on a finished plan): refused, since what was written cannot be un-written;
 * - anything else (other decision types, other moments, plans started before the tracking existed) is recorded
 *   only, as corrections always were.
 */
import type { TreeDecision } from './decision-tree';
import { buildTree } from './decision-tree';
import { isFinished } from './lifecycle';
import type { Phase, ProcessingState } from './lifecycle';
import type { Step } from './steps';

/** The phases a person's command can make run again. */
export type RerunPhase = 'STRATEGIZE' | 'EXECUTE';

/**
 * What a running plan knows of its phases' last runs, to tell what a correction re-runs. Filled by the workflow as
 * the phases complete; absent in plans started before corrections re-ran anything (their corrections are recorded
 * only, as then).
 */
export interface RerunTracking {
  /** The decision each step of the strategy came from, index-aligned with the strategy's steps. */
  stepDecisionIds: string[];
  /** The decisions recorded by Strategize's and Execute's last completed runs (empty before the first). */
  phaseDecisionIds: Record<RerunPhase, string[]>;
  /** The decision each phase's last run hung under: a re-run hangs under it again. */
  phaseParentSeqs: Record<RerunPhase, number>;
  /**
   * The last run number of each phase (`attempt` of its activity): a re-run continues the count, so its sandbox
   * and its changeset are new ones, never the earlier run's.
   */
  attempts: Record<RerunPhase, number>;
  /** Instructions added by `plan amend`, in order; Strategize reads them after the plan's description. */
  amendments: string[];
  /**
   * The strategy actor re-asks the steps after a corrected one (the model actor does; the built-in actor runs the
   * action's steps as written, so nothing after a corrected step depends on it).
   */
  reasksLaterSteps?: boolean;
}

/**
 * The steps after a corrected one, asked again of a strategy actor that re-asks them, with the correction as a
 * constraint: the steps that stay and what the person changed.
 */
export interface StrategyRevision {
  /** The steps that stay, in order: those before the corrected one, then its replacement (unless skipped). */
  keptSteps: Step[];
  /** The corrected step's position, 1-based. */
  correctedStep: number;
  /** The step that replaced it; null: the person dropped it (`skip`). */
  replacement: Step | null;
  /** The person's reason, if given. */
  reason: string | null;
}

export function emptyTracking(): RerunTracking {
  return {
    stepDecisionIds: [],
    phaseDecisionIds: { STRATEGIZE: [], EXECUTE: [] },
    phaseParentSeqs: { STRATEGIZE: 0, EXECUTE: 0 },
    attempts: { STRATEGIZE: 0, EXECUTE: 0 },
    amendments: [],
  };
}

/** The live state a correction is judged against. */
export interface CorrectionSituation {
  phase: Phase;
  state: ProcessingState;
  awaitingApproval: boolean;
  /** A person's command already accepted and not yet acted on (an advance, a re-run), described; null: none. */
  underWay: string | null;
  /** Null for a plan started before re-runs: its corrections are recorded only. */
  tracking: RerunTracking | null;
}

export type CorrectionEffect =
  | { kind: 'refused'; reason: string }
  /** Recorded only: nothing that runs depends on the decision. */
  | { kind: 'record' }
  /**
   * The option (a step, or `skip`) replaces step `index` of the strategy; `rerun`: the phase that runs again
   * (Strategize: only the steps after it are re-asked).
   */
  | { kind: 'step'; index: number; rerun: RerunPhase | null }
  /** A decision of Execute's last run: Execute runs again with the strategy as it stands. */
  | { kind: 'rerun'; rerun: 'EXECUTE' };

function atGate(s: CorrectionSituation): boolean {
  return s.state === 'COMPLETE' && s.awaitingApproval;
}

export function correctionEffect(situation: CorrectionSituation, decisionId: string): CorrectionEffect {
  if (isFinished(situation)) {
    return {
      kind: 'refused',
      reason: `the plan has finished (${situation.phase}, ${situation.state}); its decisions can no longer change`,
    };
  }
  if (situation.phase === 'APPLY') {
    return {
      kind: 'refused',
      reason:
        'the plan is in APPLY: its changeset is being or has been written to the projects, and a correction ' +
        'cannot change what was written; start a new plan instead',
    };
  }
  const { tracking } = situation;
  if (tracking === null || !atGate(situation)) return { kind: 'record' };
  const index = tracking.stepDecisionIds.indexOf(decisionId);
  const reruns =
    index >= 0 || (situation.phase === 'EXECUTE' && tracking.phaseDecisionIds.EXECUTE.includes(decisionId));
  if (reruns && situation.underWay !== null) {
    return {
      kind: 'refused',
      reason: `${situation.underWay}; correct the plan once it waits at its gate again`,
    };
  }
  if (situation.phase === 'EXECUTE') {
    if (index >= 0) return { kind: 'step', index, rerun: 'EXECUTE' };
    if (tracking.phaseDecisionIds.EXECUTE.includes(decisionId)) return { kind: 'rerun', rerun: 'EXECUTE' };
    return { kind: 'record' };
  }
  if (index >= 0)
    return { kind: 'step', index, rerun: tracking.reasksLaterSteps === true ? 'STRATEGIZE' : null };
  return { kind: 'record' };
}

/**
 * The decisions a correction's re-run supersedes besides the corrected decision: Execute's last run, or, when
 * Strategize re-asks the steps after a corrected one, those steps' decisions.
 */
export function rerunSupersedes(tracking: RerunTracking, effect: CorrectionEffect): string[] {
  if (effect.kind === 'step' && effect.rerun === 'STRATEGIZE') {
    return tracking.stepDecisionIds.slice(effect.index + 1);
  }
  if ((effect.kind === 'step' || effect.kind === 'rerun') && effect.rerun === 'EXECUTE') {
    return tracking.phaseDecisionIds.EXECUTE;
  }
  return [];
}

/** Whether `plan amend` may add instructions now: only while the plan waits after Strategize. */
export function canAmend(situation: CorrectionSituation): { ok: true } | { ok: false; reason: string } {
  if (isFinished(situation)) {
    return {
      ok: false,
      reason: `the plan has finished (${situation.phase}, ${situation.state}); it cannot be amended`,
    };
  }
  if (situation.tracking === null) {
    return {
      ok: false,
      reason:
        'the plan was started before amendments existed; cancel it and start a new one with the instructions',
    };
  }
  if (situation.phase !== 'STRATEGIZE' || !atGate(situation)) {
    return {
      ok: false,
      reason:
        `a plan is amended only while it waits for approval after Strategize (its strategy is still to run); ` +
        `this one is ${situation.phase} ${situation.state}` +
        (situation.awaitingApproval ? ', waiting for approval' : '') +
        (situation.phase === 'STRATEGIZE' ? '' : '; correct a decision with `plan correct` instead'),
    };
  }
  if (situation.underWay !== null) return { ok: false, reason: situation.underWay };
  return { ok: true };
}

/** A decision as the impact names it. */
export interface ImpactDecision extends TreeDecision {
  type: string;
  phase: Phase;
  chosenOption: string;
}

export interface CorrectionImpact<T extends ImpactDecision> {
  effect: CorrectionEffect;
  /** Decisions marked superseded: the corrected one, and the re-run phase's last decisions. */
  superseded: T[];
  /** Every decision that leaves the current tree (the superseded ones and what hangs under them), by number. */
  leavesTree: T[];
  /** The strategy step the option replaces (1-based) when it replaces one. */
  step: number | null;
  /** The phase that runs again; null: none. */
  reruns: RerunPhase | null;
}

/**
 * What a correction would do, computed from the plan's decisions (all of them, superseded ones included) and its
 * live situation, changing nothing: `plan correct --dry-run`. The workflow decides by correctionEffect alone; the
 * tree adds which recorded decisions leave the current tree with the ones it supersedes.
 */
export function correctionImpact<T extends ImpactDecision>(
  decisions: readonly T[],
  situation: CorrectionSituation,
  decisionId: string,
): CorrectionImpact<T> {
  const effect = correctionEffect(situation, decisionId);
  const byId = new Map(decisions.map((d) => [d.decisionId, d]));
  const none = { superseded: [], leavesTree: [], step: null, reruns: null };
  if (effect.kind === 'refused') return { effect, ...none };
  const reruns = effect.kind === 'record' ? null : effect.rerun;
  const tracking = situation.tracking;
  const ids = new Set([decisionId, ...(tracking === null ? [] : rerunSupersedes(tracking, effect))]);
  const superseded = [...ids]
    .map((id) => byId.get(id))
    .filter((d): d is T => d !== undefined && d.supersededBy === null)
    .sort((a, b) => a.seq - b.seq);
  // The current tree as it would be with these superseded: whatever it no longer reaches leaves with them.
  const before = new Set(buildTree(decisions).nodes.map((n) => n.decision.decisionId));
  const marked = decisions.map((d) =>
    ids.has(d.decisionId) && d.supersededBy === null ? { ...d, supersededBy: '-' } : d,
  );
  const after = new Set(buildTree(marked).nodes.map((n) => n.decision.decisionId));
  const leavesTree = decisions.filter((d) => before.has(d.decisionId) && !after.has(d.decisionId));
  return {
    effect,
    superseded,
    leavesTree: [...leavesTree].sort((a, b) => a.seq - b.seq),
    step: effect.kind === 'step' ? effect.index + 1 : null,
    reruns,
  };
}

/**
 * The plan as Strategize sees it after `plan amend`: its description (the prompt beside the action and its
 * arguments) followed by the amendments, in order. The plan's record keeps the description it was created with;
 * each amendment is recorded as a user_intervention.
 */
export function amendedSpec<T extends { description: string }>(spec: T, amendments: readonly string[]): T {
  if (amendments.length === 0) return spec;
  const added = amendments.map((text) => `- ${text}`).join('\n');
  const description =
    spec.description === ''
      ? `Instructions added since the plan was created:\n${added}`
      : `${spec.description}\n\nInstructions added since the plan was created:\n${added}`;
  return { ...spec, description };
}
