// One lint config for every package (STYLE §11): type-aware rules that catch floating promises, non-exhaustive
// switches, `any` leaking through APIs, focused tests, and imports that break the layers.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'lib/src/generated/**',
      'clients/api/src/generated/**',
      'coverage/**',
      '.data/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.check.json', './services/gateway/console/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Fastify plugins and hooks are async by contract even when they await nothing.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only', message: 'Focused tests hide failures.' },
        { object: 'describe', property: 'only', message: 'Focused tests hide failures.' },
        { object: 'it', property: 'skip', message: 'Skipped tests hide failures.' },
        { object: 'describe', property: 'skip', message: 'Skipped tests hide failures.' },
      ],
    },
  },
  {
    // Domain code stays free of transports and vendors (STYLE §4).
    files: ['services/*/src/instance/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['fastify', '@grpc/*', '@nats-io/*', '@whiskeysockets/*', '**/grpc/**', '**/application/**'] }],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // expect.any() and friends are typed any.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
