/**
 * A plan's event log as `agents plan events` shows it: one row per event (seq, time, type, phase, state, actor,
 * message), and for a refused command its command and reason apart (ADR 0021). What people typed reaches the
 * log (a reason, an amendment's instructions, a name), so every human format shows it with its control characters
 * made visible; JSON and YAML quote them anyway.
 */
import pc from 'picocolors';
import YAML from 'yaml';
import { parseRefusalMessage } from '../../domain/refusals';
import type { PlanEventRecord } from '../../storage/types';
import { escapeControls } from './diff';
import type { Document, OutputFormat } from './format';

export const EVENT_COLUMNS = ['seq', 'time', 'type', 'phase', 'state', 'actor', 'message'] as const;

/**
 * One event as a row. `human`: for plain, table and rich, where a message could otherwise move the cursor or
 * recolour the terminal; JSON and YAML get the stored text, quoted by their own rules.
 */
export function eventRow(event: PlanEventRecord, options: { human: boolean }): Document {
  const text = (value: string) => (options.human ? escapeControls(value) : value);
  const refusal = event.type === 'COMMAND_REFUSED' ? parseRefusalMessage(event.message) : null;
  return {
    seq: event.seq,
    time: event.at,
    type: event.type,
    phase: event.phase,
    state: event.state,
    actor: text(event.recordedBy),
    message: event.message === null ? null : text(event.message),
    ...(refusal === null || options.human
      ? {}
      : { refused: { command: refusal.command, reason: refusal.reason } }),
  };
}

export function isHumanFormat(format: OutputFormat): boolean {
  return format !== 'json' && format !== 'yaml';
}

/**
 * One event as `--follow` prints it, on its own, the moment it is seen: a JSON object on one line (JSON Lines), a
 * YAML document, a tab-separated line (plain) or a line of aligned fields (table, rich).
 */
export function followLine(
  event: PlanEventRecord,
  format: OutputFormat,
  options: { color: boolean },
): string {
  const row = eventRow(event, { human: isHumanFormat(format) });
  switch (format) {
    case 'json':
      return JSON.stringify(row);
    case 'yaml':
      return `---\n${YAML.stringify(row).trimEnd()}`;
    case 'plain':
      return EVENT_COLUMNS.map((c) => scalar(row[c])).join('\t');
    case 'table':
    case 'rich': {
      const colors = pc.createColors(format === 'rich' && options.color);
      const type = String(row.type).padEnd(18);
      const painted =
        event.type === 'COMMAND_REFUSED'
          ? colors.red(type)
          : event.type === 'PLAN_APPLIED'
            ? colors.green(type)
            : colors.cyan(type);
      const where = `${String(row.phase)} ${String(row.state)}`.padEnd(22);
      return (
        `${String(row.seq).padStart(4)}  ${colors.dim(String(row.time))}  ${painted} ${where} ` +
        `${String(row.actor)}${row.message === null ? '' : `: ${String(row.message)}`}`
      );
    }
  }
}

function scalar(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/**
 * What a follower prints next, from the events stored after its cursor (in sequence order). Numbers are handed
 * out in order but written in parallel (a refusal may land before the state change numbered just before it), so
 * while the plan runs only the unbroken run after the cursor is printed: a late event is never skipped. Once the
 * plan has ended (`final`), nothing more is coming and everything is printed.
 */
export function eventsToPrint(
  stored: readonly PlanEventRecord[],
  cursor: number,
  final: boolean,
): { print: PlanEventRecord[]; cursor: number } {
  const after = stored.filter((e) => e.seq > cursor).sort((a, b) => a.seq - b.seq);
  if (final) return { print: after, cursor: after.at(-1)?.seq ?? cursor };
  const print: PlanEventRecord[] = [];
  let next = cursor + 1;
  for (const event of after) {
    if (event.seq !== next) break;
    print.push(event);
    next += 1;
  }
  return { print, cursor: next - 1 };
}
