/**
 * `rlvr passk --local`: the same campaign job on this machine's Docker engine (lib/local): the trainer's
 * source mounted where the job unpacks it, the model, the dataset copy and an earlier campaign's output
 * bound where the job's channels put them (S3 objects through the local cache).
 */
import type { AwsClients } from '../aws';
import { PASSK_KIND } from '../job-kinds';
import { channelPath, parseS3Uri } from '../layout';
import { cacheFromS3, localBatchJob, requireLocalImage as requireImage, runBatchLocally } from '../local';
import type { Bind, LocalJob, LocalRunOptions, LocalRunResult } from '../local';
import { PASSK_CHANNELS, type PasskPlan } from './plan';

export function localJobOfPasskPlan(plan: PasskPlan): LocalJob {
  return localBatchJob(PASSK_KIND, plan, {
    sourceRoot: plan.request.trainerSrc,
    binds: async (aws: AwsClients | undefined) => {
      const binds: Bind[] = [];
      const { model } = plan;
      binds.push({
        host:
          model.local ??
          (await cacheFromS3(aws, model.s3!.bucket, model.s3!.key, `The model ${model.label}`)),
        container: channelPath(PASSK_CHANNELS.model),
        readOnly: true,
        what: `model ${model.label}`,
      });
      const dataset =
        plan.request.datasetDir ??
        (plan.datasetCopy
          ? await cacheFromS3(aws, plan.datasetCopy.bucket, plan.datasetCopy.key, `The dataset copy`)
          : undefined);
      if (dataset)
        binds.push({
          host: dataset,
          container: channelPath(PASSK_CHANNELS.dataset),
          readOnly: true,
          what: 'dataset copy',
        });
      const continued = plan.continued;
      if (continued) {
        const s3 = continued.uri ? parseS3Uri(continued.uri) : undefined;
        const host =
          continued.local ??
          (s3 ? await cacheFromS3(aws, s3.bucket, s3.key, `The output of ${continued.from}`) : undefined);
        if (host)
          binds.push({
            host,
            container: channelPath(PASSK_CHANNELS.resume),
            readOnly: true,
            what: `the output of ${continued.from}`,
          });
      }
      return binds;
    },
  });
}

export function requireLocalImage(plan: PasskPlan): void {
  requireImage(
    plan,
    '--image (a local image rlvr built from this repository), or a job checkpoint as --model with AWS access to find its image',
  );
}

export async function runPasskLocally(
  plan: PasskPlan,
  options: Omit<LocalRunOptions, 'job' | 'image' | 'gpus'>,
): Promise<LocalRunResult> {
  requireLocalImage(plan);
  return runBatchLocally(localJobOfPasskPlan(plan), plan, options);
}
