import type { ECRClient } from '@aws-sdk/client-ecr';
import { mapAwsErrors } from './errors';
import { loadEcr } from './load-sdk';
import type { IEcr } from './types';

/** IEcr on the SDK's ECR client. */
export class SdkEcr implements IEcr {
  constructor(private readonly client: () => Promise<ECRClient>) {}

  async authorizationToken(): Promise<{ username: string; password: string; expiresAt?: Date }> {
    const sdk = loadEcr();
    const client = await this.client();
    const out = await mapAwsErrors({ operation: 'ECR GetAuthorizationToken' }, () =>
      client.send(new sdk.GetAuthorizationTokenCommand({})),
    );
    const data = out.authorizationData?.[0];
    const decoded = Buffer.from(data?.authorizationToken ?? '', 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    if (at < 0) throw new Error('ECR returned no authorization token');
    return {
      username: decoded.slice(0, at),
      password: decoded.slice(at + 1),
      ...(data?.expiresAt ? { expiresAt: data.expiresAt } : {}),
    };
  }
}
