import { z } from 'zod';
import { BUILT_IN_DEFAULTS, BUILT_IN_TEMPLATES } from '../job-options';
import { DEFAULT_JOB_NAME_PREFIX, DEFAULT_ROOT_PREFIX } from '../layout';

/** The instance types the launcher's defaults and built-in templates use: what jobs may run on by default. */
export const DEFAULT_INSTANCE_TYPES: readonly string[] = [
  ...new Set([
    BUILT_IN_DEFAULTS.instance_type,
    ...Object.values(BUILT_IN_TEMPLATES).flatMap((t) => (t.instance_type ? [t.instance_type] : [])),
  ]),
].sort();

/**
 * Everything the stack can be told, from CDK context (`cdk.json` or `-c key=value`). Validated up
 * front: every problem collected and reported at once.
 */
export interface RlvrInfraProps {
  /** Bucket name. @default `rlvr-experiments-<account>-<region>` */
  readonly bucketName?: string;
  /** Root prefix of every key. @default `rlvr-experiments/` */
  readonly rootPrefix: string;
  /** ECR repository name. @default `rlvr-experiments` */
  readonly repositoryName: string;
  /** Job-name prefix the submitter policy, notifications and lists are scoped to. @default `annotations-adhoc` */
  readonly jobNamePrefix: string;
  /** Encrypt the bucket with a customer-managed KMS key (rotated yearly); false = S3-managed keys. @default true */
  readonly customerManagedKey: boolean;
  /** Keep noncurrent object versions this many days (versioning is on). @default 7 */
  readonly noncurrentVersionDays: number;
  /** Expire intermediate checkpoints (`…_step<N>/`, never `_final`) after this many days; 0 = never. @default 0 */
  readonly checkpointExpiryDays: number;
  /** Expire untagged images after this many days. @default 7 */
  readonly untaggedImageExpiryDays: number;
  /** Keep this many tagged images. @default 100 */
  readonly keepTaggedImages: number;
  /**
   * Jobs must run with network isolation (`EnableNetworkIsolation`); false lets a trainer that needs the
   * network (inside the VPC, when there is one) be submitted. @default true
   */
  readonly networkIsolation: boolean;
  /**
   * Jobs must encrypt traffic between their instances (`EnableInterContainerTrafficEncryption`): the
   * launcher's requests always ask for it, so requiring it turns away only hand-written requests that do
   * not. @default true
   */
  readonly interContainerTrafficEncryption: boolean;
  /** The instance types jobs may use. @default the launcher's default and the built-in templates' types */
  readonly instanceTypes: readonly string[];
  /** The longest `max_runtime` a job may ask for, in hours (SageMaker's own limit is 28 days). @default 168 */
  readonly maxRuntimeHours: number;
  /** Create a VPC without internet access for jobs. @default false */
  readonly vpc: boolean;
  /**
   * The region's S3 managed prefix list (`com.amazonaws.<region>.s3`, `pl-…`): the job security group's
   * only way out to S3 (through the gateway endpoint). Required with `vpc`.
   */
  readonly s3PrefixListId?: string;
  /** Availability zones for the VPC. @default 2 */
  readonly vpcMaxAzs: number;
  /**
   * A file system the hosts of a multi-host job share: `efs` (an encrypted EFS file system in the VPC's
   * subnets, reachable only from the job security group; requires `vpc`) or `none`. @default `none`
   */
  readonly sharedFileSystem: 'none' | 'efs';
  /**
   * Whether a job that mounts the shared file system may run without network isolation (the launcher's
   * `shared_fs_network_isolation: false`, for the case that SageMaker will not mount it isolated; AWS
   * documents neither). `required` keeps every job isolated, as `networkIsolation` says; `optional`
   * adds a second CreateTrainingJob statement for such jobs only. IAM sees no instance count, so with
   * `optional` any job that mounts the file system may turn isolation off. @default `required`
   */
  readonly sharedFileSystemIsolation: 'required' | 'optional';
  /** GitHub repository (`owner/name`) whose workflow may push images; unset = no CI role. */
  readonly githubRepository?: string;
  /** Branch the CI role trusts. @default `main` */
  readonly githubBranch: string;
  /** An existing GitHub OIDC provider ARN (one per account); unset = the stack creates it. */
  readonly githubOidcProviderArn?: string;
  /** Create a submitter role (besides the attachable policy), assumable by these principal ARNs. @default [] */
  readonly submitterPrincipalArns: readonly string[];
  /** Email addresses notified when a job ends. @default [] */
  readonly notificationEmails: readonly string[];
  /** HTTPS endpoints notified when a job ends. @default [] */
  readonly notificationHttpsEndpoints: readonly string[];
}

const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const list = <T extends z.ZodType>(item: T) =>
  z.union([
    z.array(item),
    z.string().transform((s, ctx) => {
      const parts = s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const bad = parts.filter((p) => !item.safeParse(p).success);
      if (bad.length) ctx.addIssue({ code: 'custom', message: `invalid entries: ${bad.join(', ')}` });
      return parts as z.infer<T>[];
    }),
  ]);

const schema = z.strictObject({
  bucketName: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')
    .optional(),
  rootPrefix: z
    .string()
    .regex(/^([a-z0-9._-]+\/)+$/i, `a prefix like ${DEFAULT_ROOT_PREFIX}`)
    .default(DEFAULT_ROOT_PREFIX),
  repositoryName: z
    .string()
    .regex(/^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/, 'an ECR repository name')
    .default('rlvr-experiments'),
  jobNamePrefix: z
    .string()
    .regex(/^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,40}$/, 'a job-name prefix')
    .default(DEFAULT_JOB_NAME_PREFIX),
  customerManagedKey: bool.default(true),
  noncurrentVersionDays: count(1, 3650).default(7),
  checkpointExpiryDays: count(0, 3650).default(0),
  untaggedImageExpiryDays: count(1, 3650).default(7),
  keepTaggedImages: count(1, 10000).default(100),
  networkIsolation: bool.default(true),
  interContainerTrafficEncryption: bool.default(true),
  instanceTypes: list(
    z.string().regex(/^ml\.[a-z0-9-]+\.[a-z0-9]+$/, 'an instance type like ml.p4de.24xlarge'),
  )
    .refine((l) => l.length > 0, 'at least one instance type')
    .default([...DEFAULT_INSTANCE_TYPES]),
  maxRuntimeHours: count(1, 28 * 24).default(7 * 24),
  vpc: bool.default(false),
  s3PrefixListId: z
    .string()
    .regex(/^pl-[0-9a-f]{8,17}$/, 'a prefix-list id like pl-68a54001')
    .optional(),
  vpcMaxAzs: count(1, 6).default(2),
  sharedFileSystem: z.enum(['none', 'efs']).default('none'),
  sharedFileSystemIsolation: z.enum(['required', 'optional']).default('required'),
  githubRepository: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/name')
    .optional(),
  githubBranch: z
    .string()
    .regex(/^[^\s*?]+$/, 'a branch name (no wildcards)')
    .default('main'),
  githubOidcProviderArn: z
    .string()
    .regex(
      /^arn:aws[a-z-]*:iam::\d{12}:oidc-provider\/token\.actions\.githubusercontent\.com$/,
      'the GitHub OIDC provider ARN',
    )
    .optional(),
  submitterPrincipalArns: list(
    z.string().regex(/^arn:aws[a-z-]*:(iam|sts)::\d{12}:.+$/, 'a principal ARN'),
  ).default([]),
  notificationEmails: list(z.string().email()).default([]),
  notificationHttpsEndpoints: list(z.string().url().startsWith('https://')).default([]),
});

/** Context keys, as written in cdk.json: `rlvr:<name>`. */
export const CONTEXT_PREFIX = 'rlvr:';

/** Reads `rlvr:*` context values; throws one error listing every problem. */
export function parseInfraProps(context: Record<string, unknown>): RlvrInfraProps {
  const values: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(context)) {
    if (!key.startsWith(CONTEXT_PREFIX)) continue;
    const name = key.slice(CONTEXT_PREFIX.length);
    if (!(name in schema.shape)) unknown.push(key);
    // Empty strings in cdk.json mean "not set".
    if (value !== '' && value !== null) values[name] = value;
  }
  const result = schema
    .refine((p) => !p.vpc || p.s3PrefixListId !== undefined, {
      path: ['s3PrefixListId'],
      message:
        'required with rlvr:vpc=true: the id of the managed prefix list com.amazonaws.<region>.s3 (aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.<region>.s3)',
    })
    .refine((p) => p.sharedFileSystem !== 'efs' || p.vpc, {
      path: ['sharedFileSystem'],
      message:
        'efs needs the job VPC (SageMaker mounts it through the job network): add -c rlvr:vpc=true -c rlvr:s3PrefixListId=pl-… (the id of com.amazonaws.<region>.s3)',
    })
    .refine((p) => p.sharedFileSystemIsolation === 'required' || p.sharedFileSystem === 'efs', {
      path: ['sharedFileSystemIsolation'],
      message: 'applies to the shared file system: add -c rlvr:sharedFileSystem=efs, or leave it out',
    })
    .safeParse(values);
  const problems = [
    ...unknown.map(
      (k) =>
        `${k}: unknown context key (known: ${Object.keys(schema.shape)
          .map((n) => CONTEXT_PREFIX + n)
          .join(', ')})`,
    ),
    ...(result.success
      ? []
      : result.error.issues.map((i) => `${CONTEXT_PREFIX}${i.path.join('.')}: ${i.message}`)),
  ];
  if (problems.length > 0) {
    throw new Error(`Invalid rlvr-infra context:\n  ${problems.join('\n  ')}`);
  }
  return result.data!;
}
