import type {
  CreateTrainingJobRequest,
  DescribeTrainingJobResponse,
  SageMakerClient,
  TrainingJobStatus,
  TrainingJobSummary,
} from '@aws-sdk/client-sagemaker';
import { isAwsError, mapAwsErrors, type AwsErrorContext } from './errors';
import { loadSdk, type Sdk } from './load-sdk';
import type { ISageMaker } from './types';

/** SageMaker answers a missing job with ValidationException "Requested resource not found" (moto: "Could not find …"). */
const JOB_NOT_FOUND = /could not find|not found|does not exist/i;

/** ISageMaker on the SDK's SageMaker client. */
export class SdkSageMaker implements ISageMaker {
  constructor(private readonly client: () => Promise<SageMakerClient>) {}

  private async call<T>(
    operation: string,
    run: (sdk: Sdk, client: SageMakerClient) => Promise<T>,
    context: AwsErrorContext = {},
  ): Promise<T> {
    const sdk = loadSdk();
    const client = await this.client();
    const mapping = { notFoundByStatus: false, ...context, operation: `SageMaker ${operation}` };
    return mapAwsErrors(mapping, () => run(sdk, client));
  }

  async createTrainingJob(request: CreateTrainingJobRequest): Promise<string> {
    return this.call('CreateTrainingJob', async (sdk, client) => {
      const out = await client.send(new sdk.CreateTrainingJobCommand(request));
      return out.TrainingJobArn!;
    });
  }

  async listTrainingJobs(filter: {
    nameContains?: string;
    status?: TrainingJobStatus;
    limit: number;
  }): Promise<TrainingJobSummary[]> {
    return this.call('ListTrainingJobs', async (sdk, client) => {
      const out: TrainingJobSummary[] = [];
      const pages = sdk.paginateListTrainingJobs(
        { client, pageSize: Math.min(100, filter.limit) },
        {
          NameContains: filter.nameContains,
          StatusEquals: filter.status,
          SortBy: 'CreationTime',
          SortOrder: 'Descending',
        },
      );
      for await (const page of pages) {
        out.push(...(page.TrainingJobSummaries ?? []));
        if (out.length >= filter.limit) return out.slice(0, filter.limit);
      }
      return out;
    });
  }

  async stopTrainingJob(name: string): Promise<void> {
    await this.call(
      'StopTrainingJob',
      (sdk, client) => client.send(new sdk.StopTrainingJobCommand({ TrainingJobName: name })),
      { notFoundMessage: JOB_NOT_FOUND },
    );
  }

  async listTags(arn: string): Promise<Record<string, string>> {
    return this.call('ListTags', async (sdk, client) => {
      const out: Record<string, string> = {};
      for await (const page of sdk.paginateListTags({ client }, { ResourceArn: arn })) {
        for (const t of page.Tags ?? []) out[t.Key!] = t.Value ?? '';
      }
      return out;
    });
  }

  async describeTrainingJob(name: string): Promise<DescribeTrainingJobResponse | undefined> {
    try {
      return await this.call(
        'DescribeTrainingJob',
        (sdk, client) => client.send(new sdk.DescribeTrainingJobCommand({ TrainingJobName: name })),
        { notFoundMessage: JOB_NOT_FOUND },
      );
    } catch (err) {
      if (isAwsError(err, 'NotFound')) return undefined;
      throw err;
    }
  }
}
