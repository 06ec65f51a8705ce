import { SdkDiagnostics } from './diagnostics';
import { SdkEcr } from './ecr';
import { SdkLogs } from './logs';
import { SdkS3 } from './s3';
import { SdkSageMaker } from './sagemaker';
import { SdkSsm } from './ssm';
import { loadEcr, loadLogs, loadQuotas, loadSdk, loadSts } from './load-sdk';
import type { AwsClientOptions, AwsClients } from './types';

/*
 * AWS through one narrow factory: an interface per service listing only the calls we use (types.ts),
 * one real implementation per service from the SDK v3 clients (s3.ts, sagemaker.ts, …). Region,
 * endpoint and retry settings live here only. The SDK reads AWS_ENDPOINT_URL (and
 * AWS_ENDPOINT_URL_<SERVICE>) itself; S3 against such an endpoint needs path-style addressing.
 *
 * Each SDK package is loaded, and its client made, on the first call to that service: a command that
 * talks to S3 and SageMaker does not pay for loading the other five at every start.
 */

function usesCustomEndpoint(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.AWS_ENDPOINT_URL || env.AWS_ENDPOINT_URL_S3);
}

type Destroyable = { destroy(): void };

export function createAwsClients(
  options: AwsClientOptions,
  env: NodeJS.ProcessEnv = process.env,
): AwsClients {
  const common = {
    region: options.region,
    maxAttempts: options.maxAttempts ?? 3,
    ...(options.requestTimeoutMs
      ? {
          requestHandler: {
            requestTimeout: options.requestTimeoutMs,
            connectionTimeout: options.requestTimeoutMs,
          },
        }
      : {}),
  };
  const made: Destroyable[] = [];
  const lazy = <C extends Destroyable>(make: () => Promise<C>): (() => Promise<C>) => {
    let client: Promise<C> | undefined;
    return () =>
      (client ??= make().then((c) => {
        options.configure?.(c as never);
        made.push(c);
        return c;
      }));
  };
  const ecr = lazy(async () => new (loadEcr().ECRClient)(common));
  return {
    region: options.region,
    s3: new SdkS3(
      lazy(
        async () =>
          new (loadSdk().S3Client)({
            ...common,
            ...(options.s3Endpoint ? { endpoint: options.s3Endpoint } : {}),
            forcePathStyle: Boolean(options.s3Endpoint) || usesCustomEndpoint(env),
          }),
      ),
    ),
    // Throttling on CreateTrainingJob/Describe is common: more attempts, same backoff with jitter.
    sagemaker: new SdkSageMaker(
      lazy(
        async () =>
          new (loadSdk().SageMakerClient)({
            ...common,
            maxAttempts: Math.max(common.maxAttempts, 8),
          }),
      ),
    ),
    ssm: new SdkSsm(lazy(async () => new (loadSdk().SSMClient)(common))),
    logs: new SdkLogs(lazy(async () => new (loadLogs().CloudWatchLogsClient)(common))),
    diagnostics: new SdkDiagnostics(
      lazy(async () => new (loadSts().STSClient)(common)),
      ecr,
      lazy(async () => new (loadQuotas().ServiceQuotasClient)(common)),
    ),
    ecr: new SdkEcr(ecr),
    close: () => made.splice(0).forEach((c) => c.destroy()),
  };
}
