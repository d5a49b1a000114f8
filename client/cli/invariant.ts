/**
 * `agents invariant add|list|show|remove` (seed 004's invariant API). Every input is checked before anything is
 * written: exactly one scope, non-empty text (and description, when given), an existing target, a rule that parses.
 * Seed 004's `add <NAME> --description <DESC>` is the positional form with a description: NAME is the constraint
 * itself, as in every example the seed gives (ADR 0018).
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import picomatch from 'picomatch';
import { isUlid } from '../../domain/ids';
import { inheritedInvariantSet } from '../../domain/invariant';
import type { MergedInvariant, StoredInvariant } from '../../domain/invariant';
import { describeRule, parseInvariantRule } from '../../domain/invariant-rule';
import type { InvariantRule } from '../../domain/invariant-rule';
import { isFinished } from '../../domain/lifecycle';
import type { InvariantScope, PlanInvariant } from '../../domain/schemas';
import { getOrFail, parseName } from '../catalog';
import { PlanClientError } from '../errors';
import { resolvePlan, resolvePlanId } from '../plan-ref';
import type { OutputFormat } from '../render/format';
import type { CliRuntime } from './runtime';
import { byOption, formatOption } from './runtime';

const LIST_COLUMNS = [
  'id',
  'scope',
  'target',
  'text',
  'description',
  'rule',
  'author',
  'created_at',
] as const;
const EFFECTIVE_COLUMNS = ['text', 'scope', 'source', 'id', 'rule', 'collapsed'] as const;

export function registerInvariantCommands(program: Command, cli: CliRuntime): void {
  const invariant = program
    .command('invariant')
    .description('manage invariants: constraints every plan in their scope must respect (seed 004)');

  invariant
    .command('add')
    .description('add an invariant to exactly one scope')
    .argument('<text>', 'the constraint, in words (seed 004\'s NAME), e.g. "Never touch the migrations"')
    .addOption(
      new Option(
        '--description <text>',
        'what the constraint means and why; shown with it and given to the invariant actor',
      ).argParser(once('--description')),
    )
    .option('--global', 'applies to every plan')
    .option('--project <name>', 'applies to plans on this project')
    .option(
      '--plan <id>',
      'applies to this plan (its id, id prefix or name; checked from its next phase transition)',
    )
    .option(
      '--action <name>',
      "applies to plans made from this action (promoted to the plan's own at plan use)",
    )
    .option(
      '--rule <yaml-or-json>',
      'machine-checkable rule, e.g. \'{protected_paths: ["src/**"], max_changed_files: 10, ' +
        'undeletable_paths: ["db/**"], command: "npm test"}\'',
    )
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (text: string, opts) => {
      if (text.trim() === '') throw new PlanClientError('usage', 'the invariant text must not be empty');
      const description = opts.description as string | undefined;
      if (description !== undefined && description.trim() === '') {
        throw new PlanClientError(
          'usage',
          '--description must not be empty; leave it out for an invariant without one',
        );
      }
      const { scope, target: rawTarget } = chooseScope(opts);
      let rule: InvariantRule | null = null;
      if (opts.rule !== undefined) {
        const parsed = parseInvariantRule(opts.rule as string);
        if (!parsed.ok) throw new PlanClientError('usage', `--rule: ${parsed.error}`);
        rule = parsed.rule;
      }
      const stored = await cli.withStores(async ({ catalog, plans, invariants }) => {
        let target: string | null = null;
        if (scope === 'PROJECT' && rawTarget !== null) {
          target = (await getOrFail('project', rawTarget, (n) => catalog.getProject(n))).value.name;
        } else if (scope === 'ACTION' && rawTarget !== null) {
          target = (await getOrFail('action', rawTarget, (n) => catalog.getAction(n))).value.name;
        } else if (scope === 'PLAN' && rawTarget !== null) {
          const plan = await resolvePlan(plans, rawTarget);
          const { planId } = plan;
          if (isFinished(plan)) {
            throw new PlanClientError(
              'refused',
              `plan ${planId} has finished (${plan.phase}, ${plan.state}); it checks no more invariants`,
            );
          }
          target = planId;
        }
        return invariants.add({
          text,
          description: description ?? null,
          scope,
          target,
          rule,
          author: opts.by as string,
          at: new Date().toISOString(),
        });
      });
      cli.show(invariantDict(stored), opts.format as OutputFormat);
    });

  invariant
    .command('list')
    .description('list invariants; --effective shows the merged set a new plan on a project would start with')
    .argument(
      '[pattern]',
      'only invariants whose text contains this (or matches it as a glob, e.g. "*test*")',
    )
    .option('--global', 'only GLOBAL invariants')
    .option('--project <name>', "only this project's invariants (with --effective: the project to merge for)")
    .option('--action <name>', "only this action's invariants (with --effective: include the action's)")
    .option('--plan <id>', 'only the invariants added to this plan (its id, id prefix or name)')
    .option('--effective', 'the merged set: precedence PLAN > PROJECT > GLOBAL, duplicates collapsed')
    .addOption(formatOption())
    .action(async (pattern: string | undefined, opts) => {
      const matches = textMatcher(pattern);
      if (opts.effective) {
        if (opts.project === undefined) {
          throw new PlanClientError('usage', '--effective needs --project <name> (the project to merge for)');
        }
        if (opts.global || opts.plan !== undefined) {
          throw new PlanClientError('usage', '--effective combines only with --project and --action');
        }
        const merged = await cli.withStores(async ({ catalog, invariants }) => {
          const project = (await getOrFail('project', opts.project as string, (n) => catalog.getProject(n)))
            .value;
          const action =
            opts.action === undefined
              ? null
              : (await getOrFail('action', opts.action as string, (n) => catalog.getAction(n))).value;
          const stored = await invariants.inherited([project.name], action?.name ?? '');
          return inheritedInvariantSet(action, stored, [project.name]);
        });
        cli.showRows(
          merged.filter((m) => matches(m.invariant.text)).map(effectiveRow),
          EFFECTIVE_COLUMNS,
          opts.format as OutputFormat,
        );
        return;
      }
      const filters = [opts.global, opts.project, opts.action, opts.plan].filter((v) => v !== undefined);
      if (filters.length > 1) {
        throw new PlanClientError('usage', 'give at most one of --global, --project, --action, --plan');
      }
      const rows = await cli.withStores(async ({ invariants, plans }) => {
        if (opts.global) return invariants.list({ scope: 'GLOBAL' });
        if (opts.project !== undefined) {
          return invariants.list({ scope: 'PROJECT', target: parseName('project', opts.project as string) });
        }
        if (opts.action !== undefined) {
          return invariants.list({ scope: 'ACTION', target: parseName('action', opts.action as string) });
        }
        if (opts.plan !== undefined) {
          return invariants.list({ scope: 'PLAN', target: await resolvePlanId(plans, opts.plan as string) });
        }
        return invariants.list();
      });
      cli.showRows(
        rows.filter((inv) => matches(inv.text)).map(listRow),
        LIST_COLUMNS,
        opts.format as OutputFormat,
      );
    });

  invariant
    .command('show')
    .description('show one invariant')
    .argument('<id>', 'invariant id (as `invariant list` prints it)')
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const upper = parseInvariantId(id);
      const found = await cli.withStores(({ invariants }) => invariants.get(upper));
      if (found === null) throw new PlanClientError('notFound', `no invariant with id ${upper}`);
      cli.show(invariantDict(found), opts.format as OutputFormat);
    });

  invariant
    .command('remove')
    .description('remove an invariant (plans keep the set they were pinned to at creation)')
    .argument('<id>', 'invariant id (as `invariant list` prints it)')
    .action(async (id: string) => {
      const upper = parseInvariantId(id);
      const removed = await cli.withStores(({ invariants }) => invariants.remove(upper));
      if (!removed) throw new PlanClientError('notFound', `no invariant with id ${upper}`);
      cli.print(`removed invariant ${upper}`);
    });
}

/** Commander keeps the last of a repeated option: a second description would silently replace the first. */
function once(flag: string): (value: string, previous: string | undefined) => string {
  return (value, previous) => {
    if (previous !== undefined) throw new InvalidArgumentError(`give ${flag} once`);
    return value;
  };
}

function parseInvariantId(id: string): string {
  const upper = id.trim().toUpperCase();
  if (!isUlid(upper)) {
    throw new PlanClientError('usage', `"${id}" is not an invariant id (expected a 26-character ULID)`);
  }
  return upper;
}

/** Exactly one scope flag; its value is the target (none for --global). */
function chooseScope(opts: { global?: boolean; project?: string; plan?: string; action?: string }): {
  scope: InvariantScope;
  target: string | null;
} {
  const given: Array<{ scope: InvariantScope; target: string | null }> = [];
  if (opts.global) given.push({ scope: 'GLOBAL', target: null });
  if (opts.project !== undefined) given.push({ scope: 'PROJECT', target: opts.project });
  if (opts.plan !== undefined) given.push({ scope: 'PLAN', target: opts.plan });
  if (opts.action !== undefined) given.push({ scope: 'ACTION', target: opts.action });
  const [only, second] = given;
  if (only === undefined || second !== undefined) {
    throw new PlanClientError(
      'usage',
      `give exactly one scope: --global, --project <name>, --plan <id> or --action <name>` +
        (second === undefined ? '' : ` (got ${given.map((g) => g.scope.toLowerCase()).join(' and ')})`),
    );
  }
  return only;
}

function textMatcher(pattern: string | undefined): (text: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true;
  if (/[*?[\]{}]/.test(pattern)) return picomatch(pattern, { nocase: true, dot: true, bash: true });
  const needle = pattern.toLowerCase();
  return (text) => text.toLowerCase().includes(needle);
}

function invariantDict(inv: StoredInvariant) {
  return {
    id: inv.id,
    text: inv.text,
    description: inv.description,
    scope: inv.scope,
    target: inv.target,
    rule: inv.rule,
    author: inv.author,
    created_at: inv.createdAt,
  };
}

function listRow(inv: StoredInvariant) {
  return {
    id: inv.id,
    scope: inv.scope,
    target: inv.target ?? '',
    text: inv.text,
    description: inv.description ?? '',
    rule: inv.rule === null ? '' : describeRule(inv.rule),
    author: inv.author,
    created_at: inv.createdAt,
  };
}

/** Where an invariant in a merged set came from, in words. */
function invariantSource(inv: PlanInvariant): string {
  if (inv.scope === 'GLOBAL') return 'global';
  if (inv.sourceName !== null) return inv.sourceName;
  return inv.scope === 'PLAN' ? 'this plan' : '';
}

function effectiveRow(entry: MergedInvariant<PlanInvariant>) {
  const { invariant } = entry;
  return {
    text: invariant.text,
    // In json and yaml; the table keeps its columns.
    description: invariant.description ?? '',
    scope: invariant.scope,
    source: invariantSource(invariant),
    id: invariant.id ?? '',
    rule: invariant.rule === null ? '' : describeRule(invariant.rule),
    collapsed: entry.duplicates.map((d) => `${d.scope} ${invariantSource(d)}`).join(', '),
  };
}
