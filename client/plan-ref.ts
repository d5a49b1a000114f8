/**
 * Turns what a person typed for a plan (its id, a prefix of it, its name: ADR 0020) into its plan id, or into the
 * error the CLI prints: ambiguous and too short are usage mistakes (exit 2), nothing matching is not found (exit 3).
 * Needs only the database, so commands that never talk to Temporal stay light.
 */
import { classifyPlanRef, MAX_LISTED_CANDIDATES, MIN_PREFIX_LENGTH, pickPlanRef } from '../domain/plan-ref';
import type { PlanRefCandidate, PlanRefMatch } from '../domain/plan-ref';
import type { PlanRecord, PlanStore } from '../storage/types';
import { PlanClientError } from './errors';
import { escapeControls } from './render/diff';

/** How much of a typed reference or a candidate's name an error message repeats. */
const SHOWN_CHARACTERS = 60;

/** The plan id a reference means; throws PlanClientError (usage or notFound) when it means none or several. */
export async function resolvePlanId(store: Pick<PlanStore, 'findPlanRefs'>, input: string): Promise<string> {
  const query = classifyPlanRef(input);
  const searches = query.id !== null || query.prefix !== null || query.name !== null;
  const candidates = searches
    ? await store.findPlanRefs({
        id: query.id,
        idPrefix: query.prefix,
        name: query.name,
        // One more than is listed, so an ambiguous reference knows there are more than it shows.
        limit: MAX_LISTED_CANDIDATES + 1,
      })
    : [];
  const match = pickPlanRef(query, candidates);
  if (match.kind === 'found') return match.planId;
  throw planRefError(input, match);
}

/**
 * The stored plan a reference means, for commands that read the database. resolvePlanId hands back a whole id no
 * plan has as it is (its workflow may exist before its row); here that id is not found, like any other miss.
 */
export async function resolvePlan(
  store: Pick<PlanStore, 'findPlanRefs' | 'getPlan'>,
  input: string,
): Promise<PlanRecord> {
  const planId = await resolvePlanId(store, input);
  const record = await store.getPlan(planId);
  if (record === null) throw planNotFound(planId);
  return record;
}

/** What every command says of a whole plan id that no plan (or no workflow) has. */
export function planNotFound(planId: string): PlanClientError {
  return new PlanClientError('notFound', `no plan with id ${planId}`);
}

export function planRefError(
  input: string,
  match: Exclude<PlanRefMatch, { kind: 'found' }>,
): PlanClientError {
  const typed = shown(input.trim());
  switch (match.kind) {
    case 'empty':
      return new PlanClientError('usage', 'a plan id, id prefix or name must not be empty');
    case 'tooShort':
      return new PlanClientError(
        'usage',
        `${typed} is too short for a plan id prefix: give at least ${MIN_PREFIX_LENGTH} characters of the id, ` +
          "or the plan's whole name",
      );
    case 'notFound':
      return new PlanClientError('notFound', `no plan with id, id prefix or name ${typed}`);
    case 'ambiguous':
      return new PlanClientError(
        'usage',
        [
          `${typed} matches ${match.more ? `more than ${match.candidates.length}` : match.candidates.length} ` +
            'plans; give more of the id, or the whole id:',
          ...match.candidates.map(candidateLine),
          ...(match.more ? ['  … (only the oldest are listed)'] : []),
        ].join('\n'),
      );
  }
}

/**
 * One candidate as the error lists it: the whole id (what to type instead), its name, where it is, when it was made.
 * A name is any text a person gave: escaped, so it cannot move the cursor or recolour the terminal, and cut short.
 */
export function candidateLine(candidate: PlanRefCandidate): string {
  return `  ${candidate.planId}  ${shown(candidate.name)}  ${candidate.phase} ${candidate.state}  created ${candidate.createdAt}`;
}

/** Quoted, escaped and cut: text a person typed or named, repeated back safely. */
function shown(text: string): string {
  // By code point, so a cut never splits a surrogate pair; the slice first keeps a huge input cheap.
  const points = [...text.slice(0, SHOWN_CHARACTERS * 2 + 1)];
  const cut = points.length > SHOWN_CHARACTERS ? `${points.slice(0, SHOWN_CHARACTERS).join('')}…` : text;
  return `"${escapeControls(cut)}"`;
}
