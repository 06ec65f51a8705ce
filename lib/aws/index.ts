export { createAwsClients } from './clients';
export type {
  AwsClients,
  AwsClientOptions,
  IS3,
  ISageMaker,
  ILogs,
  IEcr,
  LogEvent,
  S3ObjectInfo,
} from './types';
export { isAwsError } from './errors';
export { mayHaveCredentials, sdkDefaultRegion, classifyAwsError, describeAwsError } from './environment';
export { describeJob, openJobContext, requireLayout, type JobContext, type JobContextInput } from './session';
export { isTerminal } from './session';
