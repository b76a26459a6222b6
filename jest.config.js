/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/lib/src', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    '^@wagw/lib$': '<rootDir>/lib/src/index.ts',
    '^@wagw/client$': '<rootDir>/clients/api/src/index.ts',
    // Exported for the "import" condition only; Jest resolves with "require".
    '^whatsapp-rust-bridge$': '<rootDir>/node_modules/whatsapp-rust-bridge/dist/index.js',
  },
  // Jest on Node 20 cannot require() these ESM-only packages (Fastify's inject and swagger-ui pull in the first two;
  // Baileys 7 and its wasm bridge and queue are ESM-only too), so they are transformed like our own sources.
  // @nats-io/obj loads node:crypto (the checkpoint store's SHA-256) with import(), which Jest's CommonJS sandbox
  // refuses without --experimental-vm-modules; transformed, it is a require().
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie|@whiskeysockets/baileys|whatsapp-rust-bridge|p-queue|p-timeout|@nats-io/obj)/)'],
  transform: {
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  testTimeout: 30_000,
  maxWorkers: 2,
};
