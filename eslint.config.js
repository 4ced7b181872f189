// `npm run check:lint` (docs/conventions.md, "Checks"): typescript-eslint's recommended type-checked rules on the
// TypeScript of src/ and test/, typed by tsconfig.json, and of the SDK (sdk/tsconfig.json; not its generated types), and on the benchmark's JavaScript, typed by its JSDoc
// (bench/tsconfig.json); ESLint's recommended rules on the dashboard's browser script.
// The few settings below are conventions of the project, each explained in docs/conventions.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.mjs', 'bench/**/*.d.ts', 'sdk/src/**/*.ts', 'examples/**/*.ts'],
    ignores: ['sdk/src/schema.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // As tsc's noUnusedParameters: a parameter a signature requires but the body does not read starts with `_`;
      // a destructured field left out of a rest object (`{ secret: _secret, ...record }`) is how a field is dropped.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Fastify hooks and handlers, and implementations of a promise-returning interface, are async functions whether
      // or not they await: a throw inside them becomes a rejection, the one way their callers handle a failure.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The benchmark is JavaScript with JSDoc types, checked by tsc under bench/tsconfig.json (checkJs;
    // docs/benchmarks.md "Types"). tsc refuses an undefined name there as it does in TypeScript, so ESLint's no-undef,
    // which would need a list of Node's globals, is left to it (typescript-eslint turns it off for TypeScript alike).
    files: ['bench/**/*.mjs'],
    rules: { 'no-undef': 'off' },
  },
  {
    // A test reads the API's answer as JSON (`response.json()`, typed any) and asserts it with expect: the assertion
    // is its type check, so an untyped body, named `any` or not, is no unsafe use of any here. Helpers stay typed.
    files: ['test/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['src/web/assets/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: { document: 'readonly', navigator: 'readonly', window: 'readonly' },
    },
  },
);
