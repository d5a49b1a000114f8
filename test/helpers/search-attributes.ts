/**
 * Search-attribute assertions for workflow tests (jest only: kept out of harness.ts, which scripts import too).
 */
import { planWorkflowId } from '../../domain/ids';
import type { Harness } from './harness';

/** A plan workflow's search attributes, by name, as the Web UI and `temporal workflow list` filter them. */
export async function searchAttributes(h: Harness, planId: string): Promise<Record<string, unknown>> {
  const description = await h.env.client.workflow.getHandle(planWorkflowId(planId)).describe();
  return Object.fromEntries(
    description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
  );
}

/**
 * The workflow records a change before it upserts the search attributes (ADR 0001), so right after the database
 * shows a state the attributes may still be one workflow task behind: poll until they match.
 */
export async function expectSearchAttributes(
  h: Harness,
  planId: string,
  expected: Record<string, unknown>,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const actual = await searchAttributes(h, planId);
    if (Object.entries(expected).every(([k, v]) => actual[k] === v) || Date.now() > deadline) {
      expect(actual).toMatchObject(expected);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
