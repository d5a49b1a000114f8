import YAML from 'yaml';
import { EVENT_COLUMNS, eventRow, eventsToPrint, followLine } from '../../client/render/event-view';
import { renderRows } from '../../client/render/format';
import type { PlanEventRecord } from '../../storage/types';

const PLAN_ID = '01JDV4Q0ZQ8Y5X7W3N2M1K0HGF';

function event(seq: number, extra: Partial<PlanEventRecord> = {}): PlanEventRecord {
  return {
    planId: PLAN_ID,
    seq,
    type: 'PHASE_STARTED',
    phase: 'STRATEGIZE',
    state: 'PROCESSING',
    recordedBy: 'workflow',
    message: null,
    at: `2026-12-01T10:00:0${seq % 10}.000Z`,
    ...extra,
  };
}

const refused = event(3, {
  type: 'COMMAND_REFUSED',
  phase: 'EXECUTE',
  state: 'COMPLETE',
  recordedBy: 'mallory',
  message: 'advance refused: mallory may not approve entering APPLY: the approvers are alice, bob, carol',
});

describe('eventRow', () => {
  it('has the columns in order, and a refusal’s command and reason apart in json and yaml', () => {
    const row = eventRow(refused, { human: false });
    expect(Object.keys(row)).toEqual([...EVENT_COLUMNS, 'refused']);
    expect(row).toEqual({
      seq: 3,
      time: '2026-12-01T10:00:03.000Z',
      type: 'COMMAND_REFUSED',
      phase: 'EXECUTE',
      state: 'COMPLETE',
      actor: 'mallory',
      message: refused.message,
      refused: {
        command: 'advance',
        reason: 'mallory may not approve entering APPLY: the approvers are alice, bob, carol',
      },
    });
    expect(eventRow(event(1), { human: false })).not.toHaveProperty('refused');
  });

  it('makes control characters visible in the human formats, and keeps them (quoted) in json', () => {
    const sneaky = event(2, { recordedBy: 'eve\x1b[2J', message: 'runs again\r\n\x1b[31mfake line\u202e' });
    const human = eventRow(sneaky, { human: true });
    expect(human.actor).toBe('eve\\x1b[2J');
    expect(human.message).toBe('runs again\\r\\n\\x1b[31mfake line\\u202e');
    const table = renderRows([human], EVENT_COLUMNS, 'table', { color: false });
    for (const raw of ['\x1b', '\r', '\u202e']) expect(table).not.toContain(raw);
    const json = JSON.stringify(eventRow(sneaky, { human: false }));
    expect(JSON.parse(json)).toMatchObject({ message: sneaky.message });
  });

  it('renders in every format', () => {
    const rows = [
      eventRow(event(0, { type: 'PLAN_CREATED', state: 'QUEUED', recordedBy: 'tester' }), { human: true }),
      eventRow(refused, { human: true }),
    ];
    const plain = renderRows(rows, EVENT_COLUMNS, 'plain', { color: false });
    expect(plain.split('\n')[1]).toBe(
      [
        '3',
        '2026-12-01T10:00:03.000Z',
        'COMMAND_REFUSED',
        'EXECUTE',
        'COMPLETE',
        'mallory',
        refused.message,
      ].join('\t'),
    );
    for (const format of ['table', 'rich'] as const) {
      expect(renderRows(rows, EVENT_COLUMNS, format, { color: false })).toContain('COMMAND_REFUSED');
    }
    const yamlRows = [eventRow(refused, { human: false })];
    expect(YAML.parse(renderRows(yamlRows, EVENT_COLUMNS, 'yaml', { color: false }))).toEqual(yamlRows);
  });
});

describe('followLine', () => {
  it('prints one self-contained line (or document) per event', () => {
    expect(JSON.parse(followLine(refused, 'json', { color: false }))).toMatchObject({
      seq: 3,
      refused: { command: 'advance' },
    });
    expect(followLine(refused, 'json', { color: false })).not.toContain('\n');
    const yaml = followLine(refused, 'yaml', { color: false });
    expect(yaml.startsWith('---\n')).toBe(true);
    expect(YAML.parse(yaml.slice(4))).toMatchObject({ seq: 3, actor: 'mallory' });
    expect(followLine(refused, 'plain', { color: false }).split('\t')).toHaveLength(EVENT_COLUMNS.length);
    const rich = followLine(refused, 'rich', { color: false });
    expect(rich).toContain('COMMAND_REFUSED');
    expect(rich).toContain('mallory: advance refused');
    expect(rich).not.toContain('\x1b');
    expect(followLine(refused, 'rich', { color: true })).toContain('\x1b[31m');
  });

  it('never lets a message reach the terminal raw', () => {
    const sneaky = event(2, { message: 'x\x1b[2Jy\nz' });
    for (const format of ['plain', 'table', 'rich'] as const) {
      const line = followLine(sneaky, format, { color: false });
      expect(line).not.toContain('\x1b');
      expect(line).not.toContain('\n');
    }
  });
});

describe('eventsToPrint', () => {
  it('prints the unbroken run after the cursor while the plan runs, waiting for a late event', () => {
    // 2 was numbered before 3 but not written yet.
    const stored = [event(1), event(3), event(4)];
    expect(eventsToPrint(stored, 0, false)).toEqual({ print: [event(1)], cursor: 1 });
    expect(eventsToPrint(stored, 1, false)).toEqual({ print: [], cursor: 1 });
    const later = [event(2), event(3), event(4)];
    expect(eventsToPrint(later, 1, false)).toEqual({ print: later, cursor: 4 });
  });

  it('prints everything once the plan has ended, in sequence order', () => {
    const stored = [event(4), event(1), event(3)];
    expect(eventsToPrint(stored, 0, true)).toEqual({ print: [event(1), event(3), event(4)], cursor: 4 });
    expect(eventsToPrint([], 7, true)).toEqual({ print: [], cursor: 7 });
  });

  it('ignores what was printed already', () => {
    expect(eventsToPrint([event(0), event(1)], 0, false)).toEqual({ print: [event(1)], cursor: 1 });
  });
});
