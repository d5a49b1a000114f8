import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { userInfo } from 'node:os';
import { planCliDict, planListRow, PLAN_LIST_COLUMNS } from '../../domain/cli-view';
import { AUTOMATION_CHOICES, PHASES, PROCESSING_STATES, parseAutomationLevel } from '../../domain/lifecycle';
import type { Phase, ProcessingState } from '../../domain/lifecycle';
import { parseArgumentPairs } from '../../domain/plan';
import { loadClientConfig } from '../config';
import { EXIT_CODES, PlanClientError } from '../errors';
import { disconnectSharedPrismaClients } from '../../storage/prisma';
import { connectPlanClient } from '../plans';
import type { PlanClient } from '../plans';
import { OUTPUT_FORMATS, renderDocument, renderRows } from '../render/format';
import type { OutputFormat } from '../render/format';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal: decides colour and the default format's decoration. */
  isTty: boolean;
}

const defaultIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  isTty: Boolean(process.stdout.isTTY),
});

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseAutomation(value: string) {
  const level = parseAutomationLevel(value);
  if (level === undefined) {
    throw new InvalidArgumentError(`must be one of ${AUTOMATION_CHOICES.join(', ')}.`);
  }
  return level;
}

function parseUpper<T extends string>(allowed: readonly T[]) {
  return (value: string): T => {
    const upper = value.toUpperCase();
    if (!(allowed as readonly string[]).includes(upper)) {
      throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}.`);
    }
    return upper as T;
  };
}

function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number.');
  return n;
}

const formatOption = () =>
  new Option('-f, --format <format>', 'output format')
    .choices(OUTPUT_FORMATS)
    .default('rich' as OutputFormat);

const byOption = (io: CliIo) =>
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

/** Builds the `agents` program. Every command connects on demand, so `--help` needs no server. */
export function buildProgram(io: CliIo): Command {
  const color = io.isTty && io.env.NO_COLOR === undefined;
  const print = (text: string) => io.stdout(text.endsWith('\n') ? text : `${text}\n`);
  const withClient = async <T>(run: (client: PlanClient) => Promise<T>): Promise<T> => {
    const config = loadClientConfig(io.env);
    const connected = await connectPlanClient(config, { taskQueue: config.taskQueue });
    try {
      return await run(connected.client);
    } finally {
      await connected.close();
    }
  };
  const show = (doc: Record<string, unknown>, format: OutputFormat) =>
    print(renderDocument(doc, format, { color }));

  const program = new Command('agents')
    .description('Drive CleverAgents plans: Strategize -> Execute -> Apply -> Applied, on Temporal.')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();

  const plan = program.command('plan').description('create, inspect and advance plans');

  plan
    .command('use')
    .description('create a plan from an action and start it')
    .argument('<action>', 'namespaced action name, e.g. local/code-review')
    .requiredOption('-p, --project <name>', 'target project (namespace/name); repeatable', collect, [])
    .addOption(
      new Option('-a, --automation <level>', `automation level: ${AUTOMATION_CHOICES.join(' | ')}`)
        .argParser(parseAutomation)
        .default('MANUAL', 'manual'),
    )
    .option('--arg <key=value>', 'action argument; repeatable', collect, [])
    .option('-n, --name <name>', 'plan name (default: "<action> on <projects>")')
    .option('-d, --description <text>', 'what the plan is for')
    .addOption(byOption(io))
    .addOption(formatOption())
    .action(async (action: string, opts) => {
      const args = parseArgumentPairs(opts.arg as string[]);
      if (!args.ok) throw new PlanClientError('usage', args.error);
      const snapshot = await withClient((client) =>
        client.create({
          actionName: action,
          projects: opts.project as string[],
          automationLevel: opts.automation,
          arguments: args.arguments,
          argumentsOrder: args.order,
          name: opts.name as string | undefined,
          description: opts.description as string | undefined,
          createdBy: opts.by as string,
        }),
      );
      show(planCliDict(snapshot), opts.format);
    });

  plan
    .command('list')
    .description('list plans, newest first')
    .addOption(
      new Option('--phase <phase>', `only plans in this phase (${PHASES.join(', ')})`).argParser(
        parseUpper(PHASES),
      ),
    )
    .addOption(
      new Option('--state <state>', `only plans in this state (${PROCESSING_STATES.join(', ')})`).argParser(
        parseUpper(PROCESSING_STATES),
      ),
    )
    .option('--action <name>', 'only plans of this action')
    .option('--project <name>', 'only plans targeting this project')
    .option('--limit <n>', 'at most this many plans', parsePositiveInt, 50)
    .addOption(formatOption())
    .action(async (opts) => {
      const plans = await withClient((client) =>
        client.list({
          phase: opts.phase as Phase | undefined,
          state: opts.state as ProcessingState | undefined,
          actionName: opts.action as string | undefined,
          projectName: opts.project as string | undefined,
          limit: opts.limit as number,
        }),
      );
      print(renderRows(plans.map(planListRow), PLAN_LIST_COLUMNS, opts.format, { color }));
    });

  plan
    .command('show')
    .description('show one plan')
    .argument('<plan-id>', 'plan id (ULID or plan-<ULID>)')
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const view = await withClient((client) => client.get(id));
      show(planCliDict(view), opts.format);
    });

  plan
    .command('advance')
    .description('approve the move to the next phase of a plan waiting at a gate')
    .argument('<plan-id>', 'plan id (ULID or plan-<ULID>)')
    .addOption(
      new Option(
        '--expect <phase>',
        'refuse unless the plan is in this phase (guards against stale commands)',
      ).argParser(parseUpper(PHASES)),
    )
    .option('-r, --reason <text>', 'why (recorded as a user_intervention decision)')
    .addOption(byOption(io))
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const snapshot = await withClient((client) =>
        client.advance(id, {
          by: opts.by as string,
          ...(opts.reason === undefined ? {} : { reason: opts.reason as string }),
          ...(opts.expect === undefined ? {} : { expectedPhase: opts.expect as Phase }),
        }),
      );
      show(planCliDict(snapshot), opts.format);
    });

  plan
    .command('retry')
    .description('run an ERRORED phase again')
    .argument('<plan-id>', 'plan id (ULID or plan-<ULID>)')
    .option('-r, --reason <text>', 'why (recorded as a user_intervention decision)')
    .addOption(byOption(io))
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const snapshot = await withClient((client) =>
        client.retry(id, {
          by: opts.by as string,
          ...(opts.reason === undefined ? {} : { reason: opts.reason as string }),
        }),
      );
      show(planCliDict(snapshot), opts.format);
    });

  plan
    .command('cancel')
    .description('cancel a running plan (it ends CANCELLED)')
    .argument('<plan-id>', 'plan id (ULID or plan-<ULID>)')
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const record = await withClient((client) => client.cancel(id));
      show(planCliDict(record), opts.format);
    });

  plan
    .command('wait')
    .description('wait until a plan needs a person (a gate or an error) or has finished')
    .argument('<plan-id>', 'plan id (ULID or plan-<ULID>)')
    .option('--timeout <seconds>', 'give up after this many seconds', parsePositiveInt, 60)
    .addOption(formatOption())
    .action(async (id: string, opts) => {
      const view = await withClient((client) => client.waitForInput(id, (opts.timeout as number) * 1000));
      show(planCliDict(view), opts.format);
    });

  return program;
}

/** Runs the CLI and returns its exit code; never throws. */
export async function runCli(argv: readonly string[], io: CliIo = defaultIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_CODES.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every usage mistake (unknown option, bad value) exits 2.
      return err.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    }
    if (err instanceof PlanClientError) {
      io.stderr(`error: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_CODES.failure;
  }
}

/** The process entry: run, release the database, exit with the command's code. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const code = await runCli(argv);
  await disconnectSharedPrismaClients().catch(() => undefined);
  process.exitCode = code;
}

if (require.main === module) {
  void main();
}
