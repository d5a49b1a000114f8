import type {
  ActorRole,
  ActorSet,
  EstimationActor,
  ExecutionActor,
  InvariantActor,
  StrategyActor,
} from './types';
import { DEFAULT_ACTOR, UnknownActorError } from './types';

interface ByRole {
  strategy: StrategyActor;
  execution: ExecutionActor;
  estimation: EstimationActor;
  invariant: InvariantActor;
}

/**
 * The actors a worker can run, by name and role. Built once at worker start; a plan naming an actor this worker
 * does not have fails its phase with a message listing the ones it does.
 */
export class ActorRegistry {
  private readonly actors = new Map<string, ActorSet>();

  register(name: string, set: ActorSet): this {
    if (this.actors.has(name)) throw new Error(`actor "${name}" is already registered`);
    this.actors.set(name, set);
    return this;
  }

  /** Names of the actors that can play a role, sorted. */
  names(role: ActorRole): string[] {
    return [...this.actors.entries()]
      .filter(([, set]) => set[role] !== undefined)
      .map(([name]) => name)
      .sort();
  }

  get<R extends ActorRole>(role: R, name: string | null): ByRole[R] {
    const wanted = name ?? DEFAULT_ACTOR;
    const actor = this.actors.get(wanted)?.[role] as ByRole[R] | undefined;
    if (actor === undefined) {
      const available = this.names(role);
      throw new UnknownActorError(
        `no ${role} actor named "${wanted}" on this worker` +
          (available.length > 0 ? ` (available: ${available.join(', ')})` : ''),
      );
    }
    return actor;
  }
}
