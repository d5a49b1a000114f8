import type { Command } from 'commander';
import { Option } from 'commander';
import { profileCliDict, profileListRow, PROFILE_LIST_COLUMNS } from '../render/catalog-view';
import { AUTOMATION_CHOICES } from '../../domain/lifecycle';
import { MAX_SUBPLAN_DEPTH, MAX_SUBPLAN_DEPTH_LIMIT } from '../../domain/subplans';
import { ON_TIMEOUT_CHOICES } from '../../domain/gates';
import { getOrFail, parseName, removeOrFail, validateProfile } from '../catalog';
import type { CliRuntime } from './runtime';
import {
  formatOption,
  parseAutomation,
  parseFraction,
  parseApprovers,
  parseNonNegativeInt,
  parsePositiveInt,
} from './runtime';

export function registerProfileCommands(program: Command, cli: CliRuntime): void {
  const profile = program
    .command('profile')
    .description('manage automation profiles (a plan freezes its profile at creation)');

  profile
    .command('add')
    .description(
      'add an automation profile (replaces one of the same name; existing plans keep their snapshot)',
    )
    .argument('<name>', 'namespaced profile name, e.g. team/careful')
    .addOption(
      new Option('-a, --automation <level>', `automation level: ${AUTOMATION_CHOICES.join(' | ')}`)
        .argParser(parseAutomation)
        .makeOptionMandatory(),
    )
    .option('--min-confidence <0..1>', 'minimum decision confidence for automatic advance', parseFraction)
    .option('--max-retries <n>', 'maximum automatic retries of a failed Execute step', parseNonNegativeInt)
    .option('--approval-timeout <seconds>', 'how long a gate waits for approval', parsePositiveInt)
    .option(
      '--max-subplan-depth <n>',
      `how many levels of subplans may hang below a plan (0 = none; default ${MAX_SUBPLAN_DEPTH}, at most ${MAX_SUBPLAN_DEPTH_LIMIT})`,
      parseNonNegativeInt,
    )
    .addOption(
      new Option(
        '--on-timeout <what>',
        'what an expired gate does: cancel the plan, or remind and keep waiting',
      ).choices(ON_TIMEOUT_CHOICES),
    )
    .option(
      '--approvers <names>',
      'comma-separated people who may approve a gate (default: anyone)',
      parseApprovers,
    )
    .option(
      '--required-approvals <n>',
      'how many distinct approvers a gate needs (default 1)',
      parsePositiveInt,
    )
    .option('-d, --description <text>', 'what the profile is for')
    .addOption(formatOption())
    .action(async (name: string, opts) => {
      const value = validateProfile({
        name: parseName('profile', name),
        automationLevel: opts.automation,
        ...(opts.minConfidence === undefined ? {} : { minDecisionConfidence: opts.minConfidence }),
        ...(opts.maxRetries === undefined ? {} : { maxAutoRetries: opts.maxRetries }),
        ...(opts.approvalTimeout === undefined ? {} : { approvalTimeoutSeconds: opts.approvalTimeout }),
        ...(opts.maxSubplanDepth === undefined ? {} : { maxSubplanDepth: opts.maxSubplanDepth }),
        ...(opts.onTimeout === undefined ? {} : { onTimeout: opts.onTimeout }),
        ...(opts.approvers === undefined ? {} : { approvers: opts.approvers }),
        ...(opts.requiredApprovals === undefined ? {} : { requiredApprovals: opts.requiredApprovals }),
        ...(opts.description === undefined ? {} : { description: opts.description }),
      });
      const stored = await cli.withStores(async ({ catalog }) => {
        await catalog.putProfile(value);
        return getOrFail('profile', value.name, (n) => catalog.getProfile(n));
      });
      cli.show(profileCliDict(stored), opts.format);
    });

  profile
    .command('list')
    .description('list profiles by name')
    .addOption(formatOption())
    .action(async (opts) => {
      const profiles = await cli.withStores(({ catalog }) => catalog.listProfiles());
      cli.showRows(profiles.map(profileListRow), PROFILE_LIST_COLUMNS, opts.format);
    });

  profile
    .command('show')
    .description('show one profile')
    .argument('<name>', 'namespaced profile name')
    .addOption(formatOption())
    .action(async (name: string, opts) => {
      const stored = await cli.withStores(({ catalog }) =>
        getOrFail('profile', name, (n) => catalog.getProfile(n)),
      );
      cli.show(profileCliDict(stored), opts.format);
    });

  profile
    .command('remove')
    .description('remove a profile (plans keep their frozen snapshot)')
    .argument('<name>', 'namespaced profile name')
    .action(async (name: string) => {
      await cli.withStores(({ catalog }) => removeOrFail('profile', name, (n) => catalog.removeProfile(n)));
      cli.print(`removed profile ${name.trim().toLowerCase()}`);
    });
}
