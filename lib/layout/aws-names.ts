/** Names on AWS outside our S3 layout: the stack's SSM parameters, SageMaker's log group and console, ECR's layer bucket. */

/** SSM parameters the infrastructure stack publishes and the launcher reads. */
export const SETTINGS_PARAMETER_NAME = '/rlvr-infra/settings';
export const TEMPLATE_PARAMETER_PREFIX = '/rlvr-infra/templates/';
export function templateParameterName(template: string): string {
  return `${TEMPLATE_PARAMETER_PREFIX}${template}`;
}

/** The training-job log group SageMaker writes to. */
export const TRAINING_LOG_GROUP = '/aws/sagemaker/TrainingJobs';

export function consoleJobUrl(region: string, job: string): string {
  return `https://${region}.console.aws.amazon.com/sagemaker/home?region=${region}#/jobs/${job}`;
}

/**
 * The S3 bucket ECR keeps image layers in (`prod-<region>-starport-layer-bucket`): a VPC without internet
 * pulls layers from it through the S3 gateway endpoint, whose policy must name it (Amazon ECR User Guide,
 * "Amazon ECR interface VPC endpoints (AWS PrivateLink)": minimum Amazon S3 bucket permissions).
 */
export function ecrLayerBucketName(region: string): string {
  return `prod-${region}-starport-layer-bucket`;
}
