export { createAwsClients } from './clients';
export type {
  AwsClients,
  AwsClientOptions,
  CompletedPart,
  IS3,
  ISageMaker,
  ISsm,
  ILogs,
  IDiagnostics,
  IEcr,
  LogEvent,
  LogStreamInfo,
  S3ObjectInfo,
  UploadPartInput,
} from './types';
export { AwsError, isAwsError, type AwsErrorKind } from './errors';
export {
  mayHaveCredentials,
  sdkDefaultRegion,
  classifyAwsError,
  describeAwsError,
  type AwsFailureKind,
} from './environment';
export { describeJob, openJobContext, requireLayout, type JobContext, type JobContextInput } from './session';
export { isTerminal } from './session';
