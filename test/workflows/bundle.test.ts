/**
 * Workflow code runs in Temporal's deterministic sandbox. The ESLint rule on workflows/** keeps forbidden imports
 * out of the source; this test checks the bundle the worker actually loads.
 */
import { tracedWorkflowBundle, workflowBundle } from '../helpers/harness';

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

/** Every module a bundle holds, as webpack names them: ./<project path>, or a path into node_modules. */
function bundledModules(code: string): string[] {
  return [...new Set([...code.matchAll(/"((?:\.\.?\/)+[^"]+\.[cm]?[jt]s)"/g)].map((m) => m[1] ?? ''))];
}

/** The package a node_modules path belongs to (`@scope/name` or `name`). */
function packageOf(module: string): string {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module)?.[1] ?? module;
}

it('bundles no tracing where tracing is off', async () => {
  const modules = bundledModules((await workflowBundle()).code);
  expect(modules).not.toContain('./workflows/tracing.ts');
  expect(modules.filter((m) => /@opentelemetry|interceptors-opentelemetry/.test(m))).toEqual([]);
});

it('bundles, with tracing on, only the workflow half of the OpenTelemetry interceptors and what it needs', async () => {
  // ADR 0013: the interceptors module is the one exception the ESLint rule makes for workflows/.
  const modules = bundledModules((await tracedWorkflowBundle()).code);
  expect(modules).toContain('./workflows/tracing.ts');
  const ownModules = modules.filter((m) => !m.includes('node_modules/'));
  expect(ownModules.filter((m) => !/^\.\/(workflows|domain)\//.test(m))).toEqual([]);
  const packages = [...new Set(modules.filter((m) => m.includes('node_modules/')).map(packageOf))];
  expect(
    packages.filter(
      (p) =>
        !/^(@temporalio\/(workflow|common|interceptors-opentelemetry)|long|ms|nexus-rpc|@opentelemetry\/(api|core|resources|sdk-trace-base|semantic-conventions))$/.test(
          p,
        ),
    ),
  ).toEqual([]);
  // Of the interceptors package, its workflow side only: not the client's, the worker's or the plugin.
  const interceptorModules = modules.filter((m) => m.includes('interceptors-opentelemetry/'));
  expect(interceptorModules.length).toBeGreaterThan(0);
  expect(
    interceptorModules.filter(
      (m) => !/\/lib\/(workflow\/[^/]+|workflow-interceptors|instrumentation)\.js$/.test(m),
    ),
  ).toEqual([]);
});
