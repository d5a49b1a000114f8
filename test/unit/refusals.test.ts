import { buildProgram } from '../../client/cli/main';
import {
  MAX_REFUSAL_BY_CHARS,
  MAX_REFUSAL_REASON_CHARS,
  REFUSABLE_COMMANDS,
  UNKNOWN_REQUESTER,
  approvalSignalRequest,
  isRefusableCommand,
  parseRefusalMessage,
  refusalMessage,
  refusalOf,
  safeRequester,
  safeText,
} from '../../domain/refusals';
import { approveSignal } from '../../workflows/definitions';

describe('safeText', () => {
  it('turns control, format and separator characters into spaces and collapses them', () => {
    expect(safeText('a\x1b[31mred\x1b[0m\r\nline\u202eevil\u200b\u2028end\x7f\x9b!', 100)).toBe(
      'a [31mred [0m line evil end !',
    );
    expect(safeText('  tabs\tand\n\nnewlines  ', 100)).toBe('tabs and newlines');
  });

  it('cuts long text to the limit, ending in an ellipsis, without splitting a surrogate pair', () => {
    expect(safeText('x'.repeat(10), 10)).toBe('x'.repeat(10));
    expect(safeText('x'.repeat(11), 10)).toBe(`${'x'.repeat(9)}…`);
    const emoji = '😀'.repeat(20);
    const cut = safeText(emoji, 5);
    expect(Array.from(cut)).toEqual(['😀', '😀', '😀', '😀', '…']);
  });

  it('reads anything: non-strings become text, nothing becomes empty', () => {
    expect(safeText(undefined, 10)).toBe('');
    expect(safeText(null, 10)).toBe('');
    expect(safeText(42, 10)).toBe('42');
  });

  it('keeps a huge input bounded', () => {
    expect(Array.from(safeText('a'.repeat(1_000_000), MAX_REFUSAL_REASON_CHARS))).toHaveLength(
      MAX_REFUSAL_REASON_CHARS,
    );
  });
});

describe('safeRequester', () => {
  it('names nobody as unknown, and cuts a long name', () => {
    expect(safeRequester('')).toBe(UNKNOWN_REQUESTER);
    expect(safeRequester('  \n ')).toBe(UNKNOWN_REQUESTER);
    expect(safeRequester(undefined)).toBe(UNKNOWN_REQUESTER);
    expect(safeRequester('alice')).toBe('alice');
    expect(Array.from(safeRequester('b'.repeat(500)))).toHaveLength(MAX_REFUSAL_BY_CHARS);
  });
});

describe('refusalOf', () => {
  it('makes a refusal safe to record', () => {
    expect(refusalOf({ by: 'mal\x1blory', command: 'advance', reason: 'no\nway' })).toEqual({
      by: 'mal lory',
      command: 'advance',
      reason: 'no way',
    });
  });

  it('fills in who and why when they are missing', () => {
    expect(refusalOf({ command: 'cancel' })).toEqual({
      by: UNKNOWN_REQUESTER,
      command: 'cancel',
      reason: 'no reason given',
    });
  });

  it('answers null for anything that names no refusable command', () => {
    expect(refusalOf(null)).toBeNull();
    expect(refusalOf('advance')).toBeNull();
    expect(refusalOf({ by: 'a', command: 'delete', reason: 'x' })).toBeNull();
    expect(refusalOf({ by: 'a', command: ['advance'], reason: 'x' })).toBeNull();
  });

  it('knows every command of the CLI that a plan can refuse, and the Web UI signal', () => {
    const io = { stdout() {}, stderr() {}, env: {}, isTty: false };
    const plan = buildProgram(io).commands.find((c) => c.name() === 'plan');
    const planCommands = new Set(plan?.commands.map((c) => c.name()));
    // Each name is what `plan events` shows as the refused command: the one a person typed, or the signal's name.
    const unknown = REFUSABLE_COMMANDS.filter((c) => !planCommands.has(c) && c !== approveSignal.name);
    expect(unknown).toEqual([]);
    expect(REFUSABLE_COMMANDS).toContain(approveSignal.name);
    expect(REFUSABLE_COMMANDS).toEqual(
      expect.arrayContaining(['advance', 'retry', 'correct', 'cancel', 'amend']),
    );
    expect(isRefusableCommand('set-automation')).toBe(true);
    expect(isRefusableCommand('show')).toBe(false);
  });
});

describe('the refusal message', () => {
  it('round-trips the command and the reason', () => {
    const message = refusalMessage({ command: 'set-automation', reason: 'x refused: y' });
    expect(message).toBe('set-automation refused: x refused: y');
    expect(parseRefusalMessage(message)).toEqual({ command: 'set-automation', reason: 'x refused: y' });
  });

  it('answers null for messages that are not refusals', () => {
    expect(parseRefusalMessage(null)).toBeNull();
    expect(parseRefusalMessage('waiting for approval to enter EXECUTE')).toBeNull();
    expect(parseRefusalMessage('launch refused: no')).toBeNull();
    expect(parseRefusalMessage(' refused: no')).toBeNull();
  });
});

describe('approvalSignalRequest (the Web UI approve signal)', () => {
  it('takes {by, reason}, trimmed, and a one-element array as the UI may send it', () => {
    expect(approvalSignalRequest({ by: ' alice ', reason: 'looks good' })).toEqual({
      ok: true,
      by: 'alice',
      reason: 'looks good',
    });
    expect(approvalSignalRequest([{ by: 'bob' }])).toEqual({ ok: true, by: 'bob' });
  });

  it('makes the reason safe and drops an empty one', () => {
    expect(approvalSignalRequest({ by: 'bob', reason: 'ok\x1b[2J' })).toEqual({
      ok: true,
      by: 'bob',
      reason: 'ok [2J',
    });
    expect(approvalSignalRequest({ by: 'bob', reason: ' \n ' })).toEqual({ ok: true, by: 'bob' });
  });

  it('refuses, without throwing, a payload that does not say who approves', () => {
    for (const payload of [undefined, null, 'alice', 42, [], {}, { by: '' }, { by: 7 }, { reason: 'x' }]) {
      const judged = approvalSignalRequest(payload);
      expect(judged.ok).toBe(false);
      expect(judged.by).toBe(UNKNOWN_REQUESTER);
    }
  });

  it('refuses a name that would have to be altered to be printed safely', () => {
    const judged = approvalSignalRequest({ by: 'ali\x1bce' });
    expect(judged).toEqual({
      ok: false,
      by: 'ali ce',
      reason: expect.stringContaining('without control characters'),
    });
    expect(approvalSignalRequest({ by: 'x'.repeat(MAX_REFUSAL_BY_CHARS + 1) }).ok).toBe(false);
    expect(approvalSignalRequest({ by: 'x'.repeat(MAX_REFUSAL_BY_CHARS) }).ok).toBe(true);
  });
});
