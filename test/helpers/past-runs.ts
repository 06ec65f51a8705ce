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
    ...(spec.shape ? { forecast: { shape: spec.shape, similarRuns: 0 } } : {}),
    startedAt: '2026-11-01T00:00:00.000Z',
  };
  fs.writeFileSync(path.join(dir, 'run.json'), `${JSON.stringify(runInfo, null, 2)}\n`);
  if (spec.config !== undefined) fs.writeFileSync(path.join(dir, 'config.yaml'), spec.config);
  const trace = path.join(dir, runFolder, 'traces', 'trace.jsonl');
  writeTrace(trace, spec.trace);
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
  o: { readonly runInfo: Record<string, unknown>; readonly trace: TraceOptions; readonly traceAt?: string },
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
}
