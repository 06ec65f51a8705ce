/**
 * The part of the AWS SDK that the everyday commands (download, status, submit, sync-traces, upload)
 * call: S3 with the presigner, SageMaker and SSM. lib/aws loads it through `loadSdk`, on the first
 * request.
 *
 * `npm run build` replaces this module's compiled form (dist/lib/aws/sdk.js) with one esbuild bundle
 * of exactly these names (scripts/bundle-sdk.js): the four packages' ES modules, tree-shaken to the
 * commands listed here. Measured on the 2-core bench host (Node 26, compile cache warm): requiring the
 * four packages costs about 0.45 CPU s at every command, the bundle 0.18 s. The TypeScript sources
 * (tests, tsx) load the packages themselves; the names and classes are the same either way.
 *
 * A name lib/aws needs from these four packages is added here, or the bundle lacks it (the bundle's
 * test compares the two). The rarely used clients (ECR, CloudWatch Logs, STS, Service Quotas) and
 * lib-storage stay plain packages.
 */
export {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
export { getSignedUrl } from '@aws-sdk/s3-request-presigner';
export {
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  paginateListTags,
  paginateListTrainingJobs,
  SageMakerClient,
  StopTrainingJobCommand,
} from '@aws-sdk/client-sagemaker';
export { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
