/**
 * Multi-host jobs (SageMaker `InstanceCount` > 1): the hosts of one job form one Ray cluster, and every
 * host ends when the head's trainer ends. We only orchestrate: Ray is the distributed engine, SageMaker's
 * instances are the cluster.
 *
 * The protocol, every step said in the log:
 * - The head (the first of the sorted `hosts` of resourceconfig.json) opens a small HTTP status endpoint
 *   (CLUSTER.statusPort), starts `ray start --head`, then waits until every other host has joined (our
 *   endpoint) and Ray reports every node and `hosts × train GPUs` GPUs — or fails the job naming the hosts
 *   that did not join. Its trainer then runs with RAY_ADDRESS set; the endpoint says how it ended.
 * - A worker resolves the head, waits until the endpoint says Ray is up, runs a non-blocking
 *   `ray start --address`, then polls the endpoint (its heartbeat): it `ray stop`s and ends when the head's
 *   trainer has ended, or when the head has been unreachable for CLUSTER_LOST (~30 s).
 * - The head fails the job when a worker reports a failure or falls silent for as long.
 * The endpoint, not S3: network-isolated jobs reach no AWS service, only each other.
 */
import { lookup } from 'node:dns/promises';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { CLUSTER, JOB_ENV, PLATFORM_ENV } from '../layout';

/** The hosts of a multi-host job as resourceconfig.json gives them. */
export interface ClusterHosts {
  /** Sorted: the head is the first. */
  readonly hosts: readonly string[];
  readonly head: string;
  readonly current: string;
  readonly isHead: boolean;
}

/** The cluster this host belongs to, or undefined for a one-host job. */
export function clusterOf(resource: Record<string, unknown>, current: string): ClusterHosts | undefined {
  const hosts = Array.isArray(resource.hosts) ? (resource.hosts as unknown[]).map(String).sort() : [];
  if (hosts.length < 2) return undefined;
  return { hosts, head: hosts[0], current, isHead: current === hosts[0] };
}

export interface ClusterTiming {
  /** Hosts (and their DNS names, which can lag on SageMaker) must join within this. */
  readonly joinTimeoutMs: number;
  /** A host silent this long is lost. */
  readonly lostAfterMs: number;
  /** Between a worker's heartbeats (and the head's checks). */
  readonly pollMs: number;
  readonly statusPort: number;
  readonly rayPort: number;
}

export function clusterTiming(env: NodeJS.ProcessEnv): ClusterTiming {
  const seconds = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return (Number.isFinite(v) && v > 0 ? v : fallback) * 1000;
  };
  const lostAfterMs = seconds(JOB_ENV.clusterLostAfter, 30);
  const [rayPort, statusPort] = (env[JOB_ENV.clusterPorts] ?? '').split(',').map(Number);
  const port = (p: number | undefined, fallback: number) =>
    p !== undefined && Number.isInteger(p) && p > 0 && p < 65536 ? p : fallback;
  return {
    joinTimeoutMs: seconds(JOB_ENV.clusterJoinTimeout, 600),
    lostAfterMs,
    pollMs: Math.min(1000, Math.max(100, lostAfterMs / 10)),
    statusPort: port(statusPort, CLUSTER.statusPort),
    rayPort: port(rayPort, CLUSTER.rayPort),
  };
}

/**
 * What the platform decides for every job: NCCL and Gloo on the interface SageMaker names in
 * resourceconfig.json (a host has no other: left to themselves they may pick a wrong one, and a trainer's
 * own name fails), and on hosts with EFA devices the libfabric provider, with NCCL's network left to the
 * aws-ofi-nccl plugin. A value the job's environment sets already is kept. `held` is what a job that
 * holds the platform's values keeps in every Python process: each of these variables with its value, or
 * null where the platform wants it unset, and the offline switches the job was given.
 */
export function platformEnvironment(
  host: { readonly networkInterface?: string; readonly instanceType: string },
  env: NodeJS.ProcessEnv,
  sysRoot = '/sys',
): { env: Record<string, string>; notes: string[]; held: Record<string, string | null> } {
  const out: Record<string, string> = {};
  const notes: string[] = [];
  const held: Record<string, string | null> = {};
  const set = (k: string, v: string) => {
    if (env[k] === undefined) out[k] = v;
    held[k] = env[k] ?? v;
  };
  if (host.networkInterface) {
    set('NCCL_SOCKET_IFNAME', host.networkInterface);
    set('GLOO_SOCKET_IFNAME', host.networkInterface);
    notes.push(`NCCL and Gloo use ${held.NCCL_SOCKET_IFNAME}`);
  }
  const efa = efaDevices(sysRoot);
  if (efa.length > 0) {
    set('FI_PROVIDER', 'efa');
    // GPUDirect RDMA over EFA: the p4d and p5 families only.
    const rdma = /^ml\.p(4d|4de|5|5e|5en)\./.test(host.instanceType);
    if (rdma) set('FI_EFA_USE_DEVICE_RDMA', '1');
    for (const k of ['NCCL_NET', 'NCCL_NET_PLUGIN', 'NCCL_IB_DISABLE']) held[k] = env[k] ?? null;
    notes.push(`EFA devices ${efa.join(', ')}: FI_PROVIDER=efa${rdma ? ', FI_EFA_USE_DEVICE_RDMA=1' : ''}`);
  }
  // The job says it has no network (the request's offline switches): a module cannot say otherwise.
  for (const k of PLATFORM_ENV.offline) if (env[k] !== undefined) held[k] = env[k];
  return { env: out, notes, held };
}

/** EFA devices as the kernel lists them (`/sys/class/infiniband/efa_0`, `rdmap…`). */
function efaDevices(sysRoot: string): string[] {
  try {
    return fs
      .readdirSync(path.join(sysRoot, 'class', 'infiniband'))
      .filter((n) => /^(efa|rdmap)/.test(n))
      .sort();
  } catch {
    return [];
  }
}

/**
 * `ray status`: live nodes and total GPUs (`0.0/16.0 GPU`). Nodes are listed under `Active:` and, with
 * Ray's autoscaler v2, `Idle:` (a fresh cluster's nodes are idle).
 */
export function parseRayStatus(text: string): { nodes: number; gpus: number } | undefined {
  const status = /^Node status\s*\n[\s\S]*?^(Pending:|Recent failures:|Resources)/m.exec(text);
  const gpus = /^\s*[\d.]+\/([\d.]+) GPU\b/m.exec(text);
  if (!status || !/^(Active|Idle):/m.test(status[0])) return undefined;
  const nodes = status[0]
    .split('\n')
    .map((l) => /^\s*(\d+)\s+node_[0-9a-f]+/.exec(l))
    .reduce((n, m) => n + (m ? Number(m[1]) : 0), 0);
  return { nodes, gpus: gpus ? Number(gpus[1]) : 0 };
}

/** Lookups still under way, one per name: a resolver that never answers holds one thread, not many. */
const lookups = new Map<string, Promise<string | undefined>>();

/**
 * One lookup of `host`, given up on (not cancelled: getaddrinfo cannot be) after `timeoutMs`; a later
 * call joins the one under way.
 */
function lookupOnce(host: string, timeoutMs: number): Promise<string | undefined> {
  let pending = lookups.get(host);
  if (!pending) {
    pending = lookup(host, { family: 4 }).then(
      (r) => r.address,
      () => undefined,
    );
    lookups.set(host, pending);
    void pending.finally(() => lookups.delete(host));
  }
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs)));
  return Promise.race([pending, giveUp]).finally(() => clearTimeout(timer));
}

/**
 * An IPv4 address for `host`, retried until `deadline` (peers' names can take minutes to resolve, and a
 * resolver can take as long to say it does not know one).
 */
export async function resolveHost(
  host: string,
  deadline: number,
  shouldStop: () => boolean,
  pollMs = 1000,
): Promise<string | undefined> {
  for (;;) {
    const address = await lookupOnce(host, Math.max(200, Math.min(2000, deadline - Date.now())));
    if (address) return address;
    if (Date.now() >= deadline || shouldStop()) return undefined;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** How the head's side of the job stands, as the endpoint tells the workers. */
export type HeadPhase = 'starting' | 'ray-up' | 'running' | 'succeeded' | 'failed' | 'stopped';
const ENDED: readonly HeadPhase[] = ['succeeded', 'failed', 'stopped'];

/** What a worker says of itself on each heartbeat. */
export type WorkerState = 'waiting' | 'joined' | 'failed' | 'stopping';
const WORKER_STATES: readonly string[] = ['waiting', 'joined', 'failed', 'stopping'];

interface WorkerSeen {
  state: WorkerState;
  reason?: string;
  lastSeen: number;
  /** The phase it was last told. */
  told: HeadPhase;
}

export interface HeadStatus {
  readonly phase: HeadPhase;
  readonly reason?: string;
  readonly rayAddress?: string;
}

/**
 * The head's status endpoint: `GET /cluster?host=<name>&state=<state>[&reason=…]` records a worker's
 * heartbeat and answers with the head's phase. It listens on every interface (the hosts reach it over the
 * job's network); a heartbeat counts only from the address the claimed host's name resolves to, so an
 * instance of another job in the same security group cannot report this job's hosts failed or joined.
 */
export class HeadEndpoint {
  private status: HeadStatus = { phase: 'starting' };
  readonly workers = new Map<string, WorkerSeen>();
  private failureListener: ((reason: string) => void) | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  /** The workers' addresses, as their names resolve here. */
  private readonly addresses = new Map<string, string>();
  private readonly refused = new Set<string>();

  private constructor(
    private readonly server: http.Server,
    private readonly expected: readonly string[],
    private readonly say: (line: string) => void,
  ) {}

  static open(port: number, expected: readonly string[], say: (line: string) => void): Promise<HeadEndpoint> {
    const server = http.createServer();
    const endpoint = new HeadEndpoint(server, expected, say);
    server.on('request', (req, res) => endpoint.handle(req, res));
    // A malformed request ends its own connection, never the head.
    server.on('clientError', (_err, socket) => socket.destroy());
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '0.0.0.0', () => {
        server.off('error', reject);
        say(`cluster: status endpoint on port ${port}, waiting for ${expected.join(', ')}`);
        resolve(endpoint);
      });
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://head');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const host = url.searchParams.get('host') ?? '';
    const state = url.searchParams.get('state') as WorkerState | null;
    if (
      req.method !== 'GET' ||
      url.pathname !== '/cluster' ||
      !this.expected.includes(host) ||
      !state ||
      !WORKER_STATES.includes(state)
    ) {
      res.writeHead(404).end();
      return;
    }
    if (!this.fromHost(host, req.socket.remoteAddress)) {
      res.writeHead(403).end();
      return;
    }
    const before = this.workers.get(host);
    // It goes into the job's log: one line, printable.
    const reason = url.searchParams
      .get('reason')
      // eslint-disable-next-line no-control-regex -- control characters are what it removes
      ?.replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .slice(0, 1000);
    this.workers.set(host, { state, reason, lastSeen: Date.now(), told: this.status.phase });
    if (!before) this.say(`cluster: ${host} reached the head`);
    if (before?.state !== state && state === 'joined') this.say(`cluster: ${host} joined Ray`);
    if (before?.state !== 'failed' && state === 'failed') {
      const why = `${host} failed: ${reason ?? 'no reason given'}`;
      this.say(`cluster: ${why}`);
      this.failureListener?.(why);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.status));
  }

  /**
   * Whether a request claiming to be `host` comes from the address its name resolves to: another job's
   * instance in the same security group cannot speak for this job's hosts. Until the name resolves,
   * the worker's heartbeats are refused (it retries).
   */
  private fromHost(host: string, remote: string | undefined): boolean {
    const from = (remote ?? '').replace(/^::ffff:/, '');
    const known = this.addresses.get(host);
    if (!known) {
      void resolveHost(host, Date.now(), () => true).then((ip) => ip && this.addresses.set(host, ip));
      return false;
    }
    if (known === from) return true;
    const said = `${host}@${from}`;
    if (!this.refused.has(said)) {
      this.refused.add(said);
      this.say(
        `cluster: refused a heartbeat claiming to be ${host} from ${from} (${host} resolves to ${known})`,
      );
    }
    return false;
  }

  get phase(): HeadPhase {
    return this.status.phase;
  }

  publish(phase: HeadPhase, extra: { reason?: string; rayAddress?: string } = {}): void {
    if (ENDED.includes(this.status.phase)) return;
    this.status = { ...this.status, phase, ...extra };
    this.say(`cluster: ${phase}${extra.reason ? ` (${extra.reason})` : ''}`);
  }

  /** Called once per worker failure or loss while the job runs. */
  onFailure(listener: (reason: string) => void): void {
    this.failureListener = listener;
  }

  /**
   * While the job runs: a joined worker silent for `lostAfterMs` is lost (its container died, or its
   * network did), and the failure listener hears of it once.
   */
  watch(lostAfterMs: number, pollMs: number): void {
    this.watchTimer = setInterval(() => {
      // Once the head has said how the job ended, workers leave: their silence is no loss.
      if (ENDED.includes(this.status.phase)) return;
      const now = Date.now();
      for (const [host, w] of this.workers) {
        if (w.state !== 'joined' || now - w.lastSeen <= lostAfterMs) continue;
        w.state = 'failed';
        w.reason = `no word from it for ${Math.round((now - w.lastSeen) / 1000)} s`;
        const why = `lost ${host}: ${w.reason} (its container or its network ended)`;
        this.say(`cluster: ${why}`);
        this.failureListener?.(why);
      }
    }, pollMs);
  }

  /** The trainer has ended: workers going quiet from now on is expected. */
  stopWatching(): void {
    clearInterval(this.watchTimer);
    this.failureListener = undefined;
  }

  /**
   * Ends the endpoint: the final phase is published, then it stays open until every worker still heard
   * from has been told (bounded by `lingerMs`), so none of them takes the head's exit for a loss.
   */
  async close(phase: HeadPhase, reason: string | undefined, lingerMs: number, pollMs: number): Promise<void> {
    this.stopWatching();
    this.publish(phase, reason ? { reason } : {});
    const final = this.status.phase;
    const deadline = Date.now() + lingerMs;
    const waiting = () =>
      [...this.workers.entries()].filter(
        ([, w]) => w.told !== final && w.state !== 'failed' && Date.now() - w.lastSeen <= lingerMs,
      );
    while (waiting().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, pollMs / 2));
    const untold = waiting().map(([h]) => h);
    if (untold.length) this.say(`cluster: ${untold.join(', ')} did not hear that the job ended`);
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }
}

/** A worker's heartbeat: tells the head its state, learns the head's phase (undefined: unreachable). */
export async function heartbeat(
  headAddress: string,
  port: number,
  host: string,
  state: WorkerState,
  reason?: string,
  timeoutMs = 3000,
): Promise<HeadStatus | undefined> {
  const query = new URLSearchParams({ host, state, ...(reason ? { reason } : {}) });
  try {
    const res = await fetch(`http://${headAddress}:${port}/cluster?${query.toString()}`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return undefined;
    return (await res.json()) as HeadStatus;
  } catch {
    return undefined;
  }
}

export const endedPhase = (phase: HeadPhase): boolean => ENDED.includes(phase);
