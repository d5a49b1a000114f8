import type { Command } from 'commander';
import { Option } from 'commander';
import { asCliDict, childLine, childRow, planListRow, PLAN_LIST_COLUMNS } from '../render/plan-view';
import { familyDocument, familyRows, FAMILY_TREE_COLUMNS, richFamilyLines } from '../render/family-view';
import { loadFamily } from '../family';
import { AUTOMATION_CHOICES, PHASES, PROCESSING_STATES } from '../../domain/lifecycle';
import type { AutomationLevel, Phase, ProcessingState } from '../../domain/lifecycle';
import { parseArgumentPairs } from '../../domain/plan';
import type { PlanSnapshot } from '../../domain/plan';
import { isUlid } from '../../domain/ids';
import { enforcedInvariants } from '../../domain/invariant';
import { waitingFor } from '../../domain/gates';
import { explainDict, richTreeLines, treeRows, TREE_COLUMNS } from '../render/tree-view';
import { planNotFound, resolvePlanId } from '../plan-ref';
import { shortIds } from '../../domain/plan-ref';
import { correctionImpact } from '../../domain/correction';
import { parseStepOption } from '../../domain/step-option';
import { describeStep } from '../../domain/steps';
import { diffStat, escapeControls, renderUnifiedDiff } from '../render/diff';
import {
  MAX_CONTEXT_TOTAL_BYTES,
  addContextOptions,
  readContextOptions,
  registerPlanWorkCommands,
} from './plan-work';
import type { OutputFormat } from '../render/format';
import { registerPlanEventsCommand } from './plan-events';
import { PlanClientError } from '../errors';
import type { CliRuntime } from './runtime';
import type { PlanClient } from '../plans';
import type { HoldPlanRequest } from '../../workflows/definitions';
import {
  byOption,
  collect,
  formatOption,
  parseAutomation,
  parseNonNegativeInt,
  parsePositiveInt,
  parseUpper,
  PLAN_ID,
  PLAN_ID_HELP,
} from './runtime';

export function registerPlanCommands(program: Command, cli: CliRuntime): void {
  const plan = program.command('plan').description('create, inspect and advance plans');

  const use = plan
    .command('use')
    .description('create a plan from an action and start it')
    .argument('<action>', 'namespaced action name, e.g. local/code-review')
    .requiredOption(
      '-p, --project <name[:alias][:ro]>',
      'target project, with an optional alias and :ro for read-only; repeatable',
      collect,
      [],
    )
    .addOption(
      new Option(
        '-a, --automation <level>',
        `automation level: ${AUTOMATION_CHOICES.join(' | ')} (default: the profile's, else the action's)`,
      ).argParser(parseAutomation),
    )
    .option('--profile <name>', "automation profile (default: the action's default profile)")
    .option('--arg <key=value>', 'action argument; repeatable', collect, [])
    .option('-n, --name <name>', 'plan name (default: "<action> on <projects>")')
    .option('-d, --description <text>', 'what the plan is for')
    .option('-t, --tag <tag>', 'tag; repeatable', collect, []);
  addContextOptions(use)
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (action: string, opts) => {
      const args = parseArgumentPairs(opts.arg as string[]);
      if (!args.ok) throw new PlanClientError('usage', args.error);
      // Read and checked before anything is created: a bad path starts nothing.
      const context = await readContextOptions(opts);
      const snapshot = await cli.withPlans((client) =>
        client.create({
          actionName: action,
          projects: opts.project as string[],
          automationLevel: opts.automation as AutomationLevel | undefined,
          profileName: opts.profile as string | undefined,
          arguments: args.arguments,
          name: opts.name as string | undefined,
          description: opts.description as string | undefined,
          tags: opts.tag as string[],
          createdBy: opts.by as string,
          contextFiles: context.files,
          maxContextBytes: MAX_CONTEXT_TOTAL_BYTES,
        }),
      );
      for (const note of context.skipped) cli.io.stderr(`${note}\n`);
      cli.show(asCliDict(snapshot), opts.format);
    });

  plan
    .command('list')
    .description('list plans, newest first')
    .addOption(
      new Option('--phase <phase>', `only plans in this phase (${PHASES.join(', ')})`).argParser(
        parseUpper(PHASES),
      ),
    )
    .addOption(
      new Option('--state <state>', `only plans in this state (${PROCESSING_STATES.join(', ')})`).argParser(
        parseUpper(PROCESSING_STATES),
      ),
    )
    .option('--action <name>', 'only plans of this action')
    .option('--project <name>', 'only plans targeting this project')
    .option('--parent <plan-id>', 'only the subplans this plan spawned (its id, id prefix or name)')
    .option('--limit <n>', 'at most this many plans', parsePositiveInt, 50)
    .addOption(formatOption())
    .action(async (opts) => {
      const plans = await cli.withStores(async ({ plans: store }) => {
        const parent =
          opts.parent === undefined ? undefined : await resolvePlanId(store, opts.parent as string);
        return store.listPlans({
          phase: opts.phase as Phase | undefined,
          state: opts.state as ProcessingState | undefined,
          actionName: opts.action as string | undefined,
          projectName: opts.project as string | undefined,
          ...(parent === undefined ? {} : { parentPlanId: parent }),
          limit: opts.limit as number,
        });
      });
      const shorts = shortIds(plans.map((p) => p.planId));
      cli.showRows(
        plans.map((p) => planListRow(p, shorts.get(p.planId) ?? p.planId)),
        PLAN_LIST_COLUMNS,
        opts.format,
      );
    });

  plan
    .command('show')
    .description('show one plan')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const view = await cli.withPlans((client) => client.get(id));
      // What the plan enforces: its pinned set and the PLAN-scope invariants added to it since, merged.
      const { added, children } = await cli.withStores(async ({ invariants, plans }) => ({
        added: await invariants.list({ scope: 'PLAN', target: view.planId }),
        children: view.childPlanIds.length === 0 ? [] : await plans.listPlans({ parentPlanId: view.planId }),
      }));
      cli.show(
        {
          ...asCliDict({ ...view, invariants: enforcedInvariants(view.invariants, added) }),
          // Where each subplan is, so a parent waiting in Execute says what it waits for.
          ...(children.length === 0
            ? {}
            : {
                children: children
                  .reverse()
                  .map((child) =>
                    opts.format === 'json' || opts.format === 'yaml' ? childRow(child) : childLine(child),
                  ),
              }),
        },
        opts.format,
      );
    });

  plan
    .command('advance')
    .description('approve the move to the next phase of a plan waiting at a gate')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .addOption(
      new Option(
        '--expect <phase>',
        'refuse unless the plan is in this phase (guards against stale commands)',
      ).argParser(parseUpper(PHASES)),
    )
    .option('-r, --reason <text>', 'why (recorded as a user_intervention decision)')
    .option(
      '-y, --yes',
      'approve without showing what comes next and asking first (proposed commands before Execute, the changes before Apply)',
      false,
    )
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const snapshot = await cli.withPlans(async (client) => {
        // Resolved once: what the person confirms and what is advanced are the same plan, even if a plan with
        // the same name appears meanwhile.
        const planId = await client.planIdOf(id);
        let reviewed: string | null | undefined;
        if (!(opts.yes as boolean)) {
          // A finished plan refuses here already: logged as the advance it was (ADR 0021).
          const view = await client.snapshot(planId, 'advance', {
            command: 'advance',
            by: opts.by as string,
          });
          await confirmCommands(cli, view);
          reviewed = await confirmApply(cli, view);
        }
        return client.advance(planId, {
          by: opts.by as string,
          ...(opts.reason === undefined ? {} : { reason: opts.reason as string }),
          ...(opts.expect === undefined ? {} : { expectedPhase: opts.expect as Phase }),
          ...(reviewed === undefined ? {} : { reviewedChangesetId: reviewed }),
        });
      });
      cli.show(asCliDict(snapshot), opts.format);
      // One approval of several: recorded, and the gate stays open for the others.
      if (snapshot.awaitingApproval && snapshot.gate !== undefined && snapshot.gate !== null) {
        cli.io.stderr(
          `recorded ${opts.by as string}'s approval; ${waitingFor(snapshot) ?? 'the gate stays open'}\n`,
        );
      }
      // Approved, but an invariant checked after the approval stopped the transition.
      if (snapshot.state === 'ERRORED') {
        throw new PlanClientError(
          'refused',
          `the transition was approved but did not happen: ${snapshot.error?.message ?? 'the plan is ERRORED'}` +
            ` (agents plan retry ${snapshot.planId} once it is resolved)`,
        );
      }
    });

  plan
    .command('retry')
    .description('run an ERRORED phase again')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .option('-r, --reason <text>', 'why (recorded as a user_intervention decision)')
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const snapshot = await cli.withPlans((client) =>
        client.retry(id, {
          by: opts.by as string,
          ...(opts.reason === undefined ? {} : { reason: opts.reason as string }),
        }),
      );
      cli.show(asCliDict(snapshot), opts.format);
    });

  plan
    .command('cancel')
    .description('cancel a running plan (it ends CANCELLED)')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const record = await cli.withPlans((client) => client.cancel(id, { by: opts.by as string }));
      cli.show(asCliDict(record), opts.format);
    });

  // Pause and resume take the same arguments and record the same kind of decision; only the verb differs.
  const holdCommands = [
    {
      name: 'pause',
      description:
        'hold a plan before its next phase starts (any automation level); recorded as a user_intervention',
      run: (client: PlanClient, id: string, request: HoldPlanRequest) => client.pause(id, request),
    },
    {
      name: 'resume',
      description: 'let a paused plan go on; recorded as a user_intervention',
      run: (client: PlanClient, id: string, request: HoldPlanRequest) => client.resume(id, request),
    },
  ];
  for (const { name, description, run } of holdCommands) {
    plan
      .command(name)
      .description(description)
      .argument(PLAN_ID, PLAN_ID_HELP)
      .option('-r, --reason <text>', 'why (recorded with the decision)')
      .addOption(byOption(cli.io))
      .addOption(formatOption())
      .action(async (id: string, opts) => {
        const snapshot = await cli.withPlans((client) =>
          run(client, id, { by: opts.by as string, ...reasonOf(opts) }),
        );
        cli.show(asCliDict(snapshot), opts.format);
      });
  }

  plan
    .command('set-automation')
    .description(
      'change the automation level the plan follows from its next gate on (a gate already open stays open); ' +
        'recorded as a user_intervention',
    )
    .argument(PLAN_ID, PLAN_ID_HELP)
    .argument('<level>', `automation level: ${AUTOMATION_CHOICES.join(' | ')}`, parseAutomation)
    .option('-r, --reason <text>', 'why (recorded with the decision)')
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, level: AutomationLevel, opts) => {
      const snapshot = await cli.withPlans((client) =>
        client.setAutomation(id, { by: opts.by as string, automationLevel: level, ...reasonOf(opts) }),
      );
      cli.show(asCliDict(snapshot), opts.format);
    });

  plan
    .command('wait')
    .description('wait until a plan needs a person (a gate or an error) or has finished')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .option('--timeout <seconds>', 'give up after this many seconds', parsePositiveInt, 60)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const view = await cli.withPlans((client) => client.waitForInput(id, (opts.timeout as number) * 1000));
      cli.show(asCliDict(view), opts.format);
    });

  plan
    .command('tree')
    .description('show the decision tree of a plan (seed 004)')
    .argument(PLAN_ID, PLAN_ID_HELP)
    .option('--show-superseded', 'include decisions replaced by a correction', false)
    .option('--depth <n>', 'deepest level to show, the root being 0 (0 = unlimited)', parseNonNegativeInt, 0)
    .option(
      '--subplans',
      'show the trees of the plans it spawned under the decisions that spawned them',
      false,
    )
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const format = opts.format as OutputFormat;
      const planId = await cli.withStores(({ plans }) => resolvePlanId(plans, id));
      if (opts.subplans === true) {
        const family = await cli.withStores(async (stores) => {
          const loaded = await loadFamily(stores, planId, {
            showSuperseded: opts.showSuperseded as boolean,
            depth: opts.depth as number,
          });
          if (loaded === null) throw planNotFound(planId);
          return loaded;
        });
        if (format === 'rich') cli.print(richFamilyLines(family, cli.style).join('\n'));
        else if (format === 'json' || format === 'yaml') cli.showDocument(familyDocument(family), format);
        else cli.showRows(familyRows(family), FAMILY_TREE_COLUMNS, format);
        return;
      }
      const tree = await cli.withStores(async ({ plans, decisions }) => {
        if ((await plans.getPlan(planId)) === null) throw planNotFound(planId);
        return decisions.getTree(planId, {
          showSuperseded: opts.showSuperseded as boolean,
          depth: opts.depth as number,
        });
      });
      if (format === 'rich') {
        cli.print(richTreeLines(tree, cli.style).join('\n'));
      } else if (format === 'json' || format === 'yaml') {
        cli.showDocument(
          {
            plan_id: planId,
            nodes: treeRows(tree),
            hidden_by_depth: tree.hiddenByDepth,
            hidden_superseded: tree.hiddenSuperseded,
          },
          format,
        );
      } else {
        cli.showRows(treeRows(tree), TREE_COLUMNS, format);
      }
    });

  plan
    .command('explain')
    .description(
      'show one decision: its question, choice and alternatives, and optionally context and reasoning',
    )
    .argument('<decision-id>', 'decision id (26-character ULID, as `plan tree` prints it)')
    .option(
      '--show-context',
      'include the context snapshot (hash, storage ref, resources, stored context)',
      false,
    )
    .option('--show-reasoning', 'include the rationale and the raw actor reasoning', false)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const decisionId = parseDecisionId(id);
      const doc = await cli.withStores(async ({ decisions }) => {
        const decision = await decisions.getDecision(decisionId);
        const context =
          opts.showContext && decision.hotContextRef !== null
            ? await decisions.getContext(decision.hotContextRef)
            : undefined;
        return explainDict(decision, {
          showContext: opts.showContext as boolean,
          showReasoning: opts.showReasoning as boolean,
          ...(context === undefined ? {} : { context }),
        });
      });
      cli.show(doc, opts.format);
    });

  plan
    .command('correct')
    .description(
      'replace a decision of a running plan with another option; at a gate, what depends on it runs again ' +
        '(a strategy step takes a step in the action step syntax, or "skip")',
    )
    .argument('<decision-id>', 'decision id (26-character ULID, as `plan tree` prints it)')
    .requiredOption(
      '-o, --option <text>',
      'the option chosen instead; for a strategy step, one step as YAML or JSON (e.g. \'{create: NOTES.md, content: "hi"}\') or "skip"',
    )
    .option('-r, --reason <text>', 'why (recorded as the correction reason; required unless --dry-run)')
    .option(
      '--dry-run',
      'print which decisions would be superseded and what would run again; change nothing',
      false,
    )
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const decisionId = parseDecisionId(id);
      const original = await cli.withStores(({ decisions }) => decisions.getDecision(decisionId));
      if (opts.dryRun === true) {
        const impact = await correctionDryRun(cli, original.planId, decisionId, opts.option as string);
        cli.show(impact, opts.format);
        return;
      }
      if (typeof opts.reason !== 'string') {
        throw new PlanClientError('usage', "required option '-r, --reason <text>' not specified");
      }
      const result = await cli.withPlans((client) =>
        client.correct(original.planId, {
          by: opts.by as string,
          decisionId,
          chosenOption: opts.option as string,
          reason: opts.reason as string,
        }),
      );
      const correction = await cli.withStores(({ decisions }) =>
        decisions.getDecision(result.correctionDecisionId),
      );
      cli.show(explainDict(correction, { showContext: false, showReasoning: true }), opts.format);
    });

  plan
    .command('amend')
    .description(
      'add instructions to a plan waiting for approval after Strategize: they join its prompt and Strategize runs again',
    )
    .argument(PLAN_ID, PLAN_ID_HELP)
    .argument('<instructions>', 'what the plan should also do or respect, in plain words')
    .option('-r, --reason <text>', 'why (recorded with the user_intervention decision)')
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (id: string, instructions: string, opts) => {
      const snapshot = await cli.withPlans((client) =>
        client.amend(id, {
          by: opts.by as string,
          instructions,
          ...(opts.reason === undefined ? {} : { reason: opts.reason as string }),
        }),
      );
      cli.show(asCliDict(snapshot), opts.format);
    });

  registerPlanWorkCommands(plan, cli);
  registerPlanEventsCommand(plan, cli);
}

/**
 * Before a plan runs commands its action does not contain (a model proposed them), the person approving the gate
 * into Execute sees them and says yes. Like the changes before Apply, the list goes to stderr.
 */
async function confirmCommands(cli: CliRuntime, view: PlanSnapshot): Promise<void> {
  const commands = view.commandsForReview ?? [];
  if (!view.awaitingApproval || commands.length === 0) return;
  cli.io.stderr(
    `The strategy proposes ${commands.length} command(s) the action does not contain. Execute runs them in ` +
      // Escaped like a diff: a line break or a bidi control in a command must not disguise another one.
      `the sandbox:\n${commands.map((c) => `  $ ${escapeControls(c)}`).join('\n')}\n`,
  );
  await confirmOrRefuse(cli, {
    unattended: `entering Execute runs ${commands.length} command(s) nobody has reviewed`,
    yesTo: 'run them',
    question: `Run these ${commands.length} command(s)? [y/N] `,
    declined: 'not advanced: the plan still waits for approval to enter EXECUTE',
  });
}

/**
 * Before a plan enters Apply, the person approving it sees exactly what will be written (seed 001's confirmation)
 * and says yes. The preview goes to stderr so `--format json` output on stdout stays parseable. Returns the id of
 * the changeset that was confirmed, or null when none was shown; the workflow refuses an advance into APPLY that
 * confirmed another changeset or none (checkReviewedChangeset), so a plan that reached its gate just after this
 * looked cannot be applied unseen.
 */
async function confirmApply(cli: CliRuntime, view: PlanSnapshot): Promise<string | null> {
  if (!(view.awaitingApproval && view.phase === 'EXECUTE') || view.changesetId === null) return null;
  const changesetId = view.changesetId;
  const changeset = await cli.withStores(async ({ changesets }) => {
    const found = await changesets.get(changesetId);
    if (found === null)
      throw new PlanClientError('notFound', `changeset ${changesetId} of plan ${view.planId} is missing`);
    return found;
  });
  const targets = changeset.projects
    .filter((p) => !p.readOnly)
    .map((p) => `${p.projectName} (${p.root})`)
    .join(', ');
  cli.io.stderr(
    `${renderUnifiedDiff(changeset.changes, { color: cli.color })}${diffStat(changeset.changes)}\n`,
  );
  if (changeset.changes.length === 0) return changesetId;
  await confirmOrRefuse(cli, {
    unattended: `entering Apply writes ${changeset.changes.length} change(s) to ${targets}`,
    yesTo: 'apply them',
    question: `Apply ${changeset.changes.length} change(s) to ${targets}? [y/N] `,
    declined: 'not applied: the plan still waits for approval to enter APPLY',
  });
  return changesetId;
}

/**
 * Asks the person at the terminal and refuses on anything but yes. With nobody to ask (stdin is not a terminal),
 * refuses as a usage error that says what would happen and that `--yes` approves it unseen.
 */
async function confirmOrRefuse(
  cli: CliRuntime,
  ask: { unattended: string; yesTo: string; question: string; declined: string },
): Promise<void> {
  if (cli.io.confirm === undefined) {
    throw new PlanClientError(
      'usage',
      `${ask.unattended}; nobody can confirm here (stdin is not a terminal): pass --yes to ${ask.yesTo}`,
    );
  }
  if (!(await cli.io.confirm(ask.question))) throw new PlanClientError('refused', ask.declined);
}

function parseDecisionId(input: string): string {
  const upper = input.trim().toUpperCase();
  if (!isUlid(upper)) {
    throw new PlanClientError('usage', `"${input}" is not a decision id (expected a 26-character ULID)`);
  }
  return upper;
}

/**
 * `plan correct --dry-run`: the impact computed by the same rules the workflow applies (domain/correction.ts),
 * from its live situation (a query, which records nothing) and the decision tree; a step option is parsed as the
 * workflow's check would. A correction the plan would refuse exits 4 with the reason.
 */
async function correctionDryRun(
  cli: CliRuntime,
  planId: string,
  decisionId: string,
  option: string,
): Promise<Record<string, unknown>> {
  const situation = await cli.withPlans((client) => client.correctionSituation(planId));
  const { decisions, spec } = await cli.withStores(async (stores) => ({
    decisions: await stores.decisions.listDecisions(planId),
    spec: await stores.plans.getSpec(planId),
  }));
  const impact = correctionImpact(decisions, situation, decisionId);
  const refuse = (reason: string) =>
    new PlanClientError('refused', `cannot correct decision ${decisionId} of plan ${planId}: ${reason}`);
  const target = decisions.find((d) => d.decisionId === decisionId);
  if (target === undefined || spec === null) throw refuse('the decision is not one of the plan');
  if (target.type === 'prompt_definition')
    throw refuse('the prompt_definition root is the plan prompt and cannot be corrected');
  if (target.supersededBy !== null) throw refuse(`it was already corrected by ${target.supersededBy}`);
  if (impact.effect.kind === 'refused') throw refuse(impact.effect.reason);
  let replacement: string | null = null;
  if (impact.effect.kind === 'step') {
    const parsed = parseStepOption(option, spec);
    if (!parsed.ok) throw refuse(parsed.reason);
    replacement = parsed.option.skip ? 'skip the step' : describeStep(parsed.option.step);
  }
  const line = (d: (typeof decisions)[number]) => `${d.seq} ${d.type} ${d.decisionId}: ${d.chosenOption}`;
  const reruns =
    impact.reruns === null
      ? []
      : [
          impact.reruns === 'EXECUTE'
            ? 'EXECUTE runs again from a fresh sandbox; its new changeset must be reviewed again'
            : `STRATEGIZE asks the strategy actor again for the steps after step ${impact.step ?? '?'}, with the correction as a constraint`,
        ];
  return {
    dry_run: true,
    plan_id: planId,
    decision_id: decisionId,
    phase: situation.phase,
    state: situation.state,
    effect:
      impact.effect.kind === 'step'
        ? replacement === 'skip the step'
          ? 'skip_step'
          : 'replace_step'
        : impact.effect.kind,
    step: impact.step,
    replacement,
    superseded: impact.superseded.map(line),
    leaves_tree: impact.leavesTree.map(line),
    reruns,
  };
}

function reasonOf(opts: Record<string, unknown>): { reason?: string } {
  return opts.reason === undefined ? {} : { reason: opts.reason as string };
}
