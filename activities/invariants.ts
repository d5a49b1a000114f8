/**
 * The invariant check at every transition (seed 004's enforcement): the plan's effective invariants (its pinned
 * set, plus the PLAN-scope ones added to it since, read now) against the changeset when there is one. Rules are
 * checked exactly by the built-in check, whatever the plan's invariant actor; free text goes to that actor, which
 * may only acknowledge what it cannot judge.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { checkInvariantRule } from '../actors/invariant-rules';
import type { ActorRegistry } from '../actors/registry';
import type { ChangeSummary, InvariantVerdict } from '../actors/types';
import { invariantEnforcedDecision } from '../domain/decision';
import type { DecisionEntry } from '../domain/decision-log';
import { enforcedInvariants } from '../domain/invariant';
import { describeRule } from '../domain/invariant-rule';
import type { Changeset } from '../domain/changeset';
import type { PlanInvariant } from '../domain/plan';
import type { Workspace } from '../domain/project-link';
import { ignoreList } from '../domain/ignore';
import type { Isolation } from '../sandbox/isolation';
import { restoreSandbox, restoredSandboxDir } from '../sandbox/restore';
import type { ChangesetStore } from '../storage/changesets';
import type { ContextFileStore } from '../storage/context-files';
import type { InvariantStore } from '../storage/invariants';
import { actorCall } from './actor-call';
import type { CheckInvariantsInput, CheckInvariantsResult } from './contracts';
import { withProgress } from './progress';

export interface InvariantCheckDependencies {
  invariants: InvariantStore;
  changesets: ChangesetStore;
  contextFiles: ContextFileStore;
  actors: ActorRegistry;
  /** How the worker runs commands (a rule's `command`), found at its start. */
  isolation: Isolation;
  /** This worker's sandbox directory: where it rebuilds a sandbox another worker's Execute made. */
  sandboxDir: string;
}

async function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

export function createInvariantActivities(deps: InvariantCheckDependencies) {
  const { changesets, actors } = deps;
  return {
    async checkInvariants(input: CheckInvariantsInput): Promise<CheckInvariantsResult> {
      const { spec } = input;
      const live = await deps.invariants.list({ scope: 'PLAN', target: spec.planId });
      const effective = enforcedInvariants(spec.invariants, live);
      const changeset = input.changesetId === null ? null : await changesets.getSummary(input.changesetId);
      const changes: ChangeSummary[] | null =
        changeset?.changes.map((c) => ({
          project: c.project,
          operation: c.operation,
          path: c.path,
          fromPath: c.fromPath,
        })) ?? null;
      const phase = input.phase === 'APPLIED' ? 'APPLY' : input.phase;
      return withProgress(phase, async (report, signal) => {
        // A command rule runs in the sandbox Execute left. Execute may have run on another worker (a fleet shares
        // one task queue): then the sandbox is rebuilt here from the project and the stored changeset. After
        // Apply there is none anywhere (Apply removes them), and none is rebuilt: the project itself is the result.
        const workspaces: Workspace[] = [];
        let full: Changeset | null = null;
        for (const project of changeset?.projects ?? []) {
          let sandbox = project.sandbox;
          if (sandbox !== null && !(await isDirectory(sandbox))) {
            sandbox = null;
            if (changeset !== null && input.phase === 'EXECUTE') {
              report(`rebuilding the sandbox of ${project.projectName} on this worker`);
              full ??= await changesets.get(changeset.changesetId);
              const restored =
                full === null
                  ? { dir: null, reason: `changeset ${changeset.changesetId} is gone` }
                  : await restoreSandbox({
                      changeset: full,
                      projectName: project.projectName,
                      dest: restoredSandboxDir(
                        deps.sandboxDir,
                        spec.planId,
                        changeset.changesetId,
                        path.basename(project.sandbox as string),
                      ),
                      ignore: ignoreList(spec.execution.ignore),
                      at: new Date().toISOString(),
                    });
              if (restored.dir === null) report(restored.reason);
              sandbox = restored.dir;
            }
          }
          workspaces.push({ ...project, sandbox });
        }
        const call = await actorCall(deps.contextFiles, {
          spec,
          phase,
          record: input.record ?? { firstDecisionSeq: 0, parentDecisionSeq: 0 },
          workspaces,
          report,
          signal,
          isolation: deps.isolation,
        });
        const verdicts = new Map<PlanInvariant, InvariantVerdict>();
        for (const invariant of effective) {
          if (invariant.rule === null) continue;
          report(`checking the invariant "${invariant.text}"`);
          // A project's invariant governs that project only: its rule sees that project's changes and sandbox.
          const only =
            invariant.scope === 'PROJECT' && invariant.sourceName !== null ? invariant.sourceName : null;
          const verdict = await checkInvariantRule(invariant.rule, {
            changes: only === null || changes === null ? changes : changes.filter((c) => c.project === only),
            workspaces: only === null ? workspaces : workspaces.filter((w) => w.projectName === only),
            plan: spec,
            signal,
            progress: report,
            isolation: deps.isolation,
          });
          verdicts.set(invariant, { invariant, ...verdict });
        }
        const freeText = effective.filter((inv) => inv.rule === null);
        if (freeText.length > 0) {
          const actor = actors.get('invariant', spec.actors.invariantActor);
          report(`asking the ${actor.name} invariant actor about ${freeText.length} invariant(s)`);
          for (const verdict of await actor.check({ ...call, phase, invariants: freeText, changes })) {
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
          for (const verdict of ordered) call.log.record(invariantEnforced(verdict));
        }
        const count = (status: InvariantVerdict['status']) =>
          ordered.filter((v) => v.status === status).length;
        const where = input.entering === null ? 'at the start of STRATEGIZE' : `before ${input.entering}`;
        return {
          violations: ordered
            .filter((v) => v.status === 'violated')
            .map((v) => ({ invariant: v.invariant, evidence: v.evidence })),
          decisions: call.log.drafts(),
          summary:
            `${ordered.length} invariant(s) checked ${where}: ${count('held')} held, ` +
            `${count('acknowledged')} acknowledged, ${count('violated')} violated`,
        };
      });
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
    ...(verdict.model === undefined ? {} : { model: verdict.model }),
  };
}
