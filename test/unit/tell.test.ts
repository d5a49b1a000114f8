/**
 * The pure rules of `agents tell`: which prompts are taken, the plan name seed 001 makes from them, and the action
 * it runs. The hostile prompts are the point: each must be refused with a reason, or named safely.
 */
import { MODEL_ACTOR_NAME } from '../../actors/model';
import { actionSchema } from '../../domain/catalog';
import { actionCliDict, parseActionFile } from '../../domain/action-file';
import { planSpecSchema } from '../../domain/schemas';
import {
  MAX_PROMPT_CHARS,
  TELL_ACTION_NAME,
  TELL_ACTOR,
  checkPrompt,
  planNameFromPrompt,
  tellAction,
} from '../../domain/tell';
import YAML from 'yaml';

describe('planNameFromPrompt', () => {
  it.each<[string, string]>([
    ['add error handling', 'add_error_handling'],
    ['Add comprehensive error handling to the API endpoints', 'add_comprehensive_error'],
    ['  Fix   the\tbug\nin parser.ts  ', 'fix_the_bug'],
    ['README: write it!', 'readme_write_it'],
    ['rename foo-bar to baz', 'rename_foo_bar'],
    ['Übersetze die Datei', 'übersetze_die_datei'],
    ['添加 错误 处理 到 接口', '添加_错误_处理'],
    ['one', 'one'],
    // Bidi and zero-width marks separate words and never reach the name.
    ['evil\u202Eexe\u200Bname here', 'evil_exe_name'],
    ['../../etc/passwd please', 'etc_passwd_please'],
    ['$(rm -rf /) now', 'rm_rf_now'],
  ])('%j → %s', (prompt, name) => {
    expect(planNameFromPrompt(prompt)).toEqual({ ok: true, name });
  });

  it('keeps a name made of long words short, cut on a whole character', () => {
    const made = planNameFromPrompt(`${'a'.repeat(100)} b c`);
    expect(made).toEqual({ ok: true, name: 'a'.repeat(60) });
    const emoji = planNameFromPrompt(`${'𝒳'.repeat(100)}`);
    expect(emoji.ok && [...emoji.name]).toHaveLength(60);
    // A lone surrogate would not survive a round trip through UTF-8.
    expect(emoji.ok && Buffer.from(emoji.name, 'utf8').toString('utf8')).toBe(emoji.ok && emoji.name);
  });

  it('never ends a cut name on the separator', () => {
    expect(planNameFromPrompt(`${'a'.repeat(59)} b`)).toEqual({ ok: true, name: 'a'.repeat(59) });
  });

  it.each(['!!! ???', '---', '🙂🙂', '\u202E\u200B'])(
    'refuses a prompt without words (%j), asking for --name',
    (prompt) => {
      expect(planNameFromPrompt(prompt)).toEqual({
        ok: false,
        error: expect.stringContaining('pass --name'),
      });
    },
  );

  it('makes names the plan schema accepts', () => {
    for (const prompt of ['add error handling', 'Übersetze die Datei', `${'x'.repeat(500)}`]) {
      const made = planNameFromPrompt(prompt);
      if (!made.ok) throw new Error(made.error);
      expect(planSpecSchema.shape.name.safeParse(made.name).success).toBe(true);
    }
  });
});

describe('checkPrompt', () => {
  it('takes text with tabs and line breaks, trimmed', () => {
    expect(checkPrompt('  add a README\n\twith usage\r\n')).toEqual({
      ok: true,
      prompt: 'add a README\n\twith usage',
    });
  });

  it.each(['', '   ', '\n\t '])('refuses a blank prompt (%j)', (prompt) => {
    expect(checkPrompt(prompt)).toEqual({ ok: false, error: expect.stringMatching(/^the prompt is empty/) });
  });

  it.each<[string, string]>([
    ['nul\u0000byte', 'U+0000'],
    ['escape \u001b[31mred', 'U+001B'],
    ['bell\u0007', 'U+0007'],
    ['c1 \u009b control', 'U+009B'],
    ['reads \u202Ebackwards', 'U+202E'],
    ['isolate \u2066x\u2069', 'U+2066'],
  ])('refuses control characters (%j)', (prompt, code) => {
    expect(checkPrompt(prompt)).toEqual({ ok: false, error: expect.stringContaining(code) });
  });

  it('refuses a prompt longer than the limit, pointing at --context', () => {
    expect(checkPrompt('x'.repeat(MAX_PROMPT_CHARS))).toMatchObject({ ok: true });
    expect(checkPrompt('x'.repeat(MAX_PROMPT_CHARS + 1))).toEqual({
      ok: false,
      error: expect.stringContaining('--context'),
    });
  });
});

describe('tellAction', () => {
  it('is a valid action whose strategy, estimation and invariant actors are the model', () => {
    const action = tellAction();
    expect(actionSchema.parse(action)).toEqual(action);
    expect(action.name).toBe(TELL_ACTION_NAME);
    expect(TELL_ACTOR).toBe(MODEL_ACTOR_NAME);
    expect(action.actors).toEqual({
      strategyActor: 'model',
      executionActor: null,
      estimationActor: 'model',
      invariantActor: 'model',
    });
    // Commands the model proposes wait for a person; nothing is applied unreviewed by default.
    expect(action.execution).toEqual({ network: false, unattendedCommands: false, ignore: [] });
    expect(action.defaultAutomationLevel).toBe('REVIEW_BEFORE_APPLY');
  });

  it('round-trips through the action file format, as `action show` prints it', () => {
    const action = tellAction();
    const parsed = parseActionFile(YAML.stringify(actionCliDict(action)), 'tell.yaml');
    expect(parsed).toEqual({ ok: true, action });
  });
});
