import type { Command } from 'commander';
import { actionCliDict, actionListRow, ACTION_LIST_COLUMNS } from '../../domain/catalog-view';
import { addAction, getOrFail, removeOrFail } from '../catalog';
import type { CliContext } from './context';
import { formatOption } from './context';

export function registerActionCommands(program: Command, ctx: CliContext): void {
  const action = program.command('action').description('manage the actions plans are made from');

  action
    .command('add')
    .description('add an action from a YAML or JSON file (replaces one of the same name)')
    .requiredOption('-f, --file <file>', 'action file (.yaml, .yml or .json)')
    .addOption(formatOption({ short: false }))
    .action(async (opts) => {
      const { action: added } = await ctx.withStores(({ catalog }) =>
        addAction(catalog, opts.file as string),
      );
      ctx.show(actionCliDict(added), opts.format);
    });

  action
    .command('list')
    .description('list actions by name')
    .addOption(formatOption())
    .action(async (opts) => {
      const actions = await ctx.withStores(({ catalog }) => catalog.listActions());
      ctx.showRows(actions.map(actionListRow), ACTION_LIST_COLUMNS, opts.format);
    });

  action
    .command('show')
    .description('show one action, in the same shape `action add` reads')
    .argument('<name>', 'namespaced action name')
    .addOption(formatOption())
    .action(async (name: string, opts) => {
      const stored = await ctx.withStores(({ catalog }) =>
        getOrFail('action', name, (n) => catalog.getAction(n)),
      );
      ctx.show(actionCliDict(stored.value), opts.format);
    });

  action
    .command('remove')
    .description('remove an action (plans made from it keep running)')
    .argument('<name>', 'namespaced action name')
    .action(async (name: string) => {
      await ctx.withStores(({ catalog }) => removeOrFail('action', name, (n) => catalog.removeAction(n)));
      ctx.print(`removed action ${name.trim().toLowerCase()}`);
    });
}
