/**
 * The team's S3 layout: the default root prefix, every key and prefix under it, and S3 URIs. The run
 * folder's names come from run-folder.ts and the job files' from job-files.ts.
 */
import type { JobFile } from './job-files';
import { RUN_FOLDER } from './run-folder';

export const DEFAULT_ROOT_PREFIX = 'rlvr-experiments/';

/** Normalises a root prefix to `a/b/` form (no leading slash, one trailing slash). */
export function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** A bucket and key, as in `s3://bucket/key`. */
export interface S3Location {
  readonly bucket: string;
  readonly key: string;
}

export function parseS3Uri(uri: string): S3Location | undefined {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  return m ? { bucket: m[1], key: m[2] } : undefined;
}

export function s3Uri(location: S3Location): string {
  return `s3://${location.bucket}/${location.key}`;
}

/** S3 keys under the root prefix: the team's S3 layout. All prefixes end with `/`. */
export class S3Layout {
  readonly root: string;

  constructor(
    readonly bucket: string,
    rootPrefix: string = DEFAULT_ROOT_PREFIX,
  ) {
    this.root = normalisePrefix(rootPrefix);
  }

  uri(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  datasetsPrefix(): string {
    return `${this.root}datasets/`;
  }
  datasetPrefix(name: string): string {
    return `${this.datasetsPrefix()}${name}/`;
  }
  /** A dataset that is one file (e.g. an SFT JSONL), beside the save_to_disk folders. */
  datasetFileKey(file: string): string {
    return `${this.datasetsPrefix()}${file}`;
  }
  curriculaPrefix(): string {
    return `${this.root}curricula/`;
  }
  curriculumKey(file: string): string {
    return `${this.curriculaPrefix()}${file}`;
  }
  modelsPrefix(): string {
    return `${this.root}models/`;
  }
  modelPrefix(name: string): string {
    return `${this.modelsPrefix()}${name}/`;
  }
  /** Every job's run folder (what the jobs stream), `checkpoints/`. */
  checkpointsRootPrefix(): string {
    return `${this.root}checkpoints/`;
  }
  checkpointsPrefix(job: string): string {
    return `${this.checkpointsRootPrefix()}${job}/`;
  }
  /** The run folder's traces, streamed with the checkpoints. */
  tracesPrefix(job: string): string {
    return `${this.checkpointsPrefix(job)}${RUN_FOLDER.traces}/`;
  }
  /** The config the job ran with, at the top of its run folder. */
  runConfigKey(job: string): string {
    return `${this.checkpointsPrefix(job)}${RUN_FOLDER.config}`;
  }
  /** The trainer's source, content-addressed: `source/<sha256 of the .tar.gz>.tar.gz`. */
  sourceKey(sha256: string): string {
    return `${this.sourcePrefix()}${sha256}.tar.gz`;
  }
  sourcePrefix(): string {
    return `${this.root}source/`;
  }
  /** The files the launcher uploads for every job, `jobs/`. */
  jobsPrefix(): string {
    return `${this.root}jobs/`;
  }
  jobPrefix(job: string): string {
    return `${this.jobsPrefix()}${job}/`;
  }
  /** Files the launcher uploads for a job, relative to `jobPrefix(job)`. */
  jobKey(job: string, file: JobFile | string): string {
    return `${this.jobPrefix(job)}${file}`;
  }
  /** SageMaker appends `<job>/output/model.tar.gz` to this path. */
  outputPath(): string {
    return `${this.root}output`;
  }
  /** `outputPath()` as a prefix (`output/`): every job's model artifact is under it. */
  outputPrefix(): string {
    return `${this.outputPath()}/`;
  }
  modelArtifactKey(job: string): string {
    return `${this.outputPath()}/${job}/output/model.tar.gz`;
  }
  /** The prefixes a job reads: the launcher's uploads (datasets, curricula, models, job files, source). */
  jobInputPrefixes(): readonly string[] {
    return [
      this.datasetsPrefix(),
      this.curriculaPrefix(),
      this.modelsPrefix(),
      this.jobsPrefix(),
      this.sourcePrefix(),
    ];
  }
  /** The prefixes a job writes: its run folder and SageMaker's model artifact. */
  jobOutputPrefixes(): readonly string[] {
    return [this.checkpointsRootPrefix(), this.outputPrefix()];
  }
  /** Every top-level prefix under the root, the job's inputs first. */
  topLevelPrefixes(): readonly string[] {
    return [...this.jobInputPrefixes(), ...this.jobOutputPrefixes()];
  }
}

/** An S3 key pattern (IAM `s3:prefix` conditions, object ARNs): every key under `prefix`. */
export function keyPattern(prefix: string): string {
  return `${prefix}*`;
}
