// The test run's closing lines, plain for any CI: each failed test (file, name, the first lines of why), then
// "tests: N passed, N failed". A CI log kept only in its last part still names what failed.
// Usage: node scripts/test-summary.js <jest --json result file>...
const fs = require('node:fs');
const path = require('node:path');

const WHY_LINES = 6;
const firstLines = (text) =>
  text
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .slice(0, WHY_LINES)
    .map((line) => `    ${line}`)
    .join('\n');

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
for (const file of process.argv.slice(2)) {
  if (!fs.existsSync(file)) continue;
  const run = JSON.parse(fs.readFileSync(file, 'utf8'));
  passed += run.numPassedTests;
  failed += run.numFailedTests + run.numRuntimeErrorTestSuites;
  skipped += run.numPendingTests;
  for (const suite of run.testResults) {
    const where = path.relative(process.cwd(), suite.name);
    const failedTests = suite.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failedTests) failures.push(`FAILED ${where} › ${test.fullName}\n${firstLines(test.failureMessages.join('\n'))}`);
    // A file that failed outside its tests (it did not load, a hook threw).
    if (suite.status === 'failed' && failedTests.length === 0) failures.push(`FAILED ${where}\n${firstLines(suite.message ?? '')}`);
  }
}
if (failures.length > 0) console.log(`\n${failures.join('\n')}\n`);
console.log(`tests: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));
