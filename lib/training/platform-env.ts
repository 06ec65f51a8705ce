import * as path from 'node:path';
import { platformEnvOverride, type AllowedFinding } from '../config';
import type { Problem } from '../errors';
import { hasEfa } from '../job-options';
import { PLATFORM_ENV } from '../layout';
import { environmentWrites, reachableModules, type EnvironmentWrite } from '../python';
import { readRegularText } from '../util';

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
    case 'interfaces':
      return judgeInterface(write, judged);
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
      if (write.variable === 'MASTER_PORT')
        return judged('harmless', 'a port: each process group meets at its own address');
      if (job.instanceCount > 1)
        return judged(
          'error',
          `every process on each of the ${job.instanceCount} hosts would meet at ${v !== undefined ? `"${v}"` : 'the address it computes there'}: torch's rendezvous is set per process group`,
        );
      return v === undefined || /^(localhost|127\.|0\.0\.0\.0$|::1$)/.test(v)
        ? judged('harmless', 'one host: the rendezvous stays on it')
        : judged('warning', `a fixed address: one host meets at "${v}" only if that is this host`);
    case 'offline': {
      // The Hugging Face libraries' own test of a switch: 1, ON, YES or TRUE.
      const on = v !== undefined && ['1', 'ON', 'YES', 'TRUE'].includes(v.toUpperCase());
      if (job.networkIsolation && !on && write.kind !== 'unset')
        return judged(
          'warning',
          'tells the Hugging Face libraries they may use the network, which a job with network isolation has not: a Hub call waits for its time-outs instead of failing at once',
          true,
        );
      if (job.networkIsolation && write.kind === 'unset')
        return judged('warning', 'removes the offline switch of a job without network', true);
      return judged('harmless', job.networkIsolation ? 'offline, as the job is' : 'the job has network');
    }
    default:
      return judged('harmless', `not a variable the platform sets`);
  }
}

/** The interface SageMaker's hosts have today (resourceconfig.json names it; the job pins that one). */
const SAGEMAKER_INTERFACE = 'eth0';

/**
 * Whether an interface list selects `iface`: NCCL's syntax (`^` excludes, `=` matches whole names, else
 * each entry is a prefix) or Gloo's (whole names, comma-separated).
 */
export function interfaceListSelects(variable: string, list: string, iface: string): boolean {
  if (variable.startsWith('GLOO')) return list.split(',').includes(iface);
  let spec = list;
  const exclude = spec.startsWith('^');
  if (exclude) spec = spec.slice(1);
  const exact = spec.startsWith('=');
  if (exact) spec = spec.slice(1);
  const hit = spec
    .split(',')
    .filter(Boolean)
    .some((name) => (exact ? iface === name : iface.startsWith(name)));
  return exclude ? !hit : hit;
}

function judgeInterface(
  write: EnvironmentWrite,
  judged: (verdict: JudgedWrite['verdict'], why: string, holdable?: boolean) => JudgedWrite,
): JudgedWrite {
  const lib = write.variable.startsWith('NCCL') ? 'NCCL' : 'Gloo';
  const first =
    lib === 'NCCL'
      ? 'NCCL communicator (tensor parallel ≥ 2, or the trainer→vLLM weight sync)'
      : 'Gloo process group';
  const v = write.value;
  if (write.kind === 'unset')
    return judged(
      'warning',
      `${lib} then picks an interface itself instead of the one SageMaker names`,
      true,
    );
  if (v === undefined)
    return judged(
      'warning',
      'computed at import: whether it selects the interface SageMaker names cannot be told',
      true,
    );
  // NCCL reads a value of one character or none as unset.
  if (lib === 'NCCL' && v.length <= 1)
    return judged(
      'warning',
      `"${v}" is read as unset: NCCL picks an interface itself instead of the one SageMaker names`,
      true,
    );
  const selects = interfaceListSelects(write.variable, v, SAGEMAKER_INTERFACE);
  if (selects && lib === 'NCCL' && v.startsWith('^'))
    return judged(
      'harmless',
      `an exclusion list that leaves ${SAGEMAKER_INTERFACE}, the interface SageMaker hosts have`,
    );
  if (selects)
    return judged(
      'warning',
      `"${v}" selects ${SAGEMAKER_INTERFACE}, the interface today's SageMaker hosts have, but the job pins the one resourceconfig.json names (and a one-host --local run has only lo)`,
      true,
    );
  const what = v.startsWith('^')
    ? `"${v}" excludes ${SAGEMAKER_INTERFACE}, the interface SageMaker hosts have (resourceconfig.json names it)`
    : `names interface "${v}", which SageMaker hosts do not have (theirs is the one resourceconfig.json names: ${SAGEMAKER_INTERFACE} today)`;
  return judged(
    'error',
    `${what}: the first ${first} fails with "no socket interface found", on one host as on several`,
    true,
  );
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

/** A Python module larger than this is not source anyone wrote: it is not read. */
export const MAX_MODULE_BYTES = 4 * 1024 * 1024;

/**
 * A reader of the source's files that opens regular files only (never through a link, never a FIFO or a
 * device) up to MAX_MODULE_BYTES, each once; `unread` lists the files it would not read.
 */
export function sourceReader(root: string): { read: (file: string) => string; unread: Set<string> } {
  const texts = new Map<string, string>();
  const unread = new Set<string>();
  return {
    unread,
    read: (file) => {
      let text = texts.get(file);
      if (text === undefined) {
        const got = readRegularText(path.join(root, file), MAX_MODULE_BYTES);
        if (got === undefined) unread.add(file);
        texts.set(file, (text = got ?? ''));
      }
      return text;
    },
  };
}

/**
 * The writes at import in the files the scripts import, directly or through each other (Ray actors'
 * modules too); a script's own `if __name__ == "__main__":` block runs too, a module's does not.
 */
export function importTimeWrites(input: {
  readonly root: string;
  readonly files: readonly string[];
  readonly roots: readonly string[];
  readonly scripts: readonly string[];
}): { writes: EnvironmentWrite[]; unread: string[] } {
  const { read, unread } = sourceReader(input.root);
  const modules = reachableModules({ files: input.files, roots: input.roots, scripts: input.scripts, read });
  const writes = modules
    .flatMap((f) => environmentWrites(f, read(f)))
    .filter(
      (w) => w.atImport && (!w.inMain || input.scripts.includes(w.file)) && groupOf(w.variable) !== undefined,
    );
  return { writes, unread: [...unread].sort() };
}

/**
 * The plan's check: an error of RLVR125 stops the submit unless the job holds the platform's values (for
 * what holding covers) or `launcher.allow` names the rule with a reason.
 */
export function checkPlatformEnv(
  writes: readonly EnvironmentWrite[],
  job: PlatformEnvJob & {
    readonly hold: boolean;
    readonly allowReason?: string;
    /** Modules that could not be read (not regular files, or too large): said, since they were not checked. */
    readonly unread?: readonly string[];
  },
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
  for (const file of job.unread ?? [])
    warnings.push({
      location: { file, line: 1, column: 1 },
      where: 'trainer source',
      message: `not read for writes to the environment at import: not a regular file (a link, a FIFO, a device) or over ${MAX_MODULE_BYTES / 1024 / 1024} MiB`,
      hint: 'Ship the module as a regular file of source.',
    });
  return { writes: judged, errors, warnings, allowed, held };
}

/** `src/x.py:15 NCCL_SOCKET_IFNAME="ens32"` */
export function describeWrite(w: EnvironmentWrite): string {
  return `${w.file}:${w.line} ${shown(w)}`;
}
