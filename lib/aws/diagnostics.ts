import type { ECRClient } from '@aws-sdk/client-ecr';
import type { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import type { STSClient } from '@aws-sdk/client-sts';
import { isAwsError, mapAwsErrors } from './errors';
import { loadEcr, loadQuotas, loadSts } from './load-sdk';
import type { IDiagnostics } from './types';

/** IDiagnostics (`rlvr doctor`) on the SDK's STS, ECR and Service Quotas clients. */
export class SdkDiagnostics implements IDiagnostics {
  constructor(
    private readonly sts: () => Promise<STSClient>,
    private readonly ecr: () => Promise<ECRClient>,
    private readonly quotas: () => Promise<ServiceQuotasClient>,
  ) {}

  async callerIdentity(): Promise<{ account: string; arn: string }> {
    const sdk = loadSts();
    const client = await this.sts();
    const out = await mapAwsErrors({ operation: 'STS GetCallerIdentity' }, () =>
      client.send(new sdk.GetCallerIdentityCommand({})),
    );
    return { account: out.Account ?? '', arn: out.Arn ?? '' };
  }

  async repositoryExists(name: string): Promise<boolean> {
    const sdk = loadEcr();
    const client = await this.ecr();
    try {
      await mapAwsErrors({ operation: 'ECR DescribeRepositories' }, () =>
        client.send(new sdk.DescribeRepositoriesCommand({ repositoryNames: [name] })),
      );
      return true;
    } catch (err) {
      if (isAwsError(err, 'NotFound')) return false;
      throw err;
    }
  }

  async sagemakerQuotas(text: string): Promise<Record<string, number>> {
    const sdk = loadQuotas();
    const client = await this.quotas();
    return mapAwsErrors({ operation: 'Service Quotas ListServiceQuotas' }, async () => {
      const out: Record<string, number> = {};
      for await (const page of sdk.paginateListServiceQuotas({ client }, { ServiceCode: 'sagemaker' })) {
        for (const q of page.Quotas ?? []) if (q.QuotaName?.includes(text)) out[q.QuotaName] = q.Value ?? 0;
      }
      return out;
    });
  }
}
