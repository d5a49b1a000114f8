/**
 * Subplans (issue 15): a strategy step `subplan:` spawns one child plan, `parallel:` a group of them. The rules, pure
 * and shared by the strategy actors (which record the spawn), the activity that resolves a child's spec and the
 * workflow that starts the child workflows and waits for them:
 *
 * - a child's id is derived from its parent's, the step's position and a generation (childPlanId), so Strategize can
 *   name the children in its `subplan_spawn` decision before they exist, and a retry that spawns a replacement for
 *   a cancelled child names a new one, all without a random number in workflow code;
 * - a child works only on projects its parent is linked to, never more writable than the parent's link
 *   (childProjectLinks, in domain/project-link.ts): an action, or a model's steps, cannot reach a project the
 *   person did not link;
 * - the family is at most MAX_SUBPLAN_DEPTH levels below its root (checkSubplanDepth), so an action that spawns
 *   itself stops instead of spawning forever.
 */
import type { DecisionDraft } from './decision';
import type { ChildFailurePolicy, FileStep, Step, SubplanRequest, SubplanStep } from './steps';

/** How many levels of subplans a plan may have below it (a root plan is depth 0), unless its profile says. */
export const MAX_SUBPLAN_DEPTH = 3;

/** The most a profile may allow: a family deeper than this is a runaway, not a design. */
export const MAX_SUBPLAN_DEPTH_LIMIT = 10;

/** A child plan's place in its parent's strategy: which step spawned it and which of the step's children it is. */
export interface ChildPosition {
  stepIndex: number;
  childIndex: number;
}

// Kept here, not in steps.ts: the workflow needs them, and steps.ts brings zod, which stays out of its bundle.
export function isSubplanStep(step: Step): step is SubplanStep {
  return step.kind === 'subplan' || step.kind === 'parallel';
}

export function isFileStep(step: Step): step is FileStep {
  return !isSubplanStep(step);
}

/** The child requests of a subplan step, in order: one for `subplan:`, the group's for `parallel:`. */
export function childRequests(step: SubplanStep): SubplanRequest[] {
  return step.kind === 'subplan' ? [step.child] : step.children;
}

/** A subplan step of a strategy, with its position. */
export interface SpawnStep {
  stepIndex: number;
  step: SubplanStep;
  onChildFailure: ChildFailurePolicy;
}

/** The strategy's subplan steps in order, and the file steps Execute's activity runs in the sandbox. */
export function splitStrategySteps(steps: readonly Step[]): { spawns: SpawnStep[]; fileSteps: Step[] } {
  const spawns: SpawnStep[] = [];
  const fileSteps: Step[] = [];
  steps.forEach((step, stepIndex) => {
    if (isSubplanStep(step)) spawns.push({ stepIndex, step, onChildFailure: step.onChildFailure });
    else fileSteps.push(step);
  });
  return { spawns, fileSteps };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** cyrb53: a fast 53-bit string hash with good spread; uniqueness of ids, not secrecy, is what it serves. */
function hash53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

function base32(value: number, chars: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < chars; i++) {
    out = (CROCKFORD[rest % 32] as string) + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/**
 * The id of a child plan: a ULID with its parent's time and 80 bits hashed from the parent's id, the child's
 * position and the generation (0 for the child Strategize named, n for the n-th replacement). Deterministic, so
 * workflow code, activities and actors compute the same id without talking to each other; distinct parents give
 * distinct ids because the parent's whole id is hashed.
 */
export function childPlanId(parentPlanId: string, position: ChildPosition, generation = 0): string {
  const key = `${parentPlanId}/${position.stepIndex}/${position.childIndex}/${generation}`;
  return (
    parentPlanId.slice(0, 10) + base32(hash53(key, 1) % 2 ** 40, 8) + base32(hash53(key, 2) % 2 ** 40, 8)
  );
}

/** The ids of the children a subplan step spawns at the given generation, in order. */
export function childPlanIds(
  parentPlanId: string,
  stepIndex: number,
  step: SubplanStep,
  generation = 0,
): string[] {
  return childRequests(step).map((_, childIndex) =>
    childPlanId(parentPlanId, { stepIndex, childIndex }, generation),
  );
}

/** A child plan's place in the family: refused beyond MAX_SUBPLAN_DEPTH. */
export function checkSubplanDepth(
  parent: { planId: string; rootPlanId: string | null; depth: number },
  maxDepth = MAX_SUBPLAN_DEPTH,
): { ok: true; parentPlanId: string; rootPlanId: string; depth: number } | { ok: false; error: string } {
  const depth = parent.depth + 1;
  if (depth > maxDepth) {
    return {
      ok: false,
      error:
        `a subplan of plan ${parent.planId} would be ${depth} levels below its root plan; ` +
        `at most ${maxDepth} are allowed (an action that spawns itself would never stop)`,
    };
  }
  return { ok: true, parentPlanId: parent.planId, rootPlanId: parent.rootPlanId ?? parent.planId, depth };
}

/**
 * Seed 004's spawn decision for a subplan step, naming the children it creates (`downstream_plan_ids`): one
 * `subplan_spawn`, or one `subplan_parallel_spawn` for a group.
 */
export function spawnDecision(
  parentPlanId: string,
  stepIndex: number,
  step: SubplanStep,
  stepCount: number,
): Pick<DecisionDraft, 'type' | 'question' | 'chosenOption' | 'alternatives' | 'downstreamPlanIds'> {
  const ids = childPlanIds(parentPlanId, stepIndex, step);
  const children = childRequests(step)
    .map((child, i) => `${child.action} as plan ${ids[i]}`)
    .join(', ');
  return {
    type: step.kind === 'subplan' ? 'subplan_spawn' : 'subplan_parallel_spawn',
    question: `Step ${stepIndex + 1} of ${stepCount}: which child plans should do part of the work?`,
    chosenOption:
      step.kind === 'subplan'
        ? `Spawn ${children}`
        : `Spawn in parallel ${children}` +
          (step.onChildFailure === 'continue' ? ', going on if one fails' : ', failing if one fails'),
    alternatives: ['Skip this step', 'Do the work in this plan'],
    downstreamPlanIds: ids,
  };
}
