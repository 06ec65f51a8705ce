/**
 * The two sides of a multi-host job (the protocol: cluster.ts): the head forms the cluster before its
 * trainer starts; a worker joins it and ends with the head.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import {
  endedPhase,
  heartbeat,
  parseRayStatus,
  resolveHost,
  type ClusterHosts,
  type ClusterTiming,
  type HeadEndpoint,
  type HeadStatus,
  type WorkerState,
} from './cluster';
import { runToEnd } from './process';
import { JobFailure, type ContainerJob } from './setup';

/** Runs one `ray …` command to its end, its output into logs/ray[-host].log and the job's log. */
export type RayCommand = (command: string) => Promise<{ code: number | null; tail: string[] }>;

export function rayCommand(job: ContainerJob, env: NodeJS.ProcessEnv): RayCommand {
  return (command) =>
    runToEnd(command, {
      cwd: job.codeDir,
      env,
      logFile: path.join(job.logsDir, job.own('ray.log')),
      name: 'ray',
      out: job.out,
      // `ray status` lists every node: all of it is read, not the failure file's last lines.
      keepLines: 10_000,
    });
}

/** SIGTERM (stop, spot) came while the hosts were joining: the job stops; nothing failed. */
export class StoppedWhileJoining extends Error {
  constructor() {
    super('stopped while the hosts were joining');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

interface Side {
  readonly job: ContainerJob;
  readonly cluster: ClusterHosts;
  readonly timing: ClusterTiming;
  readonly ray: RayCommand;
  /** Train GPUs on each host (every host gives Ray the same number). */
  readonly gpus: number;
  readonly stopping: () => boolean;
}

/**
 * The head: Ray's head on this host's train GPUs, then every other host joined (our endpoint) and
 * counted by Ray (nodes and `hosts × gpus` GPUs) within the join timeout. Returns RAY_ADDRESS; a host
 * that never joins fails the job, named, rather than leaving a partial cluster.
 */
export async function formCluster(side: Side & { readonly endpoint: HeadEndpoint }): Promise<string> {
  const { job, cluster, timing, ray, gpus, endpoint } = side;
  const started = Date.now();
  const deadline = started + timing.joinTimeoutMs;
  const own = await resolveHost(cluster.current, deadline, side.stopping);
  if (!own) throw new JobFailure(`cluster: this host's own name ${cluster.current} does not resolve`);
  const rayAddress = `${own}:${timing.rayPort}`;
  const head = await ray(
    `ray start --head --port=${timing.rayPort} --node-ip-address=${own} --num-gpus=${gpus} --disable-usage-stats --include-dashboard=false`,
  );
  if (head.code !== 0) throw new JobFailure(`ray start --head exited with code ${head.code}`, head.tail);
  endpoint.publish('ray-up', { rayAddress });

  const workers = cluster.hosts.filter((h) => h !== cluster.current);
  const resolved = new Map<string, string>();
  const wantGpus = cluster.hosts.length * gpus;
  let seen: { nodes: number; gpus: number } | undefined;
  let statusTail: string[] = [];
  for (;;) {
    if (side.stopping()) throw new StoppedWhileJoining();
    for (const h of workers.filter((w) => !resolved.has(w))) {
      const ip = await resolveHost(h, 0, () => true);
      if (ip) resolved.set(h, ip);
      if (ip) job.say(`cluster: ${h} resolves to ${ip}`);
    }
    const failed = workers.filter((h) => endpoint.workers.get(h)?.state === 'failed');
    if (failed.length > 0) {
      throw new JobFailure(
        `cluster: ${failed.map((h) => `${h} could not join (${endpoint.workers.get(h)?.reason ?? 'no reason given'})`).join('; ')}`,
      );
    }
    if (workers.every((h) => endpoint.workers.get(h)?.state === 'joined')) {
      const status = await ray(`ray status --address=${rayAddress}`);
      statusTail = status.tail;
      seen = parseRayStatus(status.tail.join('\n'));
      if (seen && seen.nodes >= cluster.hosts.length && seen.gpus >= wantGpus) {
        job.say(
          `cluster: ${seen.nodes} hosts, ${seen.gpus} GPUs in Ray after ${seconds(Date.now() - started)}; RAY_ADDRESS=${rayAddress}`,
        );
        return rayAddress;
      }
    }
    if (Date.now() >= deadline) {
      throw new JobFailure(missingHosts(side, workers, resolved, seen, wantGpus), statusTail);
    }
    await sleep(timing.pollMs);
  }
}

function missingHosts(
  side: Side & { readonly endpoint: HeadEndpoint },
  workers: readonly string[],
  resolved: ReadonlyMap<string, string>,
  seen: { nodes: number; gpus: number } | undefined,
  wantGpus: number,
): string {
  const { endpoint, cluster, timing } = side;
  const missing = workers
    .filter((h) => endpoint.workers.get(h)?.state !== 'joined')
    .map((h) => {
      const w = endpoint.workers.get(h);
      if (w) return `${h} (reached the head but did not join Ray)`;
      return `${h} (${resolved.has(h) ? 'never reached the head' : 'its name never resolved'})`;
    });
  const within = seconds(timing.joinTimeoutMs);
  const what =
    missing.length > 0
      ? `${missing.length} of ${workers.length} other host(s) did not join within ${within}: ${missing.join(', ')}`
      : `every host reached the head, but Ray counts ${seen?.nodes ?? '?'} of ${cluster.hosts.length} nodes and ${seen?.gpus ?? '?'} of ${wantGpus} GPUs after ${within}`;
  return `cluster: ${what}. The job fails rather than train on part of the cluster it pays for.`;
}

export interface WorkerOutcome {
  readonly status: 'Completed' | 'Stopped' | 'Failed';
  readonly reason?: string;
  readonly tail?: readonly string[];
}

const failed = (reason: string, tail: readonly string[] = []): WorkerOutcome => ({
  status: 'Failed',
  reason,
  tail,
});

/**
 * A worker: waits for the head's Ray (the join timeout), joins it with a non-blocking `ray start`,
 * then follows the head until its trainer has ended, or the head has been silent for the lost window;
 * `ray stop` in every case.
 */
export async function runWorker(side: Side): Promise<WorkerOutcome> {
  const { job, cluster, timing, ray } = side;
  const deadline = Date.now() + timing.joinTimeoutMs;
  const headIp = await resolveHost(cluster.head, deadline, side.stopping);
  if (side.stopping()) return { status: 'Stopped' };
  if (!headIp)
    return failed(
      `cluster: the head ${cluster.head} did not resolve within ${seconds(timing.joinTimeoutMs)}`,
    );
  job.say(`cluster: head ${cluster.head} at ${headIp}; waiting for its Ray`);
  const beat: Beat = (state, reason) =>
    heartbeat(headIp, timing.statusPort, cluster.current, state, reason, Math.max(1000, timing.pollMs * 3));

  const status = await waitForHeadRay(side, beat, deadline);
  if (status.outcome) return status.outcome;
  const own = await ownAddress(side, deadline);
  const start = `ray start --address=${status.rayAddress}${own ? ` --node-ip-address=${own}` : ''} --num-gpus=${side.gpus} --disable-usage-stats`;
  const joined = await ray(start);
  if (joined.code !== 0) {
    const why = `ray start --address=${status.rayAddress} exited with code ${joined.code}: ${joined.tail.slice(-1)[0] ?? ''}`;
    await beat('failed', why);
    return failed(`cluster: ${why}`, joined.tail);
  }
  job.say(`cluster: joined Ray at ${status.rayAddress} with ${side.gpus} GPU(s); following the head`);
  const outcome = await followHead(side, beat);
  await ray('ray stop --force');
  return outcome;
}

type Beat = (state: WorkerState, reason?: string) => Promise<HeadStatus | undefined>;

/**
 * Until the head's Ray is up (its address), the head ended the job, or the join timeout; once the head
 * has answered, its silence for the lost window is a loss. The head hears of a worker that gives up.
 */
async function waitForHeadRay(
  side: Side,
  beat: Beat,
  deadline: number,
): Promise<{ rayAddress: string; outcome?: undefined } | { rayAddress?: undefined; outcome: WorkerOutcome }> {
  const { cluster, timing } = side;
  let lastHeard: number | undefined;
  const giveUp = async (why: string) => {
    await beat('failed', why);
    return { outcome: failed(`cluster: ${why}`) };
  };
  for (;;) {
    if (side.stopping()) return { outcome: { status: 'Stopped' } };
    const status = await beat('waiting');
    if (status?.rayAddress && (status.phase === 'ray-up' || status.phase === 'running'))
      return { rayAddress: status.rayAddress };
    if (status && endedPhase(status.phase)) return { outcome: headEnded(side, status) };
    if (status) lastHeard = Date.now();
    if (lastHeard !== undefined && Date.now() - lastHeard > timing.lostAfterMs) {
      return giveUp(
        `lost the head ${cluster.head} before its Ray was up: no answer for ${seconds(Date.now() - lastHeard)}`,
      );
    }
    if (Date.now() >= deadline) {
      return giveUp(
        `the head ${cluster.head} did not start Ray within ${seconds(timing.joinTimeoutMs)} (${status ? `it is ${status.phase}` : 'its status endpoint never answered'})`,
      );
    }
    await sleep(timing.pollMs);
  }
}

/**
 * The address Ray announces for this host: its name's, as the head resolves it; else the address of the
 * interface SageMaker names (a multi-NIC instance must not leave Ray to pick one).
 */
async function ownAddress(side: Side, deadline: number): Promise<string | undefined> {
  const { cluster, job } = side;
  const byName = await resolveHost(cluster.current, Math.min(deadline, Date.now() + 30_000), side.stopping);
  if (byName) return byName;
  const nic = job.networkInterface
    ? os.networkInterfaces()[job.networkInterface]?.find((a) => a.family === 'IPv4')?.address
    : undefined;
  job.say(
    nic
      ? `cluster: ${cluster.current} does not resolve: Ray announces ${nic}, the address of ${job.networkInterface}`
      : `cluster: ${cluster.current} does not resolve and no interface is named: Ray picks the address`,
  );
  return nic;
}

/** Bounded by SageMaker's grace (120 s after SIGTERM), less a margin for `ray stop`. */
const FOLLOW_AFTER_STOP_MS = 100_000;

/**
 * Until the head's trainer has ended (or the head has been silent for the lost window). After SIGTERM
 * (stop, spot: every host gets it at once) Ray stays up while the head's trainer finishes its
 * checkpoint, which may need this host's ranks, bounded by the grace period.
 */
async function followHead(side: Side, beat: Beat): Promise<WorkerOutcome> {
  const { cluster, timing } = side;
  let lastHeard = Date.now();
  let stopSeenAt: number | undefined;
  for (;;) {
    if (side.stopping() && stopSeenAt === undefined) {
      stopSeenAt = Date.now();
      side.job.say(
        `cluster: SIGTERM: Ray stays up until the head's trainer has stopped (at most ${seconds(FOLLOW_AFTER_STOP_MS)})`,
      );
    }
    if (stopSeenAt !== undefined && Date.now() - stopSeenAt > FOLLOW_AFTER_STOP_MS)
      return { status: 'Stopped' };
    const status = await beat(stopSeenAt === undefined ? 'joined' : 'stopping');
    if (status) {
      lastHeard = Date.now();
      if (endedPhase(status.phase)) return headEnded(side, status);
    } else if (Date.now() - lastHeard > timing.lostAfterMs) {
      if (stopSeenAt !== undefined) return { status: 'Stopped' };
      return failed(
        `cluster: lost the head ${cluster.head} while the job ran: no answer for ${seconds(Date.now() - lastHeard)}`,
      );
    }
    await sleep(timing.pollMs);
  }
}

function headEnded(side: Side, status: HeadStatus): WorkerOutcome {
  const head = side.cluster.head;
  side.job.say(
    `cluster: the head ${head}'s trainer ended: ${status.phase}${status.reason ? ` (${status.reason})` : ''}`,
  );
  if (status.phase === 'succeeded') return { status: 'Completed' };
  if (status.phase === 'stopped') return { status: 'Stopped' };
  return failed(`cluster: the head ${head} failed: ${status.reason ?? 'no reason given'}`);
}
