import {
  checkArgumentDefinitions,
  coerceArgument,
  hasArgumentType,
  resolveArguments,
} from '../../domain/arguments';
import type { ArgumentValue } from '../../domain/arguments';
import { argumentDefinitionSchema } from '../../domain/catalog';
import type { ArgumentDefinition } from '../../domain/catalog';

const def = (d: Partial<ArgumentDefinition> & { name: string }): ArgumentDefinition =>
  argumentDefinitionSchema.parse(d);

/** The definitions the table below resolves against (local/code-review plus a few more types). */
const DEFS: ArgumentDefinition[] = [
  def({ name: 'path', type: 'string', required: true }),
  def({ name: 'depth', type: 'integer', default: 2, allowedValues: [1, 2, 3] }),
  def({ name: 'strict', type: 'boolean', default: false }),
  def({ name: 'ratio', type: 'number' }),
  def({ name: 'mode', type: 'string', allowedValues: ['fast', 'slow'] }),
  def({ name: 'note', type: 'string' }),
];

type Ok = { values: Record<string, ArgumentValue>; order: string[] };

describe('resolveArguments', () => {
  it.each<[string, Record<string, string>, Ok | string]>([
    // defaults, order, leaving out
    [
      'applies defaults and leaves out unset optional arguments',
      { path: 'src' },
      { values: { path: 'src', depth: 2, strict: false }, order: ['path', 'depth', 'strict'] },
    ],
    [
      'orders by definition, not by the order given',
      { note: 'n', strict: 'yes', path: 'src' },
      {
        values: { path: 'src', depth: 2, strict: true, note: 'n' },
        order: ['path', 'depth', 'strict', 'note'],
      },
    ],
    [
      'a provided value replaces the default',
      { path: 'src', depth: '3' },
      { values: { path: 'src', depth: 3, strict: false }, order: ['path', 'depth', 'strict'] },
    ],
    // strings
    [
      'keeps strings verbatim, blanks included',
      { path: ' src dir ' },
      { values: { path: ' src dir ', depth: 2, strict: false }, order: ['path', 'depth', 'strict'] },
    ],
    [
      'an optional string may be empty',
      { path: 'src', note: '' },
      {
        values: { path: 'src', depth: 2, strict: false, note: '' },
        order: ['path', 'depth', 'strict', 'note'],
      },
    ],
    // integers
    [
      'integer with blanks around',
      { path: 'p', depth: ' 1 ' },
      { values: { path: 'p', depth: 1, strict: false }, order: ['path', 'depth', 'strict'] },
    ],
    [
      'integer rejects a word',
      { path: 'p', depth: 'two' },
      '--arg depth: must be an integer (e.g. 2), got "two"',
    ],
    [
      'integer rejects a fraction',
      { path: 'p', depth: '2.5' },
      '--arg depth: must be an integer (e.g. 2), got "2.5"',
    ],
    [
      'integer rejects exponent notation',
      { path: 'p', depth: '1e0' },
      '--arg depth: must be an integer (e.g. 2), got "1e0"',
    ],
    ['integer rejects empty', { path: 'p', depth: '' }, '--arg depth: must be an integer (e.g. 2), got ""'],
    [
      'integer rejects a leading +',
      { path: 'p', depth: '+2' },
      '--arg depth: must be an integer (e.g. 2), got "+2"',
    ],
    [
      'integer rejects out of range',
      { path: 'p', depth: '99999999999999999999' },
      '--arg depth: integer 99999999999999999999 is out of range',
    ],
    [
      'integer outside allowed values',
      { path: 'p', depth: '4' },
      '--arg depth: must be one of 1, 2, 3, got 4',
    ],
    [
      'negative integer outside allowed values',
      { path: 'p', depth: '-1' },
      '--arg depth: must be one of 1, 2, 3, got -1',
    ],
    // numbers
    [
      'number accepts decimals and exponents',
      { path: 'p', ratio: '-2.5e-1' },
      {
        values: { path: 'p', depth: 2, strict: false, ratio: -0.25 },
        order: ['path', 'depth', 'strict', 'ratio'],
      },
    ],
    [
      'number accepts .5',
      { path: 'p', ratio: '.5' },
      {
        values: { path: 'p', depth: 2, strict: false, ratio: 0.5 },
        order: ['path', 'depth', 'strict', 'ratio'],
      },
    ],
    [
      'number rejects Infinity',
      { path: 'p', ratio: 'Infinity' },
      '--arg ratio: must be a finite number (e.g. 0.5), got "Infinity"',
    ],
    [
      'number rejects overflow',
      { path: 'p', ratio: '1e999' },
      '--arg ratio: must be a finite number (e.g. 0.5), got "1e999"',
    ],
    [
      'number rejects hex',
      { path: 'p', ratio: '0x10' },
      '--arg ratio: must be a finite number (e.g. 0.5), got "0x10"',
    ],
    [
      'number rejects NaN',
      { path: 'p', ratio: 'NaN' },
      '--arg ratio: must be a finite number (e.g. 0.5), got "NaN"',
    ],
    [
      'number rejects empty',
      { path: 'p', ratio: ' ' },
      '--arg ratio: must be a finite number (e.g. 0.5), got " "',
    ],
    // booleans
    ...(['true', 'TRUE', 'Yes', '1'] as const).map<[string, Record<string, string>, Ok]>((word) => [
      `boolean ${word} is true`,
      { path: 'p', strict: word },
      { values: { path: 'p', depth: 2, strict: true }, order: ['path', 'depth', 'strict'] },
    ]),
    ...(['false', 'False', 'NO', '0'] as const).map<[string, Record<string, string>, Ok]>((word) => [
      `boolean ${word} is false`,
      { path: 'p', strict: word },
      { values: { path: 'p', depth: 2, strict: false }, order: ['path', 'depth', 'strict'] },
    ]),
    [
      'boolean rejects other words',
      { path: 'p', strict: 'maybe' },
      '--arg strict: must be true/false, yes/no or 1/0, got "maybe"',
    ],
    [
      'boolean rejects on/off',
      { path: 'p', strict: 'on' },
      '--arg strict: must be true/false, yes/no or 1/0, got "on"',
    ],
    // allowed string values (case-sensitive, after coercion)
    [
      'string in allowed values',
      { path: 'p', mode: 'fast' },
      {
        values: { path: 'p', depth: 2, strict: false, mode: 'fast' },
        order: ['path', 'depth', 'strict', 'mode'],
      },
    ],
    [
      'string outside allowed values',
      { path: 'p', mode: 'FAST' },
      '--arg mode: must be one of "fast", "slow", got "FAST"',
    ],
    // required / unknown
    ['required missing', {}, '--arg path: required argument is missing (give --arg path=<string>)'],
    ['required given empty', { path: '' }, '--arg path: required argument must not be empty'],
    ['required given blank', { path: '   ' }, '--arg path: required argument must not be empty'],
    [
      'unknown argument lists the known ones',
      { path: 'p', colour: 'red' },
      '--arg colour: unknown argument; known arguments: path, depth, strict, ratio, mode, note',
    ],
    [
      'unknown argument is reported before a missing required one',
      { colour: 'red' },
      '--arg colour: unknown argument; known arguments: path, depth, strict, ratio, mode, note',
    ],
    [
      'names are case-sensitive',
      { PATH: 'p' },
      '--arg PATH: unknown argument; known arguments: path, depth, strict, ratio, mode, note',
    ],
  ])('%s', (_label, provided, expected) => {
    const result = resolveArguments(DEFS, provided);
    if (typeof expected === 'string') {
      expect(result).toEqual({ ok: false, error: expected });
    } else {
      expect(result).toEqual({ ok: true, ...expected });
      if (result.ok) expect(Object.keys(result.values)).toEqual(result.order);
    }
  });

  it('says so when the action takes no arguments', () => {
    expect(resolveArguments([], { x: '1' })).toEqual({
      ok: false,
      error: '--arg x: unknown argument; this action takes no arguments',
    });
    expect(resolveArguments([], {})).toEqual({ ok: true, values: {}, order: [] });
  });

  it('uses a default even when it is falsy', () => {
    const defs = [def({ name: 'n', type: 'integer', default: 0 }), def({ name: 's', default: '' })];
    expect(resolveArguments(defs, {})).toEqual({ ok: true, values: { n: 0, s: '' }, order: ['n', 's'] });
  });

  it('turns -0 into 0', () => {
    const result = resolveArguments([def({ name: 'n', type: 'integer' })], { n: '-0' });
    expect(result.ok && Object.is(result.values.n, 0)).toBe(true);
  });

  it('treats a name like __proto__ as plain data', () => {
    const result = resolveArguments([def({ name: '__proto__' })], { ['__proto__']: 'x' } as Record<
      string,
      string
    >);
    expect(result.ok).toBe(true);
  });
});

describe('coerceArgument and hasArgumentType', () => {
  it('agree: a coerced value has its type', () => {
    for (const [raw, type] of [
      ['x', 'string'],
      ['3', 'integer'],
      ['3.5', 'number'],
      ['yes', 'boolean'],
    ] as const) {
      const coerced = coerceArgument(raw, type);
      expect(coerced.ok && hasArgumentType(coerced.value, type)).toBe(true);
    }
  });

  it('hasArgumentType is strict about typed values', () => {
    expect(hasArgumentType(2, 'integer')).toBe(true);
    expect(hasArgumentType(2.5, 'integer')).toBe(false);
    expect(hasArgumentType('2', 'integer')).toBe(false);
    expect(hasArgumentType(2, 'number')).toBe(true);
    expect(hasArgumentType(Number.NaN, 'number')).toBe(false);
    expect(hasArgumentType('true', 'boolean')).toBe(false);
    expect(hasArgumentType(1, 'string')).toBe(false);
  });
});

describe('checkArgumentDefinitions', () => {
  it('accepts well-formed definitions (and none at all)', () => {
    expect(checkArgumentDefinitions(DEFS)).toEqual({ ok: true });
    expect(checkArgumentDefinitions([])).toEqual({ ok: true });
  });

  it.each<[string, ArgumentDefinition[], string]>([
    [
      'duplicate names',
      [def({ name: 'a' }), def({ name: 'b' }), def({ name: 'a', type: 'integer' })],
      'arguments.2.name: "a" is already defined by arguments.0',
    ],
    [
      'a default of the wrong type',
      [def({ name: 'depth', type: 'integer', default: 'two' })],
      'arguments.0.default: depth is an integer argument; "two" is not an integer',
    ],
    [
      'a fractional default for an integer',
      [def({ name: 'depth', type: 'integer', default: 2.5 })],
      'arguments.0.default: depth is an integer argument; 2.5 is not an integer',
    ],
    [
      'a string default for a boolean',
      [def({ name: 'strict', type: 'boolean', default: 'no' })],
      'arguments.0.default: strict is a boolean argument; "no" is not a boolean',
    ],
    [
      'a number default for a string',
      [def({ name: 'glob', default: 5 })],
      'arguments.0.default: glob is a string argument; 5 is not a string',
    ],
    [
      'a default outside the allowed values',
      [def({ name: 'depth', type: 'integer', default: 5, allowedValues: [1, 2, 3] })],
      'arguments.0.default: 5 is not one of the allowed_values (1, 2, 3)',
    ],
    [
      'an allowed value of the wrong type',
      [def({ name: 'x' }), def({ name: 'depth', type: 'integer', allowedValues: [1, '2'] })],
      'arguments.1.allowed_values.1: depth is an integer argument; "2" is not an integer',
    ],
    [
      'an allowed value listed twice',
      [def({ name: 'license', allowedValues: ['MIT', 'MIT'] })],
      'arguments.0.allowed_values.1: "MIT" is listed twice',
    ],
    [
      'required with a default',
      [def({ name: 'path', required: true, default: 'src' })],
      'arguments.0.required: path has a default, so it cannot be required (drop one of the two)',
    ],
  ])('refuses %s', (_label, defs, error) => {
    expect(checkArgumentDefinitions(defs)).toEqual({ ok: false, error });
  });

  it('accepts an integer default for a number argument', () => {
    expect(
      checkArgumentDefinitions([def({ name: 'r', type: 'number', default: 1, allowedValues: [1, 0.5] })]),
    ).toEqual({
      ok: true,
    });
  });
});
