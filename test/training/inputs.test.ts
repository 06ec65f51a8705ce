import { loadTrainingConfig } from '../../lib/config';
import { planInputs, resolveConfigForJob } from '../../lib/training/inputs';
import { S3Layout } from '../../lib/layout';
import type { TrainerSelection } from '../../lib/trainers';
import { EXAMPLES_DIR, exampleConfigs, gsm8kWith, tempDir, writeConfig } from '../helpers/fixtures';
import * as path from 'node:path';

const layout = new S3Layout('bkt');
const dir = tempDir();

/** The loaders of the trainer that runs the config, as the planner passes them. */
function loadersOf(loaded: { trainer?: TrainerSelection }) {
  return { loaders: loaded.trainer!.profile.loaders };
}

function plan(text: string) {
  const loaded = loadTrainingConfig(writeConfig(dir, `c${Math.random().toString(36).slice(2)}.yaml`, text));
  return { loaded, ...planInputs(loaded.value, loaded.file, layout, dir, loadersOf(loaded)) };
}

describe('input planning', () => {
  it('maps a Hugging Face id to models/<name>/ and says so', () => {
    const { inputs } = plan(gsm8kWith());
    expect(inputs!.model.location).toEqual({
      bucket: 'bkt',
      key: 'rlvr-experiments/models/Qwen3-1.7B-Base/',
    });
    expect(inputs!.model.mappings).toEqual([
      {
        value: 'Qwen/Qwen3-1.7B-Base',
        kind: 'hub-id',
        note: expect.stringMatching(/jobs cannot reach the Hub/),
      },
    ]);
    expect(inputs!.model.referencedAt).toHaveLength(5);
  });

  it('maps a local folder by its name, and uses s3:// URIs as written', () => {
    const local = plan(gsm8kWith([/Qwen\/Qwen3-1.7B-Base/g, '/efs/models/Qwen3-1.7B-Base']));
    expect(local.inputs!.model.location.key).toBe('rlvr-experiments/models/Qwen3-1.7B-Base/');
    expect(local.inputs!.model.mappings[0].kind).toBe('local-path');
    const s3 = plan(gsm8kWith([/Qwen\/Qwen3-1.7B-Base/g, 's3://other/m/Qwen3-1.7B-Base']));
    expect(s3.inputs!.model.location).toEqual({ bucket: 'other', key: 'm/Qwen3-1.7B-Base/' });
    expect(s3.inputs!.model.mappings[0].kind).toBe('s3');
  });

  it('gives a teacher its own channel and rewrites only its references', () => {
    const loaded = loadTrainingConfig(path.join(EXAMPLES_DIR, 'qwen3-1.7B-gsm8k-grpo-gkd-teacher.yaml'));
    const { inputs } = planInputs(loaded.value, loaded.file, layout, dir, loadersOf(loaded));
    expect(inputs!.model.location.key).toBe('rlvr-experiments/models/Qwen3-1.7B-Base/');
    expect(inputs!.otherModels.map((m) => [m.channel, m.location.key])).toEqual([
      ['model-teacher', 'rlvr-experiments/models/Qwen3-4B-Base/'],
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a plain YAML tree
    const resolved = resolveConfigForJob(loaded.value, inputs!) as any;
    expect(resolved.roles[3].config.model).toBe('/opt/ml/input/data/model-teacher');
    expect(resolved.roles[2].config.model).toBe('/opt/ml/input/data/model');
  });

  it('ships an SFT data file on a channel of its own and rewrites its path', () => {
    const loaded = loadTrainingConfig(path.join(EXAMPLES_DIR, 'qwen3-1.7B-gsm8k-sft-only.yaml'));
    const { inputs } = planInputs(loaded.value, loaded.file, layout, dir, loadersOf(loaded));
    expect(inputs!.datasets).toEqual([
      expect.objectContaining({ kind: 'file', channel: 'gsm8k_sft_hard.jsonl', rewrite: true }),
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a plain YAML tree
    const resolved = resolveConfigForJob(loaded.value, inputs!) as any;
    expect(resolved.sft_data.path).toBe('/opt/ml/input/data/gsm8k_sft_hard.jsonl/gsm8k_sft_hard.jsonl');
  });

  it('refuses a Hub-only dataset for a network-isolated job, and warns without isolation', () => {
    const text = gsm8kWith(['dataset: gsm8k', 'dataset: humaneval']);
    const file = writeConfig(dir, 'hub.yaml', text);
    const loaded = loadTrainingConfig(file, file, {});
    const isolated = planInputs(loaded.value, loaded.file, layout, dir, {
      ...loadersOf(loaded),
      networkIsolation: true,
    });
    expect(isolated.problems[0].message).toMatch(
      /only downloads from the Hugging Face Hub.*network-isolated job cannot load it/,
    );
    const open = planInputs(loaded.value, loaded.file, layout, dir, {
      ...loadersOf(loaded),
      networkIsolation: false,
    });
    expect(open.inputs!.notCarried).toEqual([
      expect.objectContaining({ name: 'humaneval', why: 'Hub only' }),
    ]);
  });

  it('maps datasets and order files to channels and rewrites the resolved config', () => {
    const loaded = loadTrainingConfig(path.join(EXAMPLES_DIR, 'qwen3-1.7B-mixed-curriculum-grpo.yaml'));
    const { inputs } = planInputs(loaded.value, loaded.file, layout, dir, loadersOf(loaded));
    expect(inputs!.datasets.map((d) => [d.folder, d.location.key, d.channel])).toEqual([
      ['gsm8k_train', 'rlvr-experiments/datasets/gsm8k_train/', 'gsm8k_train'],
      ['math_train', 'rlvr-experiments/datasets/math_train/', 'math_train'],
    ]);
    expect(inputs!.orderFiles.map((o) => o.containerPath)).toEqual([
      '/opt/ml/input/data/order-1/gsm8k_curriculum.txt',
      '/opt/ml/input/data/order-2/math_curriculum.txt',
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a plain YAML tree
    const resolved = resolveConfigForJob(loaded.value, inputs!) as any;
    expect(resolved.launcher).toBeUndefined();
    expect(resolved.model.path).toBe('/opt/ml/input/data/model');
    expect(resolved.tokenizer.pretrained_model_name_or_path).toBe('/opt/ml/input/data/model');
    expect(resolved.roles[2].config.model).toBe('/opt/ml/input/data/model');
    expect(resolved.data.datasets[0].order).toBe('/opt/ml/input/data/order-1/gsm8k_curriculum.txt');
    expect(resolved.data.datasets[0].name).toBe('gsm8k');
    expect(resolved.training.max_staleness).toBe(loaded.value.training.max_staleness);
    // The config as loaded is untouched.
    expect(loaded.value.model.path).toBe('Qwen/Qwen3-1.7B-Base');
  });

  it('maps an absolute local order file to curricula/ by its name and says how to upload it', () => {
    const { inputs } = plan(
      gsm8kWith([
        '  skip_chat_template: true',
        '  skip_chat_template: true\n  order: /efs/curricula/gsm8k.txt',
      ]),
    );
    expect(inputs!.orderFiles[0].location).toEqual({
      bucket: 'bkt',
      key: 'rlvr-experiments/curricula/gsm8k.txt',
    });
    expect(inputs!.orderFiles[0].note).toMatch(
      /aws s3 cp \/efs\/curricula\/gsm8k.txt s3:\/\/bkt\/rlvr-experiments\/curricula\/gsm8k.txt/,
    );
  });

  it.each(exampleConfigs().map((f) => [path.basename(f), f]))(
    '%s: every input maps to S3 with no problem, and the resolved config points at the channels',
    (_name, file) => {
      const loaded = loadTrainingConfig(file);
      const planned = planInputs(loaded.value, loaded.file, layout, path.dirname(file), loadersOf(loaded));
      expect(planned.problems).toEqual([]);
      const inputs = planned.inputs!;
      expect(inputs.model.location.key).toMatch(/^rlvr-experiments\/models\/[^/]+\/$/);
      expect(inputs.datasets.length + inputs.notCarried.length).toBeGreaterThan(0);
      const resolved = JSON.stringify(resolveConfigForJob(loaded.value, inputs));
      expect(resolved).toContain('/opt/ml/input/data/model');
      expect(resolved).not.toContain('"launcher"');
    },
  );
});
