import type { Command } from 'commander';
import { projectCliDict, projectListRow, PROJECT_LIST_COLUMNS } from '../render/catalog-view';
import { getOrFail, removeOrFail, validateProject } from '../catalog';
import type { CliRuntime } from './runtime';
import { formatOption } from './runtime';

export function registerProjectCommands(program: Command, cli: CliRuntime): void {
  const project = program.command('project').description('manage the projects plans target');

  project
    .command('add')
    .description(
      'register a project: its path is the root Apply writes under (replaces one of the same name)',
    )
    .argument('<name>', 'namespaced project name, e.g. acme/api')
    .requiredOption('--path <dir>', 'the project root directory (must exist)')
    .option('-d, --description <text>', 'what the project is')
    .addOption(formatOption())
    .action(async (name: string, opts) => {
      const value = validateProject({
        name,
        path: opts.path as string,
        ...(opts.description === undefined ? {} : { description: opts.description as string }),
      });
      const stored = await cli.withStores(async ({ catalog }) => {
        await catalog.putProject(value);
        return getOrFail('project', value.name, (n) => catalog.getProject(n));
      });
      cli.show(projectCliDict(stored), opts.format);
    });

  project
    .command('list')
    .description('list projects by name')
    .addOption(formatOption())
    .action(async (opts) => {
      const projects = await cli.withStores(({ catalog }) => catalog.listProjects());
      cli.showRows(projects.map(projectListRow), PROJECT_LIST_COLUMNS, opts.format);
    });

  project
    .command('show')
    .description('show one project')
    .argument('<name>', 'namespaced project name')
    .addOption(formatOption())
    .action(async (name: string, opts) => {
      const stored = await cli.withStores(({ catalog }) =>
        getOrFail('project', name, (n) => catalog.getProject(n)),
      );
      cli.show(projectCliDict(stored), opts.format);
    });

  project
    .command('remove')
    .description('remove a project (existing plans keep their links)')
    .argument('<name>', 'namespaced project name')
    .action(async (name: string) => {
      await cli.withStores(({ catalog }) => removeOrFail('project', name, (n) => catalog.removeProject(n)));
      cli.print(`removed project ${name.trim().toLowerCase()}`);
    });
}
