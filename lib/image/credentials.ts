/** Registry logins: what a registry accepts, and a source that renews them before they expire. */

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
  /** When the registry stops accepting them (ECR tokens last 12 h). */
  readonly expiresAt?: Date;
}

/** Returns credentials; `fresh` asks for new ones (the old ones were refused or are about to expire). */
export type CredentialSource = (fresh: boolean) => Promise<RegistryCredentials>;

/** Refreshes ECR tokens this long before they expire, so a long push never outlives its token. */
const REFRESH_MARGIN_MS = 60 * 60 * 1000;

export function cachedCredentials(source: CredentialSource, now: () => number = Date.now): CredentialSource {
  let current: RegistryCredentials | undefined;
  return async (fresh) => {
    const expiring = current?.expiresAt && current.expiresAt.getTime() - now() < REFRESH_MARGIN_MS;
    if (!current || fresh || expiring) current = await source(fresh || Boolean(expiring));
    return current;
  };
}
