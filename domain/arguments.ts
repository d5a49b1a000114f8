/**
 * Action arguments (issue items 5 and 8): an action declares typed arguments; `plan use` turns the raw `--arg`
 * strings into typed, defaulted values before the workflow starts, so a plan never runs with an argument its
 * action does not accept.
 */
import type { ArgumentDefinition, ArgumentType } from './catalog';

export type ArgumentValue = string | number | boolean;

export type ResolvedArguments =
  { ok: true; values: Record<string, ArgumentValue>; order: string[] } | { ok: false; error: string };

const INTEGER_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE_WORDS = ['true', 'yes', '1'];
const FALSE_WORDS = ['false', 'no', '0'];

/** How a message names a type: "depth is an integer argument". */
const TYPE_WORDS: Record<ArgumentType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
};

/** A value as messages show it: strings quoted, numbers and booleans bare. */
export function showValue(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** Whether an already-typed value (a default or an allowed value from an action file) has the declared type. */
export function hasArgumentType(value: unknown, type: ArgumentType): value is ArgumentValue {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

/**
 * Turns one raw CLI string into a value of the declared type.
 * string: kept verbatim. integer: `-?digits` (blanks around are ignored), within the safe-integer range.
 * number: a finite decimal (`1`, `-2.5`, `.5`, `1e3`); no hex, no Infinity. boolean: true/false, yes/no, 1/0 in
 * any case.
 */
export function coerceArgument(
  raw: string,
  type: ArgumentType,
): { ok: true; value: ArgumentValue } | { ok: false; rule: string } {
  const text = raw.trim();
  switch (type) {
    case 'string':
      return { ok: true, value: raw };
    case 'integer': {
      const n = Number(text);
      if (!INTEGER_TEXT.test(text))
        return { ok: false, rule: `must be an integer (e.g. 2), got ${showValue(raw)}` };
      if (!Number.isSafeInteger(n)) return { ok: false, rule: `integer ${text} is out of range` };
      return { ok: true, value: n === 0 ? 0 : n };
    }
    case 'number': {
      const n = Number(text);
      if (!NUMBER_TEXT.test(text) || !Number.isFinite(n)) {
        return { ok: false, rule: `must be a finite number (e.g. 0.5), got ${showValue(raw)}` };
      }
      return { ok: true, value: n === 0 ? 0 : n };
    }
    case 'boolean': {
      const word = text.toLowerCase();
      if (TRUE_WORDS.includes(word)) return { ok: true, value: true };
      if (FALSE_WORDS.includes(word)) return { ok: true, value: false };
      return { ok: false, rule: `must be true/false, yes/no or 1/0, got ${showValue(raw)}` };
    }
  }
}

/**
 * Resolves raw `--arg` strings against an action's argument definitions. Rules, checked in this order:
 * 1. every provided name must be defined (the error lists the known names);
 * 2. a required argument must be provided, and (being required) not as an empty string;
 * 3. provided values are coerced to the declared type (see coerceArgument);
 * 4. a coerced value must be one of `allowedValues` when those are given;
 * 5. an argument not provided takes its default; one without a default is left out.
 * `order` is the action's definition order of the arguments present (it becomes the plan's `arguments_order`).
 * Errors are one line: `--arg <name>: <rule>`.
 */
export function resolveArguments(
  definitions: readonly ArgumentDefinition[],
  provided: Readonly<Record<string, string>>,
): ResolvedArguments {
  const known = new Set(definitions.map((d) => d.name));
  for (const name of Object.keys(provided)) {
    if (!known.has(name)) {
      const list =
        definitions.length === 0
          ? 'this action takes no arguments'
          : `known arguments: ${definitions.map((d) => d.name).join(', ')}`;
      return { ok: false, error: `--arg ${name}: unknown argument; ${list}` };
    }
  }

  const entries: Array<[string, ArgumentValue]> = [];
  for (const def of definitions) {
    const raw = Object.hasOwn(provided, def.name) ? provided[def.name] : undefined;
    if (raw === undefined) {
      if (def.default !== null) {
        entries.push([def.name, def.default]);
      } else if (def.required) {
        return {
          ok: false,
          error: `--arg ${def.name}: required argument is missing (give --arg ${def.name}=<${def.type}>)`,
        };
      }
      continue;
    }
    if (def.required && raw.trim() === '') {
      return { ok: false, error: `--arg ${def.name}: required argument must not be empty` };
    }
    const coerced = coerceArgument(raw, def.type);
    if (!coerced.ok) {
      return { ok: false, error: `--arg ${def.name}: ${coerced.rule}` };
    }
    if (def.allowedValues.length > 0 && !def.allowedValues.includes(coerced.value)) {
      return {
        ok: false,
        error: `--arg ${def.name}: must be one of ${def.allowedValues.map(showValue).join(', ')}, got ${showValue(coerced.value)}`,
      };
    }
    entries.push([def.name, coerced.value]);
  }
  // Object.fromEntries defines own properties, so even a name like `__proto__` stays plain data.
  return { ok: true, values: Object.fromEntries(entries), order: entries.map(([name]) => name) };
}

/**
 * Checks an action's argument definitions when the action is added, so `plan use` can trust them. Rules:
 * - names are unique within the action;
 * - every allowed value has the declared type, and none is listed twice;
 * - a default has the declared type and, when allowed values are given, is one of them;
 * - a required argument has no default. Decision: the two contradict each other (the default would never be
 *   used, or `required` would never fire), so the file is refused rather than one of them silently ignored.
 * Errors are one line naming the field path in the action file's terms, e.g. `arguments.1.default: ...`.
 */
export function checkArgumentDefinitions(
  definitions: readonly ArgumentDefinition[],
): { ok: true } | { ok: false; error: string } {
  const seen = new Map<string, number>();
  for (const [i, def] of definitions.entries()) {
    const at = `arguments.${i}`;
    const previous = seen.get(def.name);
    if (previous !== undefined) {
      return { ok: false, error: `${at}.name: "${def.name}" is already defined by arguments.${previous}` };
    }
    seen.set(def.name, i);

    const kind = `${def.name} is ${TYPE_WORDS[def.type]} argument`;
    for (const [j, allowed] of def.allowedValues.entries()) {
      if (!hasArgumentType(allowed, def.type)) {
        return {
          ok: false,
          error: `${at}.allowed_values.${j}: ${kind}; ${showValue(allowed)} is not ${TYPE_WORDS[def.type]}`,
        };
      }
      if (def.allowedValues.indexOf(allowed) !== j) {
        return { ok: false, error: `${at}.allowed_values.${j}: ${showValue(allowed)} is listed twice` };
      }
    }

    if (def.default !== null) {
      if (def.required) {
        return {
          ok: false,
          error: `${at}.required: ${def.name} has a default, so it cannot be required (drop one of the two)`,
        };
      }
      if (!hasArgumentType(def.default, def.type)) {
        return {
          ok: false,
          error: `${at}.default: ${kind}; ${showValue(def.default)} is not ${TYPE_WORDS[def.type]}`,
        };
      }
      if (def.allowedValues.length > 0 && !def.allowedValues.includes(def.default)) {
        return {
          ok: false,
          error: `${at}.default: ${showValue(def.default)} is not one of the allowed_values (${def.allowedValues.map(showValue).join(', ')})`,
        };
      }
    }
  }
  return { ok: true };
}
