import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'storage/generated/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Workflow code is replayed deterministically inside Temporal's sandbox. An allow-list, not a deny-list: a new
    // folder or package cannot slip in. Allowed: the workflow SDK (and its deterministic base @temporalio/common,
    // for defineSearchAttributeKey, which the workflow package does not re-export), sibling workflow modules, the
    // pure domain, and the activities by type only (proxyActivities needs their signatures).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(?!@temporalio/workflow$|@temporalio/common$|\\./[^/]+$|\\.\\./domain/[^/]+$|\\.\\./activities(/[^/]+)?$)',
              message:
                'Workflows may import only @temporalio/workflow, @temporalio/common, ./<sibling>, ../domain/<module> and (by type) ../activities.',
            },
            {
              regex: '^\\.\\./activities(/[^/]+)?$',
              allowTypeImports: true,
              message: 'Import activities by type only (proxyActivities).',
            },
          ],
        },
      ],
    },
  },
  {
    // The one exception (ADR 0013): the workflow interceptors module may import, besides the rest, Temporal's
    // OpenTelemetry workflow interceptors. They are made for the sandbox (its clock and seeded random ids, spans out
    // through a sink, SDK flags for replaying older histories), and only a worker with tracing on bundles this
    // module; the workflows themselves import neither it nor OpenTelemetry.
    files: ['workflows/tracing.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(?!@temporalio/interceptors-opentelemetry/lib/workflow-interceptors$|@temporalio/workflow$|@temporalio/common$|\\./[^/]+$|\\.\\./domain/[^/]+$)',
              message:
                'The workflow interceptors module may import only @temporalio/interceptors-opentelemetry/lib/workflow-interceptors, @temporalio/workflow, @temporalio/common, ./<sibling> and ../domain/<module>.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
