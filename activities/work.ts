/**
 * The phases' work, done by the plan's actors: Strategize asks the strategy actor for steps, Execute runs them in
 * sandbox copies and stores the changeset, Apply validates and writes it. Each activity returns the decisions its
 * actors recorded; the workflow gives them their sequence numbers and writes them with the phase's event.
 */
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActorRegistry } from '../actors/registry';
import type { StrategyProposal } from '../actors/types';
import { DEFAULT_MAX_AUTO_RETRIES } from '../domain/catalog';
import { applyStatistics, countChanges, describeCounts } from '../domain/changeset';
import type { FileChange } from '../domain/changeset';
import { DecisionLog } from '../domain/decision-log';
import { ERROR_TYPES } from '../domain/errors';
import type { WorkPhase } from '../domain/lifecycle';
import { ignoreList } from '../domain/ignore';
import { ChangesetTally } from '../domain/limits';
import { ENGINE_METRICS } from '../domain/metrics';
import { WORKFLOW_ACTOR } from '../domain/plan';
import type { PlanSpec, ProjectLink } from '../domain/plan';
import type { Workspace } from '../domain/project-link';
import { amendedSpec } from '../domain/correction';
import { describeStep } from '../domain/steps';
import { isFileStep, splitStrategySteps } from '../domain/subplans';
import { applyChangeset, ChangesetRefusedError } from '../sandbox/apply';
import type { Isolation } from '../sandbox/isolation';
import {
  computeChanges,
  createSandbox,
  removeSandbox,
  UnrecordableChangesetError,
} from '../sandbox/workspace';
import type { Baseline } from '../sandbox/workspace';
import type { ChangesetStore } from '../storage/changesets';
import type { ContextFileStore } from '../storage/context-files';
import type { InvariantStore } from '../storage/invariants';
import type { CatalogStore, PlanStore } from '../storage/types';
import { actorCall } from './actor-call';
import type {
  ApplyActivityResult,
  ApplyInput,
  CheckInvariantsInput,
  CheckInvariantsResult,
  ExecuteInput,
  ExecuteResult,
  PhaseWorkInput,
  StrategizeResult,
} from './contracts';
import { withProgress } from './progress';
import { createSubplanResolver } from './subplans';

export interface WorkDependencies {
  plans: PlanStore;
  catalog: CatalogStore;
  invariants: InvariantStore;
  changesets: ChangesetStore;
  contextFiles: ContextFileStore;
  actors: ActorRegistry;
  /** Where Execute makes its sandbox copies (one directory per plan and run). */
  sandboxDir: string;
  /** How the worker runs the plans' commands, found at its start (sandbox/isolation.ts). */
  isolation: Isolation;
  /** The invariant check (activities/invariants.ts), made at the end of a phase when the workflow asks. */
  checkInvariants(input: CheckInvariantsInput): Promise<CheckInvariantsResult>;
}

/**
 * The directory name of a project's sandbox: its position in the plan first, so two links can never share one
 * (`a/b__c` and `a__b/c` would), then its alias or name for people looking at the directory.
 */
function sandboxName(link: ProjectLink, index: number): string {
  return `${index + 1}-${link.alias ?? link.projectName.replace(/\//g, '__')}`;
}

export function createWorkActivities(deps: WorkDependencies) {
  const { plans, catalog, changesets, actors } = deps;
  const subplans = createSubplanResolver(deps);

  /**
   * The plan's linked projects with their roots as the catalog has them now, each with the sandbox `sandboxOf`
   * gives it (null: none yet, or a read-only link).
   */
  const workspacesOf = async (
    spec: PlanSpec,
    sandboxOf: (link: ProjectLink, index: number) => string | null,
  ): Promise<Workspace[]> => {
    const workspaces: Workspace[] = [];
    for (const [index, link] of spec.projects.entries()) {
      const project = await catalog.getProject(link.projectName);
      if (project === null) {
        throw ApplicationFailure.nonRetryable(
          `project ${link.projectName} is no longer in the catalog; add it again with \`agents project add\``,
          ERROR_TYPES.InvalidInput,
        );
      }
      workspaces.push({ ...link, root: project.value.path, sandbox: sandboxOf(link, index) });
    }
    return workspaces;
  };

  const callFor = (
    input: PhaseWorkInput,
    phase: 'STRATEGIZE' | 'EXECUTE',
    workspaces: Workspace[],
    report: (message: string) => void,
    signal: AbortSignal,
  ) =>
    actorCall(deps.contextFiles, {
      spec: input.spec,
      phase,
      record: input,
      workspaces,
      report,
      signal,
      isolation: deps.isolation,
    });

  /**
   * The check of the transition out of a phase whose work succeeded, when the workflow asked for it. A check that
   * cannot run must not fail the phase (its work would be done again): the workflow is handed nothing and checks
   * itself, reporting the failure as the check's.
   */
  const checkAfter = async (
    input: PhaseWorkInput,
    phase: WorkPhase,
    changesetId: string | null,
  ): Promise<CheckInvariantsResult | null> => {
    const entering = input.checkBefore ?? null;
    if (entering === null) return null;
    try {
      return await deps.checkInvariants({ spec: input.spec, phase, entering, changesetId, record: null });
    } catch (err) {
      if (Context.current().cancellationSignal.aborted) throw err;
      Context.current().log.warn('the invariant check after the phase failed; the workflow checks again', {
        error: err instanceof Error ? err.message : String(err),
      });
      return null;
    }
  };

  return {
    async strategize(input: PhaseWorkInput): Promise<StrategizeResult> {
      const strategyActor = actors.get('strategy', input.spec.actors.strategyActor);
      const estimationActor = actors.get('estimation', input.spec.actors.estimationActor);
      const workspaces = await workspacesOf(input.spec, () => null);
      // A person's amendments reach the actors as part of the plan's description, its prompt.
      const amended = { ...input, spec: amendedSpec(input.spec, input.amendments ?? []) };
      const result = await withProgress('STRATEGIZE', async (report, signal) => {
        const call = await callFor(amended, 'STRATEGIZE', workspaces, report, signal);
        report(`asking the ${strategyActor.name} strategy actor`);
        const action = { steps: input.spec.steps, validation: input.spec.validation };
        const { revision } = input;
        let proposal: StrategyProposal;
        if (revision === undefined) {
          proposal = await strategyActor.strategize({ ...call, action });
        } else {
          if (strategyActor.revise === undefined) {
            throw ApplicationFailure.nonRetryable(
              `the ${strategyActor.name} strategy actor does not re-ask steps after a correction`,
              ERROR_TYPES.ActorFailed,
            );
          }
          const later = await strategyActor.revise({ ...call, action, revision });
          proposal = { ...later, steps: [...revision.keptSteps, ...later.steps] };
        }
        const { stepDecisions, ...strategy } = proposal;
        // A child plan that could not be created is refused here, before a person approves the strategy.
        const { spawns } = splitStrategySteps(strategy.steps);
        if (spawns.length > 0) {
          report(`checking ${spawns.length} subplan step${spawns.length === 1 ? '' : 's'}`);
          await subplans.checkSpawns(input.spec, spawns, new Date().toISOString());
        }
        report(`estimating with the ${estimationActor.name} estimation actor`);
        const estimate = await estimationActor.estimate({ ...call, strategy });
        return {
          summary: `${strategy.summary}; estimate: ${estimate.summary}`,
          decisions: call.log.drafts(),
          strategy,
          // Positions in `decisions`, which keep their meaning when the workflow numbers the batch later.
          ...(stepDecisions === undefined
            ? {}
            : { stepDecisions: stepDecisions.map((seq) => seq - input.firstDecisionSeq) }),
          reasksLaterSteps: strategyActor.revise !== undefined,
        };
      });
      return { ...result, invariants: await checkAfter(input, 'STRATEGIZE', null) };
    },

    async execute(input: ExecuteInput): Promise<ExecuteResult> {
      const { spec } = input;
      const executionActor = actors.get('execution', spec.actors.executionActor);
      // One directory per Execute run and Temporal attempt: a later run never sees an earlier run's half-done
      // work, and a retried attempt never deletes a copy an earlier attempt (a worker presumed dead) still uses.
      const runDir = path.join(
        deps.sandboxDir,
        spec.planId,
        `execute-${input.attempt}.${Context.current().info.attempt}`,
      );
      const workspaces = await workspacesOf(spec, (link, index) =>
        link.readOnly ? null : path.join(runDir, sandboxName(link, index)),
      );
      const result = await withProgress('EXECUTE', async (report, signal): Promise<ExecuteResult> => {
        // What each copy held when it was made: the changeset is measured from it, so an edit someone makes in the
        // project while Execute runs is neither reverted nor deleted by Apply (its before-hash no longer matches).
        // The engine's ignore list and the action's (pinned into the plan), one list for the copy and the compare.
        const ignore = ignoreList(spec.execution.ignore);
        const baselines = new Map<string, Baseline>();
        for (const ws of workspaces) {
          if (ws.sandbox === null) continue;
          report(`copying ${ws.projectName} into a sandbox`);
          baselines.set(ws.projectName, await createSandbox(ws.root, ws.sandbox, ignore));
        }
        const sandboxRefs = workspaces.flatMap((ws) => (ws.sandbox === null ? [] : [ws.sandbox]));
        await plans.recordExecution(spec.planId, { sandboxRefs });

        const call = await callFor(input, 'EXECUTE', workspaces, report, signal);
        const outcome = await executionActor.execute({
          ...call,
          // The workflow ran the subplan steps (child plans) before this activity; the sandbox gets the rest.
          strategy: { ...input.strategy, steps: input.strategy.steps.filter(isFileStep) },
          maxAutoRetries: spec.effectiveProfileSnapshot?.maxAutoRetries ?? DEFAULT_MAX_AUTO_RETRIES,
        });
        const validationSummary =
          outcome.validation === null
            ? null
            : `validation \`${outcome.validation.command}\` ${outcome.validation.passed ? 'passed' : 'failed'}` +
              ` in the sandbox (exit ${outcome.validation.exitCode ?? 'none'})`;
        const decisions = call.log.drafts();
        const failed = (message: string, details: string | null): ExecuteResult => ({
          summary: message,
          decisions,
          failure: { type: ERROR_TYPES.ExecutionFailed, message, details },
          changesetId: null,
          sandboxRefs,
          counts: null,
          validationSummary,
        });
        if (!outcome.ok) {
          const step = outcome.error.step === null ? undefined : input.strategy.steps[outcome.error.step];
          const where =
            outcome.error.step === null || step === undefined
              ? ''
              : `step ${outcome.error.step + 1} (${describeStep(step)}) `;
          return failed(
            `Execute failed: ${where}after ${outcome.error.attempts} attempt(s): ${outcome.error.message}`,
            outcome.error.details,
          );
        }

        report('comparing the sandboxes with the projects');
        // One tally for every project: the limits are the changeset's, whatever the number of projects.
        const tally = new ChangesetTally();
        const changes: FileChange[] = [];
        for (const ws of workspaces) {
          if (ws.sandbox === null) continue;
          const baseline = baselines.get(ws.projectName);
          if (baseline === undefined) throw new Error(`no baseline for ${ws.projectName}`);
          try {
            changes.push(
              ...(await computeChanges(ws.projectName, ws.root, ws.sandbox, baseline, { ignore, tally })),
            );
          } catch (error) {
            if (!(error instanceof UnrecordableChangesetError)) throw error;
            return failed(`Execute failed: ${error.message}. Nothing was stored. ${error.hint}`, null);
          }
        }
        const changesetId = await changesets.save({
          planId: spec.planId,
          attempt: input.attempt,
          projects: workspaces,
          changes,
          createdAt: new Date().toISOString(),
        });
        await plans.recordExecution(spec.planId, { changesetId, validationSummary });
        const counts = countChanges(changes);
        return {
          summary: `${outcome.summary}; changeset ${changesetId}: ${describeCounts(counts)}`,
          decisions,
          failure: null,
          changesetId,
          sandboxRefs,
          counts,
          validationSummary,
        };
      });
      if (result.failure !== null) return result;
      return { ...result, invariants: await checkAfter(input, 'EXECUTE', result.changesetId) };
    },

    async apply(input: ApplyInput): Promise<ApplyActivityResult> {
      const changeset = await changesets.get(input.changesetId);
      if (changeset === null || changeset.planId !== input.spec.planId) {
        throw ApplicationFailure.nonRetryable(
          `changeset ${input.changesetId} of plan ${input.spec.planId} was not found`,
          ERROR_TYPES.InvalidInput,
        );
      }
      // A retried Apply after a successful write (the worker died before reporting) returns what was done. The
      // write heartbeats like every phase, so a long one is not taken for a dead worker and started twice.
      const result =
        (await changesets.getApplyResult(changeset.changesetId)) ??
        (await withProgress('APPLY', async (report) => {
          report(`writing ${changeset.changes.length} change(s)`);
          return applyChangeset(changeset, { at: input.at });
        }).catch((err: unknown) => {
          if (err instanceof ChangesetRefusedError) {
            // The activity's logger and meter: the worker's log lines and its one Prometheus endpoint, the SDK's
            // own beside them (a no-op meter without one).
            const context = Context.current();
            context.log.warn('Apply refused the changeset; nothing was written', {
              planId: input.spec.planId,
              changesetId: changeset.changesetId,
              problems: err.problems,
            });
            context.metricMeter
              .createCounter(ENGINE_METRICS.applyRefusals, 'changesets', 'Changesets Apply refused to write')
              .add(1, { action: input.spec.actionName });
            throw ApplicationFailure.nonRetryable(
              `${err.message}. Nothing was written. Restore the project and \`agents plan retry\`, or cancel ` +
                'the plan and start a new one to run Execute again.',
              ERROR_TYPES.ChangesetRefused,
              { problems: err.problems },
            );
          }
          throw err;
        }));
      await changesets.recordApplyResult(result);
      const counts = describeCounts(result);
      const validationSummary = `${input.validationSummary ?? 'no validation command'}; applied: ${counts}`;
      await plans.recordExecution(input.spec.planId, {
        validationSummary,
        applyStatistics: applyStatistics(result),
      });
      // The sandboxes (of every Execute run of the plan) served their purpose; the changeset keeps every byte that
      // was written.
      await removeSandbox(path.join(deps.sandboxDir, input.spec.planId));
      const log = new DecisionLog({
        firstSeq: input.firstDecisionSeq,
        parentSeq: input.parentDecisionSeq,
        phase: 'APPLY',
        actor: WORKFLOW_ACTOR,
      });
      const roots = changeset.projects.filter((p) => !p.readOnly).map((p) => `${p.projectName} (${p.root})`);
      log.record({
        type: 'tool_invocation',
        question: 'How should the changeset be written?',
        chosenOption: `Validate every change, then write each file atomically into ${roots.join(', ') || 'no project'}`,
        alternatives: ['Write files in place as they are processed'],
        confidence: null,
        rationale:
          `Validating the whole changeset before the first write means a refusal leaves nothing half-written. ` +
          `Result: ${counts}` +
          (result.alreadyApplied > 0
            ? ` (${result.alreadyApplied} already applied by an earlier attempt)`
            : ''),
        artifactsProduced: changeset.changes.map((c) => ({
          kind: 'file',
          uri: `${c.project}/${c.path}`,
          description: c.operation,
        })),
      });
      return {
        summary: `Applied changeset ${changeset.changesetId}: ${counts}`,
        decisions: log.drafts(),
        result,
        validationSummary,
        invariants: await checkAfter(input, 'APPLY', changeset.changesetId),
      };
    },
  };
}
