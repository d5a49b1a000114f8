import { createBuiltinActors } from './builtin';
import { createModelActors, MODEL_ACTOR_NAME } from './model';
import type { ModelConfig } from './model/config';
import { ActorRegistry } from './registry';
import { DEFAULT_ACTOR } from './types';

/**
 * The actors a worker runs: always the built-in one (no network needed); the model-backed one only when an
 * endpoint is configured, so the engine runs fully without it.
 */
export function createActorRegistry(options: { model: ModelConfig | null }): ActorRegistry {
  const registry = new ActorRegistry().register(DEFAULT_ACTOR, createBuiltinActors());
  if (options.model !== null) registry.register(MODEL_ACTOR_NAME, createModelActors(options.model));
  return registry;
}

export { ActorRegistry };
