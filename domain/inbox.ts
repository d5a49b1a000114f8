/**
 * `agents inbox` (issue 16, ADR 0022): the plans that wait for a person, as Temporal's visibility lists them. Pure:
 * the visibility query (one string a person can paste into the Web UI), the row each listed workflow becomes, and
 * the `--as` rule applied a second time to the rows, so a backend that reads the query more loosely still shows
 * nobody a gate they may not pass.
 */
import { WAITING_KINDS, waitingKind } from './gates';
import type { WaitingKind } from './gates';
import { planIdOfWorkflow } from './ids';
import { isPhase, nextPhase } from './lifecycle';
import { MIN_SHORT_ID_LENGTH, shortIds } from './plan-ref';
import { approverSchema } from './schemas';

/**
 * The search attribute names the query reads, spelled as workflows/definitions.ts defines them (a domain module
 * cannot import the workflows; test/unit/inbox.test.ts checks the two agree).
 */
export const INBOX_ATTRIBUTES = {
  phase: 'PlanPhase',
  state: 'PlanState',
  action: 'PlanAction',
  automation: 'PlanAutomation',
  awaiting: 'PlanAwaitingInput',
  waitingSince: 'PlanWaitingSince',
  approvers: 'PlanApprovers',
  needs: 'PlanNeeds',
  waitingFor: 'PlanWaitingFor',
  approvedBy: 'PlanApprovedBy',
  approvalsLeft: 'PlanApprovalsLeft',
  reminders: 'PlanReminders',
} as const;

/** The workflow type of every plan (a subplan too): other workflows in the namespace are nobody's inbox. */
export const PLAN_WORKFLOW_TYPE = 'planWorkflow';

/**
 * A value as a visibility query's string literal. Temporal's query parser (a MySQL dialect, for the SQL and the
 * Elasticsearch backends alike) ends a literal at an unescaped quote and reads backslash escapes, so both are
 * escaped: whatever the value, it stays one literal and cannot add a condition.
 */
export function quoteLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export type InboxQuery = { ok: true; query: string } | { ok: false; error: string };

/**
 * The visibility query of the inbox, everyone's or `as` one person's. A running plan waits for a person exactly
 * while its PlanWaitingSince is set (the workflow sets and clears it with every state change). One person's inbox
 * keeps what anyone may do (retry or cancel an ERRORED plan, resume a paused one) and the gates they may pass:
 * where the list of approvers is empty (anyone) or names them, and they have not approved already. The name must
 * be one an approver can have (domain/schemas.ts): any other could match no approval anyway, and refusing it
 * keeps odd characters out of the query altogether; it is quoted all the same.
 */
export function inboxQuery(options: { as?: string } = {}): InboxQuery {
  const a = INBOX_ATTRIBUTES;
  const waiting = [
    `WorkflowType = ${quoteLiteral(PLAN_WORKFLOW_TYPE)}`,
    `ExecutionStatus = 'Running'`,
    `${a.waitingSince} IS NOT NULL`,
  ];
  if (options.as === undefined) return { ok: true, query: waiting.join(' AND ') };
  const user = checkInboxUser(options.as);
  if (!user.ok) return user;
  const name = quoteLiteral(user.name);
  // Not at a gate, or ERRORED, or held: anyone may act. A plan that last changed before PlanWaitingFor existed
  // has none, and is read by its awaiting flag and state alone.
  const anyone = `${a.awaiting} = false OR ${a.state} = 'ERRORED' OR ${a.waitingFor} IN ('RETRY', 'RESUME')`;
  const mayApprove =
    `(${a.approvers} IS NULL OR ${a.approvers} = ${name}) AND ` +
    `(${a.approvedBy} IS NULL OR ${a.approvedBy} != ${name})`;
  return { ok: true, query: `${waiting.join(' AND ')} AND (${anyone} OR (${mayApprove}))` };
}

/** `--as <user>`: checked as an approver's name is, so it means the same here as in `plan advance --by`. */
export function checkInboxUser(raw: string): { ok: true; name: string } | { ok: false; error: string } {
  const checked = approverSchema.safeParse(raw);
  if (!checked.success) {
    return {
      ok: false,
      error: `--as ${JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw)} ${checked.error.issues[0]?.message ?? 'is not a name'}`,
    };
  }
  return { ok: true, name: checked.data };
}

/** One listed workflow, as the client reads it from visibility: its id, its memo's name, its search attributes. */
export interface InboxSource {
  workflowId: string;
  /** The plan's name from the workflow's memo; null when the memo has none. */
  name: string | null;
  /** Search attribute values by name: strings, booleans, numbers, Dates and string lists, as the SDK decodes them. */
  attributes: Record<string, unknown>;
}

/** One row of the inbox, in the key order every format shows. */
export interface InboxRow {
  plan_id: string;
  short_id: string;
  name: string;
  action_name: string;
  phase: string;
  state: string;
  automation_level: string;
  /** APPROVAL, RETRY or RESUME. */
  waiting_for: WaitingKind;
  /** The gate a plan waits at ("EXECUTE→APPLY"); null when it waits for a retry or a resume outside a gate. */
  gate: string | null;
  waiting_since: string;
  /** How long it has waited, e.g. "3h 12m". */
  age: string;
  /** What it needs from a person, in words (domain/gates.ts waitingFor). */
  needs: string;
  /** Approvals the open gate still needs; null: no gate, or a plan that last changed before this was shown. */
  approvals_left: number | null;
  /** Who may still approve; empty: anyone. */
  approvers: string[];
  approved_by: string[];
  /** Reminders the gate's timeout recorded; null: no gate (or not known). */
  reminders: number | null;
}

/** The columns `table`, `rich` and `plain` show, the short id first (json and yaml keep every field). */
export const INBOX_COLUMNS: readonly string[] = ['id', 'name', 'action', 'waiting', 'gate', 'age', 'needs'];

/**
 * The row of a listed workflow, or null when it is not a waiting plan after all (an id that is not a plan's, no
 * PlanWaitingSince): visibility lists what the query matched a moment ago, and what a foreign workflow sets is
 * not ours to show.
 */
export function inboxRow(source: InboxSource, now: Date): InboxRow | null {
  const a = INBOX_ATTRIBUTES;
  const at = source.attributes;
  const planId = planIdOfWorkflow(source.workflowId);
  const since = dateOf(at[a.waitingSince]);
  if (planId === null || since === null) return null;
  const phase = text(at[a.phase]);
  const state = text(at[a.state]);
  const awaiting = at[a.awaiting] === true;
  const kind = kindOf(at[a.waitingFor], state, awaiting);
  const next = isPhase(phase) ? nextPhase(phase) : undefined;
  return {
    plan_id: planId,
    // The shortest a short id can be; `inboxRows` makes it unique among the rows shown.
    short_id: planId.slice(0, MIN_SHORT_ID_LENGTH),
    name: source.name ?? '',
    action_name: text(at[a.action]),
    phase,
    state,
    automation_level: text(at[a.automation]),
    waiting_for: kind,
    gate: awaiting && next !== undefined ? `${phase}→${next}` : null,
    waiting_since: since.toISOString(),
    age: formatAge(now.getTime() - since.getTime()),
    needs: text(at[a.needs]),
    approvals_left: count(at[a.approvalsLeft]),
    approvers: names(at[a.approvers]),
    approved_by: names(at[a.approvedBy]),
    reminders: count(at[a.reminders]),
  };
}

/**
 * Whether `user` can act on a row: the query's rule, for rows read back. Anyone may retry, cancel or resume; a gate
 * only its approvers (or anyone, with none named) who have not approved it yet.
 */
export function canActOn(row: InboxRow, user: string): boolean {
  if (row.waiting_for !== 'APPROVAL') return true;
  if (row.approved_by.includes(user)) return false;
  // `approvers` are those who may still approve: the list less whoever already did.
  return row.approvers.length === 0 || row.approvers.includes(user);
}

/**
 * The rows to show, from the rows listed: one person's (`canActOn`) when `user` is given, longest waiting first,
 * each with the shortest prefix of its id no other row shares (as `plan list` shows them, ADR 0020), which every
 * command that takes a plan accepts.
 */
export function inboxRows(rows: readonly InboxRow[], user?: string): InboxRow[] {
  const kept = user === undefined ? rows : rows.filter((row) => canActOn(row, user));
  const shorts = shortIds(kept.map((row) => row.plan_id));
  return sortInbox(kept).map((row) => ({ ...row, short_id: shorts.get(row.plan_id) ?? row.plan_id }));
}

/** The inbox in the order to work through it: longest waiting first, then by id for a stable order. */
export function sortInbox(rows: readonly InboxRow[]): InboxRow[] {
  return [...rows].sort(
    (x, y) => x.waiting_since.localeCompare(y.waiting_since) || x.plan_id.localeCompare(y.plan_id),
  );
}

/** The columns a table shows of a row: the short id, and the action's name as `action`. */
export function inboxColumns(row: InboxRow): Record<string, unknown> {
  return {
    id: row.short_id,
    name: row.name,
    action: row.action_name,
    waiting:
      row.reminders !== null && row.reminders > 0
        ? `${row.waiting_for} (reminded ${row.reminders}×)`
        : row.waiting_for,
    gate: row.gate ?? row.phase,
    age: row.age,
    needs: row.needs,
  };
}

/** "45s", "12m", "3h 4m", "2d 5h": the two largest units, enough to see what waited longest. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m`;
  return `${seconds}s`;
}

function kindOf(value: unknown, state: string, awaiting: boolean): WaitingKind {
  if (typeof value === 'string' && (WAITING_KINDS as readonly string[]).includes(value)) {
    return value as WaitingKind;
  }
  // A plan that last changed before PlanWaitingFor: the same rule from what it does show. It shows no pause, but
  // a waiting plan neither ERRORED nor at a gate can only be held.
  return waitingKind({ state, awaitingApproval: awaiting, paused: null }) ?? 'RESUME';
}

function dateOf(value: unknown): Date | null {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
  return date === null || Number.isNaN(date.getTime()) ? null : date;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

function names(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
