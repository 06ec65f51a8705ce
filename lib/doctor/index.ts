import { spawnSync } from 'node:child_process';
import { connectEngine } from '../image/engine';
import { describeAwsError } from '../aws';
import { RlvrError } from '../errors';
import { BUILT_IN_DEFAULTS } from '../jobs/templates';
import { openJobContext, type JobContextInput } from '../aws/session';
import { SETTINGS_ENV_PATTERN, SETTINGS_PARAMETER_NAME } from '../layout';

export type CheckLevel = 'ok' | 'warn' | 'fail';

export interface DoctorCheck {
  readonly name: string;
  readonly level: CheckLevel;
  readonly detail: string;
  /** What to do about it. */
  readonly fix?: string;
}

export interface DoctorInput extends JobContextInput {
  readonly instanceType?: string;
}

/** Checks what `submit`, image builds and local runs need; every problem says what to do. */
export async function runDoctor(input: DoctorInput): Promise<DoctorCheck[]> {
  const env = input.env ?? process.env;
  const checks: DoctorCheck[] = [];
  const instanceType = input.instanceType ?? BUILT_IN_DEFAULTS.instance_type;

  // Local: Docker engine and GPUs (needed for image builds and --local runs only).
  try {
    const engine = await connectEngine(env.DOCKER_HOST);
    const version = await engine.docker.version();
    checks.push({
      name: 'docker engine',
      level: 'ok',
      detail: `Docker ${version.Version} at ${engine.where}`,
    });
  } catch (err) {
    checks.push({
      name: 'docker engine',
      level: 'warn',
      detail: `not reachable (${(err as Error).message})`,
      fix: 'Image builds and --local runs need a Docker engine: start dockerd or set DOCKER_HOST.',
    });
  }
  const smi = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  const gpus = smi.status === 0 ? smi.stdout.split('\n').filter((l) => l.startsWith('GPU ')).length : 0;
  checks.push(
    gpus > 0
      ? { name: 'local GPUs', level: 'ok', detail: `${gpus} GPU(s)` }
      : {
          name: 'local GPUs',
          level: 'warn',
          detail: 'none found (nvidia-smi)',
          fix: 'Only --local runs need GPUs here.',
        },
  );

  // AWS: identity, settings, bucket, repository, quota.
  let context;
  try {
    context = await openJobContext(input);
  } catch (err) {
    checks.push({
      name: 'settings',
      level: 'fail',
      detail: err instanceof RlvrError ? err.message : describeAwsError(err),
      fix: 'Set AWS_REGION and credentials, then deploy the stack or pass settings as flags.',
    });
    return checks;
  }
  try {
    try {
      const who = await context.aws.diagnostics.callerIdentity();
      checks.push({
        name: 'credentials',
        level: 'ok',
        detail: `${who.arn} (account ${who.account}, ${context.region})`,
      });
    } catch (err) {
      checks.push({
        name: 'credentials',
        level: 'fail',
        detail: describeAwsError(err),
        fix: 'Run `aws sso login` or configure credentials.',
      });
      return checks;
    }
    // The context read the parameter only if a setting was missing; the check needs to know either way.
    const published =
      context.parameter === 'not read'
        ? Boolean(await context.aws.ssm.getParameter(SETTINGS_PARAMETER_NAME).catch(() => undefined))
        : context.parameter === 'found';
    checks.push(
      published
        ? { name: 'settings parameter', level: 'ok', detail: `${SETTINGS_PARAMETER_NAME} found` }
        : {
            name: 'settings parameter',
            level: context.settings.missing.length === 0 ? 'warn' : 'fail',
            detail: `${SETTINGS_PARAMETER_NAME} not found in ${context.region}`,
            fix: `Deploy the infrastructure stack (\`npx cdk deploy --all\`), or keep passing settings as flags/${SETTINGS_ENV_PATTERN} variables.`,
          },
    );
    if (context.layout) {
      try {
        await context.aws.s3.listObjects(context.layout.bucket, context.layout.root, 1);
        checks.push({
          name: 'bucket',
          level: 'ok',
          detail: `${context.layout.uri(context.layout.root)} readable`,
        });
      } catch (err) {
        checks.push({
          name: 'bucket',
          level: 'fail',
          detail: `${context.layout.uri(context.layout.root)}: ${describeAwsError(err)}`,
          fix: 'Check the bucket name and attach the submitter policy from the stack to your identity.',
        });
      }
    }
    const repositoryUri = context.settings.values.repositoryUri;
    if (repositoryUri) {
      const name = String(repositoryUri).split('/').slice(1).join('/');
      try {
        const exists = await context.aws.diagnostics.repositoryExists(name);
        checks.push(
          exists
            ? { name: 'image repository', level: 'ok', detail: `${name} reachable` }
            : {
                name: 'image repository',
                level: 'fail',
                detail: `no repository ${name}`,
                fix: 'Deploy the infrastructure stack.',
              },
        );
      } catch (err) {
        checks.push({
          name: 'image repository',
          level: 'fail',
          detail: describeAwsError(err),
          fix: 'Attach the submitter policy.',
        });
      }
    }
    const quotaName = `${instanceType} for training job usage`;
    try {
      const quotas = await context.aws.diagnostics.sagemakerQuotas(quotaName);
      const value = quotas[quotaName];
      checks.push(
        value === undefined
          ? {
              name: 'quota',
              level: 'warn',
              detail: `"${quotaName}" not found in Service Quotas`,
              fix: 'Check the quota in the console.',
            }
          : value < 1
            ? {
                name: 'quota',
                level: 'fail',
                detail: `"${quotaName}" is ${value}`,
                fix: 'Request an increase in Service Quotas → Amazon SageMaker before submitting.',
              }
            : { name: 'quota', level: 'ok', detail: `"${quotaName}": ${value}` },
      );
    } catch (err) {
      checks.push({
        name: 'quota',
        level: 'warn',
        detail: `could not read quotas: ${describeAwsError(err)}`,
      });
    }
    return checks;
  } finally {
    context.close();
  }
}
