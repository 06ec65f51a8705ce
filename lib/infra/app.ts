import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';
import { parseInfraProps } from './props';
import { RlvrInfraStack } from './rlvr-stack';

export const STACK_NAME = 'RlvrInfra';

/** Feature flags the stack is written for; set here so `cdk synth` and the tests build the same app. */
export const FEATURE_FLAGS = {
  '@aws-cdk/core:checkSecretUsage': true,
  '@aws-cdk/aws-iam:minimizePolicies': true,
  // Access-log delivery through a bucket policy, not ACLs (ACLs stay disabled).
  '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true,
  '@aws-cdk/aws-ec2:restrictDefaultSecurityGroup': false,
};

/**
 * The CDK app: one stack, checked by the cdk-nag AwsSolutions and NIST 800-53 R5 packs. Account and
 * region come from the CLI's environment when known; the templates themselves are environment-agnostic.
 */
export function buildApp(props: AppProps = {}): { app: App; stack: RlvrInfraStack } {
  const app = new App({ ...props, context: { ...FEATURE_FLAGS, ...props.context } });
  const infraProps = parseInfraProps(app.node.getAllContext() as Record<string, unknown>);
  const env =
    process.env.CDK_DEFAULT_ACCOUNT && process.env.CDK_DEFAULT_REGION
      ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
      : undefined;
  const stack = new RlvrInfraStack(app, STACK_NAME, {
    ...infraProps,
    env,
    description:
      'rlvr-infra: bucket, image repository, roles, job templates and launcher settings for RLVR training on SageMaker',
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new NIST80053R5Checks(app));
  return { app, stack };
}
