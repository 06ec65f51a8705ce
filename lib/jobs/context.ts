import {
  createAwsClients,
  describeAwsError,
  sdkDefaultRegion,
  type AwsClientOptions,
  type AwsClients,
} from '../aws';
import { ProblemsError, RuntimeFailure, UserError } from '../errors';
import { S3Layout, SETTINGS_PARAMETER_NAME } from '../layout';
import { mergeSettings, parseSettingsParameter, validateSettings, type SettingFlags } from '../settings';

/** What the commands that operate on existing jobs need: clients, and where jobs keep their files. */
export interface JobContext {
  readonly aws: AwsClients;
  readonly region: string;
  readonly jobNamePrefix: string;
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
  let settings = mergeSettings(input.settings, env, undefined);
  const region = settings.values.region ?? (await sdkDefaultRegion());
  if (!region) throw new UserError('No AWS region. Set AWS_REGION or pass --region.', 'NoRegion');
  const aws = createAwsClients({ region, configure: input.configureClients }, env);
  try {
    if (!settings.values.bucket) {
      const text = await aws.ssm.getParameter(SETTINGS_PARAMETER_NAME);
      if (text)
        settings = mergeSettings(
          input.settings,
          { ...env, AWS_REGION: region },
          parseSettingsParameter(text),
        );
    }
  } catch (err) {
    aws.close();
    if (err instanceof UserError) throw err;
    throw new RuntimeFailure(
      `Could not read ${SETTINGS_PARAMETER_NAME}: ${describeAwsError(err)}`,
      'AwsFailure',
      { cause: err },
    );
  }
  const problems = validateSettings(settings);
  if (problems.length > 0) {
    aws.close();
    throw new ProblemsError('Invalid launcher settings', problems);
  }
  const { bucket, prefix, jobNamePrefix } = settings.values;
  return {
    aws,
    region,
    jobNamePrefix: jobNamePrefix!,
    layout: bucket ? new S3Layout(bucket, prefix) : undefined,
    close: () => aws.close(),
  };
}

export function requireLayout(context: JobContext): S3Layout {
  if (!context.layout) {
    throw new UserError(
      `No bucket: pass --bucket, set RLVR_BUCKET, or deploy the infrastructure stack (it publishes ${SETTINGS_PARAMETER_NAME}).`,
      'NoBucket',
    );
  }
  return context.layout;
}
