/**
 * Batch evaluation: each checkpoint reference mapped to where it is, and checked complete
 * and loadable by the rule download applies (lib/checkpoints): a job's checkpoints from its streamed
 * prefix, an `s3://` folder, a model name as submit maps models (`models/<Name>/`), a local folder.
 * A checkpoint that is not complete, or not there, is bad input (exit 2) naming what is wrong.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isTerminal, type AwsClients, type S3ObjectInfo } from '../aws';
import { folderVerdict, localCheckpointFiles, weightsNamedByIndex, type FolderVerdict } from '../checkpoints';
import type { Problem } from '../errors';
import { JOB_ENV, MODEL_INDEX_FILE, parseS3Uri, type S3Layout } from '../layout';
import { judgeJobCheckpoints, readJobListing } from '../transfers';
import type { CheckpointRef, LabelledRef } from './refs';

export interface S3Folder {
  readonly bucket: string;
  /** Ends with `/`. */
  readonly key: string;
}

/** One checkpoint to evaluate, where it is, and what was found of it. */
export interface ResolvedCheckpoint {
  readonly label: string;
  /** Identity across jobs: `<job>:step20`, else the S3 URI or the local path. */
  readonly id: string;
  readonly given: string;
  /** Where it is in S3 (SageMaker jobs read it from there). */
  readonly s3?: S3Folder;
  /** Its objects, for the job's channel (keys under `s3.key`). */
  readonly objects?: readonly S3ObjectInfo[];
  /** A local folder (local runs). */
  readonly local?: string;
  /** The job it is a checkpoint of, when it is. */
  readonly job?: string;
  /** That job's image (what an eval of it runs in unless --image says otherwise). */
  readonly jobImage?: string;
  /** Said in the plan (a fix the job applies in its copy, a mapping). */
  readonly notes: readonly string[];
  /** Set when it could not be looked up (a dry-run without AWS). */
  readonly unresolved?: string;
}

export interface ResolveContext {
  readonly aws: AwsClients | undefined;
  readonly layout: S3Layout;
  /** Why there is no AWS (dry-run). */
  readonly noAwsNote?: string;
  /** Local runs: local folders are allowed (a SageMaker job cannot read them). */
  readonly local: boolean;
  readonly cwd: string;
}

const uri = (f: S3Folder) => `s3://${f.bucket}/${f.key}`;

function loadabilityNote(verdict: FolderVerdict, where: string): { problem?: string; note?: string } {
  if (verdict.loadable) return {};
  if (verdict.fix)
    return {
      note: `${where}: ${verdict.fix.rename.from} is loaded as ${verdict.fix.rename.to}, the name its index gives (fixed in the job's copy, never in S3)`,
    };
  return { problem: `${where} is not a loadable checkpoint: ${verdict.why}` };
}

/** An S3 folder's objects, judged by the folder rule (the index read when there is one). */
async function s3FolderCheck(
  aws: AwsClients,
  folder: S3Folder,
): Promise<{ objects: S3ObjectInfo[]; problem?: string; note?: string }> {
  const objects = (await aws.s3.listObjects(folder.bucket, folder.key)).filter((o) => !o.key.endsWith('/'));
  if (objects.length === 0) return { objects, problem: `nothing in S3 at ${uri(folder)}` };
  const sizes = new Map(objects.map((o) => [o.key.slice(folder.key.length), o.size]));
  const indexed = sizes.has(MODEL_INDEX_FILE)
    ? weightsNamedByIndex(
        await aws.s3.getObjectText(folder.bucket, `${folder.key}${MODEL_INDEX_FILE}`).catch(() => undefined),
      )
    : undefined;
  return { objects, ...loadabilityNote(folderVerdict({ sizes, indexed }), uri(folder)) };
}

const checkpointOrder = (name: string) => (name === 'final' ? Infinity : Number(name.slice(4)));

/** A job's checkpoints the reference selects (each complete), or the problems. */
async function resolveJobRef(
  ctx: ResolveContext & { aws: AwsClients },
  given: LabelledRef,
  ref: Extract<CheckpointRef, { kind: 'job' }>,
  labelFor: (name: string) => string,
): Promise<{ checkpoints: ResolvedCheckpoint[]; problems: string[]; warnings: string[] }> {
  const { aws, layout } = ctx;
  const problems: string[] = [];
  const warnings: string[] = [];
  const described = await aws.sagemaker.describeTrainingJob(ref.job);
  const prefix = layout.checkpointsPrefix(ref.job);
  const objects = await aws.s3.listObjects(layout.bucket, prefix);
  if (!described && objects.length === 0)
    return {
      checkpoints: [],
      problems: [`no training job named ${ref.job}, and nothing under ${layout.uri(prefix)}`],
      warnings,
    };
  const listing = await readJobListing(aws.s3, layout, ref.job, objects);
  const judged = await judgeJobCheckpoints(listing, {
    // A job SageMaker no longer knows has ended.
    jobEnded: !described || isTerminal(described.TrainingJobStatus),
    wanted: () => true,
    indexText: (key) => aws.s3.getObjectText(layout.bucket, key).catch(() => undefined),
  });
  // The latest attempt's copy of each name.
  const byName = new Map<string, (typeof judged)[number]>();
  for (const j of judged) {
    const seen = byName.get(j.checkpoint.name);
    if (!seen || j.attempt > seen.attempt) byName.set(j.checkpoint.name, j);
  }
  const available = [...byName.keys()].sort((a, b) => checkpointOrder(a) - checkpointOrder(b));
  let names: string[];
  if (ref.select === 'all') {
    names = available.filter((n) => {
      const v = byName.get(n)!.verdict;
      if (!v.complete) warnings.push(`${ref.job}:${n} left out: not complete (${v.why})`);
      return v.complete;
    });
    if (names.length === 0)
      problems.push(`${ref.job} has no complete checkpoint (it has: ${available.join(', ') || 'none'})`);
  } else {
    names = ref.select === 'final' ? ['final'] : [...ref.select];
    for (const n of names) {
      const j = byName.get(n);
      if (!j)
        problems.push(
          `${ref.job} has no ${n} checkpoint (it has: ${available.join(', ') || 'none'})${ref.select === 'final' ? `; name one: ${ref.job}:${available.at(-1) ?? 'stepN'}` : ''}`,
        );
      else if (!j.verdict.complete) problems.push(`${ref.job}:${n} is not complete: ${j.verdict.why}`);
    }
  }
  if (problems.length > 0) return { checkpoints: [], problems, warnings };
  const image = described?.Environment?.[JOB_ENV.image] ?? described?.AlgorithmSpecification?.TrainingImage;
  const checkpoints = names.map((n): ResolvedCheckpoint => {
    const { checkpoint: ck, indexed } = byName.get(n)!;
    const folder: S3Folder = { bucket: layout.bucket, key: `${prefix}${ck.path}/` };
    const verdict = folderVerdict({ sizes: ck.sizes, indexed });
    const { note } = loadabilityNote(verdict, `${ref.job}:${n}`);
    return {
      label: labelFor(n),
      id: `${ref.job}:${n}`,
      given: given.given,
      s3: folder,
      objects: objects.filter((o) => o.key.startsWith(folder.key) && !o.key.endsWith('/')),
      job: ref.job,
      ...(image ? { jobImage: image } : {}),
      notes: note ? [note] : [],
    };
  });
  return { checkpoints, problems, warnings };
}

/**
 * The upload that puts a model where a model name maps (`models/<Name>/`): `rlvr upload model` names it
 * after its folder unless --name says otherwise; another bucket or prefix is the settings' own.
 */
function uploadCommand(model: string, folder: S3Folder, layout: S3Layout): string {
  const name = model.split('/')[1];
  const where = folder.bucket === layout.bucket ? '' : ` --bucket ${folder.bucket}`;
  return `rlvr upload model <local folder> --name ${name}${where} (to ${uri(folder)})`;
}

function expandHome(p: string): string {
  return p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
}

/**
 * Every reference resolved. `problems` are bad input (nothing is submitted); `warnings` go in the plan.
 * Labels: the given label, or the reference; a job reference that selects several checkpoints labels
 * each `<label>:<step>` (just `<step>` when it is the only job reference and has no label).
 */
export async function resolveCheckpoints(
  refs: readonly LabelledRef[],
  ctx: ResolveContext,
): Promise<{ checkpoints: ResolvedCheckpoint[]; problems: Problem[]; warnings: string[] }> {
  const checkpoints: ResolvedCheckpoint[] = [];
  const problems: Problem[] = [];
  // A reference an eval config wrote is reported at its entry; one from the command line at the flag.
  const add = (r: LabelledRef, message: string): void => {
    problems.push(
      r.source
        ? { where: r.source.where, location: r.source.location, message }
        : { where: '--checkpoints', message },
    );
  };
  const warnings: string[] = [];
  const jobRefs = refs.filter((r) => r.ref.kind === 'job');
  for (const r of refs) {
    const { ref } = r;
    const labelled = r.label !== r.given;
    if (ref.kind === 'local') {
      const abs = path.resolve(ctx.cwd, expandHome(ref.path));
      if (!ctx.local) {
        add(
          r,
          `${r.given}: a local folder can be evaluated only with --local (a SageMaker job cannot read it); upload it with rlvr upload model ${ref.path} --name <name> and name the model (org/<name>) or its s3:// folder`,
        );
        continue;
      }
      if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) {
        add(r, `${r.given}: no folder at ${abs}`);
        continue;
      }
      const { problem, note } = loadabilityNote(folderVerdict(localCheckpointFiles(abs)), r.given);
      if (problem) add(r, problem);
      else
        checkpoints.push({ label: r.label, id: abs, given: r.given, local: abs, notes: note ? [note] : [] });
      continue;
    }
    if (ref.kind === 'job') {
      const single = jobRefs.length === 1 && !labelled;
      const labelFor = (name: string) =>
        ref.select === 'final' ? r.label : single ? name : `${labelled ? r.label : ref.job}:${name}`;
      if (!ctx.aws) {
        const names = ref.select === 'all' ? [] : ref.select === 'final' ? ['final'] : ref.select;
        if (ref.select === 'all')
          add(
            r,
            `${r.given}: listing a job's checkpoints needs AWS (${ctx.noAwsNote ?? 'no AWS'}); name them: ${ref.job}:step20,step40`,
          );
        for (const n of names)
          checkpoints.push({
            label: labelFor(n),
            id: `${ref.job}:${n}`,
            given: r.given,
            s3: { bucket: ctx.layout.bucket, key: `${ctx.layout.checkpointsPrefix(ref.job)}…_${n}/` },
            job: ref.job,
            notes: [],
            unresolved: `not looked up: ${ctx.noAwsNote ?? 'no AWS'}`,
          });
        continue;
      }
      const found = await resolveJobRef({ ...ctx, aws: ctx.aws }, r, ref, labelFor);
      checkpoints.push(...found.checkpoints);
      for (const p of found.problems) add(r, `${r.given}: ${p}`);
      warnings.push(...found.warnings);
      continue;
    }
    const folder: S3Folder =
      ref.kind === 's3'
        ? (() => {
            const p = parseS3Uri(ref.uri)!;
            return { bucket: p.bucket, key: p.key };
          })()
        : { bucket: ctx.layout.bucket, key: ctx.layout.modelPrefix(ref.name.split('/')[1]) };
    const mapped =
      ref.kind === 'model' ? [`${ref.name} mapped to ${uri(folder)} (jobs cannot reach the Hub)`] : [];
    if (!ctx.aws) {
      checkpoints.push({
        label: r.label,
        id: uri(folder),
        given: r.given,
        s3: folder,
        notes: mapped,
        unresolved: `not looked up: ${ctx.noAwsNote ?? 'no AWS'}`,
      });
      continue;
    }
    const check = await s3FolderCheck(ctx.aws, folder);
    if (check.problem) {
      add(
        r,
        `${r.given}: ${check.problem}${ref.kind === 'model' ? `; upload it first: ${uploadCommand(ref.name, folder, ctx.layout)}` : ''}`,
      );
      continue;
    }
    checkpoints.push({
      label: r.label,
      id: uri(folder),
      given: r.given,
      s3: folder,
      objects: check.objects,
      notes: [...mapped, ...(check.note ? [check.note] : [])],
    });
  }
  return { checkpoints, problems, warnings };
}

export type { Problem };
