import type { Problem } from '../errors';
import { describeSource, problemAt, type ResolvedJobOptions } from '../job-options';
import { channelPath, SETTINGS_ENV, SHARED_FILE_SYSTEM } from '../layout';
import type { ResolvedSettings } from '../settings';
import type { Placeholders } from '../submission';
import { RANK0_EXPORT_CITE, type TrainerProfile } from '../trainers';

/**
 * The file system every host of a multi-host job mounts, for a trainer whose hosts share a folder: its
 * torchtitan configs are written on one host and read by Ray actors on the others, and its export may
 * be written by whichever host holds rank 0.
 */
export interface SharedFileSystemPlan {
  /** The input channel it is mounted as (SHARED_FILE_SYSTEM.channel). */
  readonly channel: string;
  /** The EFS id, or LOCAL_VOLUME for a local run (a Docker volume every host container mounts). */
  readonly fileSystemId: string;
  readonly directoryPath: string;
  /** The profile's shared-folder variable, which the container points into the file system. */
  readonly env: string;
  /** One line: where the trainer's code shows the hosts share the folder. */
  readonly why: string;
  /** EnableNetworkIsolation of this job, and where the value came from. */
  readonly networkIsolation: { readonly value: boolean; readonly source: string };
}

/** What a local run's plan names as its file system: the local runner mounts one Docker volume on every host. */
export const LOCAL_VOLUME = 'local volume';

/** How to get a file system: the stack's EFS (which needs its VPC mode), or one named by its id. */
export const SHARED_FILE_SYSTEM_HOW =
  'deploy the stack with -c rlvr:vpc=true -c rlvr:s3PrefixListId=<the S3 prefix list of the region> -c rlvr:sharedFileSystem=efs ' +
  `(it publishes fileSystemId, subnets and security groups), or pass --file-system-id fs-… (or ${SETTINGS_ENV.fileSystemId})`;

/** The plan's line on isolation: AWS documents it neither way, so the plan always says what is used. */
const NOT_DOCUMENTED = 'is not documented by AWS either way (that it works, or that it does not)';

export interface SharedFileSystemCheck {
  readonly plan?: SharedFileSystemPlan;
  readonly problems: Problem[];
  readonly warnings: Problem[];
}

/** `isolated (shared_fs_network_isolation true ← default)` or why it is off. */
function isolationOf(options: ResolvedJobOptions): SharedFileSystemPlan['networkIsolation'] {
  const general = options.networkIsolation;
  if (!general.value)
    return { value: false, source: `network_isolation false (${describeSource(general.source)})` };
  const shared = options.sharedFsNetworkIsolation;
  return {
    value: shared.value,
    source: `shared_fs_network_isolation ${String(shared.value)} (${describeSource(shared.source)})`,
  };
}

/**
 * Whether the job mounts the shared file system, and which: a job on more than one host whose trainer
 * shares a folder between hosts does. Without a file system (or the VPC its mount targets are in) the
 * job is refused at the instance count; a dry-run whose settings are placeholders gets a placeholder
 * id, as its other unresolved settings do. A local run mounts a Docker volume instead. Pure.
 */
export function planSharedFileSystem(input: {
  readonly profile: TrainerProfile;
  readonly options: ResolvedJobOptions;
  readonly settings: ResolvedSettings;
  readonly placeholders: Placeholders;
  readonly local?: boolean;
}): SharedFileSystemCheck {
  const { profile, options, settings, placeholders } = input;
  const hosts = options.instanceCount;
  const shared = profile.runtime.sharedFolder;
  const none: SharedFileSystemCheck = { problems: [], warnings: [] };
  if (hosts.value <= 1 || !shared) return none;
  const need = `${hosts.value} instances: ${profile.id} writes its torchtitan job configs into $${shared.env}, which Ray actors on the other hosts read (${shared.cite})`;
  // Their torchtitan trainers (the shared folder is theirs: S/titan_actor.py) export from rank 0.
  const rank0 =
    profile.checkpoints.writes && shared.cite.startsWith('S/')
      ? `, and rank 0 of the model group, on any host, writes its export (${RANK0_EXPORT_CITE})`
      : '';
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  // Settings that are placeholders (a dry-run that read no stack and was given none): whether the stack
  // has a file system cannot be told. The image repository does not count: --image makes it unneeded.
  const unresolved = settings.missing.some((name) => name !== 'repositoryUri');
  let fileSystemId: string;
  if (input.local) fileSystemId = LOCAL_VOLUME;
  else if (settings.values.fileSystemId) fileSystemId = settings.values.fileSystemId;
  else if (unresolved) fileSystemId = placeholders.value('fileSystemId', undefined);
  else {
    return {
      ...none,
      problems: [
        problemAt(
          hosts.source,
          'instance_count',
          `${need}${rank0}: the hosts need a folder they all share, and no shared file system is set (fileSystemId)`,
          `Run on one instance (instance_count: 1), or give the job a shared file system: ${SHARED_FILE_SYSTEM_HOW}.`,
        ),
      ],
    };
  }
  if (!input.local && !(settings.values.subnets?.length && settings.values.securityGroups?.length)) {
    const which = unresolved && !settings.values.fileSystemId ? '' : ` ${fileSystemId}`;
    const message = `${hosts.value} instances mount the shared file system${which}, whose mount targets are reached only from a VPC, and the settings name no ${settings.values.subnets?.length ? 'security groups' : 'subnets'}`;
    const hint =
      "Deploy the stack in its VPC mode (-c rlvr:vpc=true -c rlvr:s3PrefixListId=<the S3 prefix list of the region>; it publishes subnets and security groups), or pass --subnets and --security-groups of the file system's VPC.";
    if (unresolved)
      warnings.push(problemAt(hosts.source, 'instance_count', `${message}; a submit would stop here`, hint));
    else problems.push(problemAt(hosts.source, 'instance_count', message, hint));
  }
  const networkIsolation = isolationOf(options);
  const sharedOption = options.sharedFsNetworkIsolation;
  if (options.networkIsolation.value && !sharedOption.value) {
    warnings.push(
      problemAt(
        sharedOption.source,
        'shared_fs_network_isolation',
        `network isolation is off for this job: shared_fs_network_isolation false (a job mounting the shared file system ${fileSystemId}); its containers can reach the network`,
        'Leave shared_fs_network_isolation at true unless the mount fails with network isolation on; jobs without the shared file system keep theirs. The stack must allow it (deployed with -c rlvr:sharedFileSystemIsolation=optional), else CreateTrainingJob is denied.',
      ),
    );
  }
  return {
    plan: {
      channel: SHARED_FILE_SYSTEM.channel,
      fileSystemId,
      directoryPath: SHARED_FILE_SYSTEM.directoryPath,
      env: shared.env,
      why: `${profile.id} writes its torchtitan job configs into $${shared.env}, which Ray actors on the other hosts read (${shared.cite})${rank0}`,
      networkIsolation,
    },
    problems,
    warnings,
  };
}

/** The plan's line on the isolation of a job mounting the shared file system: always shown. */
export function sharedFileSystemIsolationNote(plan: Pick<SharedFileSystemPlan, 'networkIsolation'>): string {
  const { value, source } = plan.networkIsolation;
  return `network isolation with a file-system channel ${NOT_DOCUMENTED}; this job runs ${value ? 'isolated' : 'without isolation'} ← ${source}`;
}

/** Where every host finds the file system (`/opt/ml/input/data/shared`). */
export function sharedFileSystemPath(plan: Pick<SharedFileSystemPlan, 'channel'>): string {
  return channelPath(plan.channel);
}
