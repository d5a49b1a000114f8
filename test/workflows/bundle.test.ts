/**
 * Workflow code runs in Temporal's deterministic sandbox. The ESLint rule on workflows/** keeps forbidden imports
 * out of the source; this test checks the bundle the worker actually loads.
 */
import { workflowBundle } from '../helpers/harness';

it('bundles the workflows without storage, Node I/O or activity implementations', async () => {
  const { code } = await workflowBundle();
  expect(code).toContain('planWorkflow');
  // webpack names every bundled module by its path relative to the project, e.g. "./domain/lifecycle.ts".
  const modules = [...new Set([...code.matchAll(/"(\.\/[^"]+\.[cm]?[jt]s)"/g)].map((m) => m[1] ?? ''))];
  expect(modules).toEqual(expect.arrayContaining(['./workflows/plan.ts', './domain/lifecycle.ts']));
  const forbidden = modules.filter((m) =>
    /(@prisma|better-sqlite3|storage\/|activities\/(index|phases)|client\/|worker\/|node_modules\/zod\/)/.test(
      m,
    ),
  );
  expect(forbidden).toEqual([]);
});
