/**
 * The rules of a gate people can trust (issue 16, ADR 0019): who may approve and how many must, when a gate expires
 * and what then, which decision was too unsure to pass unattended, a pause, and the one sentence that says what a
 * waiting plan needs. Pure: the workflow, the CLI, the inbox and the Web UI's details all read these.
 */
import type { AutomationLevel, Phase, Verdict, WorkPhase } from './lifecycle';
import { nextPhase, requiresApproval } from './lifecycle';
import type { ProfileSnapshot } from './schemas';

export const ON_TIMEOUT_CHOICES = ['cancel', 'remind'] as const;
export type OnTimeout = (typeof ON_TIMEOUT_CHOICES)[number];

/** The reason a plan cancelled by its gate's expiry records (PLAN_CANCELLED's message, the error type's word). */
export const APPROVAL_EXPIRED = 'approval_expired';

/** What a plan's profile says about its gates, with the defaults of a plan that has none. */
export interface GatePolicy {
  /** Who may approve; empty: anyone. */
  approvers: string[];
  /** How many distinct people must approve before a gate opens. */
  requiredApprovals: number;
  timeoutSeconds: number | null;
  onTimeout: OnTimeout;
  /** A decision below this confidence stops an automatic transition; null: no minimum. */
  minConfidence: number | null;
}

export function gatePolicy(profile: ProfileSnapshot | null): GatePolicy {
  if (profile === null) {
    return {
      approvers: [],
      requiredApprovals: 1,
      timeoutSeconds: null,
      onTimeout: 'cancel',
      minConfidence: null,
    };
  }
  return {
    approvers: profile.approvers ?? [],
    requiredApprovals: profile.requiredApprovals ?? 1,
    timeoutSeconds: profile.approvalTimeoutSeconds,
    onTimeout: profile.onTimeout ?? 'cancel',
    minConfidence: profile.minDecisionConfidence,
  };
}

/** Who said yes at a gate, in the order they did. */
export interface GateApproval {
  by: string;
  reason: string | null;
  at: string;
}

/** A recorded decision too unsure for its plan's profile to pass a gate unattended. */
export interface LowConfidenceDecision {
  decisionId: string;
  sequenceNumber: number;
  phase: WorkPhase;
  question: string;
  chosenOption: string;
  confidence: number;
  minimum: number;
}

/** An open gate as people see it (`plan show`, the inbox, the Web UI). */
export interface GateView {
  /** The phase the gate leads into. */
  to: Phase;
  openedAt: string;
  approvals: GateApproval[];
  required: number;
  /** Who may approve; empty: anyone. */
  approvers: string[];
  /** Why a plan that would have moved on by itself waits: the least confident decision below the minimum. */
  lowConfidence: LowConfidenceDecision | null;
  /** When the approval timeout runs out; null: the gate waits indefinitely. */
  expiresAt: string | null;
  reminders: number;
}

/** A plan held before its next phase by a person (`plan pause`). */
export interface PauseView {
  by: string;
  reason: string | null;
  at: string;
}

/** The decision fields a confidence check reads. */
export interface ConfidenceCandidate {
  decisionId: string;
  sequenceNumber: number;
  question: string;
  chosenOption: string;
  confidence: number;
}

/**
 * The least confident of a phase's decisions below the minimum (the first of equals), or null. People's own
 * decisions (user_intervention) are never below anyone's bar: callers pass the actors' decisions only.
 */
export function lowestConfidence(
  phase: WorkPhase,
  decisions: readonly ConfidenceCandidate[],
  minimum: number | null,
): LowConfidenceDecision | null {
  if (minimum === null) return null;
  let lowest: ConfidenceCandidate | null = null;
  for (const d of decisions) {
    if (d.confidence < minimum && (lowest === null || d.confidence < lowest.confidence)) lowest = d;
  }
  return lowest === null ? null : { ...lowest, phase, minimum };
}

/**
 * Whether the transition into `to` waits for a person: the automation level asks for it, the strategy proposes
 * commands nobody reviewed, or (under review or full automation) a decision of the phase was below the minimum.
 */
export function gateReason(
  level: AutomationLevel,
  to: Phase,
  commandsForReview: readonly string[],
  lowConfidence: LowConfidenceDecision | null,
): 'level' | 'commands' | 'confidence' | null {
  if (requiresApproval(level, to)) return 'level';
  if (commandsForReview.length > 0) return 'commands';
  if (lowConfidence !== null) return 'confidence';
  return null;
}

/** The people who may still approve this gate (empty: anyone). */
export function pendingApprovers(gate: Pick<GateView, 'approvers' | 'approvals'>): string[] {
  const done = new Set(gate.approvals.map((a) => a.by));
  return gate.approvers.filter((name) => !done.has(name));
}

export function approvalsLeft(gate: Pick<GateView, 'required' | 'approvals'>): number {
  return Math.max(0, gate.required - gate.approvals.length);
}

/**
 * Whether `by` may approve this gate now: not when a list of approvers leaves them out, and not twice. Names are
 * compared exactly: `Bob` is not `bob`, as an outsider is not an approver.
 */
export function canApprove(gate: Pick<GateView, 'approvers' | 'approvals' | 'to'>, by: string): Verdict {
  if (gate.approvers.length > 0 && !gate.approvers.includes(by)) {
    return {
      ok: false,
      reason: `${by} may not approve entering ${gate.to}: the approvers are ${gate.approvers.join(', ')}`,
    };
  }
  if (gate.approvals.some((a) => a.by === by)) {
    return { ok: false, reason: `${by} has already approved entering ${gate.to}; another approver must` };
  }
  return { ok: true };
}

/** The ISO time a gate opened at `openedAt` expires, or null for no timeout. */
export function expiryOf(openedAt: string, timeoutSeconds: number | null): string | null {
  if (timeoutSeconds === null) return null;
  return new Date(Date.parse(openedAt) + timeoutSeconds * 1000).toISOString();
}

/** "bob or carol", "alice, bob or carol". */
function oneOf(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

/** What a gate needs, in words: "1 more approval (bob or carol)", "approval by anyone". */
export function gateNeeds(gate: GateView): string {
  const left = approvalsLeft(gate);
  const who = pendingApprovers(gate);
  const people = who.length === 0 ? '' : ` (${oneOf(who)})`;
  const count =
    gate.approvals.length === 0 && left === 1
      ? `approval${people}`
      : `${left} more approval${left === 1 ? '' : 's'}${people}`;
  const unsure =
    gate.lowConfidence === null
      ? ''
      : `; decision #${gate.lowConfidence.sequenceNumber} "${gate.lowConfidence.question}" has confidence ` +
        `${gate.lowConfidence.confidence} (below ${gate.lowConfidence.minimum})`;
  return `${count}${unsure}`;
}

/** The plan fields `waitingFor` reads. */
export interface WaitingPlan {
  phase: Phase;
  state: string;
  awaitingApproval: boolean;
  error: { type: string; message: string; at: string } | null;
  gate?: GateView | null;
  paused?: PauseView | null;
}

/**
 * What a plan waits for a person to do, in one line, or null when it waits for nobody. The inbox, `plan show`,
 * the PlanNeeds search attribute and the Web UI's current details all say this same sentence.
 */
export function waitingFor(plan: WaitingPlan): string | null {
  if (plan.state === 'ERRORED' && plan.error !== null) {
    return `retry or cancel: ${plan.phase} is ERRORED (${plan.error.type}: ${firstLine(plan.error.message)})`;
  }
  if (plan.paused !== undefined && plan.paused !== null) {
    return `resume: paused by ${plan.paused.by}${plan.paused.reason === null ? '' : ` (${plan.paused.reason})`}`;
  }
  if (plan.awaitingApproval) {
    const to = plan.gate?.to ?? nextPhase(plan.phase) ?? plan.phase;
    const needs = plan.gate === undefined || plan.gate === null ? 'approval' : gateNeeds(plan.gate);
    return `waiting at ${plan.phase}→${to} for ${needs}`;
  }
  return null;
}

/** Since when the plan has waited for a person, or null. */
export function waitingSince(plan: WaitingPlan & { updatedAt: string }): string | null {
  if (plan.state === 'ERRORED') return plan.error?.at ?? plan.updatedAt;
  if (plan.paused !== undefined && plan.paused !== null) return plan.paused.at;
  if (plan.awaitingApproval) return plan.gate?.openedAt ?? plan.updatedAt;
  return null;
}

/** What a waiting plan waits for a person to do: the PlanWaitingFor search attribute, the inbox's `waiting` column. */
export const WAITING_KINDS = ['APPROVAL', 'RETRY', 'RESUME'] as const;
export type WaitingKind = (typeof WAITING_KINDS)[number];

/**
 * The kind of `waitingFor`'s sentence, set exactly when `waitingSince` is: an ERRORED plan waits for a retry (or a
 * cancel) before anything else, a paused one for its resume even at an open gate (its gate cannot pass while it is
 * held), and only then a gate for its approval.
 */
export function waitingKind(
  plan: Pick<WaitingPlan, 'state' | 'awaitingApproval'> & Partial<WaitingPlan>,
): WaitingKind | null {
  if (plan.state === 'ERRORED') return 'RETRY';
  if (plan.paused !== undefined && plan.paused !== null) return 'RESUME';
  if (plan.awaitingApproval) return 'APPROVAL';
  return null;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/** The plan fields the pause, resume and level checks read. */
export interface HoldCheck {
  phase: Phase;
  state: string;
  automationLevel: AutomationLevel;
  paused?: PauseView | null;
}

function finished(plan: HoldCheck): boolean {
  return plan.phase === 'APPLIED' || plan.state === 'CANCELLED';
}

/** `plan pause`: anyone may hold a plan that has not finished (holding is the cautious side), once. */
export function canPause(plan: HoldCheck): Verdict {
  if (finished(plan))
    return { ok: false, reason: `the plan has finished (${plan.phase}, ${plan.state}); nothing to pause` };
  if (plan.paused !== undefined && plan.paused !== null) {
    return { ok: false, reason: `the plan is already paused by ${plan.paused.by}` };
  }
  return { ok: true };
}

export function canResume(plan: HoldCheck): Verdict {
  if (finished(plan))
    return { ok: false, reason: `the plan has finished (${plan.phase}, ${plan.state}); nothing to resume` };
  if (plan.paused === undefined || plan.paused === null)
    return { ok: false, reason: 'the plan is not paused' };
  return { ok: true };
}

/**
 * `plan set-automation`: a level is a plan's own choice until it has finished; where its profile names approvers,
 * only they may change it, since anyone else could otherwise switch to full automation and pass every gate the
 * approvers guard. Moving to the same level is refused as a no-op a person would want to hear about.
 */
export function canSetAutomation(
  plan: HoldCheck,
  level: AutomationLevel,
  by: string,
  policy: Pick<GatePolicy, 'approvers'>,
): Verdict {
  if (finished(plan)) {
    return {
      ok: false,
      reason: `the plan has finished (${plan.phase}, ${plan.state}); its level can no longer change`,
    };
  }
  if (plan.automationLevel === level) return { ok: false, reason: `the plan already runs under ${level}` };
  if (policy.approvers.length > 0 && !policy.approvers.includes(by)) {
    return {
      ok: false,
      reason: `${by} may not change the automation level: only the approvers may (${policy.approvers.join(', ')})`,
    };
  }
  return { ok: true };
}

/** The plan fields its one-line summary reads. */
export interface SummarisedPlan {
  name: string;
  actionName: string;
  projects: readonly { projectName: string }[];
}

/**
 * What a plan is, in one line: the Web UI's summary of its workflow (set at start) and the first half of its
 * current details. "fix-login: local/example on acme/api".
 */
export function planSummary(plan: SummarisedPlan): string {
  const projects = plan.projects.map((p) => p.projectName);
  const shown =
    projects.length > 3
      ? `${projects.slice(0, 3).join(', ')} and ${projects.length - 3} more`
      : projects.join(', ');
  return `${plan.name}: ${plan.actionName} on ${shown}`;
}

/**
 * The Web UI's current details of a plan workflow (markdown): what it is and what it waits for, e.g. "fix-login:
 * local/example on acme/api — waiting at EXECUTE→APPLY for 1 more approval (bob or carol)".
 */
export function currentDetails(
  plan: SummarisedPlan & WaitingPlan & { automationLevel: AutomationLevel },
): string {
  const finished = plan.phase === 'APPLIED' || plan.state === 'CANCELLED';
  const status = finished
    ? `${plan.phase}, ${plan.state}${plan.error === null ? '' : ` (${plan.error.type})`}`
    : (waitingFor(plan) ?? `${plan.phase} ${plan.state}, ${plan.automationLevel}`);
  return `${planSummary(plan)} — ${status}`;
}
