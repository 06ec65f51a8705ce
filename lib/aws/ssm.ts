import type { SSMClient } from '@aws-sdk/client-ssm';
import { isAwsError, mapAwsErrors } from './errors';
import { loadSdk } from './load-sdk';
import type { ISsm } from './types';

/** ISsm on the SDK's SSM client. */
export class SdkSsm implements ISsm {
  constructor(private readonly client: () => Promise<SSMClient>) {}

  async getParameter(name: string): Promise<string | undefined> {
    const sdk = loadSdk();
    const client = await this.client();
    try {
      return await mapAwsErrors({ operation: 'SSM GetParameter' }, async () => {
        const out = await client.send(new sdk.GetParameterCommand({ Name: name }));
        return out.Parameter?.Value;
      });
    } catch (err) {
      if (isAwsError(err, 'NotFound')) return undefined;
      throw err;
    }
  }
}
