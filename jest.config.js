/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/lib/src', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: { '^@wagw/lib$': '<rootDir>/lib/src/index.ts', '^@wagw/client$': '<rootDir>/clients/api/src/index.ts' },
  // Jest on Node 20 cannot require() these ESM-only packages (Fastify's inject and swagger-ui pull them in).
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie)/)'],
  transform: {
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  testTimeout: 30_000,
  maxWorkers: 2,
};
