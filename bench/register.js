'use strict';
// Lets `node -r ./bench/register.js bench/run.ts` run the TypeScript sources directly: .ts files are transpiled
// with the installed @swc/core (types stripped, no type check), and `@wagw/lib` resolves to lib/src/index.ts, the
// same mapping as tsconfig.check.json and jest.config.js. No dependency beyond what the repository already has.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const LIB_ENTRY = path.resolve(__dirname, '../lib/src/index.ts');

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === '@wagw/lib') return LIB_ENTRY;
  return resolveFilename.call(this, request, ...rest);
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
