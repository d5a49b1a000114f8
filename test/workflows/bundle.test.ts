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
  // An allow-list, like the ESLint rule: of the project's own modules only workflows/ and domain/ may be bundled,
  // and of packages only Temporal's workflow SDK and what it needs (never storage, zod, or a Node API shim).
  const ownModules = modules.filter((m) => !m.includes('node_modules/'));
  expect(ownModules.filter((m) => !/^\.\/(workflows|domain)\//.test(m))).toEqual([]);
  const packages = modules.filter((m) => m.includes('node_modules/'));
  expect(packages.filter((m) => !/node_modules\/(@temporalio|long|ms|nexus-rpc)\//.test(m))).toEqual([]);
});
