import * as fs from 'node:fs';
import * as path from 'node:path';
import { platformEnvOverride, type AllowedFinding } from '../config';
import type { Problem } from '../errors';
import { hasEfa } from '../job-options';
import { PLATFORM_ENV } from '../layout';
import { environmentWrites, reachableModules, type EnvironmentWrite } from '../python';

/** What a job needs of the platform's variables: the facts a write is judged against. */
export interface PlatformEnvJob {
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly networkIsolation: boolean;
}

/** One import-time write, judged for the job. */
export interface JudgedWrite {
  readonly write: EnvironmentWrite;
  /** `harmless`: listed only (a default, or a variable this job leaves to the trainer). */
  readonly verdict: 'error' | 'warning' | 'harmless';
  readonly why: string;
  /** Whether holding the platform's values (hold_platform_env) keeps it from taking effect. */
  readonly holdable: boolean;
}

type Group = 'interfaces' | 'transports' | 'gpus' | 'rendezvous' | 'offline' | 'other';

function groupOf(variable: string): Group | undefined {
  for (const g of ['interfaces', 'transports', 'gpus', 'rendezvous', 'offline'] as const)
    if ((PLATFORM_ENV[g] as readonly string[]).includes(variable)) return g;
  return PLATFORM_ENV.prefixes.some((p) => variable.startsWith(p)) ? 'other' : undefined;
}

/** What each transport variable does to the EFA path when a module sets it. */
const TRANSPORT_EFFECT: Readonly<Record<string, string>> = {
  NCCL_NET: 'NCCL_NET picks NCCL\'s network by name ("Socket": TCP)',
  NCCL_NET_PLUGIN:
    "NCCL_NET_PLUGIN decides which network plugin NCCL loads (the aws-ofi-nccl plugin is EFA's)",
  NCCL_IB_DISABLE: "NCCL_IB_DISABLE turns off NCCL's RDMA networks",
  FI_PROVIDER: 'FI_PROVIDER names the libfabric provider (EFA\'s is "efa")',
  FI_EFA_USE_DEVICE_RDMA: 'FI_EFA_USE_DEVICE_RDMA decides GPUDirect RDMA over EFA',
};

const shown = (w: EnvironmentWrite) =>
  w.kind === 'unset'
    ? `removes ${w.variable}`
    : `${w.variable}=${w.value !== undefined ? JSON.stringify(w.value) : w.expression}`;

/**
 * How a write at import meets the job. The interfaces are always the platform's (SageMaker names them in
 * resourceconfig.json, and a host has no other); the transports are the platform's only where the
 * instance has EFA; the GPU split and the rendezvous are per process.
 */
export function judgeWrite(write: EnvironmentWrite, job: PlatformEnvJob): JudgedWrite {
  const group = groupOf(write.variable)!;
  const judged = (verdict: JudgedWrite['verdict'], why: string, holdable = false): JudgedWrite => ({
    write,
    verdict,
    why,
    holdable,
  });
  if (write.kind === 'default') return judged('harmless', 'a default: a value the job sets is kept');
  const v = write.value;
  switch (group) {
    case 'interfaces': {
      const lib = write.variable.startsWith('NCCL') ? 'NCCL' : 'Gloo';
      if (write.kind === 'unset')
        return judged(
          'warning',
          `${lib} then picks an interface itself instead of the one SageMaker names`,
          true,
        );
      if (v !== undefined && v.startsWith('^'))
        return judged('harmless', `an exclusion list: ${lib} still finds the interface SageMaker names`);
      if (v === undefined)
        return judged(
          'warning',
          `computed at import: whether it names the interface SageMaker names cannot be told`,
          true,
        );
      return judged(
        'error',
        `names interface "${v}"; a SageMaker host's interface is the one resourceconfig.json names (eth0 on today's hosts) and there is no "${v}": the first ${lib === 'NCCL' ? 'NCCL communicator (tensor parallel ≥ 2, or the trainer→vLLM weight sync)' : 'Gloo process group'} fails with "no socket interface found", on one host as on several`,
        true,
      );
    }
    case 'transports':
      if (!hasEfa(job.instanceType))
        return judged(
          'harmless',
          `${job.instanceType} has no EFA: the job leaves the transport to the trainer`,
        );
      return judged(
        'warning',
        `${job.instanceType} has EFA, and the image libfabric and the aws-ofi-nccl plugin for it; ${TRANSPORT_EFFECT[write.variable] ?? 'this overrides the transport the platform chose'}: ${job.instanceCount > 1 ? `NCCL between the ${job.instanceCount} hosts goes over TCP sockets, at a fraction of the interconnect paid for` : 'between hosts NCCL would go over TCP sockets (on one host it changes nothing)'}`,
        true,
      );
    case 'gpus':
      return judged(
        'error',
        "pins every process that imports the module to these GPUs, against the job's split (the trainer's and the eval watcher's GPUs) and the GPU Ray gives each actor",
      );
    case 'rendezvous':
      return job.instanceCount > 1
        ? judged(
            'error',
            `every process on each of the ${job.instanceCount} hosts would meet at this address: torch's rendezvous is set per process group`,
          )
        : judged('harmless', 'one host: the rendezvous stays on it');
    case 'offline':
      if (job.networkIsolation && (v === undefined || ['0', 'false', 'False', ''].includes(v)))
        return judged(
          'warning',
          'tells the Hugging Face libraries they may use the network, which a job with network isolation has not: a Hub call waits for its time-outs instead of failing at once',
          true,
        );
      return judged('harmless', 'offline is what the job is');
    default:
      return judged('harmless', `not a variable the platform sets`);
  }
}

/** The one-line change that keeps the trainer's value where nothing else sets one. */
function fixOf(j: JudgedWrite): string {
  const w = j.write;
  const keep =
    w.kind === 'unset' ? undefined : `os.environ.setdefault(${JSON.stringify(w.variable)}, ${w.expression})`;
  const hold = j.holdable
    ? ` or hold the platform's values for this job: launcher.hold_platform_env: true (--hold-platform-env)`
    : " (holding the platform's values does not cover it: the job sets it per process)";
  return `${keep ? `Write ${keep} (their own machines keep their value; a job keeps its own)` : 'Remove the line'},${hold}, or allow it with a reason: launcher.allow: {${platformEnvOverride.id}: "<why>"}.`;
}

export interface PlatformEnvCheck {
  /** Every import-time write of a variable the platform owns or of its libraries, judged. */
  readonly writes: readonly JudgedWrite[];
  readonly errors: readonly Problem[];
  readonly warnings: readonly Problem[];
  readonly allowed: readonly AllowedFinding[];
  /** Writes the job holds the platform's values against (hold_platform_env). */
  readonly held: readonly JudgedWrite[];
}

/** `src/x.py:15:1` and the write as a problem of the trainer's source. */
function asProblem(j: JudgedWrite): Problem {
  const w = j.write;
  return {
    location: { file: w.file, line: w.line, column: w.column },
    where: 'trainer source',
    message: `${shown(w)} at import: ${j.why}`,
    hint: fixOf(j),
    rule: platformEnvOverride.id,
  };
}

/** The writes at import in the files the scripts import, directly or through each other (Ray actors' modules too). */
export function importTimeWrites(input: {
  readonly root: string;
  readonly files: readonly string[];
  readonly roots: readonly string[];
  readonly scripts: readonly string[];
}): EnvironmentWrite[] {
  const read = (f: string) => fs.readFileSync(path.join(input.root, f), 'utf8');
  const modules = reachableModules({ files: input.files, roots: input.roots, scripts: input.scripts, read });
  return modules
    .flatMap((f) => environmentWrites(f, read(f)))
    .filter((w) => w.atImport && groupOf(w.variable) !== undefined);
}

/**
 * The plan's check: an error of RLVR125 stops the submit unless the job holds the platform's values (for
 * what holding covers) or `launcher.allow` names the rule with a reason.
 */
export function checkPlatformEnv(
  writes: readonly EnvironmentWrite[],
  job: PlatformEnvJob & { readonly hold: boolean; readonly allowReason?: string },
): PlatformEnvCheck {
  const judged = writes.map((w) => judgeWrite(w, job));
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const allowed: AllowedFinding[] = [];
  const held: JudgedWrite[] = [];
  for (const j of judged) {
    if (j.verdict === 'harmless') continue;
    if (job.hold && j.holdable) held.push(j);
    else if (j.verdict === 'warning') warnings.push(asProblem(j));
    else if (job.allowReason !== undefined) {
      const p = asProblem(j);
      allowed.push({
        rule: platformEnvOverride.id,
        name: platformEnvOverride.name,
        reason: job.allowReason,
        where: p.where,
        message: p.message,
        location: p.location,
      });
    } else errors.push(asProblem(j));
  }
  return { writes: judged, errors, warnings, allowed, held };
}

/** `src/x.py:15 NCCL_SOCKET_IFNAME="ens32"` */
export function describeWrite(w: EnvironmentWrite): string {
  return `${w.file}:${w.line} ${shown(w)}`;
}
