/**
 * `agents tell "<prompt>"` (seed 001's TELL, issue 15): a plan of the engine's own `builtin/tell` action, whose
 * strategy, estimation and invariant actors are the model, made from a sentence. Everything that can be refused is
 * refused before anything is created: the prompt, the name, the model's configuration, the context paths.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadModelConfig, ModelConfigError } from '../../actors/model/config';
import { AUTOMATION_CHOICES } from '../../domain/lifecycle';
import type { AutomationLevel } from '../../domain/lifecycle';
import { checkPrompt, planNameFromPrompt, TELL_ACTION_NAME } from '../../domain/tell';
import { installTellAction } from '../catalog';
import { PlanClientError } from '../errors';
import { asCliDict } from '../render/plan-view';
import { MAX_CONTEXT_TOTAL_BYTES, addContextOptions, readContextOptions } from './plan-work';
import type { CliRuntime } from './runtime';
import { byOption, collect, formatOption, parseAutomation } from './runtime';

/** What a person must set, said the same way whether the variables are missing or wrong. */
const MODEL_VARIABLES =
  'set CLEVERAGENTS_MODEL_BASE_URL (an OpenAI-compatible API, e.g. https://api.openai.com/v1) and ' +
  'CLEVERAGENTS_MODEL (e.g. gpt-4o-mini), and CLEVERAGENTS_MODEL_API_KEY if the API needs a key, ' +
  'here and for the worker';

export function registerTellCommand(program: Command, cli: CliRuntime): void {
  const tell = program
    .command('tell')
    .description(
      `create a plan from a request in plain words and start it (the model plans it: ${TELL_ACTION_NAME})`,
    )
    .argument('<prompt>', 'what the plan should do, e.g. "add error handling to the API"')
    .requiredOption(
      '-p, --project <name[:alias][:ro]>',
      'target project, with an optional alias and :ro for read-only; repeatable',
      collect,
      [],
    )
    .addOption(
      new Option(
        '-a, --automation <level>',
        `automation level: ${AUTOMATION_CHOICES.join(' | ')} (default: the profile's, else review)`,
      ).argParser(parseAutomation),
    )
    .option('--profile <name>', 'automation profile')
    .option(
      '-n, --name <name>',
      'plan name (default: the first three words of the prompt, e.g. add_error_handling)',
    )
    .option('-t, --tag <tag>', 'tag; repeatable', collect, []);
  addContextOptions(tell)
    .addOption(byOption(cli.io))
    .addOption(formatOption())
    .action(async (rawPrompt: string, opts) => {
      const prompt = checkPrompt(rawPrompt);
      if (!prompt.ok) throw new PlanClientError('usage', prompt.error);
      let name = opts.name as string | undefined;
      if (name === undefined) {
        const made = planNameFromPrompt(prompt.prompt);
        if (!made.ok) throw new PlanClientError('usage', made.error);
        name = made.name;
      }
      requireModel(cli.io.env);
      const context = await readContextOptions(opts);
      const snapshot = await cli.withPlans(async (client) => {
        await installTellAction(client.catalog);
        return client.create({
          actionName: TELL_ACTION_NAME,
          projects: opts.project as string[],
          automationLevel: opts.automation as AutomationLevel | undefined,
          profileName: opts.profile as string | undefined,
          arguments: {},
          name,
          description: prompt.prompt,
          tags: opts.tag as string[],
          createdBy: opts.by as string,
          contextFiles: context.files,
          maxContextBytes: MAX_CONTEXT_TOTAL_BYTES,
        });
      });
      for (const note of context.skipped) cli.io.stderr(`${note}\n`);
      cli.show(asCliDict(snapshot), opts.format);
    });
}

/**
 * The model runs on the worker, but a plan whose actors are the model is pointless where nobody configured one:
 * the CLI's environment is the check a person can act on before anything starts. A worker without the model
 * parks the plan ERRORED in Strategize, naming the actors it has.
 */
function requireModel(env: NodeJS.ProcessEnv): void {
  try {
    if (loadModelConfig(env) !== null) return;
  } catch (err) {
    if (err instanceof ModelConfigError) {
      throw new PlanClientError(
        'usage',
        `agents tell needs the model actor: ${err.message}; ${MODEL_VARIABLES}`,
      );
    }
    throw err;
  }
  throw new PlanClientError(
    'usage',
    `agents tell needs the model actor, and no model is configured: ${MODEL_VARIABLES}`,
  );
}
