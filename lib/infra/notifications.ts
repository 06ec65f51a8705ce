import { Aws } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { acknowledge } from './nag';
import type { RlvrInfraProps } from './props';

const UNENCRYPTED_TOPIC_REASON =
  'EventBridge cannot publish to a topic encrypted with the AWS-managed SNS key; S3-managed keys were chosen by context.';

/** The topic job state changes go to, encrypted with the key when there is one. */
function notificationTopic(scope: Construct, key: kms.IKey | undefined): sns.Topic {
  const topic = new sns.Topic(scope, 'JobNotifications', {
    displayName: 'rlvr training job state changes',
    enforceSSL: true,
  });
  if (key) {
    // Set on the L1 resource: given to the L2, the EventBridge target would also grant itself
    // kms:GenerateDataKey* (a wildcard action); the explicit statement below is all it needs.
    (topic.node.defaultChild as sns.CfnTopic).kmsMasterKeyId = key.keyArn;
    // EventBridge publishes to the encrypted topic.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('events.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'], // in a key policy, "*" is this key
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      }),
    );
  } else {
    acknowledge(topic, 'AwsSolutions-SNS2', UNENCRYPTED_TOPIC_REASON);
    acknowledge(topic, 'NIST.800.53.R5-SNSEncryptedKMS', UNENCRYPTED_TOPIC_REASON);
  }
  return topic;
}

/**
 * Job notifications: SageMaker training jobs named `<jobNamePrefix>-*` reaching an end state are
 * published to a topic, which emails and HTTPS endpoints subscribe to.
 */
export function jobNotifications(
  scope: Construct,
  props: Pick<RlvrInfraProps, 'jobNamePrefix' | 'notificationEmails' | 'notificationHttpsEndpoints'>,
  key: kms.IKey | undefined,
): sns.Topic {
  const topic = notificationTopic(scope, key);
  for (const email of props.notificationEmails)
    topic.addSubscription(new subscriptions.EmailSubscription(email));
  for (const url of props.notificationHttpsEndpoints)
    topic.addSubscription(new subscriptions.UrlSubscription(url));
  new events.Rule(scope, 'JobStateChanges', {
    description: `SageMaker training jobs named ${props.jobNamePrefix}-* reaching an end state`,
    eventPattern: {
      source: ['aws.sagemaker'],
      detailType: ['SageMaker Training Job State Change'],
      detail: {
        TrainingJobName: events.Match.prefix(`${props.jobNamePrefix}-`),
        TrainingJobStatus: ['Completed', 'Failed', 'Stopped'],
      },
    },
    targets: [new targets.SnsTopic(topic)],
  });
  // A spot interruption (or a retried failure) does not end the job: SageMaker restarts it, and the
  // entrypoint resumes from the newest complete checkpoint (the step is in `rlvr status`, run.json).
  new events.Rule(scope, 'JobInterruptions', {
    description: `SageMaker training jobs named ${props.jobNamePrefix}-* interrupted and restarted`,
    eventPattern: {
      source: ['aws.sagemaker'],
      detailType: ['SageMaker Training Job State Change'],
      detail: {
        TrainingJobName: events.Match.prefix(`${props.jobNamePrefix}-`),
        TrainingJobStatus: ['InProgress'],
        SecondaryStatus: ['Interrupted', 'Restarting'],
      },
    },
    targets: [
      new targets.SnsTopic(topic, {
        message: events.RuleTargetInput.fromText(
          `${events.EventField.fromPath('$.detail.TrainingJobName')} is ${events.EventField.fromPath('$.detail.SecondaryStatus')}. ` +
            'SageMaker restarts it; it resumes from its newest complete checkpoint: ' +
            'rlvr status shows the attempts and the step it resumed from.',
        ),
      }),
    ],
  });
  return topic;
}
