import type { DescribeTrainingJobResponse } from '@aws-sdk/client-sagemaker';
import { createAwsClients } from './clients';
import type { AwsClientOptions, AwsClients } from './types';
import { describeAwsError, sdkDefaultRegion } from './environment';
import { ProblemsError, RuntimeFailure, UserError } from '../errors';
import { S3Layout, SETTINGS_ENV, SETTINGS_PARAMETER_NAME } from '../layout';
import {
  mergeSettings,
  resolveSettings,
  validateSettings,
  type ParameterState,
  type ResolvedSettings,
  type SettingFlags,
} from '../settings';

/** What the commands that operate on existing jobs need: clients, and where jobs keep their files. */
export interface JobContext {
  readonly aws: AwsClients;
  readonly region: string;
  readonly jobNamePrefix: string;
  readonly settings: ResolvedSettings;
  /** Whether the stack's settings parameter was read, and found. */
  readonly parameter: ParameterState;
  /** Undefined when no bucket is configured (commands that need S3 say so). */
  readonly layout: S3Layout | undefined;
  close(): void;
}

export interface JobContextInput {
  readonly settings: SettingFlags;
  readonly env?: NodeJS.ProcessEnv;
  readonly configureClients?: AwsClientOptions['configure'];
}

/** Settings as for a submit (flags > environment > the stack's parameter), for any AWS command. */
export async function openJobContext(input: JobContextInput): Promise<JobContext> {
  const env = input.env ?? process.env;
  const region = mergeSettings(input.settings, env, undefined).values.region ?? (await sdkDefaultRegion());
  if (!region) throw new UserError('No AWS region. Set AWS_REGION or pass --region.', 'NoRegion');
  const aws = createAwsClients({ region, configure: input.configureClients }, env);
  let resolved: Awaited<ReturnType<typeof resolveSettings>>;
  try {
    resolved = await resolveSettings(input.settings, env, region, aws.ssm);
  } catch (err) {
    aws.close();
    if (err instanceof UserError) throw err;
    throw new RuntimeFailure(
      `Could not read ${SETTINGS_PARAMETER_NAME}: ${describeAwsError(err)}`,
      'AwsFailure',
      {
        cause: err,
      },
    );
  }
  const problems = validateSettings(resolved.settings);
  if (problems.length > 0) {
    aws.close();
    throw new ProblemsError('Invalid launcher settings', problems);
  }
  const { bucket, prefix, jobNamePrefix } = resolved.settings.values;
  return {
    aws,
    region,
    jobNamePrefix: jobNamePrefix!,
    settings: resolved.settings,
    parameter: resolved.parameter,
    layout: bucket ? new S3Layout(bucket, prefix) : undefined,
    close: () => aws.close(),
  };
}

export function requireLayout(context: JobContext): S3Layout {
  if (!context.layout) {
    throw new UserError(
      `No bucket: pass --bucket, set ${SETTINGS_ENV.bucket}, or deploy the infrastructure stack (it publishes ${SETTINGS_PARAMETER_NAME}).`,
      'NoBucket',
    );
  }
  return context.layout;
}

/** The job's description, or the user error every command gives for an unknown name. */
export async function describeJob(context: JobContext, name: string): Promise<DescribeTrainingJobResponse> {
  const job = await context.aws.sagemaker.describeTrainingJob(name);
  if (!job) {
    throw new UserError(
      `No training job named ${name} in ${context.region}. List jobs with \`rlvr jobs\`.`,
      'NoSuchJob',
    );
  }
  return job;
}

/** A job that will not change any more. */
const TERMINAL: readonly string[] = ['Completed', 'Failed', 'Stopped'];

export function isTerminal(status: string | undefined): boolean {
  return TERMINAL.includes(status ?? '');
}
