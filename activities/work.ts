/**
 * The phases' work, done by the plan's actors: Strategize asks the strategy actor for steps, Execute runs them in
 * sandbox copies and stores the changeset, Apply validates and writes it. Each activity returns the decisions its
 * actors recorded; the workflow gives them their sequence numbers and writes them with the phase's event.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/activity';
import type { ActorRegistry } from '../actors/registry';
import type { ActorCall, ContextFile, Workspace } from '../actors/types';
import { DEFAULT_MAX_AUTO_RETRIES } from '../domain/catalog';
import { countChanges, describeCounts } from '../domain/changeset';
import type { ChangesetProject, FileChange } from '../domain/changeset';
import { DecisionLog } from '../domain/decision-log';
import type { DecisionEntry } from '../domain/decision-log';
import { invariantEnforcedDecision } from '../domain/decision';
import type { WorkPhase } from '../domain/lifecycle';
import type { PlanSpec } from '../domain/plan';
import { describeStep } from '../domain/steps';
import { applyChangeset, ChangesetRefusedError } from '../sandbox/apply';
import { computeChanges, createSandbox, removeSandbox } from '../sandbox/workspace';
import type { Baseline } from '../sandbox/workspace';
import type { ChangesetStore } from '../storage/changesets';
import type { InvariantStore } from '../storage/invariants';
import { checkInvariantRule } from '../actors/invariant-rules';
import type { ChangeSummary, InvariantVerdict } from '../actors/types';
import { enforcedInvariants } from '../domain/invariant';
import { describeRule } from '../domain/invariant-rule';
import type { PlanInvariant } from '../domain/plan';
import type { CatalogStore, PlanStore } from '../storage/types';
import { ERROR_TYPES } from '../workflows/definitions';
import { toFailure } from './failures';
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

export interface WorkDependencies {
  plans: PlanStore;
  invariants: InvariantStore;
  catalog: CatalogStore;
  changesets: ChangesetStore;
  actors: ActorRegistry;
  /** Where Execute makes its sandbox copies (one directory per plan and run). */
  sandboxDir: string;
}

/** How often a running phase reports it is alive (and what it is doing) to Temporal. */
const HEARTBEAT_MS = 5_000;

const WORKFLOW_ACTOR = 'workflow';

/**
 * Runs `work` with an ActorCall whose progress goes out as activity heartbeats: on a timer as well as on every
 * change, so a long step (a model call, a test run) keeps the heartbeat alive and cancellation reaches it.
 */
async function withProgress<T>(
  phase: WorkPhase,
  work: (report: (message: string) => void, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const context = Context.current();
  let current = `${phase}: starting`;
  const beat = (): void => context.heartbeat({ phase, progress: current });
  beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  try {
    return await work((message) => {
      current = `${phase}: ${message}`;
      beat();
    }, context.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}

/**
 * The directory name of a project's sandbox: its position in the plan first, so two links can never share one
 * (`a/b__c` and `a__b/c` would), then its alias or name for people looking at the directory.
 */
function sandboxName(link: { projectName: string; alias: string | null }, index: number): string {
  return `${index + 1}-${link.alias ?? link.projectName.replace(/\//g, '__')}`;
}

export function createWorkActivities(deps: WorkDependencies) {
  const { plans, catalog, changesets, actors } = deps;

  const projectRoots = async (spec: PlanSpec): Promise<Map<string, string>> => {
    const roots = new Map<string, string>();
    for (const link of spec.projects) {
      const project = await catalog.getProject(link.projectName);
      if (project === null) {
        throw ApplicationFailure.nonRetryable(
          `project ${link.projectName} is no longer in the catalog; add it again with \`agents project add\``,
          ERROR_TYPES.InvalidInput,
        );
      }
      roots.set(link.projectName, project.value.path);
    }
    return roots;
  };

  const contextFiles = async (planId: string): Promise<ContextFile[]> =>
    (await changesets.readContextFiles(planId)).map((f) => ({
      path: f.path,
      sha256: f.sha256,
      size: f.size,
      content: f.binary ? null : Buffer.from(f.content).toString('utf8'),
    }));

  const call = async (
    input: PhaseWorkInput,
    phase: WorkPhase,
    workspaces: Workspace[],
    report: (message: string) => void,
    signal: AbortSignal,
  ): Promise<ActorCall> => ({
    plan: input.spec,
    workspaces,
    contextFiles: await contextFiles(input.spec.planId),
    log: new DecisionLog({
      firstSeq: input.firstDecisionSeq,
      parentSeq: input.parentDecisionSeq,
      phase,
      actor: WORKFLOW_ACTOR,
    }),
    signal,
    progress: report,
  });

  /** Whether a sandbox still exists (Apply removes them): a command rule can only run where one does. */
  const existing = async (dir: string | null): Promise<string | null> =>
    dir === null
      ? null
      : (await stat(dir)
            .then((s) => s.isDirectory())
            .catch(() => false))
        ? dir
        : null;

  return {
    /**
     * The effective invariants of the plan (its pinned set, plus the PLAN-scope ones added to it since, read now)
     * checked against the changeset when there is one. Rules are checked exactly by the built-in check, whatever
     * the plan's invariant actor; free text goes to that actor, which may only acknowledge it.
     */
    async checkInvariants(input: CheckInvariantsInput): Promise<CheckInvariantsResult> {
      try {
        const { spec } = input;
        const live = await deps.invariants.list({ scope: 'PLAN', target: spec.planId });
        const effective = enforcedInvariants(spec.invariants, live);
        const changeset = input.changesetId === null ? null : await changesets.get(input.changesetId);
        const changes: ChangeSummary[] | null =
          changeset === null
            ? null
            : changeset.changes.map((c) => ({
                project: c.project,
                operation: c.operation,
                path: c.path,
                fromPath: c.fromPath,
              }));
        const workspaces: Workspace[] = [];
        if (changeset !== null) {
          for (const p of changeset.projects) {
            workspaces.push({
              project: p.name,
              alias: p.alias,
              readOnly: p.readOnly,
              root: p.root,
              sandbox: await existing(p.sandbox),
            });
          }
        }
        const phase = input.phase === 'APPLIED' ? 'APPLY' : input.phase;
        return await withProgress(phase, async (report, signal) => {
          const actorCall = await call(
            {
              spec,
              attempt: 1,
              firstDecisionSeq: input.record?.firstDecisionSeq ?? 0,
              parentDecisionSeq: input.record?.parentDecisionSeq ?? 0,
            },
            phase,
            workspaces,
            report,
            signal,
          );
          const verdicts = new Map<PlanInvariant, InvariantVerdict>();
          for (const invariant of effective) {
            if (invariant.rule === null) continue;
            report(`checking the invariant "${invariant.text}"`);
            // A project's invariant governs that project only: its rule sees that project's changes and sandbox.
            const only =
              invariant.scope === 'PROJECT' && invariant.sourceName !== null ? invariant.sourceName : null;
            const verdict = await checkInvariantRule(invariant.rule, {
              changes:
                only === null || changes === null ? changes : changes.filter((c) => c.project === only),
              workspaces: only === null ? workspaces : workspaces.filter((w) => w.project === only),
              plan: spec,
              signal,
              progress: report,
            });
            verdicts.set(invariant, { invariant, ...verdict });
          }
          const freeText = effective.filter((inv) => inv.rule === null);
          if (freeText.length > 0) {
            const actor = actors.get('invariant', spec.actors.invariantActor);
            report(`asking the ${actor.name} invariant actor about ${freeText.length} invariant(s)`);
            for (const verdict of await actor.check({ ...actorCall, phase, invariants: freeText, changes })) {
              verdicts.set(verdict.invariant, verdict);
            }
          }
          const ordered = effective.map(
            (invariant) =>
              verdicts.get(invariant) ?? {
                invariant,
                status: 'acknowledged' as const,
                evidence: 'the invariant actor gave no verdict; recorded as acknowledged',
              },
          );
          if (input.record !== null) {
            for (const verdict of ordered) actorCall.log.record(invariantEnforced(verdict));
          }
          const count = (status: InvariantVerdict['status']) =>
            ordered.filter((v) => v.status === status).length;
          const where = input.entering === null ? 'at the start of STRATEGIZE' : `before ${input.entering}`;
          return {
            violations: ordered
              .filter((v) => v.status === 'violated')
              .map((v) => ({ invariant: v.invariant, evidence: v.evidence })),
            decisions: actorCall.log.drafts(),
            summary:
              `${ordered.length} invariant(s) checked ${where}: ${count('held')} held, ` +
              `${count('acknowledged')} acknowledged, ${count('violated')} violated`,
          };
        });
      } catch (err) {
        throw toFailure(err);
      }
    },

    async strategize(input: PhaseWorkInput): Promise<StrategizeResult> {
      try {
        const strategyActor = actors.get('strategy', input.spec.actors.strategyActor);
        const estimationActor = actors.get('estimation', input.spec.actors.estimationActor);
        const roots = await projectRoots(input.spec);
        const workspaces: Workspace[] = input.spec.projects.map((link) => ({
          project: link.projectName,
          alias: link.alias,
          readOnly: link.readOnly,
          root: roots.get(link.projectName) ?? '',
          sandbox: null,
        }));
        return await withProgress('STRATEGIZE', async (report, signal) => {
          const actorCall = await call(input, 'STRATEGIZE', workspaces, report, signal);
          report(`asking the ${strategyActor.name} strategy actor`);
          const strategy = await strategyActor.strategize({
            ...actorCall,
            action: { steps: input.spec.steps, validation: input.spec.validation },
          });
          report(`estimating with the ${estimationActor.name} estimation actor`);
          const estimate = await estimationActor.estimate({ ...actorCall, strategy });
          return {
            summary: `${strategy.summary}; estimate: ${estimate.summary}`,
            decisions: actorCall.log.drafts(),
            strategy,
          };
        });
      } catch (err) {
        throw toFailure(err);
      }
    },

    async execute(input: ExecuteInput): Promise<ExecuteResult> {
      try {
        const { spec } = input;
        const executionActor = actors.get('execution', spec.actors.executionActor);
        const roots = await projectRoots(spec);
        // One directory per Execute run and Temporal attempt: a later run never sees an earlier run's half-done
        // work, and a retried attempt never deletes a copy an earlier attempt (a worker presumed dead) still uses.
        const runDir = path.join(
          deps.sandboxDir,
          spec.planId,
          `execute-${input.attempt}.${Context.current().info.attempt}`,
        );
        const workspaces: Workspace[] = spec.projects.map((link, index) => ({
          project: link.projectName,
          alias: link.alias,
          readOnly: link.readOnly,
          root: roots.get(link.projectName) ?? '',
          sandbox: link.readOnly ? null : path.join(runDir, sandboxName(link, index)),
        }));
        return await withProgress('EXECUTE', async (report, signal) => {
          // What each copy held when it was made: the changeset is measured from it, so an edit someone makes in the
          // project while Execute runs is neither reverted nor deleted by Apply (its before-hash no longer matches).
          const baselines = new Map<string, Baseline>();
          for (const ws of workspaces) {
            if (ws.sandbox === null) continue;
            report(`copying ${ws.project} into a sandbox`);
            baselines.set(ws.project, await createSandbox(ws.root, ws.sandbox));
          }
          const sandboxRefs = workspaces.flatMap((ws) => (ws.sandbox === null ? [] : [ws.sandbox]));
          await plans.recordExecution(spec.planId, { sandboxRefs });

          const actorCall = await call(input, 'EXECUTE', workspaces, report, signal);
          const outcome = await executionActor.execute({
            ...actorCall,
            strategy: input.strategy,
            maxAutoRetries: spec.effectiveProfileSnapshot?.maxAutoRetries ?? DEFAULT_MAX_AUTO_RETRIES,
          });
          const validationSummary =
            outcome.validation === null
              ? null
              : `validation \`${outcome.validation.command}\` ${outcome.validation.passed ? 'passed' : 'failed'}` +
                ` in the sandbox (exit ${outcome.validation.exitCode ?? 'none'})`;
          const decisions = actorCall.log.drafts();
          if (!outcome.ok) {
            const step = outcome.error.step === null ? undefined : input.strategy.steps[outcome.error.step];
            const where =
              outcome.error.step === null || step === undefined
                ? ''
                : `step ${outcome.error.step + 1} (${describeStep(step)}) `;
            const message = `Execute failed: ${where}after ${outcome.error.attempts} attempt(s): ${outcome.error.message}`;
            return {
              summary: message,
              decisions,
              failure: { type: ERROR_TYPES.ExecutionFailed, message, details: outcome.error.details },
              changesetId: null,
              sandboxRefs,
              counts: null,
              validationSummary,
            };
          }

          report('comparing the sandboxes with the projects');
          const changes: FileChange[] = [];
          for (const ws of workspaces) {
            if (ws.sandbox === null) continue;
            const baseline = baselines.get(ws.project);
            if (baseline === undefined) throw new Error(`no baseline for ${ws.project}`);
            changes.push(...(await computeChanges(ws.project, ws.root, ws.sandbox, baseline)));
          }
          const projects: ChangesetProject[] = workspaces.map((ws) => ({
            name: ws.project,
            alias: ws.alias,
            root: ws.root,
            readOnly: ws.readOnly,
            sandbox: ws.sandbox,
          }));
          const changesetId = await changesets.save({
            planId: spec.planId,
            attempt: input.attempt,
            projects,
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
      } catch (err) {
        throw toFailure(err);
      }
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
      await plans.recordExecution(input.spec.planId, { validationSummary });
      // The sandboxes (of every Execute run of the plan) served their purpose; the changeset keeps every byte that
      // was written.
      await removeSandbox(path.join(deps.sandboxDir, input.spec.planId));
      const log = new DecisionLog({
        firstSeq: input.firstDecisionSeq,
        parentSeq: input.parentDecisionSeq,
        phase: 'APPLY',
        actor: WORKFLOW_ACTOR,
      });
      const roots = changeset.projects.filter((p) => !p.readOnly).map((p) => `${p.name} (${p.root})`);
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
      };
    },
  };
}

/** Seed 004's invariant_enforced decision: the constraint, where it came from, and how the check came out. */
function invariantEnforced(verdict: InvariantVerdict): DecisionEntry {
  const { invariant } = verdict;
  return {
    ...invariantEnforcedDecision(
      invariant,
      (invariant.rule === null ? '' : ` with the rule ${describeRule(invariant.rule)}`) +
        `; ${verdict.status}: ${verdict.evidence}. Checked again at every phase transition.`,
    ),
    context: { content: { invariant, status: verdict.status, evidence: verdict.evidence } },
  };
}

export type WorkActivities = ReturnType<typeof createWorkActivities>;
