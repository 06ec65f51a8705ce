import type { IS3, ISageMaker } from '../aws';
import { RuntimeFailure, UserError } from '../errors';
import { isValidTrainingJobName, JOB_FILES, jobNameCandidate, S3Layout } from '../layout';

/** How many `-N` suffixes to try before giving up (a second with 50 submits is not a real workload). */
const MAX_CANDIDATES = 50;

export function firstJobName(prefix: string, now: Date): string {
  const name = jobNameCandidate(prefix, now, 1);
  if (!isValidTrainingJobName(`${name}-${MAX_CANDIDATES}`)) {
    throw new UserError(
      `Job names from the prefix "${prefix}" would not be valid training job names (1–63 of [a-zA-Z0-9-]).`,
      'BadJobNamePrefix',
    );
  }
  return name;
}

/**
 * Claims the first free name `<prefix>-YYYYMMDD-HHMMSS[-N]`: free in SageMaker (names are never
 * reusable) and claimed in S3 with a create-only write of `jobs/<job>/reservation.json`, so two
 * submits in the same second — on one machine or two — never share a name or its upload prefix.
 * `skip` holds names already found taken by CreateTrainingJob (ResourceInUse).
 */
export async function reserveJobName(args: {
  readonly s3: IS3;
  readonly sagemaker: ISageMaker;
  readonly layout: S3Layout;
  readonly prefix: string;
  readonly now: Date;
  readonly reservation: Record<string, unknown>;
  readonly skip?: ReadonlySet<string>;
}): Promise<string> {
  firstJobName(args.prefix, args.now);
  for (let n = 1; n <= MAX_CANDIDATES; n++) {
    const name = jobNameCandidate(args.prefix, args.now, n);
    if (args.skip?.has(name)) continue;
    if (await args.sagemaker.describeTrainingJob(name)) continue;
    const claimed = await args.s3.putObjectIfAbsent(
      args.layout.bucket,
      args.layout.jobKey(name, JOB_FILES.reservation),
      JSON.stringify({ jobName: name, ...args.reservation }, null, 2),
      'application/json',
    );
    if (claimed) return name;
  }
  throw new RuntimeFailure(
    `No free job name among ${MAX_CANDIDATES} candidates for ${jobNameCandidate(args.prefix, args.now, 1)}; try again.`,
    'NoFreeJobName',
  );
}
