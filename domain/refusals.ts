/**
 * A log of refused commands (issue 16 item 4, ADR 0021): who asked for what, and why the plan said no. Temporal
 * keeps no trace of an update its validator rejected, so the client (or the workflow, for the Web UI's `approve`
 * signal) records the refusal as the plan's COMMAND_REFUSED event. No runtime dependencies: the workflow bundle
 * imports this module.
 */

/** Every person's command a plan can refuse, in the words of the CLI (`agents plan <command>`). */
export const REFUSABLE_COMMANDS = [
  'advance',
  'retry',
  'correct',
  'cancel',
  'amend',
  'pause',
  'resume',
  'set-automation',
  /** The Web UI's "Send signal" (workflows/definitions.ts approveSignal). */
  'approve',
] as const;
export type RefusableCommand = (typeof REFUSABLE_COMMANDS)[number];

export function isRefusableCommand(value: unknown): value is RefusableCommand {
  return typeof value === 'string' && (REFUSABLE_COMMANDS as readonly string[]).includes(value);
}

/** One refusal as it is recorded: who asked, which command, and the plan's reason. */
export interface CommandRefusal {
  by: string;
  command: RefusableCommand;
  reason: string;
}

/** Longer names are cut: a name is for people to read in a log, and the log must stay small. */
export const MAX_REFUSAL_BY_CHARS = 64;
/** A validator's reason is a sentence or two; anything longer is cut, so nobody can fill the log through it. */
export const MAX_REFUSAL_REASON_CHARS = 500;
/**
 * The most refusals one workflow run records. Each costs a few history events; past this many (someone scripting
 * refused commands at a plan), further ones are dropped so the history cannot grow without bound.
 */
export const MAX_REFUSALS_PER_RUN = 500;

/** Who a refusal is recorded against when the request did not say who sent it. */
export const UNKNOWN_REQUESTER = 'unknown';

/**
 * Characters that could move a terminal's cursor, recolour or hide text when the log is printed: C0 and C1
 * controls (ESC included), DEL, format characters (bidi overrides, zero-width), the line and paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTERS = /[\x00-\x1f\x7f-\x9f\p{Cf}\u2028\u2029]/gu;

/**
 * Text from a request made safe to store and print: unsafe characters become spaces, runs of spaces one, the ends
 * trimmed, and the result cut to `max` characters (code points, so a surrogate pair is never split) ending in "…".
 */
export function safeText(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  const cleaned = text.replace(UNSAFE_CHARACTERS, ' ').replace(/\s+/g, ' ').trim();
  const points = Array.from(cleaned);
  if (points.length <= max) return cleaned;
  return `${points.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** The name a refusal is recorded against: the request's `by`, made safe, or UNKNOWN_REQUESTER. */
export function safeRequester(by: unknown): string {
  const safe = safeText(by, MAX_REFUSAL_BY_CHARS);
  return safe === '' ? UNKNOWN_REQUESTER : safe;
}

/**
 * A refusal as it will be recorded, from anything a client sent (the recordRefusal signal's payload is not
 * trusted: anyone who can signal the workflow can send one). Null when it names no command a plan can refuse.
 */
export function refusalOf(raw: unknown): CommandRefusal | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { by, command, reason } = raw as Record<string, unknown>;
  if (!isRefusableCommand(command)) return null;
  const safeReason = safeText(reason, MAX_REFUSAL_REASON_CHARS);
  return {
    by: safeRequester(by),
    command,
    reason: safeReason === '' ? 'no reason given' : safeReason,
  };
}

const MESSAGE_SEPARATOR = ' refused: ';

/** The COMMAND_REFUSED event's message: "advance refused: mallory may not approve entering APPLY: …". */
export function refusalMessage(refusal: Pick<CommandRefusal, 'command' | 'reason'>): string {
  return `${refusal.command}${MESSAGE_SEPARATOR}${refusal.reason}`;
}

/** The command and reason back from a COMMAND_REFUSED event's message; null when it is not one of ours. */
export function parseRefusalMessage(
  message: string | null,
): Pick<CommandRefusal, 'command' | 'reason'> | null {
  if (message === null) return null;
  const at = message.indexOf(MESSAGE_SEPARATOR);
  if (at <= 0) return null;
  const command = message.slice(0, at);
  if (!isRefusableCommand(command)) return null;
  return { command, reason: message.slice(at + MESSAGE_SEPARATOR.length) };
}

/** The `approve` signal's payload, once judged: an approval to weigh, or a request that says nothing usable. */
export type ApprovalSignalRequest =
  { ok: true; by: string; reason?: string } | { ok: false; by: string; reason: string };

/**
 * Reads the Web UI's `approve` signal (`{"by": "alice", "reason": "…"}`). A signal cannot be refused to its sender,
 * so nothing here throws: a payload without a usable `by` comes back as a refusal to record. A `by` that would have
 * to be changed to be printed safely is refused too, rather than approving under a name nobody typed.
 */
export function approvalSignalRequest(raw: unknown): ApprovalSignalRequest {
  const payload = Array.isArray(raw) ? raw[0] : raw;
  if (typeof payload !== 'object' || payload === null) {
    return {
      ok: false,
      by: UNKNOWN_REQUESTER,
      reason: 'the approve signal needs an input like {"by": "alice", "reason": "why"}',
    };
  }
  const { by, reason } = payload as Record<string, unknown>;
  if (typeof by !== 'string' || by.trim() === '') {
    return { ok: false, by: UNKNOWN_REQUESTER, reason: 'the request must say who makes it (by)' };
  }
  const name = by.trim();
  if (safeText(name, MAX_REFUSAL_BY_CHARS) !== name) {
    return {
      ok: false,
      by: safeRequester(name),
      reason: `the name in "by" must be at most ${MAX_REFUSAL_BY_CHARS} characters without control characters`,
    };
  }
  const why = safeText(reason, MAX_REFUSAL_REASON_CHARS);
  return why === '' ? { ok: true, by: name } : { ok: true, by: name, reason: why };
}
