import { Context } from '@temporalio/activity';
import type { WorkPhase } from '../domain/lifecycle';

/** How often a running phase reports it is alive (and what it is doing) to Temporal. */
const HEARTBEAT_MS = 5_000;

/**
 * Runs `work` with a progress reporter whose messages go out as activity heartbeats: on a timer as well as on
 * every change, so a long step (a model call, a test run) keeps the heartbeat alive and cancellation reaches it.
 * `agents plan watch` and the Web UI show the last message.
 */
export async function withProgress<T>(
  phase: WorkPhase,
  work: (report: (message: string) => void, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const context = Context.current();
  let current = `${phase}: starting`;
  // A local activity (a check at a gate) has no heartbeat: the workflow task it runs in is what stays alive.
  const beat = (): void => {
    if (!context.info.isLocal) context.heartbeat({ phase, progress: current });
  };
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
