import YAML from 'yaml';
import { renderDocument, renderRows } from '../../client/render/format';

const doc = { plan_id: 'X', phase: 'EXECUTE', state: 'ERRORED', projects: ['a/b'] };

describe('renderDocument', () => {
  it('keeps key order in json and yaml', () => {
    expect(Object.keys(JSON.parse(renderDocument(doc, 'json', { color: false })))).toEqual(Object.keys(doc));
    expect(Object.keys(YAML.parse(renderDocument(doc, 'yaml', { color: false })))).toEqual(Object.keys(doc));
  });

  it('renders plain as key: value lines', () => {
    expect(renderDocument(doc, 'plain', { color: false })).toBe(
      'plan_id: X\nphase: EXECUTE\nstate: ERRORED\nprojects: ["a/b"]',
    );
  });

  it('colours rich output only when asked', () => {
    const plain = renderDocument(doc, 'rich', { color: false });
    expect(plain).not.toContain('\u001b[');
    expect(plain.split('\n')[0]).toBe('plan_id   X');
    expect(renderDocument(doc, 'rich', { color: true })).toContain('\u001b[31mERRORED');
  });

  it('draws a table', () => {
    expect(renderDocument(doc, 'table', { color: false })).toMatch(/│ state\s+│ ERRORED\s+│/);
  });
});

describe('renderRows', () => {
  const rows = [
    { id: '1', phase: 'STRATEGIZE', extra: 'x' },
    { id: '2', phase: 'APPLY', extra: 'y' },
  ];

  it('prints tab-separated columns for plain', () => {
    expect(renderRows(rows, ['id', 'phase'], 'plain', { color: false })).toBe('1\tSTRATEGIZE\n2\tAPPLY');
  });

  it('keeps every field in json', () => {
    expect(JSON.parse(renderRows(rows, ['id'], 'json', { color: false }))).toEqual(rows);
  });

  it('says when there is nothing', () => {
    expect(renderRows([], ['id'], 'table', { color: false })).toBe('(none)');
    expect(renderRows([], ['id'], 'json', { color: false })).toBe('[]');
    expect(renderRows([], ['id'], 'yaml', { color: false })).toBe('[]');
  });
});
