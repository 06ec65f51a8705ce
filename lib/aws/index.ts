export {
  createAwsClients,
  type AwsClients,
  type AwsClientOptions,
  type IS3,
  type ISageMaker,
  type ISsm,
  type ILogs,
  type IDiagnostics,
  type IEcr,
  type LogEvent,
  type LogStreamInfo,
  type S3ObjectInfo,
  type UploadFileOptions,
} from './clients';
export {
  mayHaveCredentials,
  sdkDefaultRegion,
  classifyAwsError,
  describeAwsError,
  type AwsFailureKind,
} from './environment';
export { describeJob, openJobContext, requireLayout, type JobContext, type JobContextInput } from './session';
