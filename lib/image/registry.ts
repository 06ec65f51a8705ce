import { describeAwsError, type IEcr } from '../aws';
import { RuntimeFailure, UserError } from '../errors';
import type { Engine } from './engine';
import type { CredentialSource, RegistryCredentials } from './credentials';
import type { ImageListener, PushResult } from './engine-streams';

export interface RepositoryRef {
  /** `host[:port]` — the registry we log in to. */
  readonly registry: string;
  /** The repository path inside the registry. */
  readonly name: string;
  /** `registry/name`. */
  readonly uri: string;
}

export function parseRepositoryUri(uri: string): RepositoryRef {
  const m = /^([a-zA-Z0-9.-]+(?::\d+)?)\/([a-z0-9._/-]+)$/.exec(uri);
  if (!m) {
    throw new UserError(
      `"${uri}" is not a repository URI. Expected <registry-host>/<name>, e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/rlvr-train.`,
      'BadRepositoryUri',
    );
  }
  return { registry: m[1], name: m[2], uri };
}

function isLoopback(host: string): boolean {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '::1' || /^127\./.test(name);
}

/** Docker (and we) speak plain HTTP only to a registry on loopback. */
export function registryBaseUrl(registry: string): string {
  return `${isLoopback(registry) ? 'http' : 'https'}://${registry}`;
}

const MANIFEST_TYPES = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
].join(', ');

/**
 * The digest of `name:tag` in the registry, or undefined when it has no such tag. Asks the registry
 * itself (the Registry HTTP API, which ECR serves too), so any registry works.
 */
export async function remoteDigest(
  repo: RepositoryRef,
  tag: string,
  credentials: CredentialSource,
): Promise<string | undefined> {
  const url = `${registryBaseUrl(repo.registry)}/v2/${repo.name}/manifests/${encodeURIComponent(tag)}`;
  for (const fresh of [false, true]) {
    const creds = await credentials(fresh);
    let res: { status: number; digest?: string };
    try {
      const r = await registryRequest('HEAD', url, {
        Accept: MANIFEST_TYPES,
        Authorization: basicAuth(creds),
      });
      const digest = r.headers['docker-content-digest'];
      res = { status: r.status, ...(typeof digest === 'string' ? { digest } : {}) };
    } catch (err) {
      throw new RuntimeFailure(
        `Cannot reach the registry ${repo.registry} (${describeFetchError(err)}). Check the repository URI and that the registry is up.`,
        'RegistryUnreachable',
        { cause: err },
      );
    }
    if (res.status === 404) return undefined;
    if (res.status >= 200 && res.status < 300) return res.digest;
    if (res.status === 401 && !fresh) continue;
    if (res.status === 401 || res.status === 403) {
      throw new RuntimeFailure(
        `The registry ${repo.registry} refused our credentials (HTTP ${res.status}). Check that the role may pull and push ${repo.name}.`,
        'RegistryAuthFailed',
      );
    }
    throw new RuntimeFailure(
      `The registry ${repo.registry} answered HTTP ${res.status} for ${repo.name}:${tag}.`,
      'RegistryError',
    );
  }
  return undefined;
}

/**
 * The labels of `name:reference` (a tag or a digest) in the registry: its manifest (for a list, the
 * linux/amd64 one), then its config blob. Undefined when the registry has no such image.
 */
export async function remoteLabels(
  repo: RepositoryRef,
  reference: string,
  credentials: CredentialSource,
): Promise<Record<string, string> | undefined> {
  const base = `${registryBaseUrl(repo.registry)}/v2/${repo.name}`;
  const get = async (url: string, accept: string) => {
    for (const fresh of [false, true]) {
      let r = await registryRequest('GET', url, {
        Accept: accept,
        Authorization: basicAuth(await credentials(fresh)),
      });
      // ECR serves blobs from S3: a redirect to a signed URL, followed without our credentials.
      const location = r.headers.location;
      if (r.status >= 300 && r.status < 400 && typeof location === 'string') {
        r = await registryRequest('GET', new URL(location, url).toString(), { Accept: accept });
      }
      if (r.status === 401 && !fresh) continue;
      if (r.status === 404) return undefined;
      if (r.status < 200 || r.status >= 300) {
        throw new RuntimeFailure(
          `The registry ${repo.registry} answered HTTP ${r.status} for ${url}.`,
          'RegistryError',
        );
      }
      return JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
    }
    return undefined;
  };
  let manifest = await get(`${base}/manifests/${encodeURIComponent(reference)}`, MANIFEST_TYPES);
  const list = manifest?.manifests as
    { digest: string; platform?: { os?: string; architecture?: string } }[] | undefined;
  if (Array.isArray(list)) {
    const pick =
      list.find((m) => m.platform?.os === 'linux' && m.platform?.architecture === 'amd64') ?? list[0];
    manifest = pick ? await get(`${base}/manifests/${pick.digest}`, MANIFEST_TYPES) : undefined;
  }
  const configDigest = (manifest?.config as { digest?: string } | undefined)?.digest;
  if (!configDigest) return undefined;
  const config = await get(`${base}/blobs/${configDigest}`, 'application/json');
  return ((config?.config as { Labels?: Record<string, string> } | undefined)?.Labels ?? {}) as Record<
    string,
    string
  >;
}

function describeFetchError(err: unknown): string {
  return (err as { code?: string }).code ?? (err as Error).message;
}

/**
 * One request with node:http(s). (fetch, on a connection the server closes right after accepting
 * it, was seen here to leave its promise unsettled, and the process then exits silently.)
 */
async function registryRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const target = new URL(url);
  const lib = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = lib.request(target, { method, headers, timeout: 30_000, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

function basicAuth(creds: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
}

/**
 * Adds `alias` to the manifest `digest` in the registry (GET the manifest, PUT it under the new tag),
 * so an image the registry already has gets a commit tag without being pulled or pushed again.
 */
export async function tagRemote(
  repo: RepositoryRef,
  digest: string,
  alias: string,
  credentials: CredentialSource,
): Promise<void> {
  const base = `${registryBaseUrl(repo.registry)}/v2/${repo.name}/manifests/`;
  const creds = await credentials(false);
  const fail = (what: string, status: number, body: Buffer) =>
    new RuntimeFailure(
      `The registry ${repo.registry} answered HTTP ${status} when ${what} (${body.toString('utf8').slice(0, 200)}).`,
      status === 401 || status === 403 ? 'RegistryAuthFailed' : 'RegistryError',
    );
  let got;
  try {
    got = await registryRequest('GET', `${base}${digest}`, {
      Accept: MANIFEST_TYPES,
      Authorization: basicAuth(creds),
    });
  } catch (err) {
    throw new RuntimeFailure(
      `Cannot reach the registry ${repo.registry} (${describeFetchError(err)}).`,
      'RegistryUnreachable',
      {
        cause: err,
      },
    );
  }
  if (got.status !== 200) throw fail(`reading the manifest ${digest}`, got.status, got.body);
  const put = await registryRequest(
    'PUT',
    `${base}${encodeURIComponent(alias)}`,
    { 'Content-Type': String(got.headers['content-type']), Authorization: basicAuth(creds) },
    got.body,
  );
  if (put.status !== 201 && put.status !== 200)
    throw fail(`tagging ${digest} as ${alias}`, put.status, put.body);
}

const AUTH_ERROR = /unauthori[sz]ed|authentication required|denied|no basic auth credentials|401/i;
const TRANSIENT_ERROR =
  /connection refused|connection reset|EOF|timeout|i\/o timeout|broken pipe|50[0-4]|too many requests|429/i;

/**
 * Pushes `repo:tag` through the engine: per-layer progress, a fresh token when the registry refuses
 * the one we had, and retries with backoff for transient registry errors.
 */
export async function pushImage(
  engine: Engine,
  repo: RepositoryRef,
  tag: string,
  credentials: CredentialSource,
  options: {
    readonly listener?: ImageListener;
    readonly attempts?: number;
    readonly backoffMs?: number;
  } = {},
): Promise<PushResult> {
  const attempts = options.attempts ?? 4;
  let fresh = false;
  let authRetried = false;
  for (let attempt = 1; ; attempt++) {
    // The engine keeps the registry's login; a refused or expiring token is replaced before the attempt.
    engine.login(repo.registry, await credentials(fresh));
    fresh = false;
    try {
      return await engine.push(repo.uri, tag, options.listener ? { listener: options.listener } : {});
    } catch (err) {
      const message = (err as Error).message;
      if (AUTH_ERROR.test(message) && !authRetried) {
        authRetried = true;
        fresh = true;
        options.listener?.({
          type: 'retry',
          message: `registry refused the token; getting a new one (${message})`,
        });
        continue;
      }
      if (AUTH_ERROR.test(message)) {
        throw new RuntimeFailure(
          `The registry ${repo.registry} refused our credentials for ${repo.name}: ${message}. Check the repository URI and that the role may push to it.`,
          'RegistryAuthFailed',
          { cause: err },
        );
      }
      if (TRANSIENT_ERROR.test(message) && attempt < attempts) {
        const delay = (options.backoffMs ?? 500) * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
        options.listener?.({
          type: 'retry',
          message: `push to ${repo.registry} failed (${message}); retry ${attempt}/${attempts - 1} in ${(delay / 1000).toFixed(1)} s`,
        });
        await new Promise((r) => setTimeout(r, delay));
        continue;
      }
      throw new RuntimeFailure(
        `Pushing ${repo.uri}:${tag} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${message}. ` +
          `Check that the registry ${repo.registry} is up and reachable from the Docker engine.`,
        'PushFailed',
        { cause: err },
      );
    }
  }
}

/** Registry credentials from ECR's `GetAuthorizationToken` (the role's token for its account's registry). */
export function ecrCredentials(ecr: IEcr): CredentialSource {
  return async () => {
    try {
      return await ecr.authorizationToken();
    } catch (err) {
      throw new RuntimeFailure(
        `Could not get a registry login from ECR (GetAuthorizationToken): ${describeAwsError(err)}`,
        'RegistryLoginFailed',
        { cause: err },
      );
    }
  };
}
