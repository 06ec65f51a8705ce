import { describeAwsError, type JobContext } from '../aws';
import { SETTINGS_ENV_PATTERN, SETTINGS_PARAMETER_NAME, type S3Layout } from '../layout';
import type { DoctorCheck } from './check';

/** AWS: identity, settings, bucket, repository, quota. Stops after the identity when there is none. */
export async function awsChecks(context: JobContext, instanceType: string): Promise<DoctorCheck[]> {
  const identity = await checkCredentials(context);
  if (identity.level === 'fail') return [identity];
  const checks = [identity, await checkSettingsParameter(context)];
  if (context.layout) checks.push(await checkBucket(context, context.layout));
  const repositoryUri = context.settings.values.repositoryUri;
  if (repositoryUri) checks.push(await checkRepository(context, String(repositoryUri)));
  checks.push(await checkQuota(context, instanceType));
  return checks;
}

async function checkCredentials(context: JobContext): Promise<DoctorCheck> {
  try {
    const who = await context.aws.diagnostics.callerIdentity();
    return {
      name: 'credentials',
      level: 'ok',
      detail: `${who.arn} (account ${who.account}, ${context.region})`,
    };
  } catch (err) {
    return {
      name: 'credentials',
      level: 'fail',
      detail: describeAwsError(err),
      fix: 'Run `aws sso login` or configure credentials.',
    };
  }
}

async function checkSettingsParameter(context: JobContext): Promise<DoctorCheck> {
  // The context read the parameter only if a setting was missing; the check needs to know either way.
  const published =
    context.parameter === 'not read'
      ? Boolean(await context.aws.ssm.getParameter(SETTINGS_PARAMETER_NAME).catch(() => undefined))
      : context.parameter === 'found';
  return published
    ? { name: 'settings parameter', level: 'ok', detail: `${SETTINGS_PARAMETER_NAME} found` }
    : {
        name: 'settings parameter',
        level: context.settings.missing.length === 0 ? 'warn' : 'fail',
        detail: `${SETTINGS_PARAMETER_NAME} not found in ${context.region}`,
        fix: `Deploy the infrastructure stack (\`npx cdk deploy --all\`), or keep passing settings as flags/${SETTINGS_ENV_PATTERN} variables.`,
      };
}

async function checkBucket(context: JobContext, layout: S3Layout): Promise<DoctorCheck> {
  try {
    await context.aws.s3.listObjects(layout.bucket, layout.root, 1);
    return { name: 'bucket', level: 'ok', detail: `${layout.uri(layout.root)} readable` };
  } catch (err) {
    return {
      name: 'bucket',
      level: 'fail',
      detail: `${layout.uri(layout.root)}: ${describeAwsError(err)}`,
      fix: 'Check the bucket name and attach the submitter policy from the stack to your identity.',
    };
  }
}

async function checkRepository(context: JobContext, repositoryUri: string): Promise<DoctorCheck> {
  const name = repositoryUri.split('/').slice(1).join('/');
  try {
    return (await context.aws.diagnostics.repositoryExists(name))
      ? { name: 'image repository', level: 'ok', detail: `${name} reachable` }
      : {
          name: 'image repository',
          level: 'fail',
          detail: `no repository ${name}`,
          fix: 'Deploy the infrastructure stack.',
        };
  } catch (err) {
    return {
      name: 'image repository',
      level: 'fail',
      detail: describeAwsError(err),
      fix: 'Attach the submitter policy.',
    };
  }
}

async function checkQuota(context: JobContext, instanceType: string): Promise<DoctorCheck> {
  const quotaName = `${instanceType} for training job usage`;
  let value: number | undefined;
  try {
    value = (await context.aws.diagnostics.sagemakerQuotas(quotaName))[quotaName];
  } catch (err) {
    return { name: 'quota', level: 'warn', detail: `could not read quotas: ${describeAwsError(err)}` };
  }
  if (value === undefined) {
    return {
      name: 'quota',
      level: 'warn',
      detail: `"${quotaName}" not found in Service Quotas`,
      fix: 'Check the quota in the console.',
    };
  }
  return value < 1
    ? {
        name: 'quota',
        level: 'fail',
        detail: `"${quotaName}" is ${value}`,
        fix: 'Request an increase in Service Quotas → Amazon SageMaker before submitting.',
      }
    : { name: 'quota', level: 'ok', detail: `"${quotaName}": ${value}` };
}
