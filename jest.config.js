/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type checking is `npm run lint`'s job (tsc --noEmit); with isolatedModules ts-jest only transpiles.
  transform: { '^.+\\.ts$': 'ts-jest' },
  testTimeout: 60000,
};
