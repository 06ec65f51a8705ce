/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type checking is `npm run lint`'s job (tsc --noEmit); with isolatedModules ts-jest only transpiles.
  transform: { '^.+\\.ts$': 'ts-jest' },
  testTimeout: 60000,
  // Temporary folders made by the tests go when their test file ends.
  setupFilesAfterEnv: ['<rootDir>/test/setup.ts'],
  // Ends the run saying how many suites a missing test peer skipped (outside CI; under CI=true it fails).
  reporters: ['default', '<rootDir>/test/helpers/peer-skips.js'],
};
