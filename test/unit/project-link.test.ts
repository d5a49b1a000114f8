import {
  ALIAS_RULE,
  checkProjectLinks,
  normalizeAlias,
  parseProjectLinkOption,
} from '../../domain/project-link';
import type { ProjectLink } from '../../domain/schemas';

const link = (projectName: string, alias: string | null = null, readOnly = false): ProjectLink => ({
  projectName,
  alias,
  readOnly,
});

describe('parseProjectLinkOption: accepted forms', () => {
  it.each<[string, ProjectLink]>([
    ['acme/api', link('acme/api')],
    ['acme/api:api', link('acme/api', 'api')],
    ['acme/api:api:ro', link('acme/api', 'api', true)],
    ['acme/api::ro', link('acme/api', null, true)],
    ['acme/api:api:RO', link('acme/api', 'api', true)],
    ['ACME/Api', link('acme/api')],
    [' acme/api : api ', link('acme/api', 'api')],
    ['acme/api:API', link('acme/api', 'api')],
    ['acme/api:My_Alias-2', link('acme/api', 'my_alias-2')],
    ['acme/api:9lives', link('acme/api', '9lives')],
    ['acme/api:a', link('acme/api', 'a')],
  ])('%s', (text, expected) => {
    expect(parseProjectLinkOption(text)).toEqual({ ok: true, link: expected });
  });
});

describe('parseProjectLinkOption: refused forms', () => {
  it.each<[string, string]>([
    ['acme/api:Bad!', `--project "acme/api:Bad!": ${ALIAS_RULE}`],
    ['acme/api:-api', `--project "acme/api:-api": ${ALIAS_RULE}`],
    ['acme/api:_api', `--project "acme/api:_api": ${ALIAS_RULE}`],
    ['acme/api:my alias', `--project "acme/api:my alias": ${ALIAS_RULE}`],
    ['acme/api:api.v2', `--project "acme/api:api.v2": ${ALIAS_RULE}`],
    ['acme/api:ápi', `--project "acme/api:ápi": ${ALIAS_RULE}`],
    ['acme/api:api:rw', '--project "acme/api:api:rw": unknown flag "rw"; the only flag is ro (read-only)'],
    ['acme/api:api:', '--project "acme/api:api:": unknown flag ""; the only flag is ro (read-only)'],
    [
      'acme/api:ro',
      '--project "acme/api:ro": "ro" is the read-only flag, not an alias; write acme/api::ro for a read-only link without an alias',
    ],
    [
      'acme/api:a:ro:x',
      '--project "acme/api:a:ro:x": too many ":"-separated parts; the form is name[:alias][:ro]',
    ],
    ['', '--project "": the project name is missing; the form is name[:alias][:ro]'],
    [':api', '--project ":api": the project name is missing; the form is name[:alias][:ro]'],
    [
      'acme/api:',
      '--project "acme/api:": the alias after ":" is empty; omit the ":" or give an alias (the form is name[:alias][:ro])',
    ],
    [
      'api',
      '--project "api": project name must look like namespace/name (lowercase letters, digits, - and _)',
    ],
    [
      'acme/my api',
      '--project "acme/my api": project name must look like namespace/name (lowercase letters, digits, - and _)',
    ],
  ])('%j', (text, error) => {
    expect(parseProjectLinkOption(text)).toEqual({ ok: false, error });
  });
});

describe('normalizeAlias', () => {
  it('lowercases and trims an alias that then follows the rule', () => {
    expect(normalizeAlias(' Web-UI_2 ')).toBe('web-ui_2');
  });

  it('refuses what lowercasing cannot fix', () => {
    expect(normalizeAlias('web ui')).toBeUndefined();
    expect(normalizeAlias('')).toBeUndefined();
    expect(normalizeAlias('-x')).toBeUndefined();
  });
});

describe('checkProjectLinks', () => {
  it('accepts distinct projects and aliases, normalising them, order kept', () => {
    expect(
      checkProjectLinks([link('Acme/Web', 'WEB'), link('acme/api', 'api', true), link('acme/docs')]),
    ).toEqual({
      ok: true,
      links: [link('acme/web', 'web'), link('acme/api', 'api', true), link('acme/docs')],
    });
  });

  it('accepts several links without aliases', () => {
    expect(checkProjectLinks([link('a/b'), link('a/c')]).ok).toBe(true);
  });

  it('accepts an empty list (resolvePlanSpec asks for at least one project)', () => {
    expect(checkProjectLinks([])).toEqual({ ok: true, links: [] });
  });

  it('refuses a project linked twice', () => {
    expect(checkProjectLinks([link('acme/api', 'a'), link('acme/api', 'b')])).toEqual({
      ok: false,
      error: 'project acme/api is linked twice; a plan links each project once',
    });
  });

  it('refuses a project linked twice in different case', () => {
    expect(checkProjectLinks([link('acme/api'), link('ACME/API')])).toMatchObject({ ok: false });
  });

  it('refuses a duplicate alias', () => {
    expect(checkProjectLinks([link('acme/api', 'x'), link('acme/web', 'x')])).toEqual({
      ok: false,
      error: 'alias "x" is used by both acme/api and acme/web; aliases must be unique within a plan',
    });
  });

  it('refuses an alias equal to another after lowercasing', () => {
    expect(checkProjectLinks([link('acme/api', 'svc'), link('acme/web', 'SVC')])).toEqual({
      ok: false,
      error: 'alias "svc" is used by both acme/api and acme/web; aliases must be unique within a plan',
    });
  });

  it('refuses duplicate aliases coming from parsed options', () => {
    const links = ['acme/api:svc', 'acme/web:Svc:ro'].map((t) => {
      const parsed = parseProjectLinkOption(t);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.link;
    });
    expect(checkProjectLinks(links).ok).toBe(false);
  });

  it('refuses an alias that breaks the rule in a link not made by the parser', () => {
    expect(checkProjectLinks([link('acme/api', 'bad alias')])).toEqual({
      ok: false,
      error: `project acme/api: alias "bad alias": ${ALIAS_RULE}`,
    });
  });

  it('refuses a project name that is not namespaced', () => {
    expect(checkProjectLinks([link('api')])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^project "api": project name must look like namespace\/name/),
    });
  });
});
