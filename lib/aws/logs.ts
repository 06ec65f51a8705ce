import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { isAwsError, mapAwsErrors } from './errors';
import { loadLogs } from './load-sdk';
import type { ILogs, LogEvent, LogStreamInfo } from './types';

type LogsSdk = typeof import('@aws-sdk/client-cloudwatch-logs');

/** ILogs on the SDK's CloudWatch Logs client. */
export class SdkLogs implements ILogs {
  constructor(private readonly client: () => Promise<CloudWatchLogsClient>) {}

  private async call<T>(
    operation: string,
    run: (sdk: LogsSdk, client: CloudWatchLogsClient) => Promise<T>,
  ): Promise<T> {
    const sdk = loadLogs();
    const client = await this.client();
    return mapAwsErrors({ operation: `CloudWatch Logs ${operation}` }, () => run(sdk, client));
  }

  async describeLogStreams(group: string, prefix: string): Promise<LogStreamInfo[]> {
    try {
      return await this.call('DescribeLogStreams', async (sdk, client) => {
        const out: LogStreamInfo[] = [];
        const pages = sdk.paginateDescribeLogStreams(
          { client },
          { logGroupName: group, logStreamNamePrefix: prefix },
        );
        for await (const page of pages) {
          for (const s of page.logStreams ?? [])
            out.push({ name: s.logStreamName!, lastEventTime: s.lastEventTimestamp });
        }
        return out;
      });
    } catch (err) {
      if (isAwsError(err, 'NotFound')) return [];
      throw err;
    }
  }

  async getLogEvents(
    group: string,
    stream: string,
    token?: string,
  ): Promise<{ events: LogEvent[]; nextToken?: string }> {
    return this.call('GetLogEvents', async (sdk, client) => {
      const page = await client.send(
        new sdk.GetLogEventsCommand({
          logGroupName: group,
          logStreamName: stream,
          startFromHead: true,
          nextToken: token,
        }),
      );
      return {
        events: (page.events ?? []).map((e) => ({ timestamp: e.timestamp ?? 0, message: e.message ?? '' })),
        nextToken: page.nextForwardToken,
      };
    });
  }
}
