import { YamlFile } from '../../lib/config';
import type { Problem } from '../../lib/errors';
import {
  BUILT_IN_TEMPLATES,
  describeSource,
  idleGpus,
  resolveJobOptions,
  type JobOptionFlags,
} from '../../lib/job-options';

const CONFIG = `run: {name: x}
launcher:
  max_runtime: 12h
  eval_gpus: 5-7
  instance_type: ml.p4de.24xlarge
`;

function resolve(
  flags: JobOptionFlags,
  configText = CONFIG,
  template = 'p4de-train-eval',
  hasEvalConfig = true,
) {
  const file = YamlFile.parse(configText, 'cfg.yaml');
  const launcher = (file.toJS() as { launcher?: Record<string, unknown> }).launcher;
  return resolveJobOptions({
    flags,
    launcher,
    configFile: file,
    template: template ? { name: template, values: BUILT_IN_TEMPLATES[template] } : undefined,
    hasEvalConfig,
    defaultTrainerCommand: {
      value: 'python entrypoints/train_grpo_sft.py {config}',
      note: 'trainer grpo-sft',
    },
  });
}

function messages(problems: Problem[]): string {
  return problems
    .map((p) => `${p.location ? `${p.location.line}:${p.location.column} ` : ''}${p.where}: ${p.message}`)
    .join('\n');
}

describe('job options', () => {
  it('takes flags > config launcher section > template > defaults, and records each source', () => {
    const { options, problems } = resolve({ eval_gpus: '6,7' });
    expect(problems).toEqual([]);
    expect(options!.evalGpus.value).toEqual([6, 7]);
    expect(describeSource(options!.evalGpus.source)).toBe('flag --eval-gpus');
    expect(options!.maxRuntimeSeconds.value).toBe(12 * 3600);
    expect(describeSource(options!.maxRuntimeSeconds.source)).toBe('config cfg.yaml:3:16');
    expect(options!.trainGpus.value).toEqual([0, 1, 2, 3, 4, 5]);
    expect(describeSource(options!.trainGpus.source)).toBe('template p4de-train-eval');
    expect(options!.volumeGb.value).toBe(200);
    expect(describeSource(options!.volumeGb.source)).toBe('default');
  });

  it('shared_fs_network_isolation: true by default, from a flag or the launcher section', () => {
    const byDefault = resolve({}, CONFIG, '').options!.sharedFsNetworkIsolation;
    expect(byDefault).toEqual({ value: true, source: { kind: 'default' } });
    expect(
      resolve({ shared_fs_network_isolation: false }, CONFIG, '').options!.sharedFsNetworkIsolation,
    ).toEqual({
      value: false,
      source: { kind: 'flag', flag: '--no-shared-fs-network-isolation' },
    });
    const fromConfig = resolve({}, `${CONFIG}  shared_fs_network_isolation: false\n`, '').options!;
    expect(fromConfig.sharedFsNetworkIsolation.value).toBe(false);
    expect(describeSource(fromConfig.sharedFsNetworkIsolation.source)).toMatch(/^config cfg\.yaml:\d+:\d+$/);
    // It leaves network_isolation as it is.
    expect(fromConfig.networkIsolation.value).toBe(true);
    const bad = resolve({}, `${CONFIG}  shared_fs_network_isolation: 'no'\n`, '');
    expect(messages(bad.problems)).toMatch(
      /launcher\.shared_fs_network_isolation: "no" is not true or false/,
    );
  });

  it('reports overlapping train and eval GPUs where they were set', () => {
    const { problems } = resolve({});
    expect(messages(problems)).toMatch(
      /^4:14 launcher\.eval_gpus: GPU 5 is given to both training \(0,1,2,3,4,5\) and eval \(5,6,7\)/,
    );
  });

  it('reports GPUs the instance does not have', () => {
    const { problems } = resolve({ instance_type: 'ml.g5.12xlarge', train_gpus: '0-3', eval_gpus: '4' });
    expect(messages(problems)).toMatch(/--eval-gpus: GPU 4 does not exist on ml.g5.12xlarge \(4 GPUs: 0–3\)/);
  });

  it('refuses an eval config with no eval GPUs', () => {
    const { problems } = resolve({}, 'run: {name: x}\n', 'p4de-train', true);
    expect(messages(problems)).toMatch(/an eval config is given but no GPU is set aside for evaluation/);
  });

  it('defaults to train 0–5 / eval 6–7 for an eval config on 8 GPUs without a template', () => {
    const { options } = resolve({}, 'run: {name: x}\n', '', true);
    expect(options!.trainGpus.value).toEqual([0, 1, 2, 3, 4, 5]);
    expect(options!.evalGpus.value).toEqual([6, 7]);
  });

  it('suggests the right instance type', () => {
    const { problems } = resolve({ instance_type: 'p4de.24xlarge' });
    expect(problems[0].hint).toBe('Did you mean "ml.p4de.24xlarge"?');
    expect(problems[0].where).toBe('--instance-type');
  });

  it('checks spot wait, warm pools and runtime limits', () => {
    expect(messages(resolve({ spot: true, max_wait: '1h', eval_gpus: '6,7' }).problems)).toMatch(
      /spot jobs need max_wait ≥ max_runtime/,
    );
    expect(messages(resolve({ max_wait: '30h', eval_gpus: '6,7' }).problems)).toMatch(
      /applies only to spot jobs/,
    );
    expect(messages(resolve({ keep_alive: '2h', eval_gpus: '6,7' }).problems)).toMatch(/at most 3600 s/);
    expect(messages(resolve({ keep_alive: '10m', spot: true, eval_gpus: '6,7' }).problems)).toMatch(
      /warm pools cannot be used with spot/,
    );
    expect(messages(resolve({ max_runtime: '29d', eval_gpus: '6,7' }).problems)).toMatch(
      /between 1 s and 28 days/,
    );
    const spot = resolve({ spot: true, eval_gpus: '6,7' }).options!;
    expect(spot.maxWaitSeconds.value).toBe(12 * 3600);
  });

  it('requires {config} in the trainer command', () => {
    expect(messages(resolve({ trainer_command: 'python train.py', eval_gpus: '6,7' }).problems)).toMatch(
      /does not contain \{config\}/,
    );
  });

  it('finds idle GPUs', () => {
    const { options } = resolve({ train_gpus: '0-3', eval_gpus: '6,7' });
    expect(idleGpus(options!)).toEqual([4, 5]);
  });
});
