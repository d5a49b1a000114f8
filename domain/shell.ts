/**
 * Where a `{{placeholder}}` may stand in a shell command (a `run` step or a validation command): a /bin/sh lexer
 * just deep enough to tell a bare word from quotes, backquotes, comments and here-documents, and the environment
 * variables a command can read its values from instead. Pure: action files and a model's steps are checked with it
 * when they are validated, and the step runner again before a command runs.
 */
import type { PlanSpec } from './schemas';
import type { StepFile } from './steps';

/** Where a placeholder may stand in a command without its single quotes being defeated. */
export type PlaceholderContext =
  'quotes' | 'backticks' | 'comment' | 'here-document' | 'backslash' | 'dollar';

const MISPLACED: Record<PlaceholderContext, string> = {
  quotes: 'is inside quotes in the command',
  backticks: 'is inside `...` in the command, where the quoting added to it does not hold',
  comment: 'is inside a comment in the command, which a line break in the value would end',
  'here-document': 'is inside a here-document in the command, where it is not quoted',
  backslash: 'follows a backslash in the command, which would unquote it',
  dollar: 'follows a `$` in the command, which would change how it is quoted',
};

const COMMAND_PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
/** Characters after which a `#` starts a comment (a word begins there). */
const WORD_BREAK = /[\s;&|()<>]/;

/**
 * The first placeholder of a command template that stands where shellQuote cannot keep its value one literal word,
 * scanning the template as /bin/sh parses it: inside '...' or "..." (`echo "{{msg}}"` with msg `$(id)` would run
 * id), inside `...` (re-parsed, so a backquote in the value ends it), in a comment (a line break in the value
 * starts a command), in a here-document body or delimiter (not quoted at all), or right after a backslash or a `$`
 * (which turn the opening quote into a literal or into $'...'). Null when every placeholder is a bare word (or
 * part of one: `--name={{x}}`, `'prefix '{{x}}`). Conservative: a placeholder in `"$(...)"` is refused too.
 */
export function checkCommandTemplate(
  template: string,
): { placeholder: string; name: string; context: PlaceholderContext } | null {
  const spans = new Map<number, RegExpExecArray>();
  for (const match of template.matchAll(COMMAND_PLACEHOLDER)) spans.set(match.index, match);
  const at = (index: number, context: PlaceholderContext) => {
    const span = spans.get(index);
    return span === undefined ? null : { placeholder: span[0], name: (span[1] ?? '').trim(), context };
  };
  /** The first placeholder starting in [from, to), as `context`. */
  const within = (from: number, to: number, context: PlaceholderContext) => {
    for (let k = from; k < to; k++) if (spans.has(k)) return at(k, context);
    return null;
  };
  let state: 'plain' | 'single' | 'double' | 'backtick' | 'comment' = 'plain';
  let wordStart = true;
  const heredocs: { delimiter: string; stripTabs: boolean }[] = [];
  let i = 0;
  while (i < template.length) {
    const span = spans.get(i);
    if (span !== undefined) {
      if (state === 'single' || state === 'double') return at(i, 'quotes');
      if (state === 'backtick') return at(i, 'backticks');
      if (state === 'comment') return at(i, 'comment');
      if (template[i - 1] === '$') return at(i, 'dollar');
      i += span[0].length;
      wordStart = false;
      continue;
    }
    const c = template[i] ?? '';
    if (c === '\\' && state !== 'single' && state !== 'comment') {
      const escaped = at(
        i + 1,
        state === 'double' ? 'quotes' : state === 'backtick' ? 'backticks' : 'backslash',
      );
      if (escaped !== null) return escaped;
      i += 2;
      wordStart = false;
      continue;
    }
    if (state === 'single') {
      if (c === "'") state = 'plain';
    } else if (state === 'double') {
      if (c === '"') state = 'plain';
    } else if (state === 'backtick') {
      if (c === '`') state = 'plain';
    } else if (c === '\n') {
      // A line break ends a comment, and the here-documents opened on the line start after it.
      state = 'plain';
      i++;
      for (const { delimiter, stripTabs } of heredocs.splice(0)) {
        while (i < template.length) {
          const end = template.indexOf('\n', i) === -1 ? template.length : template.indexOf('\n', i);
          const line = template.slice(i, end);
          const inBody = within(i, end, 'here-document');
          i = end + 1;
          if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
          if (inBody !== null) return inBody;
        }
      }
      wordStart = true;
      continue;
    } else if (state === 'comment') {
      // Nothing but a line break ends a comment.
    } else if (c === "'") {
      state = 'single';
    } else if (c === '"') {
      state = 'double';
    } else if (c === '`') {
      state = 'backtick';
    } else if (c === '#' && wordStart) {
      state = 'comment';
    } else if (template.startsWith('<<<', i)) {
      i += 3; // A here-string: the word after it is an ordinary word.
      wordStart = true;
      continue;
    } else if (template.startsWith('<<', i)) {
      let j = i + 2;
      const stripTabs = template[j] === '-';
      if (stripTabs) j++;
      while (template[j] === ' ' || template[j] === '\t') j++;
      const from = j;
      let delimiter = '';
      let quote: string | null = null;
      for (; j < template.length; j++) {
        const d = template[j] ?? '';
        if (quote !== null) {
          if (d === quote) quote = null;
          else delimiter += d;
        } else if (d === "'" || d === '"') {
          quote = d;
        } else if (d === '\\') {
          delimiter += template[++j] ?? '';
        } else if (WORD_BREAK.test(d)) {
          break;
        } else {
          delimiter += d;
        }
      }
      const inDelimiter = within(from, j, 'here-document');
      if (inDelimiter !== null) return inDelimiter;
      heredocs.push({ delimiter, stripTabs });
      i = j;
      wordStart = true;
      continue;
    }
    wordStart = state === 'plain' && WORD_BREAK.test(c);
    i++;
  }
  return null;
}

/** The environment variable a plan argument reaches a command in: CLEVERAGENTS_ARG_<NAME>. */
export function argumentVariableName(name: string): string {
  return `CLEVERAGENTS_ARG_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** The environment variable holding a template name's value in a command, or null when there is none. */
export function argumentVariable(plan: Pick<PlanSpec, 'arguments'> | null, name: string): string | null {
  if (name === 'plan.id') return 'CLEVERAGENTS_PLAN_ID';
  if (['plan.name', 'project.name', 'project.alias'].includes(name)) return null;
  if (plan === null) return argumentVariableName(name);
  const value = Object.prototype.hasOwnProperty.call(plan.arguments, name) ? plan.arguments[name] : undefined;
  return value === undefined || value === null ? null : argumentVariableName(name);
}

/**
 * Why `template` cannot be a command (its first misplaced placeholder, and what to write instead), or null when
 * every placeholder stands where its quoting holds. `plan` names the variables the hint may suggest; null (an
 * action file, checked before any plan exists) suggests the argument's variable whatever it is.
 */
export function commandTemplateProblem(
  template: string,
  plan: Pick<PlanSpec, 'arguments'> | null,
): string | null {
  const misplaced = checkCommandTemplate(template);
  if (misplaced === null) return null;
  const { placeholder, name, context } = misplaced;
  const variable = argumentVariable(plan, name);
  const instead =
    context === 'quotes'
      ? 'write it bare (it is quoted for you)' + (variable === null ? '' : ` or use $${variable}`)
      : variable === null
        ? 'write it bare, as a word of its own'
        : `write it bare, as a word of its own, or use $${variable}`;
  return `${placeholder} ${MISPLACED[context]}; ${instead}`;
}

/**
 * The commands among steps whose placeholders break the rule commandTemplateProblem states: each `run` step's (by
 * its index) and the validation command's (step null). Action files and a model's steps are checked with it when
 * they are validated, so a command the step runner would refuse is refused where it is written.
 */
export function commandProblems(
  steps: readonly StepFile[],
  validation: string | null,
  plan: Pick<PlanSpec, 'arguments'> | null,
): { step: number | null; problem: string }[] {
  const problems: { step: number | null; problem: string }[] = [];
  steps.forEach((step, index) => {
    const problem = 'run' in step ? commandTemplateProblem(step.run, plan) : null;
    if (problem !== null) problems.push({ step: index, problem });
  });
  const problem = validation === null ? null : commandTemplateProblem(validation, plan);
  if (problem !== null) problems.push({ step: null, problem });
  return problems;
}
