import type { DescribeTrainingJobResponse } from '@aws-sdk/client-sagemaker';
import { describeJob, isTerminal, type ILogs, type JobContext, type LogEvent } from '../aws';
import { UserError } from '../errors';
import type { ProgressOf } from '../progress';
import { TRAINING_LOG_GROUP } from '../layout';

export type WatchEvent = ProgressOf<'line' | 'waiting' | 'status'>;

/** `<job>/algo-1-1700000000` → `algo-1`. */
export function hostOf(stream: string, job: string): string {
  return stream.slice(job.length + 1).replace(/-\d+$/, '') || stream;
}

/** Reads every stream of the job from where it left off; returns the new events, oldest first. */
class LogCursor {
  private readonly tokens = new Map<string, string | undefined>();

  constructor(
    private readonly logs: ILogs,
    private readonly job: string,
  ) {}

  async drain(): Promise<{ streams: number; lines: WatchEvent[] }> {
    const streams = await this.logs.describeLogStreams(TRAINING_LOG_GROUP, `${this.job}/`);
    const lines: (LogEvent & { host: string })[] = [];
    for (const stream of streams) {
      let token = this.tokens.get(stream.name);
      for (;;) {
        const page = await this.logs.getLogEvents(TRAINING_LOG_GROUP, stream.name, token);
        lines.push(...page.events.map((e) => ({ ...e, host: hostOf(stream.name, this.job) })));
        // GetLogEvents returns the token it was given once there is nothing newer.
        const done = page.nextToken === undefined || page.nextToken === token || page.events.length === 0;
        token = page.nextToken ?? token;
        if (done) break;
      }
      this.tokens.set(stream.name, token);
    }
    lines.sort((a, b) => a.timestamp - b.timestamp || a.host.localeCompare(b.host));
    return { streams: streams.length, lines: lines.map((l) => ({ type: 'line', ...l })) };
  }
}

export interface WatchOptions {
  /** Keep polling until the job ends. */
  readonly follow: boolean;
  /** Also report status transitions (for `submit --wait`). */
  readonly statusEvents?: boolean;
  readonly pollMs?: number;
}

/**
 * The job's log lines, every host's stream interleaved by time; with `follow`, new lines (and status
 * transitions) as they come, until the job ends. Returns the job's last description.
 */
export async function* watchJob(
  context: JobContext,
  job: string,
  options: WatchOptions,
): AsyncGenerator<WatchEvent, DescribeTrainingJobResponse> {
  let described = await describeJob(context, job);
  const cursor = new LogCursor(context.aws.logs, job);
  let transitionsSeen = 0;
  let saidWaiting = false;
  for (;;) {
    if (options.statusEvents) {
      const transitions = described.SecondaryStatusTransitions ?? [];
      for (const t of transitions.slice(transitionsSeen)) {
        yield {
          type: 'status',
          status: described.TrainingJobStatus ?? '',
          secondary: t.Status ?? '',
          message: t.StatusMessage ?? '',
          time: t.StartTime ?? new Date(),
        };
      }
      transitionsSeen = transitions.length;
    }
    const ended = isTerminal(described.TrainingJobStatus);
    const { streams, lines } = await cursor.drain();
    yield* lines;
    if (streams === 0 && !saidWaiting) {
      saidWaiting = true;
      yield {
        type: 'waiting',
        message: ended
          ? `no log streams for ${job} (the job may have failed before its container started, e.g. an image pull failure)`
          : `no log streams yet for ${job} (${described.SecondaryStatus ?? described.TrainingJobStatus}); they appear once the container starts`,
      };
    }
    if (!options.follow || ended) return described;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 5000));
    described = (await context.aws.sagemaker.describeTrainingJob(job)) ?? described;
  }
}

/** Stops a job, with its state before and after. */
export async function stopJob(
  context: JobContext,
  job: string,
): Promise<{ before: DescribeTrainingJobResponse; after: DescribeTrainingJobResponse }> {
  const before = await describeJob(context, job);
  if (isTerminal(before.TrainingJobStatus) || before.TrainingJobStatus === 'Stopping') {
    throw new UserError(
      `${job} is already ${before.TrainingJobStatus}; there is nothing to stop.`,
      'NotRunning',
    );
  }
  await context.aws.sagemaker.stopTrainingJob(job);
  const after = (await context.aws.sagemaker.describeTrainingJob(job)) ?? before;
  return { before, after };
}
