import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import boundaries from 'eslint-plugin-boundaries';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { boundariesRule, boundariesSettings } from './eslint.boundaries.js';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      'migrations/**',
      'coverage/**',
      'test/fixtures/**',
      // What a package's build writes (the docs test builds packages/client while the lint may run beside it).
      'packages/*/dist/**',
      // The probes test/scripts/test-file.test.ts writes and removes while the checks may be running beside it.
      'test/*/zz-test-file-script-*',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            '*.js',
            'bin/*.js',
            'scripts/*.mjs',
            'src/temporal/*.cjs',
            'src/process/*.js',
          ],
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 24,
        },
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Layers point one way, and no module imports itself back through others.
    plugins: { boundaries, 'import-x': importX },
    settings: {
      ...boundariesSettings,
      ...importX.flatConfigs.typescript.settings,
      'import/resolver': { typescript: { project: './tsconfig.json' } },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'boundaries/dependencies': boundariesRule,
      'boundaries/no-unknown-files': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // The few CommonJS modules the Temporal SDK requires by path.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Workflow code is replayed: no I/O, no clocks, no randomness outside the SDK.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.flatMap((name) => [name, `node:${name}`]),
            'pg',
            'drizzle-orm',
            'fastify',
            'undici',
            'pino',
          ],
          patterns: ['drizzle-orm/*', '**/src/db', '**/src/db/**', '**/src/api/**'],
        },
      ],
    },
  },
  {
    // The workflow code is evaluated once per worker and shared by every workflow (sharedWorkflowModules
    // in src/process/worker.ts): state kept at module level would leak from one workflow into another.
    files: ['workflows/**/*.ts', 'src/contracts/**/*.ts', 'src/lib/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            ':matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration[kind!="const"]',
          message: 'No module-level let or var in code the workflows share: keep state in a workflow object.',
        },
        {
          selector:
            ':matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator > :matches(NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet|Array)$/][arguments.length=0], ArrayExpression[elements.length=0])',
          message:
            'No module-level collection to fill in code the workflows share: keep state in a workflow object.',
        },
      ],
    },
  },
);
