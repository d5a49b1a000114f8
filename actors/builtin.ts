/**
 * The built-in actors: what a plan runs with when it names no actor, with no model and no network. They do exactly
 * what the action definition says and record it, so the decision tree of a built-in plan reads as the action's
 * steps, what each one did, and how failures were handled. A model-backed actor replaces any role by name.
 */
import type { ResourceRef } from '../domain/decision';
import type { FileStep, TemplateValue } from '../domain/steps';
import { describeStep, renderTemplate, templateValues } from '../domain/steps';
import { isSubplanStep, spawnDecision } from '../domain/subplans';
import type { Workspace } from '../domain/project-link';
import type { StepEnv, StepReport } from './steps';
import { globMatcher, listFiles, runStep, runValidation, StepError, targetWorkspace } from './steps';
import type {
  ActorCall,
  ActorSet,
  Estimate,
  EstimationActor,
  ExecutionActor,
  ExecutionOutcome,
  InvariantActor,
  StrategyActor,
  ValidationOutcome,
} from './types';
import { DEFAULT_ACTOR } from './types';

export function createBuiltinActors(): ActorSet {
  return {
    strategy: builtinStrategy,
    execution: builtinExecution,
    estimation: builtinEstimation,
    invariant: builtinInvariant,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Strategy

const builtinStrategy: StrategyActor = {
  name: DEFAULT_ACTOR,
  async strategize(call) {
    const { steps, validation } = call.action;
    const { log, plan } = call;
    // The person chose these files as context; the built-in actor does not read them, but the tree should show
    // they were in scope when the strategy was fixed.
    const resources: ResourceRef[] = call.contextFiles.map((file) => ({ kind: 'file', uri: file.path }));
    if (steps.length === 0) {
      log.record({
        type: 'strategy_choice',
        question: 'What should be done?',
        chosenOption: 'No file changes: the action defines no steps',
        alternatives: [],
        confidence: 1,
        rationale: 'The action definition lists no steps, and the built-in actor adds none of its own.',
        context: {
          content: { steps: [], validation, arguments: plan.arguments },
          relevantResources: resources,
        },
      });
    }
    const stepDecisions: number[] = [];
    for (const [i, step] of steps.entries()) {
      call.progress(`strategy: step ${i + 1}/${steps.length}: ${describeStep(step)}`);
      // A subplan step's decision is its spawn; either way it is the decision the step came from.
      const seq = isSubplanStep(step)
        ? log.record({
            ...spawnDecision(plan.planId, i, step, steps.length),
            confidence: 1,
            rationale: `Step ${i + 1} comes from the action definition, which hands this part of the work to child plans.`,
            context: { content: { step, arguments: plan.arguments }, relevantResources: resources },
          })
        : log.record({
            type: 'strategy_choice',
            question: `Step ${i + 1} of ${steps.length}: what should be done?`,
            chosenOption: describeStep(step),
            alternatives: ['Skip this step'],
            confidence: 1,
            rationale: `Step ${i + 1} comes from the action definition; the built-in actor runs the action's steps as written.`,
            context: { content: { step, arguments: plan.arguments }, relevantResources: resources },
          });
      stepDecisions.push(seq);
    }
    const what =
      steps.length === 0
        ? 'No steps: the action defines none'
        : `${steps.length} step${steps.length === 1 ? '' : 's'} from the action definition`;
    return {
      steps,
      validation,
      summary: validation === null ? what : `${what}, then validation with \`${validation}\``,
      stepDecisions,
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Execution

const STOP = 'Stop: mark the plan ERRORED';

const builtinExecution: ExecutionActor = {
  name: DEFAULT_ACTOR,
  async execute(call) {
    const { log, strategy, workspaces } = call;
    const total = strategy.steps.length;
    const maxAttempts = Math.max(0, call.maxAutoRetries) + 1;
    const env: StepEnv = {
      plan: call.plan,
      workspaces,
      signal: call.signal,
      progress: (message) => call.progress(message),
      isolation: call.isolation,
    };

    const implementation = log.record({
      type: 'implementation_choice',
      question: 'Where should the changes be produced?',
      chosenOption: 'In a sandbox copy of each writable project, compared against the project afterwards',
      alternatives: ['Edit the projects in place'],
      confidence: 1,
      rationale: 'A sandbox keeps the projects untouched until Apply validates and writes the changeset.',
      parentSeq: log.phaseParent,
      context: { content: { steps: strategy.steps, validation: strategy.validation } },
    });
    const writable = workspaces.filter((w) => !w.readOnly && w.sandbox !== null).map((w) => w.projectName);
    const readOnly = workspaces.filter((w) => w.readOnly || w.sandbox === null).map((w) => w.projectName);
    log.record({
      type: 'resource_selection',
      question: 'Which projects may this plan change?',
      chosenOption:
        writable.length > 0 ? `Writable: ${writable.join(', ')}` : 'None (every linked project is read-only)',
      alternatives: readOnly.map((project) => `Also write ${project}`),
      confidence: 1,
      rationale:
        readOnly.length > 0
          ? `${readOnly.join(', ')} linked read-only: read, never copied or written.`
          : 'Every linked project is writable.',
      parentSeq: implementation,
      context: {
        content: { writable, readOnly },
        relevantResources: workspaces.map((w) => ({
          kind: 'project',
          uri: w.projectName,
          description: w.readOnly ? 'read-only' : 'writable (sandbox copy)',
        })),
      },
    });

    for (const [index, step] of strategy.steps.entries()) {
      const n = index + 1;
      // Each failure hangs under the decision that led to the attempt, so a retry chain reads top to bottom.
      let parent = implementation;
      for (let attempt = 1; ; attempt++) {
        call.progress(
          `step ${n}/${total}: ${describeStep(step)}` +
            (attempt > 1 ? ` (attempt ${attempt} of ${maxAttempts})` : ''),
        );
        let report: StepReport;
        try {
          report = await runStep(step, env);
        } catch (error) {
          if (call.signal.aborted) throw call.signal.reason;
          if (!(error instanceof StepError)) throw error;
          const last = attempt >= maxAttempts || !error.retryable;
          parent = log.record({
            type: 'error_recovery',
            question: `Step ${n} failed: what now?`,
            chosenOption: last ? STOP : `Retry step ${n} (attempt ${attempt + 1} of ${maxAttempts})`,
            alternatives: last ? [`Retry step ${n} again`, `Skip step ${n}`] : [STOP, `Skip step ${n}`],
            confidence: 1,
            rationale: error.message,
            parentSeq: parent,
            context: { content: { error: error.message, details: error.details, step, attempt } },
          });
          if (last) {
            return {
              ok: false,
              error: {
                message: `Step ${n} (${describeStep(step)}) failed: ${error.message}`,
                step: index,
                attempts: attempt,
                details: error.details,
              },
              validation: null,
            };
          }
          continue;
        }
        log.record({
          type: 'tool_invocation',
          question: `Step ${n} of ${total}: what ran?`,
          chosenOption: describeReport(report),
          alternatives: [],
          confidence: null,
          rationale:
            `Step ${n} of the strategy, run in the sandbox of ${report.project}` +
            (attempt > 1 ? ` on attempt ${attempt} of ${maxAttempts}` : '') +
            '.',
          parentSeq: parent,
          context: {
            content: { step, report, attempt },
            relevantResources: report.filesTouched.map((file) => ({
              kind: 'file',
              uri: file,
              description: `in ${report.project}`,
            })),
          },
        });
        break;
      }
    }

    const summary =
      total === 0 ? 'No steps to run' : `Ran ${total} step${total === 1 ? '' : 's'} in the sandbox`;
    if (strategy.validation === null) return { ok: true, summary, validation: null };
    return validate(call, strategy.validation, env, implementation, maxAttempts, summary);
  },
};

/** Validation gets the same auto-debug budget as a step: a flaky test suite should not error the plan. */
async function validate(
  call: ActorCall,
  command: string,
  env: StepEnv,
  implementation: number,
  maxAttempts: number,
  summary: string,
): Promise<ExecutionOutcome> {
  const { log } = call;
  let parent = implementation;
  for (let attempt = 1; ; attempt++) {
    call.progress(`validation: ${command}` + (attempt > 1 ? ` (attempt ${attempt} of ${maxAttempts})` : ''));
    let outcome: ValidationOutcome;
    try {
      outcome = await runValidation(command, env);
    } catch (error) {
      if (call.signal.aborted) throw call.signal.reason;
      if (!(error instanceof StepError)) throw error;
      return validationNotRun(call, error, parent, attempt);
    }
    const verdict = log.record({
      type: 'validation_response',
      question: 'Did validation pass?',
      chosenOption: outcome.passed
        ? `Validation passed: \`${outcome.command}\``
        : `Validation failed: \`${outcome.command}\` ${exitText(outcome)}`,
      alternatives: [],
      confidence: null,
      rationale:
        `\`${outcome.command}\` ${exitText(outcome)}` +
        (outcome.output === '' ? ' with no output.' : `; output:\n${outcome.output}`),
      parentSeq: parent,
      context: { content: { ...outcome, attempt } },
    });
    if (outcome.passed) {
      return {
        ok: true,
        summary: `${summary}; validation passed: \`${outcome.command}\``,
        validation: outcome,
      };
    }
    const last = attempt >= maxAttempts;
    const message = `Validation failed: \`${outcome.command}\` ${exitText(outcome)}`;
    parent = log.record({
      type: 'error_recovery',
      question: 'Validation failed: what now?',
      chosenOption: last ? STOP : `Retry validation (attempt ${attempt + 1} of ${maxAttempts})`,
      alternatives: last ? ['Retry validation again', 'Accept the changes without validation'] : [STOP],
      confidence: 1,
      rationale: message,
      parentSeq: verdict,
      context: { content: { error: message, output: outcome.output, step: null, attempt } },
    });
    if (last) {
      return {
        ok: false,
        error: {
          message,
          step: null,
          attempts: attempt,
          details: outcome.output === '' ? null : outcome.output,
        },
        validation: outcome,
      };
    }
  }
}

/**
 * A validation command that could not be run at all (refused for want of isolation, no shell): nothing was
 * validated, so the plan stops, with the reason.
 */
function validationNotRun(
  call: ActorCall,
  error: StepError,
  parent: number,
  attempt: number,
): ExecutionOutcome {
  const message = `Validation could not run: ${error.message}`;
  call.log.record({
    type: 'error_recovery',
    question: 'Validation could not run: what now?',
    chosenOption: STOP,
    alternatives: ['Retry validation', 'Accept the changes without validation'],
    confidence: 1,
    rationale: message,
    parentSeq: parent,
    context: { content: { error: message, details: error.details, step: null, attempt } },
  });
  return {
    ok: false,
    error: { message, step: null, attempts: attempt, details: error.details },
    validation: null,
  };
}

function exitText(outcome: ValidationOutcome): string {
  return outcome.exitCode === null ? 'did not exit normally' : `exited with code ${outcome.exitCode}`;
}

function describeReport(report: StepReport): string {
  if (report.command !== null)
    return `\`${report.command.command}\` exited with code ${report.command.exitCode}`;
  if (report.filesTouched.length === 0) return `${report.description}: no file changed`;
  return `${report.description}: ${report.filesTouched.join(', ')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Estimation

/**
 * Counts the distinct files the file steps will touch, reading the project roots (never writing): a create or a
 * move is one file, a replace is each file its glob and pattern match, a delete each file its path or glob matches.
 * `run` steps can change anything, so they raise the risk rather than the count. It records no decision: the
 * estimate is arithmetic over the strategy already recorded, and it is returned to be shown, not chosen.
 *
 * Risk: high above 20 files or 5 deletions (a review is tedious and mistakes are costly); medium above 3 files,
 * with any deletion, or with any command; low otherwise.
 */
const builtinEstimation: EstimationActor = {
  name: DEFAULT_ACTOR,
  async estimate(call) {
    const files = new Set<string>();
    const deleted = new Set<string>();
    let commands = 0;
    for (const step of call.strategy.steps) {
      call.signal.throwIfAborted();
      if (step.kind === 'run') {
        commands++;
        continue;
      }
      // A child plan estimates (and is approved) on its own.
      if (isSubplanStep(step)) continue;
      let workspace: Workspace;
      try {
        workspace = targetWorkspace(step.project, call.workspaces);
      } catch {
        // Execute will refuse this step, so it changes nothing.
        continue;
      }
      const touched = await filesOf(step, workspace, templateValues(call.plan, workspace));
      for (const file of touched) {
        files.add(`${workspace.projectName}:${file}`);
        if (step.kind === 'delete') deleted.add(`${workspace.projectName}:${file}`);
      }
    }
    const count = files.size;
    const risk: Estimate['risk'] =
      count > 20 || deleted.size > 5
        ? 'high'
        : count > 3 || deleted.size > 0 || commands > 0
          ? 'medium'
          : 'low';
    const summary =
      `${count} file${count === 1 ? '' : 's'} likely changed` +
      (deleted.size > 0 ? ` (${deleted.size} deleted)` : '') +
      (commands > 0 ? `, plus whatever ${commands} command${commands === 1 ? '' : 's'} change` : '') +
      `; ${risk} risk`;
    return { summary, filesLikelyChanged: count, risk };
  },
};

/** A step Execute will refuse touches nothing, so any template or filesystem error counts as zero files. */
async function filesOf(
  step: Exclude<FileStep, { kind: 'run' }>,
  workspace: Workspace,
  values: Record<string, TemplateValue>,
): Promise<string[]> {
  try {
    switch (step.kind) {
      case 'create':
        return [renderTemplate(step.path, values)];
      case 'move':
        return [renderTemplate(step.to, values)];
      case 'replace': {
        // Every file the glob matches, whether or not the pattern would: the pattern is untrusted, and it runs only
        // in Execute, in a thread of its own with a time limit (actors/steps/regex.ts). Run here, on the event
        // loop, a backtracking pattern would stall the whole worker during Strategize. An estimate may overcount.
        const glob = renderTemplate(step.files, values);
        const matches = globMatcher(glob);
        return (await listFiles(workspace.root, glob))
          .filter((file) => !file.symlink && matches(file.path))
          .map((file) => file.path);
      }
      case 'delete': {
        const glob = renderTemplate(step.files, values);
        const matches = globMatcher(glob);
        const listed = await listFiles(workspace.root, glob);
        const direct = listed.filter((f) => matches(f.path)).map((f) => f.path);
        if (direct.length > 0) return direct;
        return (await listFiles(workspace.root, `${glob}/**`)).map((f) => f.path);
      }
    }
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Invariants

const ACKNOWLEDGED = 'no machine-checkable rule; recorded as acknowledged';

/**
 * Invariants are free text, and the built-in actor has no model to judge text against a change: it acknowledges
 * each one instead of claiming it held. It records nothing: the caller turns verdicts into decisions.
 */
const builtinInvariant: InvariantActor = {
  name: DEFAULT_ACTOR,
  async check(call) {
    return call.invariants.map((invariant) => ({
      invariant,
      status: 'acknowledged',
      evidence: ACKNOWLEDGED,
    }));
  },
};
