import { DecisionLog } from '../domain/decision-log';
import type { WorkPhase } from '../domain/lifecycle';
import { WORKFLOW_ACTOR } from '../domain/plan';
import type { PlanSpec } from '../domain/plan';
import type { Workspace } from '../domain/project-link';
import type { ActorCall, ContextFile } from '../actors/types';
import type { Isolation } from '../sandbox/isolation';
import type { ContextFileStore } from '../storage/context-files';

/**
 * What every actor is handed: the plan, its workspaces, the context files a person added (read now, so a file
 * added while the plan waited counts), a DecisionLog numbering decisions from where the workflow said, and the
 * activity's progress reporter and cancellation signal, and how the worker runs commands.
 */
export async function actorCall(
  contextFiles: ContextFileStore,
  options: {
    spec: PlanSpec;
    phase: WorkPhase;
    record: { firstDecisionSeq: number; parentDecisionSeq: number };
    workspaces: Workspace[];
    report: (message: string) => void;
    signal: AbortSignal;
    isolation: Isolation;
  },
): Promise<ActorCall> {
  const files: ContextFile[] = (await contextFiles.read(options.spec.planId)).map((f) => ({
    path: f.path,
    sha256: f.sha256,
    size: f.size,
    content: f.binary ? null : Buffer.from(f.content).toString('utf8'),
  }));
  return {
    plan: options.spec,
    workspaces: options.workspaces,
    contextFiles: files,
    log: new DecisionLog({
      firstSeq: options.record.firstDecisionSeq,
      parentSeq: options.record.parentDecisionSeq,
      phase: options.phase,
      actor: WORKFLOW_ACTOR,
    }),
    signal: options.signal,
    progress: options.report,
    isolation: options.isolation,
  };
}
