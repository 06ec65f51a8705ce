import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { BUCKET, clients } from './emulator-data';
import { traceLines, writeTrace, type TraceOptions } from './traces';

/*
 * Run folders as `rlvr download` leaves them in the results folder: `results/<job>/run.json` (ours: the
 * job, trainer, instance, hosts, GPU split and, since jobs record it, the forecast with the run's shape),
 * `config.yaml`, and the trainer's own run folder `<run>_<timestamp>/` with `traces/trace.jsonl` in their
 * tracer's format.
 */

export interface PastRunSpec {
  readonly job: string;
  /** The shape the job recorded (undefined: a run from before shapes were recorded). */
  readonly shape?: Readonly<Record<string, string>>;
  readonly trainer?: string;
  readonly instanceType?: string;
  readonly hosts?: number;
  readonly trainGpus?: string;
  readonly evalGpus?: string;
  /** The run's config.yaml. */
  readonly config?: string;
  readonly trace: TraceOptions;
  /** The trainer's run folder name. @default `run_20261101-000000` */
  readonly runFolder?: string;
  /** How the job ended, as its container records it (undefined: not recorded, as before jobs did). */
  readonly ending?: RunEnding;
}

/** What the container writes at a job's end: run.json's status and attempt times, summary.json. */
export interface RunEnding {
  readonly status: 'Completed' | 'Stopped' | 'Failed';
  /** The steps the job was given (run.json's forecast). */
  readonly maxSteps?: number;
  /** Checkpoints summary.json lists. */
  readonly checkpoints: number;
  /** Container start → trainer start. */
  readonly setupSeconds: number;
  /** Trainer start → its tracer's start (imports, Ray). */
  readonly tracerStartSeconds: number;
  /** The last step's end → the trainer's exit (its final checkpoint). */
  readonly afterLastStepSeconds: number;
}

const STARTED = Date.parse('2026-11-01T00:00:00.000Z');

/** The `ts` of a trace's last `metrics` counter: the end of the last step's training. */
function lastMetricsTs(trace: string): number {
  const lines = fs.readFileSync(trace, 'utf8').trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0; i--)
    if (lines[i].includes('"name": "metrics"')) return (JSON.parse(lines[i]) as { ts: number }).ts;
  throw new Error(`${trace} has no step`);
}

/** run.json's and summary.json's end of a run whose trace is written. */
function endOf(trace: string, spec: PastRunSpec, e: RunEnding) {
  const at = (s: number) => new Date(STARTED + s * 1000).toISOString();
  // The step's counters come at 0.9 of it (traceLines); the rest of the step follows them.
  const stepEnd = lastMetricsTs(trace) + 0.1 * (spec.trace.stepSeconds ?? 30);
  const trainerEnded = e.setupSeconds + e.tracerStartSeconds + stepEnd + e.afterLastStepSeconds;
  return {
    runInfo: {
      status: e.status,
      attempts: [
        {
          startedAt: at(0),
          trainerStartedAt: at(e.setupSeconds),
          trainerEndedAt: at(trainerEnded),
          endedAt: at(trainerEnded + 5),
          status: e.status,
        },
      ],
    },
    summary: {
      status: e.status,
      checkpoints: Array.from({ length: e.checkpoints }, (_, i) => `run_step${(i + 1) * 10}`),
    },
  };
}

/** Writes one run folder; returns its trace file. */
export function writePastRun(resultsDir: string, spec: PastRunSpec): string {
  const dir = path.join(resultsDir, spec.job);
  const runFolder = spec.runFolder ?? 'run_20261101-000000';
  fs.mkdirSync(path.join(dir, runFolder, 'traces'), { recursive: true });
  const runInfo = {
    job: spec.job,
    run: 'run',
    host: 'algo-1',
    hosts: Array.from({ length: spec.hosts ?? 1 }, (_, i) => `algo-${i + 1}`),
    instanceType: spec.instanceType ?? 'ml.p4de.24xlarge',
    trainer: spec.trainer ?? 'grpo-sft',
    trainGpus: spec.trainGpus ?? '0,1,2,3,4,5',
    evalGpus: spec.evalGpus ?? '6,7',
    trainerRun: { folder: runFolder },
    ...(spec.shape
      ? {
          forecast: {
            shape: spec.shape,
            similarRuns: 0,
            ...(spec.ending?.maxSteps ? { maxSteps: spec.ending.maxSteps } : {}),
          },
        }
      : {}),
    startedAt: '2026-11-01T00:00:00.000Z',
  };
  if (spec.config !== undefined) fs.writeFileSync(path.join(dir, 'config.yaml'), spec.config);
  const trace = path.join(dir, runFolder, 'traces', 'trace.jsonl');
  writeTrace(trace, spec.trace);
  const end = spec.ending ? endOf(trace, spec, spec.ending) : undefined;
  fs.writeFileSync(
    path.join(dir, 'run.json'),
    `${JSON.stringify({ ...runInfo, ...end?.runInfo }, null, 2)}\n`,
  );
  if (end) fs.writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify(end.summary, null, 2)}\n`);
  return trace;
}

/** A submitted job's contract.json, as the emulator's bucket holds it. */
export async function jobContract(endpoint: string, job: string): Promise<Record<string, unknown>> {
  const { s3 } = clients(endpoint);
  const out = await s3.send(
    new GetObjectCommand({ Bucket: BUCKET, Key: `rlvr-experiments/jobs/${job}/contract.json` }),
  );
  return JSON.parse(await out.Body!.transformToString()) as Record<string, unknown>;
}

/**
 * What a job's container leaves under `checkpoints/<job>/`: run.json (with the forecast its contract
 * gave) and its trace at `traceAt` (relative to that prefix).
 */
export async function putRunOutputs(
  endpoint: string,
  job: string,
  o: {
    readonly runInfo: Record<string, unknown>;
    readonly trace: TraceOptions;
    readonly traceAt?: string;
    /** Checkpoint files it wrote (relative to that prefix). */
    readonly checkpoints?: readonly string[];
  },
): Promise<void> {
  const { s3 } = clients(endpoint);
  const prefix = `rlvr-experiments/checkpoints/${job}/`;
  await s3.send(
    new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}run.json`, Body: JSON.stringify(o.runInfo) }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: BUCKET,
      Key: `${prefix}${o.traceAt ?? 'traces/trace.jsonl'}`,
      Body: [...traceLines(o.trace)].join(''),
    }),
  );
  for (const key of o.checkpoints ?? [])
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}${key}`, Body: 'weights' }));
}
