import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AwsError } from './errors';
import { loadSdk } from './load-sdk';

/**
 * Whether the SDK's credential chain has anything to find, without asking it. A dry-run on a laptop
 * with no AWS configuration must not wait on (or send traffic to) the instance metadata endpoint, so
 * the chain is only tried when one of its sources is present. On EC2, the metadata service is one.
 */
export function mayHaveCredentials(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): boolean {
  if (env.AWS_ACCESS_KEY_ID || env.AWS_PROFILE || env.AWS_WEB_IDENTITY_TOKEN_FILE) return true;
  if (env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI || env.AWS_CONTAINER_CREDENTIALS_FULL_URI) return true;
  const files = [
    env.AWS_SHARED_CREDENTIALS_FILE ?? path.join(home, '.aws', 'credentials'),
    env.AWS_CONFIG_FILE ?? path.join(home, '.aws', 'config'),
  ];
  if (files.some((f) => fs.existsSync(f))) return true;
  return env.AWS_EC2_METADATA_DISABLED !== 'true' && looksLikeEc2();
}

function looksLikeEc2(): boolean {
  for (const [file, prefix] of [
    ['/sys/hypervisor/uuid', 'ec2'],
    ['/sys/devices/virtual/dmi/id/board_asset_tag', 'i-'],
  ] as const) {
    try {
      if (fs.readFileSync(file, 'utf8').trim().toLowerCase().startsWith(prefix)) return true;
    } catch {
      // not readable: not this kind of machine
    }
  }
  return false;
}

/** The region from the SDK's own sources (AWS_REGION, profile config), or undefined. */
export async function sdkDefaultRegion(): Promise<string | undefined> {
  const { SSMClient } = loadSdk();
  const client = new SSMClient({});
  try {
    return await client.config.region();
  } catch {
    return undefined;
  } finally {
    client.destroy();
  }
}

/** What kind of failure an AWS call had: the CLI shows the cause; the dry-run decides whether to skip. */
export type AwsFailureKind = 'no-credentials' | 'unreachable' | 'access-denied' | 'other';

/** The SDK's error behind an AwsError (errors.ts): the one to classify and describe. */
const sdkError = (err: unknown): unknown => (err instanceof AwsError ? err.cause : err);

export function classifyAwsError(err: unknown): AwsFailureKind {
  const e = sdkError(err) as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const text = `${e.name ?? ''} ${e.code ?? ''} ${e.message ?? ''}`;
  if (/CredentialsProviderError|Could not load credentials|ExpiredToken|InvalidClientTokenId/i.test(text))
    return 'no-credentials';
  if (
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|EAI_AGAIN|TimeoutError|socket hang up/i.test(
      text,
    )
  )
    return 'unreachable';
  if (
    /AccessDenied|Forbidden|UnauthorizedOperation|not authorized/i.test(text) ||
    e.$metadata?.httpStatusCode === 403
  )
    return 'access-denied';
  return 'other';
}

export function describeAwsError(err: unknown): string {
  const raw = sdkError(err) as { name?: string; message?: string };
  const e = { name: raw.name, message: raw.message?.split('\n')[0] };
  switch (classifyAwsError(raw)) {
    case 'no-credentials':
      return `no usable AWS credentials (${e.message ?? e.name}). Configure credentials (aws configure, AWS_PROFILE or SSO) and try again.`;
    case 'unreachable':
      return `AWS could not be reached (${e.message ?? e.name}). Check the network, AWS_ENDPOINT_URL and the region.`;
    case 'access-denied':
      return `access denied (${e.message ?? e.name}). Attach the rlvr submitter policy from the infrastructure stack to your identity.`;
    default:
      return `${e.name ?? 'Error'}: ${e.message ?? String(raw)}`;
  }
}
