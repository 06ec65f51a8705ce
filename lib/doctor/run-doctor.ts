import { describeAwsError, openJobContext, type JobContextInput } from '../aws';
import { RlvrError } from '../errors';
import { BUILT_IN_DEFAULTS } from '../job-options';
import { awsChecks } from './aws-checks';
import type { DoctorCheck } from './check';
import { localChecks } from './local-checks';

export interface DoctorInput extends JobContextInput {
  readonly instanceType?: string;
}

/** Checks what `submit`, image builds and local runs need; every problem says what to do. */
export async function runDoctor(input: DoctorInput): Promise<DoctorCheck[]> {
  const env = input.env ?? process.env;
  const checks = await localChecks(env);
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
    return [...checks, ...(await awsChecks(context, input.instanceType ?? BUILT_IN_DEFAULTS.instance_type))];
  } finally {
    context.close();
  }
}
