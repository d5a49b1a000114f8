/**
 * Decision contexts leave an activity as references (ADR 0011): the activity that produced them stores them,
 * content-addressed, and the decisions it returns name them by `sha256:` reference. A context (a model's prompt,
 * a strategy, an invariant's evidence) then crosses the workflow's history once as a 71-character reference
 * instead of twice as a whole, in the activity's result and again in the recording's input.
 */
import type { DecisionDraft } from '../domain/decision';
import type { DecisionStore } from '../storage/types';

export async function contextsByReference(
  decisions: Pick<DecisionStore, 'storeContexts'>,
  planId: string,
  drafts: readonly DecisionDraft[],
): Promise<DecisionDraft[]> {
  const carried = drafts.filter((d) => d.context !== undefined && d.context.ref === undefined);
  if (carried.length === 0) return [...drafts];
  const refs = await decisions.storeContexts(
    planId,
    carried.map((d) => d.context?.content),
  );
  const refOf = new Map(carried.map((draft, i) => [draft, refs[i]]));
  return drafts.map((draft) => {
    const ref = refOf.get(draft);
    if (ref === undefined || draft.context === undefined) return draft;
    const { content: _stored, ...rest } = draft.context;
    return { ...draft, context: { ...rest, ref } };
  });
}
