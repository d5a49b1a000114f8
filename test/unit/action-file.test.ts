import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { actionCliDict, actionFileFormat, parseActionFile } from '../../domain/action-file';
import { actionSchema } from '../../domain/catalog';
import type { Action } from '../../domain/catalog';
import { codeReviewAction } from './fixtures';

const ACTIONS_DIR = path.join(__dirname, '..', '..', 'actions');

function parseOk(text: string, fileName = 'action.yaml'): Action {
  const result = parseActionFile(text, fileName);
  if (!result.ok) throw new Error(result.error);
  return result.action;
}

function parseError(text: string, fileName = 'action.yaml'): string {
  const result = parseActionFile(text, fileName);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.action)}`);
  return result.error;
}

const FULL_YAML = `
name: Local/Code-Review
description: Review code.
arguments:
  - name: path
    type: string
    required: true
    description: what to review
  - name: depth
    type: integer
    default: 2
    allowed_values: [1, 2, 3]
  - name: strict
    type: boolean
    default: false
default_automation_level: review
default_profile: team/careful
actors:
  strategy: local/planner
  invariant: local/guard
execution:
  network: true
  ignore: ["dist/**"]
invariants:
  - "  Do not modify files outside the path.  "
definition_of_done: Every file is reviewed.
tags: [review, quality]
steps:
  - create: "REVIEW-{{path}}.md"
    content: "# Review of {{path}}\\n"
  - replace: "src/**/*.ts"
    pattern: "TODO"
    with: "FIXME"
    flags: i
    require_match: false
    project: api
  - move: a.txt
    to: b.txt
  - delete: "tmp/**"
    description: clean up
  - run: npm test
    timeout_seconds: 120
validation: npm run lint
`;

const FULL_ACTION: Action = {
  name: 'local/code-review',
  description: 'Review code.',
  arguments: [
    {
      name: 'path',
      type: 'string',
      required: true,
      default: null,
      description: 'what to review',
      allowedValues: [],
    },
    {
      name: 'depth',
      type: 'integer',
      required: false,
      default: 2,
      description: '',
      allowedValues: [1, 2, 3],
    },
    { name: 'strict', type: 'boolean', required: false, default: false, description: '', allowedValues: [] },
  ],
  defaultAutomationLevel: 'REVIEW_BEFORE_APPLY',
  defaultProfile: 'team/careful',
  actors: {
    strategyActor: 'local/planner',
    executionActor: null,
    estimationActor: null,
    invariantActor: 'local/guard',
  },
  execution: { network: true, unattendedCommands: false, ignore: ['dist/**'] },
  invariants: ['Do not modify files outside the path.'],
  definitionOfDone: 'Every file is reviewed.',
  tags: ['review', 'quality'],
  steps: [
    {
      kind: 'create',
      path: 'REVIEW-{{path}}.md',
      content: '# Review of {{path}}\n',
      overwrite: false,
      description: null,
      project: null,
    },
    {
      kind: 'replace',
      files: 'src/**/*.ts',
      pattern: 'TODO',
      replacement: 'FIXME',
      flags: 'i',
      requireMatch: false,
      description: null,
      project: 'api',
    },
    { kind: 'move', from: 'a.txt', to: 'b.txt', description: null, project: null },
    { kind: 'delete', files: 'tmp/**', requireMatch: true, description: 'clean up', project: null },
    { kind: 'run', command: 'npm test', timeoutSeconds: 120, description: null, project: null },
  ],
  validation: 'npm run lint',
};

describe('the example actions in actions/', () => {
  const files = readdirSync(ACTIONS_DIR).filter((f) => actionFileFormat(f) !== 'unknown');

  it('has the three examples', () => {
    expect(files.sort()).toEqual(
      expect.arrayContaining([
        'local-add-license-header.yaml',
        'local-code-review.yaml',
        'local-example.yaml',
      ]),
    );
  });

  it.each(readdirSync(ACTIONS_DIR))('%s parses and round-trips', (file) => {
    const action = parseOk(readFileSync(path.join(ACTIONS_DIR, file), 'utf8'), file);
    expect(actionSchema.parse(action)).toEqual(action);
    expect(`${action.name.replace('/', '-')}.yaml`).toBe(file);
    expect(parseOk(YAML.stringify(actionCliDict(action)), 'again.yaml')).toEqual(action);
  });

  it('local/example has an optional greeting defaulting to hello', () => {
    const action = parseOk(readFileSync(path.join(ACTIONS_DIR, 'local-example.yaml'), 'utf8'));
    expect(action.arguments).toEqual([
      expect.objectContaining({ name: 'greeting', type: 'string', required: false, default: 'hello' }),
    ]);
  });

  it('local/code-review declares path, depth and strict as the issue says', () => {
    const action = parseOk(readFileSync(path.join(ACTIONS_DIR, 'local-code-review.yaml'), 'utf8'));
    expect(action.arguments.map((a) => [a.name, a.type, a.required, a.default, a.allowedValues])).toEqual([
      ['path', 'string', true, null, []],
      ['depth', 'integer', false, 2, [1, 2, 3]],
      ['strict', 'boolean', false, false, []],
    ]);
    expect(action.invariants.length).toBeGreaterThan(0);
    expect(action.definitionOfDone).not.toBeNull();
    expect(action.tags.length).toBeGreaterThan(0);
  });

  it('local/add-license-header declares license and glob as the issue says', () => {
    const action = parseOk(readFileSync(path.join(ACTIONS_DIR, 'local-add-license-header.yaml'), 'utf8'));
    expect(action.arguments.map((a) => [a.name, a.type, a.default, a.allowedValues])).toEqual([
      ['license', 'string', 'MIT', ['MIT', 'Apache-2.0']],
      ['glob', 'string', '**/*.ts', []],
    ]);
  });
});

describe('parseActionFile: valid files', () => {
  it('reads YAML with every field', () => {
    expect(parseOk(FULL_YAML)).toEqual(FULL_ACTION);
  });

  it('reads JSON with every field', () => {
    expect(parseOk(JSON.stringify(YAML.parse(FULL_YAML)), 'a.json')).toEqual(FULL_ACTION);
  });

  it('reads .yml and upper-case extensions', () => {
    expect(parseOk(FULL_YAML, 'a.yml')).toEqual(FULL_ACTION);
    expect(parseOk(FULL_YAML, 'A.YAML')).toEqual(FULL_ACTION);
  });

  it('tries JSON, then YAML, for other file names', () => {
    expect(parseOk(JSON.stringify({ name: 'a/b' }), 'action.txt').name).toBe('a/b');
    expect(parseOk('name: a/b\n', 'action').name).toBe('a/b');
  });

  it('fills defaults for a file with just a name', () => {
    expect(parseOk('name: local/x')).toEqual({
      name: 'local/x',
      description: '',
      arguments: [],
      defaultAutomationLevel: 'MANUAL',
      defaultProfile: null,
      actors: { strategyActor: null, executionActor: null, estimationActor: null, invariantActor: null },
      execution: { network: false, unattendedCommands: false, ignore: [] },
      invariants: [],
      definitionOfDone: null,
      tags: [],
      steps: [],
      validation: null,
    });
  });

  it('defaults an argument type to string', () => {
    expect(parseOk('name: a/b\narguments:\n  - name: x\n').arguments[0]).toMatchObject({
      name: 'x',
      type: 'string',
    });
  });

  it.each([
    ['manual', 'MANUAL'],
    ['review', 'REVIEW_BEFORE_APPLY'],
    ['full', 'FULL_AUTOMATION'],
    ['MANUAL', 'MANUAL'],
    ['REVIEW_BEFORE_APPLY', 'REVIEW_BEFORE_APPLY'],
    ['FULL_AUTOMATION', 'FULL_AUTOMATION'],
    ['Full', 'FULL_AUTOMATION'],
  ])('accepts default_automation_level %s', (word, level) => {
    expect(parseOk(`name: a/b\ndefault_automation_level: ${word}`).defaultAutomationLevel).toBe(level);
  });
});

describe('parseActionFile: errors name the file, the field and the rule', () => {
  it.each<[string, string, string | RegExp]>([
    [
      'unknown top-level key',
      'name: a/b\ncolour: red',
      'action.yaml: colour: unknown key (allowed: name, description, arguments, default_automation_level, default_profile, actors, execution, invariants, definition_of_done, tags, steps, validation)',
    ],
    ['camelCase key', 'name: a/b\ndefaultProfile: a/c', /^action\.yaml: defaultProfile: unknown key/],
    [
      'unknown execution key',
      'name: a/b\nexecution:\n  unattendedCommands: true',
      'action.yaml: execution.unattendedCommands: unknown key (allowed: network, unattended_commands, ignore)',
    ],
    [
      'unknown argument key',
      'name: a/b\narguments:\n  - name: x\n    colour: red',
      'action.yaml: arguments.0.colour: unknown key (allowed: name, type, required, default, description, allowed_values)',
    ],
    [
      'allowedValues instead of allowed_values',
      'name: a/b\narguments:\n  - name: x\n    allowedValues: [a]',
      /^action\.yaml: arguments\.0\.allowedValues: unknown key/,
    ],
    [
      'unknown actor key',
      'name: a/b\nactors:\n  planner: x',
      'action.yaml: actors.planner: unknown key (allowed: strategy, execution, estimation, invariant)',
    ],
    [
      'missing name',
      'description: x',
      'action.yaml: name: Invalid input: expected string, received undefined',
    ],
    [
      'non-namespaced name',
      'name: code-review',
      'action.yaml: name: must look like namespace/name (lowercase letters, digits, - and _)',
    ],
    [
      'name of the wrong type',
      'name: 12',
      'action.yaml: name: Invalid input: expected string, received number',
    ],
    [
      'bad argument type',
      'name: a/b\narguments:\n  - name: x\n    type: int',
      /^action\.yaml: arguments\.0\.type: Invalid option: expected one of "string"\|"integer"\|"number"\|"boolean"$/,
    ],
    [
      'bad argument name',
      'name: a/b\narguments:\n  - name: 9x',
      'action.yaml: arguments.0.name: must start with a letter or _ and contain only letters, digits, _, - and .',
    ],
    [
      'required not a boolean',
      'name: a/b\narguments:\n  - name: x\n    required: "yes"',
      'action.yaml: arguments.0.required: Invalid input: expected boolean, received string',
    ],
    [
      'bad default',
      'name: a/b\narguments:\n  - name: depth\n    type: integer\n    default: two',
      'action.yaml: arguments.0.default: depth is an integer argument; "two" is not an integer',
    ],
    [
      'default outside allowed values',
      'name: a/b\narguments:\n  - name: l\n    default: GPL\n    allowed_values: [MIT]',
      'action.yaml: arguments.0.default: "GPL" is not one of the allowed_values ("MIT")',
    ],
    [
      'required with a default',
      'name: a/b\narguments:\n  - name: p\n    required: true\n    default: x',
      'action.yaml: arguments.0.required: p has a default, so it cannot be required (drop one of the two)',
    ],
    [
      'duplicate argument names',
      'name: a/b\narguments:\n  - name: p\n  - name: p',
      'action.yaml: arguments.1.name: "p" is already defined by arguments.0',
    ],
    [
      'empty invariant text',
      'name: a/b\ninvariants:\n  - ok\n  - "   "',
      'action.yaml: invariants.1: must not be empty',
    ],
    [
      'bad automation level',
      'name: a/b\ndefault_automation_level: sometimes',
      'action.yaml: default_automation_level: must be one of manual, review, full (or MANUAL, REVIEW_BEFORE_APPLY, FULL_AUTOMATION), in any case, got "sometimes"',
    ],
    [
      'non-namespaced default profile',
      'name: a/b\ndefault_profile: careful',
      /^action\.yaml: default_profile: must look like namespace\/name/,
    ],
    ['bad tag', 'name: a/b\ntags: ["bad tag"]', /^action\.yaml: tags\.0: must be letters, digits/],
    [
      'arguments not a list',
      'name: a/b\narguments: x',
      /^action\.yaml: arguments: Invalid input: expected array/,
    ],
    [
      'several problems on one line',
      'name: x\ncolour: red',
      /^action\.yaml: name: must look like namespace\/name .*; colour: unknown key/,
    ],
  ])('%s', (_label, text, expected) => {
    const error = parseError(text);
    expect(error).not.toContain('\n');
    if (typeof expected === 'string') expect(error).toBe(expected);
    else expect(error).toMatch(expected);
  });

  it('names the line of a YAML syntax error', () => {
    expect(parseError('name: a/b\ntags: [a, b\ndescription: x\n')).toMatch(
      /^action\.yaml: YAML syntax error at line 3, column 1: Flow sequence/,
    );
  });

  it('refuses duplicate YAML keys', () => {
    expect(parseError('name: a/b\nname: a/c\n')).toBe(
      'action.yaml: YAML syntax error at line 2, column 1: Map keys must be unique',
    );
  });

  it('names the line of a JSON syntax error', () => {
    expect(parseError('{\n  "name": "a/b",\n}', 'a.json')).toMatch(
      /^a\.json: JSON syntax error at line 3, column 1: /,
    );
  });

  it('reports a truncated JSON file', () => {
    expect(parseError('{"name": "a/b"', 'a.json')).toMatch(/^a\.json: JSON syntax error/);
  });

  it('reports a file that is neither JSON nor YAML', () => {
    expect(parseError('{ name: [ }', 'action.txt')).toMatch(
      /^action\.txt: neither JSON nor YAML: YAML syntax error at line 1/,
    );
  });

  it.each([
    ['', 'action.yaml: the file is empty; an action needs at least a name'],
    [
      '  \n# only a comment\n',
      'action.yaml: the top level must be a mapping of action fields (name, description, ...), got nothing',
    ],
    [
      '- name: a/b',
      'action.yaml: the top level must be a mapping of action fields (name, description, ...), got a list',
    ],
    [
      'just text',
      'action.yaml: the top level must be a mapping of action fields (name, description, ...), got a string',
    ],
  ])('refuses a file whose top level is not a mapping: %j', (text, error) => {
    expect(parseError(text)).toBe(error);
  });
});

describe('parseActionFile: a placeholder in a command stands only where its shell quoting holds', () => {
  /** An action whose second step runs `run`: the first shows that a template outside a command may quote. */
  const withCommand = (run: string, validation?: string) =>
    JSON.stringify({
      name: 'a/b',
      arguments: [{ name: 'msg' }],
      steps: [{ create: 'said.txt', content: 'she said "{{msg}}"' }, { run }],
      ...(validation === undefined ? {} : { validation }),
    });

  it.each<[string, string, string | RegExp]>([
    [
      'inside double quotes',
      'echo "{{msg}}"',
      'action.json: steps.1.run: {{msg}} is inside quotes in the command; write it bare (it is quoted for you) or use $CLEVERAGENTS_ARG_MSG',
    ],
    [
      'inside single quotes',
      "echo 'say: {{ msg }}'",
      /^action\.json: steps\.1\.run: \{\{ msg \}\} is inside quotes/,
    ],
    [
      'inside backquotes',
      'echo `printf %s {{msg}}`',
      /^action\.json: steps\.1\.run: \{\{msg\}\} is inside `\.\.\.`/,
    ],
    ['in a comment', 'true # {{msg}}', /^action\.json: steps\.1\.run: \{\{msg\}\} is inside a comment/],
    [
      'in a here-document',
      'cat <<EOF > out.txt\n{{msg}}\nEOF',
      /^action\.json: steps\.1\.run: \{\{msg\}\} is inside a here-document/,
    ],
    ['after $', 'echo ${{msg}}', /^action\.json: steps\.1\.run: \{\{msg\}\} follows a `\$`/],
    ['after a backslash', 'echo \\{{msg}}', /^action\.json: steps\.1\.run: \{\{msg\}\} follows a backslash/],
  ])('refuses a run step with a placeholder %s', (_label, run, expected) => {
    const error = parseError(withCommand(run), 'action.json');
    if (typeof expected === 'string') expect(error).toBe(expected);
    else expect(error).toMatch(expected);
  });

  it('refuses a validation command the same way, naming the variable that holds the value', () => {
    expect(parseError(withCommand('true', 'test "{{plan.id}}" != ""'), 'action.json')).toBe(
      'action.json: validation: {{plan.id}} is inside quotes in the command; write it bare (it is quoted for you) or use $CLEVERAGENTS_PLAN_ID',
    );
  });

  it('names every misplaced placeholder of the file on one line', () => {
    expect(
      parseError(withCommand('echo "{{msg}}"', 'grep -q {{msg}} said.txt # {{msg}}'), 'action.json'),
    ).toMatch(/^action\.json: steps\.1\.run: .*inside quotes.*; validation: .*inside a comment/);
  });

  it("refuses it in a YAML file, where the quotes are the command's, not YAML's", () => {
    expect(parseError('name: a/b\nsteps:\n  - run: echo "\'{{msg}}\'"\n')).toMatch(
      /^action\.yaml: steps\.0\.run: \{\{msg\}\} is inside quotes/,
    );
  });

  it('accepts placeholders that are bare words or parts of one', () => {
    const action = parseOk(
      withCommand("printf '%s\\n' --name={{msg}} 'prefix '{{msg}} {{msg}}", 'grep -q -- {{msg}} said.txt'),
      'action.json',
    );
    expect(action.steps[1]).toMatchObject({
      kind: 'run',
      command: "printf '%s\\n' --name={{msg}} 'prefix '{{msg}} {{msg}}",
    });
    expect(action.validation).toBe('grep -q -- {{msg}} said.txt');
  });
});

describe('actionCliDict', () => {
  it('uses the file shape with keys in the file order', () => {
    const dict = actionCliDict(FULL_ACTION);
    expect(Object.keys(dict)).toEqual([
      'name',
      'description',
      'arguments',
      'default_automation_level',
      'default_profile',
      'actors',
      'execution',
      'invariants',
      'definition_of_done',
      'tags',
      'steps',
      'validation',
    ]);
    expect(dict.actors).toEqual({ strategy: 'local/planner', invariant: 'local/guard' });
    expect(dict.arguments).toEqual([
      { name: 'path', type: 'string', required: true, description: 'what to review' },
      { name: 'depth', type: 'integer', required: false, default: 2, allowed_values: [1, 2, 3] },
      { name: 'strict', type: 'boolean', required: false, default: false },
    ]);
  });

  it('omits empty optional fields', () => {
    expect(actionCliDict(parseOk('name: a/b'))).toEqual({ name: 'a/b', default_automation_level: 'MANUAL' });
  });

  it.each<[string, Action]>([
    ['a full action', FULL_ACTION],
    ['a minimal action', parseOk('name: a/b')],
    ['the fixture action', codeReviewAction()],
    [
      'tricky strings',
      codeReviewAction({
        description: 'yes: no\n  multi-line # not a comment',
        tags: ['1.0', 'true'],
        invariants: ['null', '- dash'],
        arguments: [
          {
            name: 'n',
            type: 'string',
            required: false,
            default: '012',
            description: 'true',
            allowedValues: ['012', 'null'],
          },
          { name: 'r', type: 'number', required: false, default: 0.5, description: '', allowedValues: [] },
        ],
      }),
    ],
  ])('round-trips %s through YAML and JSON', (_label, action) => {
    expect(parseOk(YAML.stringify(actionCliDict(action)), 'x.yaml')).toEqual(action);
    expect(parseOk(JSON.stringify(actionCliDict(action)), 'x.json')).toEqual(action);
  });

  it('shares no arrays with the action', () => {
    const action = codeReviewAction();
    const dict = actionCliDict(action);
    (dict.tags as string[]).push('x');
    (dict.invariants as string[]).push('x');
    expect(action.tags).toEqual(['review', 'quality']);
    expect(action.invariants).toHaveLength(2);
  });
});
