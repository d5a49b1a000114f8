import { checkRelativePath, namesGitDirectory } from '../../domain/changeset';

describe('checkRelativePath', () => {
  it.each([
    'src/a.ts',
    'README.md',
    '.gitignore',
    '.github/workflows/ci.yml',
    'docs/.gitattributes',
    '.gitmodules',
    'git/notes.md',
    'vendor/git~10/x',
    'git~1x',
    'a.git',
    '.git-blame-ignore-revs',
    'docs/日本語.md',
  ])('accepts %j', (relative) => {
    expect(checkRelativePath(relative)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['/etc/passwd', /is absolute/],
    ['C:/x', /is absolute/],
    ['a/../b', /"\.\." component/],
    ['a\\b', /backslash/],
    ['a//b', /empty or "\." component/],
    ['./a', /empty or "\." component/],
    ['a\0b', /NUL/],
  ])('refuses %j', (relative, reason) => {
    expect(checkRelativePath(relative)).toMatch(reason);
  });

  // Every spelling below opens git's directory on some filesystem a project lives on (see namesGitDirectory).
  it.each([
    '.git',
    '.git/config',
    '.GIT/config',
    '.Git/hooks/pre-commit',
    '.git./hooks/x',
    '.git /hooks/x',
    '.git. . ./HEAD',
    'git~1/config',
    'GIT~1/config',
    'Git~1./config',
    '.git::$INDEX_ALLOCATION/config',
    '.git:stream',
    '.g\u200cit/config',
    '\ufeff.GIT/config',
    'vendor/lib/.git',
    'vendor/lib/.git/config',
    'deep/er/GIT~1',
  ])('refuses %j, a name for .git', (relative) => {
    expect(checkRelativePath(relative)).toMatch(
      /that names git's directory "\.git"; changes never touch it$/,
    );
  });

  it('names the offending component in its reason', () => {
    expect(checkRelativePath('src/.GIT./hooks/x')).toBe(
      'the path "src/.GIT./hooks/x" has a component ".GIT." that names git\'s directory ".git"; ' +
        'changes never touch it',
    );
  });
});

describe('namesGitDirectory', () => {
  it('is the one rule for a single component', () => {
    expect(namesGitDirectory('.git')).toBe(true);
    expect(namesGitDirectory('GIT~1 .')).toBe(true);
    expect(namesGitDirectory('git~2')).toBe(false);
    expect(namesGitDirectory('.gitx')).toBe(false);
    expect(namesGitDirectory('x.git')).toBe(false);
    expect(namesGitDirectory('.git\u200dx')).toBe(false);
  });
});
