/**
 * `agents tell "<prompt>"` (seed 001's TELL): a plan made from a sentence. The action it runs is defined here, in
 * the code, under a namespace no person can add actions to (ADR 0017), so what `tell` means is fixed by the version
 * of the engine and cannot be shadowed by a catalog entry.
 */
import type { Action } from './catalog';

/** No action file may be added under this namespace: its actions are the engine's own. */
export const RESERVED_ACTION_NAMESPACE = 'builtin';
export const TELL_ACTION_NAME = `${RESERVED_ACTION_NAMESPACE}/tell`;
/**
 * The actor name the worker registers the model actor under (actors/model MODEL_ACTOR_NAME; the domain cannot
 * import it, a unit test keeps the two equal).
 */
export const TELL_ACTOR = 'model';
/** Longer than any instruction a person types; a pasted file belongs in `--context`. */
export const MAX_PROMPT_CHARS = 20_000;
/** Seed 001: the name is made of the prompt's first three words. */
const NAME_WORDS = 3;
/** Three long words still make a name one can type and read in a table. */
const NAME_MAX_CHARS = 60;

/**
 * The strategy, estimation and invariant actors are the model; execution stays with the engine, which runs the
 * steps the model proposes in the sandbox. No steps of its own, no arguments: the request is the plan's
 * description. Commands the model proposes wait for a person at the gate into Execute (unattended_commands off),
 * and nothing is applied unreviewed (REVIEW_BEFORE_APPLY unless `--automation` says otherwise).
 */
export function tellAction(): Action {
  return {
    name: TELL_ACTION_NAME,
    description: 'Carry out a request written in plain words (agents tell); the model plans the steps.',
    arguments: [],
    defaultAutomationLevel: 'REVIEW_BEFORE_APPLY',
    defaultProfile: null,
    actors: {
      strategyActor: TELL_ACTOR,
      executionActor: null,
      estimationActor: TELL_ACTOR,
      invariantActor: TELL_ACTOR,
    },
    execution: { network: false, unattendedCommands: false, ignore: [] },
    invariants: [],
    definitionOfDone: "The request in the plan's description is carried out in the writable projects.",
    tags: ['tell'],
    steps: [],
    validation: null,
  };
}

export type PromptCheck = { ok: true; prompt: string } | { ok: false; error: string };

/**
 * A prompt is text a person typed: not blank, not longer than MAX_PROMPT_CHARS, and free of control characters
 * other than tab and line breaks, and of the bidi controls that make text read differently from what it holds (a NUL,
 * an escape sequence or a right-to-left override would reach the model, the database and a terminal showing the
 * plan). Surrounding whitespace is dropped.
 */
export function checkPrompt(raw: string): PromptCheck {
  const prompt = raw.trim();
  if (prompt === '') {
    return {
      ok: false,
      error: 'the prompt is empty; say what the plan should do, e.g. agents tell "add a README"',
    };
  }
  if (prompt.length > MAX_PROMPT_CHARS) {
    return {
      ok: false,
      error:
        `the prompt is ${prompt.length} characters; at most ${MAX_PROMPT_CHARS} are accepted ` +
        '(hand long material to the plan with --context <file>)',
    };
  }
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.exec(
    prompt,
  );
  if (control !== null) {
    const code = control[0].charCodeAt(0).toString(16).padStart(4, '0');
    return {
      ok: false,
      error:
        `the prompt contains the control character U+${code.toUpperCase()}; ` +
        'only text, tabs and line breaks are accepted',
    };
  }
  return { ok: true, prompt };
}

export type PlanNameResult = { ok: true; name: string } | { ok: false; error: string };

/**
 * Seed 001's name: the first three words of the prompt, lowercased and joined by `_` ("Add error handling to
 * the API" → `add_error_handling`). A word is a run of letters and digits in any script; everything else
 * (punctuation, symbols, bidi and zero-width marks) separates words and never reaches the name, so a name is
 * always safe to print. A prompt with no words at all cannot name its plan: the caller must pass `--name`.
 */
export function planNameFromPrompt(prompt: string): PlanNameResult {
  const words =
    prompt
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) {
    return {
      ok: false,
      error: 'the prompt has no words to name the plan after (letters or digits); pass --name <name>',
    };
  }
  const name = words.slice(0, NAME_WORDS).join('_');
  // Cut on a code point, never inside a surrogate pair.
  return { ok: true, name: [...name].slice(0, NAME_MAX_CHARS).join('').replace(/_+$/, '') };
}
