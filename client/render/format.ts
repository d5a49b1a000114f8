import Table from 'cli-table3';
import pc from 'picocolors';
import YAML from 'yaml';

export const OUTPUT_FORMATS = ['json', 'yaml', 'plain', 'table', 'rich'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface RenderOptions {
  /** Colour only when writing to a terminal (and NO_COLOR is unset); pipes get plain text. */
  color: boolean;
}

export type Document = Record<string, unknown>;

type Colors = ReturnType<typeof pc.createColors>;

const STATE_COLORS: Record<string, keyof Colors> = {
  COMPLETE: 'green',
  APPLIED: 'green',
  PROCESSING: 'cyan',
  QUEUED: 'yellow',
  ERRORED: 'red',
  CANCELLED: 'gray',
};

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function paint(colors: Colors, value: unknown): string {
  const text = scalar(value);
  const colorName = typeof value === 'string' ? STATE_COLORS[value] : undefined;
  const fn = colorName === undefined ? undefined : colors[colorName];
  return typeof fn === 'function' ? (fn as (s: string) => string)(text) : text;
}

/** Renders one object whose key order is meaningful (it is kept in every format). */
export function renderDocument(doc: Document, format: OutputFormat, options: RenderOptions): string {
  const colors = pc.createColors(options.color);
  switch (format) {
    case 'json':
      return JSON.stringify(doc, null, 2);
    case 'yaml':
      return YAML.stringify(doc).trimEnd();
    case 'plain':
      return Object.entries(doc)
        .map(([k, v]) => `${k}: ${scalar(v)}`)
        .join('\n');
    case 'table': {
      const table = new Table({ head: ['field', 'value'], style: { head: [], border: [] } });
      for (const [k, v] of Object.entries(doc)) table.push([k, scalar(v)]);
      return table.toString();
    }
    case 'rich': {
      const width = Math.max(...Object.keys(doc).map((k) => k.length));
      return Object.entries(doc)
        .map(([k, v]) => `${colors.bold(k.padEnd(width))}  ${paint(colors, v)}`)
        .join('\n');
    }
  }
}

/** Renders a list of objects with the given columns (json/yaml keep every field). */
export function renderRows(
  rows: readonly Document[],
  columns: readonly string[],
  format: OutputFormat,
  options: RenderOptions,
): string {
  const colors = pc.createColors(options.color);
  switch (format) {
    case 'json':
      return JSON.stringify(rows, null, 2);
    case 'yaml':
      return rows.length === 0 ? '[]' : YAML.stringify(rows).trimEnd();
    case 'plain':
      // Tab-separated, no header: made for cut/awk.
      return rows.map((row) => columns.map((c) => scalar(row[c])).join('\t')).join('\n');
    case 'table':
    case 'rich': {
      if (rows.length === 0) return format === 'rich' ? colors.dim('(none)') : '(none)';
      const table = new Table({
        head: columns.map((c) => (format === 'rich' ? colors.bold(c) : c)),
        style: { head: [], border: [] },
      });
      for (const row of rows) {
        table.push(columns.map((c) => (format === 'rich' ? paint(colors, row[c]) : scalar(row[c]))));
      }
      return table.toString();
    }
  }
}
