import { ProblemsError, UserError, type Problem } from '../errors';
import {
  DEFAULT_JOB_NAME_PREFIX,
  DEFAULT_ROOT_PREFIX,
  normalisePrefix,
  SETTINGS_ENV,
  SETTINGS_PARAMETER_NAME,
} from '../layout';

/**
 * The launcher settings: what the infrastructure stack publishes (one SSM parameter, JSON) and what
 * flags and environment variables can override.
 */
export interface Settings {
  bucket: string;
  prefix: string;
  roleArn: string;
  repositoryUri: string;
  region: string;
  subnets?: string[];
  securityGroups?: string[];
  kmsKeyId?: string;
  /** The file system multi-host jobs share (the stack's EFS, `-c rlvr:sharedFileSystem=efs`). */
  fileSystemId?: string;
  jobNamePrefix: string;
}
export type SettingName = keyof Settings;

/** Where a setting came from, shown in the plan. */
export type SettingSource =
  `flag --${string}` | `env ${string}` | `parameter ${string}` | 'default' | 'not set' | 'unresolved';

export interface SettingFlags {
  readonly bucket?: string;
  readonly prefix?: string;
  readonly roleArn?: string;
  readonly repositoryUri?: string;
  readonly region?: string;
  readonly subnets?: string;
  readonly securityGroups?: string;
  readonly kmsKey?: string;
  readonly fileSystemId?: string;
}

interface SettingSpec {
  readonly flag: string;
  readonly env?: readonly string[];
  /** A list (comma-separated in a flag or variable) of at most this many values. */
  readonly listMax?: number;
  /** What a valid value (each, for a list) matches, and how a problem says it. */
  readonly form?: { readonly pattern: RegExp; readonly what: string };
}

/*
 * Checked by hand, not with a zod schema: every AWS command validates its settings, and loading zod
 * cost 68 ms of its start on the 2-core bench host (ten fields of strings and lists of strings).
 */

const SPECS: Record<SettingName, SettingSpec> = {
  bucket: {
    flag: 'bucket',
    env: [SETTINGS_ENV.bucket],
    form: {
      pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      what: 'an S3 bucket name (3–63 lowercase letters, digits, "." and "-")',
    },
  },
  prefix: { flag: 'prefix', env: [SETTINGS_ENV.prefix] },
  roleArn: {
    flag: 'role-arn',
    env: [SETTINGS_ENV.roleArn],
    form: { pattern: /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, what: 'an IAM role ARN' },
  },
  repositoryUri: {
    flag: 'repository-uri',
    env: [SETTINGS_ENV.repositoryUri],
    form: { pattern: /^[a-zA-Z0-9.-]+(:\d+)?\/[a-z0-9._/-]+$/, what: 'a repository URI (host/name)' },
  },
  region: {
    flag: 'region',
    env: ['AWS_REGION', 'AWS_DEFAULT_REGION'],
    form: { pattern: /^[a-z]{2}(-[a-z]+)+-\d$/, what: 'an AWS region such as us-west-2' },
  },
  subnets: {
    flag: 'subnets',
    env: [SETTINGS_ENV.subnets],
    listMax: 16,
    form: { pattern: /^subnet-[0-9a-f]+$/, what: 'subnet ids like subnet-0123abcd' },
  },
  securityGroups: {
    flag: 'security-groups',
    env: [SETTINGS_ENV.securityGroups],
    listMax: 5,
    form: { pattern: /^sg-[0-9a-f]+$/, what: 'security group ids like sg-0123abcd' },
  },
  kmsKeyId: { flag: 'kms-key', env: [SETTINGS_ENV.kmsKeyId], form: { pattern: /./, what: 'a KMS key id' } },
  jobNamePrefix: { flag: 'job-name-prefix', env: [SETTINGS_ENV.jobNamePrefix] },
  fileSystemId: {
    flag: 'file-system-id',
    env: [SETTINGS_ENV.fileSystemId],
    form: { pattern: /^fs-[0-9a-f]{8,}$/, what: 'a file system id like fs-0123456789abcdef0' },
  },
};

/** What is wrong with a setting's value, or undefined when it is valid. */
function settingProblem(name: SettingName, value: unknown): string | undefined {
  const spec = SPECS[name];
  const one = (v: unknown): string | undefined =>
    typeof v !== 'string'
      ? 'expected a string'
      : spec.form && !spec.form.pattern.test(v)
        ? spec.form.what
        : undefined;
  if (spec.listMax === undefined) return one(value);
  if (!Array.isArray(value)) return 'expected a list of strings';
  if (value.length > spec.listMax) return `at most ${spec.listMax} values`;
  return value.map(one).find((problem) => problem !== undefined);
}

const FLAG_KEYS: Partial<Record<SettingName, keyof SettingFlags>> = {
  bucket: 'bucket',
  prefix: 'prefix',
  roleArn: 'roleArn',
  repositoryUri: 'repositoryUri',
  region: 'region',
  subnets: 'subnets',
  securityGroups: 'securityGroups',
  kmsKeyId: 'kmsKey',
  fileSystemId: 'fileSystemId',
};

/** Settings without which nothing can be submitted. */
export const REQUIRED_SETTINGS: readonly SettingName[] = ['bucket', 'roleArn', 'repositoryUri', 'region'];

export interface ResolvedSettings {
  /** Values; unresolved required settings are absent. */
  readonly values: Partial<Settings>;
  readonly sources: Readonly<Record<SettingName, SettingSource>>;
  readonly missing: readonly SettingName[];
  /** Why the parameter was not read, when it was not. */
  readonly parameterNote?: string;
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Merges flags > environment > the stack's parameter. `parameterValues` is the parsed SSM parameter
 * (or undefined when it could not be read). Pure.
 */
export function mergeSettings(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
  parameterValues: Partial<Settings> | undefined,
  parameterNote?: string,
): ResolvedSettings {
  const values: Record<string, unknown> = {};
  const sources = {} as Record<SettingName, SettingSource>;
  for (const name of Object.keys(SPECS) as SettingName[]) {
    const spec = SPECS[name];
    const flagKey = FLAG_KEYS[name];
    const flagValue = flagKey ? flags[flagKey] : undefined;
    const envName = spec.env?.find((e) => env[e] !== undefined && env[e] !== '');
    let raw: unknown;
    if (flagValue !== undefined) {
      raw = flagValue;
      sources[name] = `flag --${spec.flag}`;
    } else if (envName) {
      raw = env[envName];
      sources[name] = `env ${envName}`;
    } else if (parameterValues && parameterValues[name] !== undefined) {
      values[name] = parameterValues[name];
      sources[name] = `parameter ${SETTINGS_PARAMETER_NAME}`;
      continue;
    } else {
      sources[name] =
        name === 'prefix' || name === 'jobNamePrefix'
          ? 'default'
          : REQUIRED_SETTINGS.includes(name)
            ? 'unresolved'
            : 'not set';
      continue;
    }
    values[name] = spec.listMax !== undefined ? splitList(String(raw)) : raw;
  }
  values.prefix = normalisePrefix((values.prefix as string | undefined) ?? DEFAULT_ROOT_PREFIX);
  values.jobNamePrefix ??= DEFAULT_JOB_NAME_PREFIX;
  const missing = REQUIRED_SETTINGS.filter((n) => values[n] === undefined);
  return { values: values as Partial<Settings>, sources, missing, parameterNote };
}

/** Checks each resolved value; problems name the flag or variable it came from. */
export function validateSettings(resolved: ResolvedSettings): Problem[] {
  const problems: Problem[] = [];
  for (const [name, value] of Object.entries(resolved.values) as [SettingName, unknown][]) {
    const problem = settingProblem(name, value);
    if (problem) {
      problems.push({
        where: `setting ${name} (from ${resolved.sources[name]})`,
        message: `${JSON.stringify(value)} is not valid: ${problem}`,
      });
    }
  }
  return problems;
}

/** For a real submit: every required setting present and valid, or one error saying how to provide them. */
export function requireSettings(resolved: ResolvedSettings): Settings {
  const problems = validateSettings(resolved);
  for (const name of resolved.missing) {
    const spec = SPECS[name];
    problems.push({
      where: `setting ${name}`,
      message: 'not set',
      hint: `Pass --${spec.flag}, set ${spec.env?.[0] ?? ''}, or deploy the infrastructure stack (\`npx cdk deploy --all\`), which publishes ${SETTINGS_PARAMETER_NAME}.${resolved.parameterNote ? ` (${resolved.parameterNote})` : ''}`,
    });
  }
  if (problems.length > 0) throw new ProblemsError('The launcher settings are incomplete', problems);
  // Every required setting is present and every value valid; mergeSettings gave the defaults.
  return resolved.values as Settings;
}

/** Parses the published parameter; a malformed parameter is a user-fixable error (redeploy). */
export function parseSettingsParameter(text: string): Partial<Settings> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UserError(
      `The parameter ${SETTINGS_PARAMETER_NAME} is not JSON. Redeploy the infrastructure stack (\`npx cdk deploy --all\`).`,
      'BadSettingsParameter',
    );
  }
  const problems = settingsObjectProblems(json);
  if (problems.length > 0) {
    throw new UserError(
      `The parameter ${SETTINGS_PARAMETER_NAME} does not hold valid settings (${problems.join('; ')}). Redeploy the infrastructure stack.`,
      'BadSettingsParameter',
    );
  }
  return json as Partial<Settings>;
}

/**
 * What is wrong with a settings object as the stack publishes it (each key a setting, each value
 * valid; none is required), as `key: problem`.
 */
export function settingsObjectProblems(json: unknown): string[] {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return ['not a JSON object'];
  return Object.entries(json).flatMap(([key, value]) => {
    if (!Object.hasOwn(SPECS, key)) return [`${key}: not a setting`];
    const problem = settingProblem(key as SettingName, value);
    return problem ? [`${key}: ${problem}`] : [];
  });
}

/** Reads the parameter the stack publishes (an ISsm). */
export interface SettingsParameterReader {
  getParameter(name: string): Promise<string | undefined>;
}

export type ParameterState = 'found' | 'absent' | 'not read';

/**
 * flags > environment > the stack's parameter, which is read only when a required setting is still
 * missing and a reader is given. `region` is the one the caller resolved (it may come from the SDK's
 * profile rather than the environment). AWS errors propagate: the caller decides what they mean.
 */
export async function resolveSettings(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
  region: string,
  reader: SettingsParameterReader | undefined,
): Promise<{ settings: ResolvedSettings; parameter: ParameterState }> {
  const withRegion =
    flags.region || env.AWS_REGION || env.AWS_DEFAULT_REGION ? env : { ...env, AWS_REGION: region };
  const partial = mergeSettings(flags, withRegion, undefined);
  if (partial.missing.length === 0 || !reader) return { settings: partial, parameter: 'not read' };
  const text = await reader.getParameter(SETTINGS_PARAMETER_NAME);
  if (!text) {
    return {
      settings: mergeSettings(
        flags,
        withRegion,
        undefined,
        `${SETTINGS_PARAMETER_NAME} does not exist in ${region}`,
      ),
      parameter: 'absent',
    };
  }
  return { settings: mergeSettings(flags, withRegion, parseSettingsParameter(text)), parameter: 'found' };
}
