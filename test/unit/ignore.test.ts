import { IGNORED_DIRECTORIES, ignoreList, isIgnored } from '../../domain/ignore';

describe('the ignore list', () => {
  const engine = ignoreList();

  it.each([
    '.git/config',
    'vendor/lib/.git',
    'node_modules/left-pad/index.js',
    'packages/app/node_modules/x/y.js',
    'dist/index.js',
    'build/out.o',
    'coverage/lcov.info',
    '.cache/x',
    'src/__pycache__/m.cpython-312.pyc',
    'target/debug/app',
  ])("leaves out %s by the engine's own list", (path) => {
    expect(isIgnored(engine, path)).toBe(true);
  });

  it.each(['src/index.ts', 'build', 'scripts/dist.sh', 'docs/build.md', 'node_modules.txt', '.gitignore'])(
    'keeps %s: only directories of those names are left out, and only whole names',
    (path) => {
      expect(isIgnored(engine, path)).toBe(false);
    },
  );

  it('names the engine directories the issue asks for', () => {
    expect(IGNORED_DIRECTORIES).toEqual(
      expect.arrayContaining([
        'node_modules',
        'dist',
        'build',
        'coverage',
        '.cache',
        '__pycache__',
        'target',
      ]),
    );
  });

  it("adds an action's globs the way .gitignore reads them", () => {
    const list = ignoreList(['*.log', 'generated/**', 'docs/*.pdf', 'tmp/', './snapshots']);
    // No slash: a name at any depth, dotfiles included.
    expect(isIgnored(list, 'app.log')).toBe(true);
    expect(isIgnored(list, 'deep/er/.hidden.log')).toBe(true);
    // A slash: the path from the project root.
    expect(isIgnored(list, 'generated/api/client.ts')).toBe(true);
    expect(isIgnored(list, 'src/generated/x.ts')).toBe(false);
    expect(isIgnored(list, 'docs/manual.pdf')).toBe(true);
    expect(isIgnored(list, 'docs/sub/manual.pdf')).toBe(false);
    // A trailing slash: directories only.
    expect(isIgnored(list, 'tmp/scratch.txt')).toBe(true);
    expect(isIgnored(list, 'a/tmp/scratch.txt')).toBe(true);
    expect(isIgnored(list, 'tmp')).toBe(false);
    // A leading ./ is the root.
    expect(isIgnored(list, 'snapshots/x.snap')).toBe(true);
    // The engine's list still holds.
    expect(isIgnored(list, 'node_modules/x.js')).toBe(true);
    expect(isIgnored(list, 'src/app.ts')).toBe(false);
  });

  it('reads a leading ! as a character: an action can leave files out, never bring back what the engine leaves out', () => {
    const list = ignoreList(['!node_modules/**', '!src/**']);
    expect(isIgnored(list, 'node_modules/x.js')).toBe(true);
    expect(isIgnored(list, 'src/app.ts')).toBe(false);
    expect(isIgnored(list, 'README.md')).toBe(false);
    expect(isIgnored(list, '!src/app.ts')).toBe(true);
  });

  it('asks about directories and files separately, as a walk does', () => {
    const list = ignoreList(['gen']);
    expect(list.directory('gen')).toBe(true);
    expect(list.file('gen')).toBe(true);
    expect(list.directory('node_modules')).toBe(true);
    expect(list.file('node_modules')).toBe(false);
    expect(list.file('.git')).toBe(true);
  });
});
