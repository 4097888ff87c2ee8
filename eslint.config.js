import js from '@eslint/js';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'web/dist/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      // Names and XML text are checked for control characters on purpose.
      'no-control-regex': 'off',
      // An async function may implement a promise-returning interface without awaiting anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Suites, tests and hooks come with a timeout from test/support/node-test.ts.
    ignores: ['test/support/node-test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'node:test',
              message: 'Import describe, it, test and the hooks from test/support/node-test.ts: they time out.',
            },
          ],
        },
      ],
    },
  },
  {
    // Settings are read once, in src/config.ts; the entry points hand the environment to it.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/main.ts', 'src/launcher.ts', 'src/cli/main.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read settings in src/config.ts (loadConfig) and hand them to the code that needs them.',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
