/**
 * A plan as a person refers to it (ADR 0020): its whole id, a unique prefix of it, or its exact name. These are the
 * rules only; the store finds the candidates (PlanStore.findPlanRefs) and the client turns the outcome into a
 * plan id or an error. Pure, so every rule is unit-tested without a database.
 */
import { bareIdText, isUlid, PLAN_WORKFLOW_PREFIX } from './ids';

/**
 * The fewest characters a prefix may have. Six Crockford characters are 30 bits of a ULID's millisecond timestamp
 * (about 17 minutes): short enough to type, long enough that a typo rarely lands on another plan.
 */
export const MIN_PREFIX_LENGTH = 6;
/**
 * `plan list` never shows fewer: the first 8 characters are the timestamp to about a second, so plans made in
 * the same second need more, and 8 keeps the column one width in the common case.
 */
export const MIN_SHORT_ID_LENGTH = 8;
/** An ambiguous reference lists at most this many candidates; more would drown the message. */
export const MAX_LISTED_CANDIDATES = 10;
/** A plan name's longest (domain/schemas.ts planSpecSchema): a longer input cannot be a name. */
export const MAX_NAME_LENGTH = 200;

/** What an id prefix may hold: the ULID's first character is 0–7, the rest Crockford base32 (no I, L, O, U). */
const ID_PREFIX_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]*$/;
/** A ULID is 26 characters; a longer "prefix" is not one. */
const ULID_LENGTH = 26;

/** Whether `text` can start a plan id: 1–26 upper-case id characters (the store checks a prefix with this too). */
export function isIdPrefix(text: string): boolean {
  return text.length <= ULID_LENGTH && ID_PREFIX_PATTERN.test(text);
}

/** What an input can stand for; several at once when it could be either (a name of base32 letters). */
export interface PlanRefQuery {
  /** The canonical id, when the input is a whole plan id (ULID or `plan-<ULID>`, any case). */
  id: string | null;
  /** The upper-cased start of an id, when the input is 6–25 id characters (after an optional `plan-`). */
  prefix: string | null;
  /** The trimmed input, when it could be a plan name (names are trimmed when a plan is created). */
  name: string | null;
  /** The input looks like the start of an id but is shorter than MIN_PREFIX_LENGTH. */
  tooShort: boolean;
  /** Nothing but white space was given. */
  empty: boolean;
}

/** One plan the store found for a query: what a person needs to tell candidates apart. */
export interface PlanRefCandidate {
  planId: string;
  name: string;
  phase: string;
  state: string;
  createdAt: string;
}

export type PlanRefMatch =
  | { kind: 'found'; planId: string; by: 'id' | 'name' | 'prefix' }
  /** More than one plan fits; `candidates` are at most MAX_LISTED_CANDIDATES, oldest first. */
  | { kind: 'ambiguous'; candidates: PlanRefCandidate[]; more: boolean }
  | { kind: 'tooShort' }
  | { kind: 'empty' }
  | { kind: 'notFound' };

export function classifyPlanRef(input: string): PlanRefQuery {
  const trimmed = input.trim();
  const none: PlanRefQuery = { id: null, prefix: null, name: null, tooShort: false, empty: false };
  if (trimmed.length === 0) return { ...none, empty: true };
  // Checked before any pattern, so a huge input costs one comparison: it can be neither an id nor a name.
  if (trimmed.length > PLAN_WORKFLOW_PREFIX.length + MAX_NAME_LENGTH) return none;
  const name = trimmed.length <= MAX_NAME_LENGTH ? trimmed : null;
  const upper = bareIdText(trimmed);
  if (isUlid(upper)) return { ...none, id: upper, name };
  if (upper.length >= ULID_LENGTH || !isIdPrefix(upper)) return { ...none, name };
  return upper.length < MIN_PREFIX_LENGTH
    ? { ...none, name, tooShort: true }
    : { ...none, prefix: upper, name };
}

/**
 * Picks the plan a query means among the candidates the store found for it. A whole id wins when a plan has it.
 * Otherwise a name and a prefix count alike: exactly one plan matching either is the answer, and a prefix of one
 * plan that is also another plan's name is as ambiguous as two plans with one name, since which the person meant
 * cannot be known. A whole id no plan has (and no plan is named) is returned as it is, so the caller reports it the
 * way it always did (a workflow may exist before its row).
 */
export function pickPlanRef(query: PlanRefQuery, candidates: readonly PlanRefCandidate[]): PlanRefMatch {
  if (query.empty) return { kind: 'empty' };
  if (query.id !== null && candidates.some((c) => c.planId === query.id)) {
    return { kind: 'found', planId: query.id, by: 'id' };
  }
  const byPlan = new Map<string, { candidate: PlanRefCandidate; by: 'name' | 'prefix' }>();
  for (const candidate of candidates) {
    if (query.name !== null && candidate.name === query.name) {
      byPlan.set(candidate.planId, { candidate, by: 'name' });
    } else if (query.prefix !== null && candidate.planId.startsWith(query.prefix)) {
      if (!byPlan.has(candidate.planId)) byPlan.set(candidate.planId, { candidate, by: 'prefix' });
    }
  }
  const matches = [...byPlan.values()];
  if (matches.length === 1) {
    const [only] = matches;
    return { kind: 'found', planId: only!.candidate.planId, by: only!.by };
  }
  if (matches.length > 1) {
    const sorted = matches
      .map((m) => m.candidate)
      .sort((a, b) => compare(a.createdAt, b.createdAt) || compare(a.planId, b.planId));
    return {
      kind: 'ambiguous',
      candidates: sorted.slice(0, MAX_LISTED_CANDIDATES),
      more: sorted.length > MAX_LISTED_CANDIDATES,
    };
  }
  if (query.id !== null) return { kind: 'found', planId: query.id, by: 'id' };
  return query.tooShort ? { kind: 'tooShort' } : { kind: 'notFound' };
}

/**
 * The shortest prefix of each id that no other of `ids` shares, at least `minLength` characters: what `plan list`
 * shows. Unique among the ids given (the plans listed), which is what a person copying from the list can see; a
 * plan left out by a filter may share it, and then the command refuses it as ambiguous rather than guess.
 */
export function shortIds(ids: readonly string[], minLength = MIN_SHORT_ID_LENGTH): Map<string, string> {
  const sorted = [...new Set(ids)].sort(compare);
  const shorts = new Map<string, string>();
  // In sorted order, the longest prefix an id shares with any other is the one it shares with a neighbour.
  sorted.forEach((id, i) => {
    const shared = Math.max(
      i > 0 ? commonPrefixLength(id, sorted[i - 1]!) : 0,
      i + 1 < sorted.length ? commonPrefixLength(id, sorted[i + 1]!) : 0,
    );
    shorts.set(id, id.slice(0, Math.min(id.length, Math.max(minLength, shared + 1))));
  });
  return shorts;
}

function commonPrefixLength(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
