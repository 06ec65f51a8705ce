import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { stringify } from 'yaml';
import { findImportRoots, readPyproject } from '../../lib/python';
import { BUILT_IN_PROFILES, buildJobContract } from '../../lib/trainers';
import { GSM8K_EXAMPLE, tempDir } from './fixtures';
import { freePort } from './moto';
import { testVenv, THEIR_REPO, theirRepository } from './python';

/*
 * A job of their trainer laid out as SageMaker lays it out, for the entrypoint in this process: a folder
 * standing in for /opt/ml with the code channel unpacked (the whole replica of their repository,
 * test/fixtures/their-repo), the model and dataset channels, the resolved config and the contract the
 * launcher ships (its import roots as the launcher finds them), and the job's environment: real Python
 * from a virtualenv holding the stand-in `ray`, `vllm` and `transformers`, and the stand-in Ray CLI the
 * entrypoint starts.
 */
export const GRPO_SFT = BUILT_IN_PROFILES.find((p) => p.id === 'grpo-sft')!;
export const CONFIG_NAME = 'qwen3-1.7B-gsm8k.yaml';

/**
 * A model folder's files as their trainer reads them at start: the config, and the slow Qwen2
 * tokenizer's vocabulary and merges (their configs say `use_fast: false`, which reads only these two).
 */
export const MODEL_FILES: Readonly<Record<string, string>> = {
  'config.json': '{"model_type": "qwen3"}\n',
  'vocab.json': JSON.stringify({ '<|endoftext|>': 0, a: 1, b: 2, ab: 3 }) + '\n',
  'merges.txt': '#version: 0.2\na b\n',
};

export interface TheirJob {
  root: string;
  tmp: string;
  base: string;
  env: NodeJS.ProcessEnv;
  out: PassThrough;
  text: () => string;
}

/**
 * The GSM8K example as a config of their repository for `submit --local`: local weights (whose folder
 * their tokenizer reads too, with their `use_fast: false`), 4 steps, a checkpoint every 2, their eval
 * watcher unless `evalConfig: false`, and `launcher` lines added to its launcher section.
 */
export function theirSubmitConfig(options: { launcher?: string; evalConfig?: boolean } = {}): string {
  return fs
    .readFileSync(GSM8K_EXAMPLE, 'utf8')
    .replaceAll('Qwen/Qwen3-1.7B-Base', '../models/Qwen3-1.7B-Base')
    .replace(/use_fast: \w+/, 'use_fast: false')
    .replace(/max_steps: \d+/, 'max_steps: 4')
    .replace(/checkpoint_interval: \d+/, 'checkpoint_interval: 2')
    .replace(/(\n\s+)interval: 20/, '$1interval: 2')
    .replace(/^ {2}trainer_src: .*\n/m, '')
    .replace(
      /^ {2}eval_config: .*\n/m,
      options.evalConfig === false ? '' : '  eval_config: eval/lm_eval_watch.yaml\n',
    )
    .replace('launcher:\n', `launcher:\n${options.launcher ?? ''}`);
}

/**
 * Their repository (the replica, a git repository) with the model folder their config names, the eval
 * config, a fixture mode, and `files` added: what `submit --local` ships and mounts.
 */
export function theirSubmitRepository(files: Record<string, string>): string {
  return theirRepository({
    ...Object.fromEntries(
      Object.entries(MODEL_FILES).map(([f, body]) => [`models/Qwen3-1.7B-Base/${f}`, body]),
    ),
    'configs/eval/lm_eval_watch.yaml': fs.readFileSync(
      path.join(path.dirname(GSM8K_EXAMPLE), '..', 'eval', 'lm_eval_watch.yaml'),
      'utf8',
    ),
    'fixture-mode.json': JSON.stringify({ exportPauseMs: 200 }),
    ...files,
  });
}

/** Where the replica assigns NCCL_SOCKET_IFNAME at import, as the plan describes each write. */
const THEIR_IFNAME_WRITES = [
  'src/rlvr_experiments/syncing.py:15 NCCL_SOCKET_IFNAME="ens32"',
  'src/rlvr_experiments/titan_actor.py:5 NCCL_SOCKET_IFNAME="ens32"',
  'src/rlvr_experiments/vllm_engine_actor.py:7 NCCL_SOCKET_IFNAME="ens32"',
];

/** The files of a folder, relative to it (as a staged source lists them). */
function filesOf(dir: string, rel = ''): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? filesOf(dir, r) : [r];
  });
}

let venv: { bin: string } | undefined;

export async function theirJob(options: {
  maxSteps: number;
  interval: number;
  evalConfig?: Record<string, unknown>;
  mode?: object;
  /** The import roots the launcher would ship (default: what it finds in the replica). */
  importRoots?: string[];
  /**
   * Whether the job holds the platform's values (hold_platform_env) against their modules' import-time
   * NCCL_SOCKET_IFNAME="ens32" (default true: without it NCCL finds no ens32 on this host and the
   * trainer fails when its actors start the weight-sync communicator).
   */
  holdPlatformEnv?: boolean;
}): Promise<TheirJob> {
  const root = tempDir('rlvr-ml-');
  const tmp = tempDir('rlvr-tmp-');
  const data = path.join(root, 'input', 'data');
  const base = path.join(data, 'model');
  fs.mkdirSync(base, { recursive: true });
  for (const [name, body] of Object.entries(MODEL_FILES)) fs.writeFileSync(path.join(base, name), body);
  fs.mkdirSync(path.join(data, 'gsm8k_train'), { recursive: true });
  fs.writeFileSync(path.join(data, 'gsm8k_train', 'dataset_info.json'), '{}');
  // The unpacked code channel: their whole repository.
  const code = path.join(root, 'code');
  fs.cpSync(THEIR_REPO, code, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  if (options.mode)
    fs.writeFileSync(path.join(root, 'code', 'fixture-mode.json'), JSON.stringify(options.mode));
  const config = {
    run: { name: 'qwen3_gsm8k' },
    model: { path: base },
    tokenizer: { pretrained_model_name_or_path: base, use_fast: false },
    training: { max_steps: options.maxSteps, checkpoint_interval: options.interval },
    data: { dataset: 'gsm8k' },
    roles: [
      {
        name: 'trainer',
        kind: 'titan',
        config: { model: { hf_assets_path: base }, checkpoint: { folder: 'checkpoint' } },
      },
      { name: 'reference', kind: 'vllm', config: { model: base } },
      { name: 'rollout', kind: 'vllm', config: { model: base } },
    ],
  };
  const configDir = path.join(data, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  fs.writeFileSync(path.join(configDir, 'resolved-config.yaml'), stringify(config));
  const contract = buildJobContract({
    profile: GRPO_SFT,
    config,
    configName: CONFIG_NAME,
    expectCheckpoints: true,
    cachedDatasets: [{ channel: 'gsm8k_train', folder: 'gsm8k_train' }],
    evalConfig: options.evalConfig,
  });
  const importRoots =
    options.importRoots ??
    findImportRoots({ files: filesOf(code), pyproject: readPyproject(code) }).map((r) => r.path);
  const hold = options.holdPlatformEnv ?? true;
  fs.writeFileSync(
    path.join(configDir, 'contract.json'),
    JSON.stringify({
      ...contract,
      importRoots,
      ...(hold ? { holdPlatformEnv: { against: THEIR_IFNAME_WRITES } } : {}),
    }),
  );
  if (options.evalConfig)
    fs.writeFileSync(path.join(configDir, 'eval-config.yaml'), stringify(options.evalConfig));
  fs.mkdirSync(path.join(root, 'input', 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'input', 'config', 'resourceconfig.json'),
    // The interface SageMaker names for NCCL and Gloo; this host has `lo` (and no ens32).
    JSON.stringify({
      current_host: 'algo-1',
      hosts: ['algo-1'],
      current_instance_type: 'ml.g5.12xlarge',
      network_interface_name: 'lo',
    }),
  );
  // `python` is a virtualenv of the machine's Python holding the stand-ins; `ray` is the stand-in CLI.
  venv ??= testVenv();
  const env: NodeJS.ProcessEnv = {
    PATH: `${venv.bin}:${process.env.PATH}`,
    RLVR_CONFIG: path.join(configDir, 'resolved-config.yaml'),
    RLVR_RUN_NAME: 'qwen3_gsm8k',
    RLVR_TRAIN_GPUS: '0,1',
    RLVR_EVAL_GPUS: options.evalConfig ? '2' : '',
    // Their trainer joins the Ray cluster the entrypoint starts (ray.init(address="auto")).
    RLVR_USE_RAY: '1',
    RLVR_CLUSTER_PORTS: `${await freePort()},${await freePort()}`,
    FAKE_RAY_STATE_DIR: path.join(tmp, 'fake-ray'),
    RLVR_TRAINER_COMMAND: GRPO_SFT.command,
    ...(options.evalConfig ? { RLVR_EVAL_CONFIG: path.join(configDir, 'eval-config.yaml') } : {}),
    FIXTURE_TMP: tmp,
    FIXTURE_EVAL_MS: '50',
  };
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return { root, tmp, base, env, out, text: () => text };
}
