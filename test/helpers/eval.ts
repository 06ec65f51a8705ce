import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SubmitConnection } from '../../lib/submission/session';
import { S3Layout } from '../../lib/layout';
import { safetensorsWith, tempDir } from './fixtures';

export const FAKE_LM_EVAL = path.join(__dirname, '..', 'fixtures', 'fake-lm-eval', 'lm_eval.js');

/**
 * A small checkpoint folder: config.json and whole weights. `trap`: the known mismatch (one file saved
 * as model.safetensors while the index names model-00001-of-00001.safetensors). `failTasks`: the fake
 * lm_eval fails these tasks on it.
 */
export function writeCheckpoint(dir: string, options: { trap?: boolean; failTasks?: string[] } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), '{"model_type": "qwen3"}\n');
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensorsWith(Buffer.alloc(256, 7)));
  if (options.trap)
    fs.writeFileSync(
      path.join(dir, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: {}, weight_map: { w: 'model-00001-of-00001.safetensors' } }),
    );
  if (options.failTasks)
    fs.writeFileSync(path.join(dir, 'fake-fail-tasks.txt'), options.failTasks.join('\n'));
  return dir;
}

/** A folder with an `lm_eval` that runs the fake (for PATH). */
export function fakeLmEvalBin(): string {
  const bin = tempDir('rlvr-fake-lm-eval-');
  fs.writeFileSync(
    path.join(bin, 'lm_eval'),
    `#!/bin/sh\nexec "${process.execPath}" "${FAKE_LM_EVAL}" "$@"\n`,
    {
      mode: 0o755,
    },
  );
  return bin;
}

/** A session's connection without AWS (a dry-run or a local run), with a bucket. */
export function offlineConnection(bucket = 'eval-test-bucket'): SubmitConnection {
  const layout = new S3Layout(bucket, 'rlvr-experiments/');
  return {
    region: 'us-west-2',
    aws: undefined,
    settings: {
      values: {
        bucket: layout.bucket,
        prefix: layout.root,
        jobNamePrefix: 'annotations-adhoc',
        region: 'us-west-2',
      },
      sources: {} as never,
      missing: [],
    },
    note: 'no AWS credentials found',
    dryRun: true,
    publishedTemplate: async () => undefined,
  };
}
