import type { Command } from 'commander';
import { actionCliDict, actionListRow, ACTION_LIST_COLUMNS } from '../render/catalog-view';
import { addAction, getOrFail, removeOrFail } from '../catalog';
import type { CliRuntime } from './runtime';
import { formatOption } from './runtime';

export function registerActionCommands(program: Command, cli: CliRuntime): void {
  const action = program.command('action').description('manage the actions plans are made from');

  action
    .command('add')
    .description('add an action from a YAML or JSON file (replaces one of the same name)')
    .requiredOption('-f, --file <file>', 'action file (.yaml, .yml or .json)')
    .addOption(formatOption({ short: false }))
    .action(async (opts) => {
      const { action: added } = await cli.withStores(({ catalog }) =>
        addAction(catalog, opts.file as string),
      );
      cli.show(actionCliDict(added), opts.format);
    });

  action
    .command('list')
    .description('list actions by name')
    .addOption(formatOption())
    .action(async (opts) => {
      const actions = await cli.withStores(({ catalog }) => catalog.listActions());
      cli.showRows(actions.map(actionListRow), ACTION_LIST_COLUMNS, opts.format);
    });

  action
    .command('show')
    .description('show one action, in the same shape `action add` reads')
    .argument('<name>', 'namespaced action name')
    .addOption(formatOption())
    .action(async (name: string, opts) => {
      const stored = await cli.withStores(({ catalog }) =>
        getOrFail('action', name, (n) => catalog.getAction(n)),
      );
      cli.show(actionCliDict(stored.value), opts.format);
    });

  action
    .command('remove')
    .description('remove an action (plans made from it keep running)')
    .argument('<name>', 'namespaced action name')
    .action(async (name: string) => {
      await cli.withStores(({ catalog }) => removeOrFail('action', name, (n) => catalog.removeAction(n)));
      cli.print(`removed action ${name.trim().toLowerCase()}`);
    });
}
