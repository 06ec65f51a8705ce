import type { Command } from 'commander';
import { DEFAULT_ROOT_PREFIX, SETTINGS_ENV } from '../../lib/layout';
import type { SettingFlags } from '../../lib/settings';
import { openJobContext, type JobContext } from '../../lib/aws';
import { UserError } from '../../lib/errors';

/** The settings flags every AWS command takes (flags > RLVR_* environment > the stack's parameter). */
export interface SettingsFlagValues {
  bucket?: string;
  prefix?: string;
  roleArn?: string;
  repositoryUri?: string;
  region?: string;
  subnets?: string;
  securityGroups?: string;
  kmsKey?: string;
  fileSystemId?: string;
}

export function addSettingsOptions(command: Command): Command {
  return command
    .option('--bucket <name>', `S3 bucket (else ${SETTINGS_ENV.bucket} or the deployed settings)`)
    .option('--prefix <prefix>', `root prefix in the bucket (default ${DEFAULT_ROOT_PREFIX})`)
    .option(
      '--role-arn <arn>',
      `SageMaker execution role (else ${SETTINGS_ENV.roleArn} or the deployed settings)`,
    )
    .option(
      '--repository-uri <uri>',
      `image repository (else ${SETTINGS_ENV.repositoryUri} or the deployed settings)`,
    )
    .option('--region <region>', 'AWS region (else AWS_REGION)')
    .option('--subnets <ids>', `comma-separated subnet ids (else ${SETTINGS_ENV.subnets})`)
    .option(
      '--security-groups <ids>',
      `comma-separated security group ids (else ${SETTINGS_ENV.securityGroups})`,
    )
    .option('--kms-key <id>', `KMS key for volumes and output (else ${SETTINGS_ENV.kmsKeyId})`)
    .option(
      '--file-system-id <id>',
      `the file system multi-host jobs share (else ${SETTINGS_ENV.fileSystemId} or the deployed settings)`,
    )
    .option('--debug', 'show stack traces');
}

export function settingsOf(flags: SettingsFlagValues): SettingFlags {
  return {
    bucket: flags.bucket,
    prefix: flags.prefix,
    roleArn: flags.roleArn,
    repositoryUri: flags.repositoryUri,
    region: flags.region,
    subnets: flags.subnets,
    securityGroups: flags.securityGroups,
    kmsKey: flags.kmsKey,
    fileSystemId: flags.fileSystemId,
  };
}

/** A repeatable flag's values, in the order given. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A flag's value, one of a few words (exit 2 naming them: `--format x: md, csv or json`). */
export function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new UserError(
      `${flag} ${value}: ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`,
      'BadFlag',
    );
  return value as T;
}

/** A plain-text table: header, then rows, columns padded to the widest cell. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export function formatSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(seconds % 60).padStart(2, '0')}s`;
}

export function formatTime(date: Date | undefined): string {
  return date
    ? date
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '-';
}

/**
 * A command's action: it returns its exit code (undefined: 0), and this is the one place besides the
 * entry's error path that sets it.
 */
export function exits<A extends unknown[]>(
  action: (...args: A) => Promise<number | void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const code = await action(...args);
    if (code) process.exitCode = code;
  };
}

export interface JsonFlag {
  json?: boolean;
}

/** The command's result on stdout: JSON with --json, else the text. */
export function print(flags: JsonFlag, json: unknown, text: () => string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(json, null, 2)}\n` : text());
}

/** Runs with an AWS session for job commands, closed whatever happens. */
export async function withContext<T>(
  flags: SettingsFlagValues,
  fn: (context: JobContext) => Promise<T>,
): Promise<T> {
  const context = await openJobContext({ settings: settingsOf(flags) });
  try {
    return await fn(context);
  } finally {
    context.close();
  }
}
