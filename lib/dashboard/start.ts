import { openJobContext, type JobContext } from '../aws';
import { UserError } from '../errors';
import type { SettingFlags } from '../settings';
import { defaultedJobLogPath } from '../submission';
import { DashboardData } from './data';
import { jobViews, type JobView } from './jobs';
import { startLive, type Live } from './live';
import { startServer, type DashboardServer } from './server';

/*
 * `rlvr dashboard` as one thing: the server, the jobs listing it serves (SageMaker's when asked, with
 * the local runs), and the live sync that keeps running jobs' traces current and tells open pages —
 * started together, closed together. The caller decides when it closes (the CLI: on Ctrl-C, handing
 * an AbortSignal down, as the library installs no signal handlers).
 */

export interface DashboardOptions {
  /** The results folder (absolute). */
  readonly resultsDir: string;
  readonly host: string;
  /** 0: a free one. */
  readonly port: number;
  /** Required in every request (for a host other than loopback). */
  readonly token?: string;
  /** List SageMaker's jobs and sync running traces with these settings; absent: local runs only. */
  readonly aws?: { readonly settings: SettingFlags };
  /** Seconds between syncs of running jobs' traces. */
  readonly pollSeconds: number;
  /** A running job whose trace has not grown for this long is flagged. */
  readonly stallMinutes: number;
}

export interface Dashboard {
  readonly url: string;
  /** Whether SageMaker is asked (its session opened). */
  readonly aws: boolean;
  /** Why SageMaker is not asked although options.aws asked for it (its session could not open). */
  readonly awsNote?: string;
  /** Stops the live sync, then the server, then the AWS session; once, however often it is called. */
  close(): Promise<void>;
  /** Closes the dashboard when the signal aborts; resolves as `closed` does. */
  closeOn(signal: AbortSignal): Promise<void>;
  /** Settles once the dashboard is closed. */
  readonly closed: Promise<void>;
}

/** Open pages ask for the jobs often; SageMaker is asked at most this often. */
const JOBS_FRESH_MS = 15_000;

interface JobsAnswer {
  jobs: JobView[];
  aws: string;
}

interface JobsCache {
  /** The latest listing while it is fresh, else a new one. */
  get(): Promise<JobsAnswer>;
  /** The SageMaker jobs running in the latest listing: the ones whose traces the live sync pulls. */
  running(): string[];
  /** The next get() lists again (the live sync saw the jobs change). */
  stale(): void;
}

function jobsCache(o: {
  data: DashboardData;
  resultsDir: string;
  context?: JobContext;
  why?: string;
  stallMinutes: number;
  jobLogPath: string;
  grewAt: (job: string) => number | undefined;
}): JobsCache {
  let latest: JobsAnswer = { jobs: [], aws: o.why ?? 'not asked yet' };
  let listedAt = 0;
  return {
    async get() {
      if (Date.now() - listedAt < JOBS_FRESH_MS) return latest;
      const v = await jobViews({
        resultsDir: o.resultsDir,
        context: o.context,
        stallMinutes: o.stallMinutes,
        jobLogPath: o.jobLogPath,
        progress: (id) => o.data.progress(id).catch(() => undefined),
        grewAt: o.grewAt,
      });
      latest = { jobs: v.jobs, aws: o.context ? v.aws : (o.why ?? v.aws) };
      listedAt = Date.now();
      return latest;
    },
    running: () =>
      latest.jobs.filter((j) => j.status === 'InProgress' && j.source !== 'local').map((j) => j.name),
    stale() {
      listedAt = 0;
    },
  };
}

/** SageMaker, when asked and the settings and credentials allow; else the view is local only, and says why. */
async function openAws(aws: DashboardOptions['aws']): Promise<{ context?: JobContext; why?: string }> {
  if (!aws) return {};
  try {
    return { context: await openJobContext({ settings: aws.settings }) };
  } catch (e) {
    return { why: `SageMaker not asked: ${(e as Error).message.split('\n')[0]}` };
  }
}

/** Why the server could not listen, as bad input when the address or port is the user's to change. */
function listenError(e: unknown, host: string, port: number): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new UserError(
      `--port ${port} is in use on ${host}: pick another port, or --port 0 (or no --port) for a free one.`,
      'BadFlag',
      { cause: e },
    );
  if (code === 'EACCES')
    return new UserError(
      `--port ${port}: not allowed for this user (ports below 1024 need privileges): pick one above 1023, or --port 0 for a free one.`,
      'BadFlag',
      { cause: e },
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new UserError(`--host ${host}: not an address of this machine.`, 'BadFlag', { cause: e });
  return e;
}

/** The handle the caller closes the started dashboard through. */
function dashboardHandle(
  server: DashboardServer,
  live: Live,
  aws: { context?: JobContext; why?: string },
): Dashboard {
  let closing: Promise<void> | undefined;
  let settle!: (outcome: Promise<void>) => void;
  const closed = new Promise<void>((resolve) => (settle = resolve));
  // a failed close reaches whoever awaits close() or closed; unawaited, it is no unhandled rejection
  closed.catch(() => undefined);
  const close = (): Promise<void> => {
    if (!closing) {
      closing = (async () => {
        live.stop();
        await server.close();
        aws.context?.close();
      })();
      settle(closing);
    }
    return closing;
  };
  return {
    url: server.url,
    aws: aws.context !== undefined,
    awsNote: aws.why,
    close,
    closeOn(signal) {
      const onAbort = (): void => void close().catch(() => undefined);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      return closed;
    },
    closed,
  };
}

/** Starts the dashboard: SageMaker's session (when asked), the server, the live sync. */
export async function startDashboard(o: DashboardOptions): Promise<Dashboard> {
  const aws = await openAws(o.aws);
  const { context } = aws;
  const data = new DashboardData({ resultsDir: o.resultsDir });
  const jobLogPath = await defaultedJobLogPath({ explicit: undefined, env: process.env, cwd: process.cwd() });
  // eslint-disable-next-line prefer-const -- assigned once the server it reports to has started
  let live: Live | undefined;
  const jobs = jobsCache({
    data,
    resultsDir: o.resultsDir,
    context,
    why: aws.why,
    stallMinutes: o.stallMinutes,
    jobLogPath,
    grewAt: (job) => live?.grewAt(job),
  });
  const server = await startServer({
    data,
    host: o.host,
    port: o.port,
    token: o.token,
    jobs: jobs.get,
  }).catch((e: unknown) => {
    // no handle will close the session opened above
    context?.close();
    throw listenError(e, o.host, o.port);
  });
  live = startLive({
    resultsDir: o.resultsDir,
    context,
    pollSeconds: o.pollSeconds,
    running: jobs.running,
    notify: (event, id) => {
      if (event === 'jobs') jobs.stale();
      server.notify(event, id);
    },
  });
  return dashboardHandle(server, live, aws);
}
