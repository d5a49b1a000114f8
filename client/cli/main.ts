import { createInterface } from 'node:readline/promises';
import { Command, CommanderError } from 'commander';
import {
  DecisionNotFoundError,
  PlanNotFoundError,
  describeOutdatedSchema,
  describeUnreachableDatabase,
} from '../../storage/errors';
import { DEFAULT_DATABASE_URL } from '../../storage/sqlite';
import { disconnectSharedPrismaClients } from '../../storage/prisma';
import { EXIT_CODES, PlanClientError } from '../errors';
import { registerActionCommands } from './action';
import { createCliRuntime } from './runtime';
import type { CliIo, CliOptions, CliRuntime } from './runtime';
import { registerInboxCommand } from './inbox';
import { registerInvariantCommands } from './invariant';
import { registerPlanCommands } from './plan';
import { registerProfileCommands } from './profile';
import { registerProjectCommands } from './project';
import { registerTellCommand } from './tell';

export type { CliIo } from './runtime';

const defaultIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  isTty: Boolean(process.stdout.isTTY),
  ...(process.stdin.isTTY ? { confirm: askOnTerminal } : {}),
});

async function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/**
 * Builds the `agents` program: one file per noun, all sharing one context. Subcommands inherit exitOverride and
 * the output streams, so a usage mistake anywhere exits 2 instead of calling process.exit.
 */
export function buildProgram(io: CliIo, cli: CliRuntime = createCliRuntime(io)): Command {
  const program = new Command('agents')
    .description('Drive CleverAgents plans: Strategize -> Execute -> Apply -> Applied, on Temporal.')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();
  registerPlanCommands(program, cli);
  registerTellCommand(program, cli);
  registerActionCommands(program, cli);
  registerProjectCommands(program, cli);
  registerProfileCommands(program, cli);
  registerInvariantCommands(program, cli);
  registerInboxCommand(program, cli);
  return program;
}

/** Runs the CLI and returns its exit code; never throws. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = defaultIo(),
  options: CliOptions = {},
): Promise<number> {
  const cli = createCliRuntime(io, options);
  const program = buildProgram(io, cli);
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
    if (err instanceof DecisionNotFoundError || err instanceof PlanNotFoundError) {
      io.stderr(`error: ${err.message}\n`);
      return EXIT_CODES.notFound;
    }
    const outdated = describeOutdatedSchema(err);
    if (outdated !== null) {
      io.stderr(`error: ${outdated}\n`);
      return EXIT_CODES.unavailable;
    }
    const unreachable = describeUnreachableDatabase(err, io.env.DATABASE_URL || DEFAULT_DATABASE_URL);
    if (unreachable !== null) {
      io.stderr(`error: ${unreachable}\n`);
      return EXIT_CODES.unavailable;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_CODES.failure;
  } finally {
    // Before the process exits, not in the background: spans still batched would be lost. A collector that does not
    // answer costs the exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT), never the command's result.
    await cli.finish().catch(() => undefined);
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
