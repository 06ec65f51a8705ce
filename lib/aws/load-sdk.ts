/* eslint-disable @typescript-eslint/no-require-imports -- lazy, synchronous loads (see below) */

export type Sdk = typeof import('./sdk');
let sdk: Sdk | undefined;

/*
 * The SDK is required on a command's first request, never at start. `require`, not `await import()`:
 * tsc compiles the latter to `__importStar(require(…))`, which copies every export of the package
 * onto a new object; for client-s3 that alone took 89 ms per command on the bench host.
 */

/** The everyday commands' part of the SDK (./sdk: one bundle in the build). */
export function loadSdk(): Sdk {
  return (sdk ??= require('./sdk') as Sdk);
}

export const loadEcr = () => require('@aws-sdk/client-ecr') as typeof import('@aws-sdk/client-ecr');
export const loadLogs = () =>
  require('@aws-sdk/client-cloudwatch-logs') as typeof import('@aws-sdk/client-cloudwatch-logs');
export const loadSts = () => require('@aws-sdk/client-sts') as typeof import('@aws-sdk/client-sts');
export const loadQuotas = () =>
  require('@aws-sdk/client-service-quotas') as typeof import('@aws-sdk/client-service-quotas');
export const loadStorage = () => require('@aws-sdk/lib-storage') as typeof import('@aws-sdk/lib-storage');
