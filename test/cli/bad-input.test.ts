/**
 * Bad input never half-writes: each case gets one error line naming the field and the rule, a non-zero exit code,
 * and the database (plans and catalog) is exactly as before.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createHarness } from '../helpers/harness';
import type { Harness } from '../helpers/harness';

let h: Harness;
let files: Record<string, string>;

beforeAll(async () => {
  h = await createHarness();
  const write = (name: string, text: string) => {
    const file = path.join(h.projectDir, '..', name);
    writeFileSync(file, text);
    return file;
  };
  files = {
    syntax: write('syntax.yaml', 'name: local/x\narguments: [\n'),
    unknownKey: write('unknown-key.yaml', 'name: local/x\ncolour: red\n'),
    notNamespaced: write('not-namespaced.yaml', 'name: codereview\n'),
    emptyInvariant: write('empty-invariant.yaml', 'name: local/x\ninvariants: ["  "]\n'),
    badType: write('bad-type.yaml', 'name: local/x\narguments:\n  - name: n\n    type: decimal\n'),
    badDefault: write(
      'bad-default.yaml',
      'name: local/x\narguments:\n  - name: n\n    type: integer\n    default: 5\n    allowed_values: [1, 2]\n',
    ),
    badJson: write('bad.json', '{"name": "local/x",}'),
    file: write('plain-file.txt', 'not a directory'),
    noVerb: write('no-verb.yaml', 'name: local/x\nsteps:\n  - content: hi\n'),
    twoVerbs: write('two-verbs.yaml', 'name: local/x\nsteps:\n  - create: a\n    content: b\n    run: ls\n'),
    emptyMoveTarget: write('empty-move.yaml', 'name: local/x\nsteps:\n  - move: a\n    to: ""\n'),
    badFlags: write(
      'bad-flags.yaml',
      'name: local/x\nsteps:\n  - replace: "*.ts"\n    pattern: a\n    with: b\n    flags: gx\n',
    ),
    quotedPlaceholder: write(
      'quoted-placeholder.yaml',
      'name: local/x\narguments:\n  - name: msg\nsteps:\n  - create: a.txt\n    content: hi\n  - run: echo "{{msg}}"\n',
    ),
  };
  await h.catalog.putProfile({
    name: 'team/careful',
    description: '',
    automationLevel: 'MANUAL',
    minDecisionConfidence: 0.9,
    maxAutoRetries: 1,
    approvalTimeoutSeconds: null,
    maxSubplanDepth: 3,
  });
});

afterAll(async () => {
  await h?.teardown();
});

async function snapshotDatabase() {
  return {
    plans: await h.plans.listPlans(),
    actions: await h.catalog.listActions(),
    projects: await h.catalog.listProjects(),
    profiles: await h.catalog.listProfiles(),
    invariants: await h.invariants.list(),
  };
}

const UNKNOWN_PLAN = '01KB0F5ZQ3S5G9X2N6W8Y4T7RA';

const use = (...rest: string[]) => ['plan', 'use', 'local/code-review', '--project', 'local/demo', ...rest];

const cases: Array<[string, () => string[], RegExp]> = [
  ['alias with illegal characters', () => ['plan', 'use', 'local/example', '-p', 'local/demo:Bad!'], /alias/],
  ['alias starting with -', () => ['plan', 'use', 'local/example', '-p', 'local/demo:-x'], /alias/],
  [
    'duplicate alias',
    () => ['plan', 'use', 'local/example', '-p', 'local/demo:x', '-p', 'local/docs:x'],
    /alias/,
  ],
  [
    'aliases equal after lowercasing',
    () => ['plan', 'use', 'local/example', '-p', 'local/demo:API', '-p', 'local/docs:api'],
    /alias/,
  ],
  [
    'duplicate project',
    () => ['plan', 'use', 'local/example', '-p', 'local/demo', '-p', 'local/demo'],
    /local\/demo/,
  ],
  ['unknown project flag', () => ['plan', 'use', 'local/example', '-p', 'local/demo:d:rw'], /--project/],
  ['unknown action', () => ['plan', 'use', 'local/nope', '-p', 'local/demo'], /no action named local\/nope/],
  [
    'unknown project',
    () => ['plan', 'use', 'local/example', '-p', 'local/nope'],
    /no project named local\/nope/,
  ],
  [
    'unknown profile',
    () => ['plan', 'use', 'local/example', '-p', 'local/demo', '--profile', 'team/nope'],
    /no profile named team\/nope/,
  ],
  [
    'non-namespaced action',
    () => ['plan', 'use', 'codereview', '-p', 'local/demo'],
    /action name "codereview": must look like namespace\/name/,
  ],
  ['non-namespaced project', () => ['plan', 'use', 'local/example', '-p', 'demo'], /namespace\/name/],
  ['missing required argument', () => use(), /path/],
  ['integer argument of the wrong type', () => use('--arg', 'path=src', '--arg', 'depth=two'), /depth/],
  ['argument outside its allowed values', () => use('--arg', 'path=src', '--arg', 'depth=5'), /depth/],
  ['boolean argument of the wrong type', () => use('--arg', 'path=src', '--arg', 'strict=maybe'), /strict/],
  ['unknown argument', () => use('--arg', 'path=src', '--arg', 'colour=red'), /colour/],
  ['malformed --arg', () => use('--arg', 'novalue'), /--arg "novalue" must have the form key=value/],
  ['--arg given twice', () => use('--arg', 'path=a', '--arg', 'path=b'), /--arg path is given twice/],
  ['bad tag', () => use('--arg', 'path=src', '--tag', 'bad tag'), /tag/],
  ['unknown automation level', () => use('--automation', 'sometimes'), /must be one of manual, review, full/],
  ['unparseable YAML action file', () => ['action', 'add', '-f', files.syntax!], /syntax\.yaml/],
  ['unparseable JSON action file', () => ['action', 'add', '-f', files.badJson!], /bad\.json/],
  ['action file with an unknown key', () => ['action', 'add', '-f', files.unknownKey!], /colour/],
  ['action file with a non-namespaced name', () => ['action', 'add', '-f', files.notNamespaced!], /name/],
  ['action file with an empty invariant', () => ['action', 'add', '-f', files.emptyInvariant!], /invariants/],
  ['action file with an unknown argument type', () => ['action', 'add', '-f', files.badType!], /type/],
  [
    'action file with a default outside allowed values',
    () => ['action', 'add', '-f', files.badDefault!],
    /default/,
  ],
  ['missing action file', () => ['action', 'add', '-f', '/nonexistent/a.yaml'], /no such file/],
  ['action add without --file', () => ['action', 'add'], /--file/],
  ['show an unknown action', () => ['action', 'show', 'local/nope'], /no action named local\/nope/],
  ['remove an unknown action', () => ['action', 'remove', 'local/nope'], /no action named local\/nope/],
  ['project add without --path', () => ['project', 'add', 'acme/api'], /--path/],
  [
    'project path that does not exist',
    () => ['project', 'add', 'acme/api', '--path', '/nonexistent/dir'],
    /no such directory/,
  ],
  [
    'project path that is a file',
    () => ['project', 'add', 'acme/api', '--path', files.file!],
    /not a directory/,
  ],
  [
    'non-namespaced project name',
    () => ['project', 'add', 'api', '--path', h.projectDir],
    /project name "api"/,
  ],
  ['remove an unknown project', () => ['project', 'remove', 'acme/nope'], /no project named acme\/nope/],
  ['profile without automation level', () => ['profile', 'add', 'team/fast'], /--automation/],
  [
    'confidence above 1',
    () => ['profile', 'add', 'team/fast', '-a', 'full', '--min-confidence', '1.5'],
    /between 0.0 and 1.0/,
  ],
  [
    'negative retries',
    () => ['profile', 'add', 'team/fast', '-a', 'full', '--max-retries', '-1'],
    /--max-retries/,
  ],
  [
    'zero approval timeout',
    () => ['profile', 'add', 'team/fast', '-a', 'full', '--approval-timeout', '0'],
    /positive/,
  ],
  ['non-namespaced profile name', () => ['profile', 'add', 'fast', '-a', 'full'], /profile name "fast"/],
  ['remove an unknown profile', () => ['profile', 'remove', 'team/nope'], /no profile named team\/nope/],
  ['a plan name no plan has', () => ['plan', 'show', 'not-a-plan'], /no plan with id, id prefix or name/],
  ['a plan id prefix too short', () => ['plan', 'show', '01KB0'], /too short for a plan id prefix/],
  [
    'a step without a verb',
    () => ['action', 'add', '-f', files.noVerb!],
    /steps\.0: a step needs exactly one of/,
  ],
  [
    'a step with two verbs',
    () => ['action', 'add', '-f', files.twoVerbs!],
    /steps\.0: a step has exactly one verb/,
  ],
  [
    'a move to nowhere',
    () => ['action', 'add', '-f', files.emptyMoveTarget!],
    /steps\.0\.to: must not be empty/,
  ],
  [
    'unknown regex flags',
    () => ['action', 'add', '-f', files.badFlags!],
    /steps\.0\.flags: may contain only/,
  ],
  [
    'a placeholder inside quotes in a run command',
    () => ['action', 'add', '-f', files.quotedPlaceholder!],
    /quoted-placeholder\.yaml: steps\.1\.run: \{\{msg\}\} is inside quotes in the command; .*\$CLEVERAGENTS_ARG_MSG$/,
  ],
  [
    'diff of an unknown plan name',
    () => ['plan', 'diff', 'nope'],
    /no plan with id, id prefix or name "nope"/,
  ],
  ['diff of an unknown plan', () => ['plan', 'diff', UNKNOWN_PLAN], /no plan with id/],
  [
    'context of an unknown plan',
    () => ['plan', 'context', 'add', UNKNOWN_PLAN, files.file!],
    /no plan with id/,
  ],
  [
    'context from a missing file',
    () => ['plan', 'context', 'add', UNKNOWN_PLAN, '/nonexistent/x'],
    /no such file/,
  ],
  ['context list of a too short prefix', () => ['plan', 'context', 'list', '0'], /too short/],
  ['invariant without a scope', () => ['invariant', 'add', 'Keep it'], /give exactly one scope/],
  [
    'invariant with two scopes',
    () => ['invariant', 'add', 'Keep it', '--global', '--project', 'local/demo'],
    /give exactly one scope.*\(got global and project\)/,
  ],
  ['invariant with empty text', () => ['invariant', 'add', '  ', '--global'], /text must not be empty/],
  [
    'invariant on an unknown project',
    () => ['invariant', 'add', 'Keep it', '--project', 'local/nope'],
    /no project named local\/nope/,
  ],
  [
    'invariant on an unknown action',
    () => ['invariant', 'add', 'Keep it', '--action', 'local/nope'],
    /no action named local\/nope/,
  ],
  [
    'invariant on an unknown plan',
    () => ['invariant', 'add', 'Keep it', '--plan', UNKNOWN_PLAN],
    /no plan with id/,
  ],
  [
    'invariant with an unparseable rule',
    () => ['invariant', 'add', 'Keep it', '--global', '--rule', '{protected_paths: ['],
    /--rule: the rule is not valid YAML or JSON/,
  ],
  [
    'invariant with an unknown rule key',
    () => ['invariant', 'add', 'Keep it', '--global', '--rule', '{protect: [a]}'],
    /--rule: the rule is invalid: unknown key protect/,
  ],
  [
    'invariant with an empty description',
    () => ['invariant', 'add', 'Keep it', '--global', '--description', ' '],
    /--description must not be empty/,
  ],
  [
    'invariant with empty text and a description',
    () => ['invariant', 'add', '', '--global', '--description', 'why'],
    /text must not be empty/,
  ],
  [
    'invariant with two descriptions',
    () => ['invariant', 'add', 'Keep it', '--global', '--description', 'a', '--description', 'b'],
    /give --description once/,
  ],
  [
    'invariant whose NAME is unquoted words beside its description',
    () => ['invariant', 'add', 'Keep', 'it', '--global', '--description', 'why'],
    /too many arguments/,
  ],
  ['show an unknown invariant', () => ['invariant', 'show', UNKNOWN_PLAN], /no invariant with id/],
  ['show a malformed invariant id', () => ['invariant', 'show', 'x'], /is not an invariant id/],
  ['remove an unknown invariant', () => ['invariant', 'remove', UNKNOWN_PLAN], /no invariant with id/],
  ['remove a malformed invariant id', () => ['invariant', 'remove', 'x'], /is not an invariant id/],
  [
    'effective list without a project',
    () => ['invariant', 'list', '--effective'],
    /--effective needs --project/,
  ],
  ['watch with a zero timeout', () => ['plan', 'watch', UNKNOWN_PLAN, '--timeout', '0'], /--timeout/],
  [
    'unknown output format',
    () => ['action', 'list', '--format', 'xml'],
    /Allowed choices are json, yaml, plain, table, rich/,
  ],
];

it('has at least 30 cases', () => {
  expect(cases.length).toBeGreaterThanOrEqual(30);
});

it('refuses an action whose command defeats its placeholder quoting as bad input (exit 2)', async () => {
  const result = await h.cli('action', 'add', '-f', files.quotedPlaceholder!);
  expect(result.code).toBe(2);
  expect((await h.cli('action', 'show', 'local/x')).code).toBe(3);
});

it.each([
  ['', '--global', '--description', ' '],
  ['Keep it', '--global', '--description', ''],
  ['Keep it', '--global', '--description', 'a', '--description', 'b'],
  ['Keep', 'it', '--global', '--description', 'why'],
])('refuses the invariant add %j as bad input (exit 2), storing nothing', async (...argv) => {
  const result = await h.cli('invariant', 'add', ...argv);
  expect(result.code).toBe(2);
  expect(await h.invariants.list()).toEqual([]);
});

it.each(cases)('%s', async (_name, argv, message) => {
  const before = await snapshotDatabase();
  const result = await h.cli(...argv());
  expect(result.stdout).toBe('');
  expect(result.code).not.toBe(0);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(message);
  expect(await snapshotDatabase()).toEqual(before);
});
