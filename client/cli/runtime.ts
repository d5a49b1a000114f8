import { InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import YAML from 'yaml';
import { userInfo } from 'node:os';
import { AUTOMATION_CHOICES, parseAutomationLevel } from '../../domain/lifecycle';
import type { AutomationLevel } from '../../domain/lifecycle';
import { approverSchema } from '../../domain/schemas';
import { openStores } from '../catalog';
import type { Stores } from '../catalog';
import { loadClientConfig } from '../config';
import type { ClientConfig } from '../config';
import type { Tracing } from '../../lib/tracing';
import type * as TracingLib from '../../lib/tracing';
import type { PlanClient } from '../plans';
import type * as Plans from '../plans';
import { OUTPUT_FORMATS, renderDocument, renderRows } from '../render/format';
import type { Document, OutputFormat } from '../render/format';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal: decides colour and the spinner. */
  isTty: boolean;
  /**
   * Asks a yes/no question of the person at the terminal; absent when nobody can answer (stdin is not a
   * terminal), and then a command that needs a confirmation asks for --yes instead.
   */
  confirm?: (question: string) => Promise<boolean>;
}

/** The part of an ora spinner `plan watch` uses. */
export interface Spinner {
  text: string;
  clear(): void;
  render(): void;
  stop(): void;
}

/** What every command file gets: output helpers and on-demand connections (so `--help` needs no server). */
export interface CliRuntime {
  io: CliIo;
  /** Colour is on: stdout is a terminal and NO_COLOR is not set. */
  color: boolean;
  print(text: string): void;
  /** A started spinner on stderr, or null when stderr is not a terminal that can show one. */
  spinner(): Promise<Spinner | null>;
  show(doc: Document, format: OutputFormat): void;
  /** JSON or YAML of any value, key order kept. */
  showDocument(value: unknown, format: 'json' | 'yaml'): void;
  /** Colours for hand-drawn output (the rich tree); identity functions when not on a terminal. */
  style: { type: (text: string) => string; dim: (text: string) => string };
  showRows(rows: readonly Document[], columns: readonly string[], format: OutputFormat): void;
  withPlans<T>(run: (client: PlanClient) => Promise<T>): Promise<T>;
  /** Reads and catalog commands need only the database, not the Temporal server. */
  withStores<T>(run: (stores: Stores) => Promise<T>): Promise<T>;
  /** Sends the command's spans (ADR 0013) before the process exits; nothing to do when tracing is off. */
  finish(): Promise<void>;
}

export interface CliOptions {
  /**
   * The tracer to use instead of the one OTEL_EXPORTER_OTLP_* would make (tests pass one with an in-memory
   * exporter). Its owner shuts it down: `finish` only flushes it.
   */
  tracing?: Tracing;
}

export function createCliRuntime(io: CliIo, options: CliOptions = {}): CliRuntime {
  const color = io.isTty && io.env.NO_COLOR === undefined;
  // Started by the first command that talks to Temporal, when tracing is configured; shut down by finish().
  let ownTracing: Tracing | undefined;
  const tracingFor = (config: ClientConfig): Tracing | undefined => {
    if (options.tracing !== undefined || config.tracing === null) return options.tracing;
    if (ownTracing === undefined) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the SDK loads only when tracing is on
      const { otlpTraceExporter, startTracing } = require('../../lib/tracing') as typeof TracingLib;
      ownTracing = startTracing({
        serviceName: config.tracing.serviceName,
        exporter: otlpTraceExporter(config.tracing.tracesUrl),
      });
    }
    return ownTracing;
  };
  const print = (text: string) => io.stdout(text.endsWith('\n') ? text : `${text}\n`);
  const colors = pc.createColors(color);
  return {
    io,
    color,
    print,
    async spinner() {
      // Redrawing needs to know the terminal's width: a pseudo-terminal reporting 0 columns would make every
      // redraw erase lines without end, so such a "terminal" gets plain lines instead.
      if (!process.stderr.isTTY || !(process.stderr.columns > 0)) return null;
      // ora is an ES module: imported on demand, so commands that never spin never load it.
      const { default: ora } = await import('ora');
      return ora({ stream: process.stderr, discardStdin: false }).start();
    },
    show: (doc, format) => print(renderDocument(doc, format, { color })),
    showDocument: (value, format) =>
      print(format === 'json' ? JSON.stringify(value, null, 2) : YAML.stringify(value).trimEnd()),
    style: { type: colors.cyan, dim: colors.dim },
    showRows: (rows, columns, format) => print(renderRows(rows, columns, format, { color })),
    async withPlans(run) {
      const config = loadClientConfig(io.env);
      // Loaded here, not at the top: the Temporal client, its protobufs and the workflow code take about half a
      // second to load, and commands that read only the database never need them.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS project loads lazily by require
      const { connectPlanClient } = require('../plans') as typeof Plans;
      const tracer = tracingFor(config)?.tracer;
      const connected = await connectPlanClient(config, {
        taskQueue: config.taskQueue,
        ...(tracer === undefined ? {} : { tracer }),
      });
      try {
        return await run(connected.client);
      } finally {
        await connected.close();
      }
    },
    async withStores(run) {
      return run(openStores(loadClientConfig(io.env)));
    },
    async finish() {
      // A CLI process lives for one command: whatever the batch holds is sent now or never.
      if (ownTracing !== undefined) await ownTracing.shutdown();
      else await options.tracing?.flush();
    },
  };
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function parseAutomation(value: string): AutomationLevel {
  const level = parseAutomationLevel(value);
  if (level === undefined) {
    throw new InvalidArgumentError(`must be one of ${AUTOMATION_CHOICES.join(', ')}.`);
  }
  return level;
}

export function parseUpper<T extends string>(allowed: readonly T[]) {
  return (value: string): T => {
    const upper = value.toUpperCase();
    if (!(allowed as readonly string[]).includes(upper)) {
      throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}.`);
    }
    return upper as T;
  };
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number.');
  return n;
}

export function parseNonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number >= 0.');
  return n;
}

export function parseFraction(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new InvalidArgumentError('must be a number between 0.0 and 1.0.');
  }
  return n;
}

/** Every command that takes a plan names its argument so, and takes the same three forms (ADR 0020). */
export const PLAN_ID = '<plan-id>';
export const PLAN_ID_HELP =
  'plan id (ULID or plan-<ULID>), a unique prefix of it (6+ characters), or the plan name';

/** `-f` is `--format` everywhere except `action add`, where the issue gives `-f` to the file. */
export const formatOption = (options: { short?: boolean } = {}) =>
  new Option(options.short === false ? '--format <format>' : '-f, --format <format>', 'output format')
    .choices(OUTPUT_FORMATS)
    .default('rich' as OutputFormat);

export const byOption = (io: CliIo) =>
  new Option('--by <name>', 'who is acting (recorded in the plan history)').default(
    io.env.AGENTS_USER ?? safeUserName(),
    '$AGENTS_USER or your login name',
  );

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** `--approvers alice,bob,carol`: each name checked as the approval policy compares them (domain/schemas.ts). */
export function parseApprovers(value: string): string[] {
  const names = value.split(',').map((name) => name.trim());
  for (const name of names) {
    const checked = approverSchema.safeParse(name);
    if (!checked.success) {
      throw new InvalidArgumentError(
        `approver ${JSON.stringify(name)} ${checked.error.issues[0]?.message ?? 'is not a name'}.`,
      );
    }
  }
  return names;
}
