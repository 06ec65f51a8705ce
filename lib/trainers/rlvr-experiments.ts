import {
  keyTree,
  mergeKeyTrees,
  type DataSection,
  type DatasetLoader,
  type EvalScriptContract,
  type KeyTree,
  type NetworkUse,
  type PasskScriptContract,
  type TrainerProfile,
  type TrainerRuntime,
} from './profile';

/*
 * The team's trainers as they are (halflearned/rlvr-experiments, read 2026-11-23). Every fact names the
 * line of their source it came from: E/ = entrypoints/, S/ = src/rlvr_experiments/. When their code
 * changes, change the fact here (or override it in the repository's profile file) — nowhere else.
 */

/** The folders their cites abbreviate: `S/data.py:47` is src/rlvr_experiments/data.py, line 47. */
export const CITE_FOLDERS: Readonly<Record<string, string>> = {
  S: 'src/rlvr_experiments/',
  E: 'entrypoints/',
};

/** Dataset loaders: S/data.py DATASET_LOADERS (1150-1163), plus `mixed` from the trainers' own tables. */
export const LOADERS: Readonly<Record<string, DatasetLoader>> = {
  gsm8k: {
    params: ['split'],
    source: 's3-cache',
    folder: 'gsm8k_{split}',
    // The prompt is `Q: … A:` (S/data.py:101): the next question starts with "Q:".
    nextQuestionStop: 'Q:',
    cite: 'S/data.py:47-104',
  },
  math: { params: ['split', 'level'], source: 's3-cache', folder: 'math_{split}', cite: 'S/data.py:252-351' },
  deepscaler: {
    params: ['split'],
    source: 's3-cache',
    folder: 'deepscaler_{split}',
    cite: 'S/data.py:442-507',
  },
  humaneval: { params: [], source: 'hub', cite: 'S/data.py:121-155 (openai/openai_humaneval only)' },
  mbpp: { params: ['split'], source: 's3-cache', folder: 'mbpp_{split}', cite: 'S/data.py:167-226' },
  apps: { params: ['split', 'difficulty'], source: 'hub', cite: 'S/data.py:524-579 (hf_hub_download only)' },
  ifeval: { params: ['split'], source: 's3-cache', folder: 'ifeval_{split}', cite: 'S/data.py:642-703' },
  if_multi_constraints: {
    params: ['split'],
    source: 's3-cache',
    folder: 'if_multi_constraints_{split}',
    cite: 'S/data.py:757-821',
  },
  dummy: { params: ['split', 'num_samples'], source: 'none', cite: 'S/data.py:841-855' },
  // The cache ignores the split (S/data.py:940).
  allenai_rlvr: {
    params: ['split', 'datasets'],
    source: 's3-cache',
    folder: 'allenai_rlvr_train',
    cite: 'S/data.py:913-999',
  },
  allenai_gsm8k_mini: {
    params: ['n_samples', 'seed'],
    source: 's3-cache',
    folder: 'allenai_rlvr_train',
    nextQuestionStop: 'Q:',
    cite: 'S/data.py:1003-1079 (4-shot Q:/A: prompt, via allenai_rlvr)',
  },
  sft_jsonl: {
    params: ['path', 'split', 'subset'],
    source: 'file',
    fileKey: 'path',
    cite: 'S/data.py:1082-1139',
  },
};

/** `load_mixed(datasets, mode, seed)`: each entry names a loader (S/data.py:1166-1292). */
export const MIXED = 'mixed';
const MIXED_PARAMS = ['datasets', 'mode', 'seed'];
const MIXED_ENTRY_KEYS = ['name', 'weight', 'count', 'order'];
export const MIXED_MODES = ['weighted', 'sequential'];

/** The datasets `train_grpo_sft` and `train_grpo_gkd` accept in `data.dataset` (E/train_grpo_sft.py:28-39). */
const GRPO_DATASETS = [
  'apps',
  'humaneval',
  'mbpp',
  'gsm8k',
  'math',
  'deepscaler',
  'dummy',
  'ifeval',
  'if_multi_constraints',
  MIXED,
];

const loaderParams = [...new Set(Object.values(LOADERS).flatMap((l) => l.params))];

/** `DataIterator.__init__` (S/data.py:1393-1401). */
const DATA_ITER_KEYS = ['system_prompt', 'assistant_prefix', 'order', 'skip_chat_template'];

/** vLLM `SamplingParams` fields: `sampling` is passed whole (S/vllm_engine_actor.py:85). */
const SAMPLING_KEYS = [
  'n',
  'best_of',
  'presence_penalty',
  'frequency_penalty',
  'repetition_penalty',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'seed',
  'stop',
  'stop_token_ids',
  'bad_words',
  'include_stop_str_in_output',
  'ignore_eos',
  'max_tokens',
  'min_tokens',
  'logprobs',
  'prompt_logprobs',
  'detokenize',
  'skip_special_tokens',
  'spaces_between_special_tokens',
  'truncate_prompt_tokens',
  'logit_bias',
  'allowed_token_ids',
  'extra_args',
];

/** Titan parallelism degrees, current names first; the older names (older configs still carry them) are read too. */
export const TITAN_DEGREES_CITE = 'S/config_plan.py:60-67';
export const TITAN_DEGREES = {
  replicate: ['data_parallel_replicate_degree', 'dp_replicate'],
  shard: ['data_parallel_shard_degree', 'dp_shard'],
  tensor: ['tensor_parallel_degree', 'tensor_parallel'],
  context: ['context_parallel_degree', 'context_parallel'],
} as const;

/**
 * The trainer role's config becomes a torchtitan job config (S/titan_actor.py:589-619; keys read in
 * S/model.py:52-212). Sections whose fields belong to torchtitan alone are leaves.
 */
export const TITAN_CONFIG_KEYS: KeyTree = mergeKeyTrees(
  keyTree([
    'trainable',
    'seed',
    'job',
    'profiling',
    'metrics',
    'activation_checkpoint',
    'compile',
    'float8',
    'mx',
    'comm',
    'memory_estimation',
    'fault_tolerance',
    'experimental',
    'validation',
    'model.name',
    'model.flavor',
    'model.hf_assets_path',
    'model.tokenizer_path',
    'model.converters',
    'optimizer.name',
    'optimizer.lr',
    'optimizer.eps',
    'optimizer.beta1',
    'optimizer.beta2',
    'optimizer.weight_decay',
    'optimizer.implementation',
    'lr_scheduler.warmup_steps',
    'lr_scheduler.decay_ratio',
    'lr_scheduler.decay_type',
    'lr_scheduler.min_lr_factor',
    'training.seq_len',
    'training.dtype',
    'training.mixed_precision_param',
    'training.mixed_precision_reduce',
    'training.max_norm',
    'training.steps',
    'training.enable_cpu_offload',
    'training.local_batch_size',
    'training.global_batch_size',
    'training.seed',
    'training.deterministic',
    'checkpoint.enable',
    'checkpoint.folder',
    'checkpoint.initial_load_in_hf',
    'checkpoint.initial_load_path',
    'checkpoint.initial_load_model_only',
    'checkpoint.interval',
    'checkpoint.last_save_model_only',
    'checkpoint.last_save_in_hf',
    'checkpoint.export_dtype',
    'checkpoint.async_mode',
    'checkpoint.keep_latest_k',
    'checkpoint.load_step',
    'checkpoint.exclude_from_loading',
  ]),
  {
    parallelism: keyTree([
      ...Object.values(TITAN_DEGREES).flat(),
      'fsdp_reshard_after_forward',
      'disable_loss_parallel',
    ]),
  },
  {
    parallelism: keyTree([
      'enable_compiled_autograd',
      'enable_async_tensor_parallel',
      'pipeline_parallel_degree',
      'expert_parallel_degree',
      'expert_tensor_parallel_degree',
    ]),
  },
);

/**
 * A vLLM role's config goes to `AsyncEngineArgs` after `data_parallel_size` and
 * `max_concurrent_per_replica` are taken out (S/vllm_engine_actor.py:49-54).
 */
export const VLLM_CONFIG_KEYS: KeyTree = keyTree([
  'model',
  'tokenizer',
  'tokenizer_mode',
  'trust_remote_code',
  'revision',
  'dtype',
  'seed',
  'max_model_len',
  'tensor_parallel_size',
  'pipeline_parallel_size',
  'data_parallel_size',
  'enable_expert_parallel',
  'gpu_memory_utilization',
  'max_num_seqs',
  'max_num_batched_tokens',
  'enable_prefix_caching',
  'enable_chunked_prefill',
  'logprobs_mode',
  'max_logprobs',
  'enforce_eager',
  'kv_cache_dtype',
  'swap_space',
  'cpu_offload_gb',
  'quantization',
  'load_format',
  'download_dir',
  'block_size',
  'disable_log_stats',
  'enable_sleep_mode',
  'compilation_config',
  'generation_config',
  'override_generation_config',
  'hf_overrides',
  'max_concurrent_per_replica',
]);

/** Keys every trainer shares through `load_plan` and `Runtime.from_plan`. */
export const SHARED_KEYS: KeyTree = mergeKeyTrees(
  keyTree([
    // S/config_plan.py:52-135; S/runtime.py:176, 195-266
    'run.name',
    'run.port_start',
    'run.seed',
    'trace_path',
    'model.path',
    'tokenizer.pretrained_model_name_or_path',
    'tokenizer.use_fast',
    'tokenizer.trust_remote_code',
    'tokenizer.revision',
    'tokenizer.padding_side',
    'buffer.maxsize',
    'buffer.max_reads',
    'sync.chunk_mb',
    'sync.wiring.[].src',
    'sync.wiring.[].dst',
    'sync.wiring.[].name',
    'sync.wiring.[].src_rank',
    'roles.[].name',
    'roles.[].kind',
    'roles.[].config',
    'roles.[].data_parallel_size',
    // VerifierPool(num_workers, **verifier kwargs) (S/verifiers/distributed.py:48 and the verifiers)
    'verifier.num_workers',
    'verifier.timeout',
    'verifier.max_workers',
    'verifier.warmup',
    'verifier.max_concurrent',
    'verifier.truncate',
    'verifier.math_timeout',
    'verifier.math_max_workers',
    'verifier.ifeval_timeout',
    'verifier.gsm8k_format_weight',
    ...SAMPLING_KEYS.map((k) => `sampling.${k}`),
    // loss classes (S/losses.py:125, 263, 363)
    'loss.name',
    'loss.beta',
    'loss.eps',
    'loss.C',
    'loss.eps_low',
    'loss.eps_high',
    ...['data', 'sft_data'].flatMap((s) => [
      `${s}.dataset`,
      ...[...loaderParams, ...MIXED_PARAMS].map((p) => `${s}.${p}`),
      ...[...MIXED_ENTRY_KEYS, ...loaderParams].map((p) => `${s}.datasets.[].${p}`),
    ]),
    ...['data_iter', 'sft_data_iter'].flatMap((s) => DATA_ITER_KEYS.map((k) => `${s}.${k}`)),
  ]),
);

/** The keys their eval script reads (entrypoints/eval_benchmarks.py 340-472), plus our OLMES form. */
export const EVAL_CONFIG_KEYS: KeyTree = keyTree([
  'seed',
  'output_dir',
  'temperature',
  'harness',
  'max_gen_toks',
  'vllm.tensor_parallel_size',
  'vllm.dtype',
  'vllm.gpu_memory_utilization',
  'vllm.max_model_len',
  'benchmarks.[].task',
  'benchmarks.[].num_fewshot',
  'checkpoints.[].name',
  'checkpoints.[].path',
  'watch.enable',
  'watch.local_dir',
  'watch.s3_prefix',
  'watch.pattern',
  'watch.poll_interval_s',
  'watch.seen_path',
  'watch.gpu_mode',
  'watch.gpus',
  'watch.task_groups.[].gpu',
  'watch.task_groups.[].benchmarks.[].task',
  'watch.task_groups.[].benchmarks.[].num_fewshot',
  'olmes.tasks',
  'olmes.model_type',
  'olmes.num_workers',
  'olmes.num_gpus',
  'olmes.model_args',
]);

const GRPO_SCHEDULE = [
  'training.prompts_per_rollout_sync',
  'training.prompts_per_reference_sync',
  'training.prompts_per_optim_step',
  'training.prompts_per_forward_backward',
];
const FLAT_SCHEDULE = ['training.batch_size', 'training.minibatch_size', 'training.sync_every_n_steps'];

/** Their titan_actor turns the trainer role's `checkpoint.enable` on whatever the config says. */
const TITAN_ENABLE_FORCED = 'S/titan_actor.py:598-602';

/** Sections `Runtime.from_plan` and the rollout trainers read without a guard. */
const ROLLOUT_SECTIONS = [
  'run',
  'tokenizer',
  'training',
  'data',
  'data_iter',
  'verifier',
  'sampling',
  'buffer',
];
const GRPO_SECTIONS = [...ROLLOUT_SECTIONS, 'loss'];

/** `data` / `data_iter` of the GRPO trainers: `skip_chat_template` defaults to true (E/train_grpo_sft.py:121). */
const GRPO_DATA: DataSection = {
  section: 'data',
  iterator: 'data_iter',
  skipChatTemplateDefault: true,
  datasets: GRPO_DATASETS,
};

/** HF exports with `export_to_hf` every `training.checkpoint_interval` steps and at the end (`<run>_final`). */
function exportsHf(intervalDefault?: number): TrainerProfile['checkpoints'] {
  return {
    writes: true,
    intervalKey: 'training.checkpoint_interval',
    intervalDefault,
    final: true,
    titanEnableForced: TITAN_ENABLE_FORCED,
  };
}

/**
 * entrypoints/eval_benchmarks.py: `CONFIG [--cache-dir DIR] [--watch-path GLOB]` (E/eval_benchmarks.py:339-353;
 * a glob sets watch.local_dir and watch.pattern, :406-414). Watch mode is `while True` with no exit
 * (:532-574); a checkpoint's results land in `summary_<start>.json` under `results.<checkpoint>.<task>_<N>shot`
 * once all its tasks are back (:381-404, :494-496, :568-574); it polls every `watch.poll_interval_s`
 * (default 300, :431) and takes a checkpoint as soon as model.safetensors exists (:544-549), so it is only
 * ever shown complete ones.
 */
export const RLVR_EVAL_SCRIPT: EvalScriptContract = {
  script: 'entrypoints/eval_benchmarks.py',
  command: '{python} entrypoints/eval_benchmarks.py {config} --watch-path {watch}',
  ends: 'never',
  summaries: 'summary_*.json',
  resultKey: '{task}_{shots}shot',
  accepts: ['model.safetensors', 'model-00001-of-00001.safetensors'],
  pollKey: 'watch.poll_interval_s',
  pollDefault: 300,
  cite: 'E/eval_benchmarks.py:339-574',
};

/**
 * Their pass@k script (scripts/eval_pass_at_k.py, read 2026-11-27). It loads gsm8k and MATH itself from
 * /tmp/<name>_<split>_cache when that holds dataset_info.json (:159-245), else from the Hub; aime,
 * beyondaime, ifeval and ifbench from the Hub only (:247-361); the others through data.py's loaders
 * (:377-386), which read the same caches. It shards with ceil(prompts / shards) per shard in dataset
 * order (:960-971) and writes `shard_<i>/` under --output-dir (:984-986), a line per prompt flushed as it
 * ends (:601-650). It reads the finished prompt ids back only when --resume-from > 0 (:541-550): the
 * index itself is never used, so `--resume-from 1` means "skip what the results file has".
 */
export const RLVR_PASSK_SCRIPT: PasskScriptContract = {
  script: 'scripts/eval_pass_at_k.py',
  argv: [
    '{python}',
    '{script}',
    '{dataset}',
    ['--split', '{split}'],
    ['--level', '{level}'],
    ['--model-path', '{model}'],
    ['--n', '{n}'],
    ['--batch-size', '{batch_size}'],
    ['--max-tokens', '{max_tokens}'],
    ['--temperature', '{temperature}'],
    ['--top-p', '{top_p}'],
    ['--top-k', '{top_k}'],
    ['--max-model-len', '{max_model_len}'],
    ['--max-prompts', '{max_prompts}'],
    ['--verifier-workers', '{verifier_workers}'],
    ['--gpus', '{gpus}'],
    ['--gpu-index', '{shard}'],
    ['--num-shards', '{shards}'],
    ['--output-dir', '{output}'],
  ],
  // Their defaults (:762-905), passed explicitly so that a result records what produced it; verifier
  // workers as every launcher of theirs passes them (launch_pass_at_k.sh:56): the script's own 32 per
  // shard is 256 verifier processes for 8 shards on one host.
  settings: {
    split: { flag: '--split', default: 'train' },
    level: { flag: '--level' },
    n: { flag: '--n', default: '128' },
    batch_size: { flag: '--batch-size', default: '16' },
    max_tokens: { flag: '--max-tokens', default: '1024' },
    temperature: { flag: '--temperature', default: '1.0' },
    top_p: { flag: '--top-p', default: '0.95' },
    top_k: { flag: '--top-k', default: '50' },
    max_model_len: { flag: '--max-model-len', default: '2048' },
    max_prompts: { flag: '--max-prompts' },
    verifier_workers: { flag: '--verifier-workers', default: '8' },
  },
  datasets: {
    gsm8k: { loader: 'gsm8k' },
    math: { loader: 'math' },
    deepscaler: { loader: 'deepscaler' },
    mbpp: { loader: 'mbpp' },
    if_multi_constraints: { loader: 'if_multi_constraints' },
    allenai_rlvr: { loader: 'allenai_rlvr' },
    aime: { hubOnly: 'it loads AI-MO/aimo-validation-aime from the Hub only (:247-270)' },
    beyondaime: { hubOnly: 'it loads its data from the Hub only (:272-295)' },
    ifeval: { hubOnly: 'it loads google/IFEval from the Hub only (:297-338)' },
    ifbench: { hubOnly: 'it loads allenai/IFBench_test from the Hub only (:340-361)' },
    humaneval: { hubOnly: "data.py's load_humaneval reads the Hub only (S/data.py:121-155)" },
  },
  files: {
    shardFolder: 'shard_{shard}',
    results: 'verification_results.jsonl',
    completions: 'completions.jsonl',
    summary: 'summary.json',
  },
  resumeArgs: ['--resume-from', '1'],
  gpuRule: 'args.gpus = gpu_list[shard_idx] (:974-975), then CUDA_VISIBLE_DEVICES = gpus (:476)',
  cite: 'scripts/eval_pass_at_k.py',
};

/**
 * Their checkpoint export (`export_to_hf`, S/model.py:403) is written by rank 0 of the model group only
 * (`if rank == 0:`, S/model.py:465); Ray places that rank on any host of a multi-node job.
 */
export const RANK0_EXPORT_CITE = 'S/model.py:465, in export_to_hf';

/**
 * Where their trainers and eval script reach for the network at import or start-up (read 2026-11-27 from
 * every entrypoint's imports through src/rlvr_experiments, and lm_eval 0.4.9.2), and how a job without
 * network copes with each. No module the trainers import touches the network at import.
 */
export const THEIR_NETWORK_USES: readonly NetworkUse[] = [
  {
    what: 'AutoTokenizer.from_pretrained(**plan.tokenizer): a Hub download when the name is a Hub id',
    when: 'start-up',
    cite: 'E/train_grpo_sft.py:114, E/train_grpo_minimal.py:54, E/train_grpo_gkd.py:360, E/train_gkd.py:112, E/train_opsd.py:535, E/train_sft_only.py:61, E/train_grpo_LEGACY_DO_NOT_USE.py:136',
    handled: 'channel',
    how: 'every model reference (tokenizer, hf_assets_path, each vLLM role, teachers) is mapped to a model channel and rewritten to its path',
  },
  {
    what: 'vLLM engines load roles[*].config.model (a Hub snapshot for a Hub id)',
    when: 'start-up',
    cite: 'S/vllm_engine_actor.py:47-55',
    handled: 'channel',
    how: "the roles' models are channels; VLLM_NO_USAGE_STATS=1 and DO_NOT_TRACK=1 keep vLLM from reporting usage",
  },
  {
    what: "dataset loaders: `aws s3 sync` from the team's bucket, then load_dataset from the Hub, when /tmp/<name>_<split>_cache is missing",
    when: 'data loading',
    cite: 'S/data.py:47-104',
    handled: 'channel',
    how: 'each dataset is a channel linked at /tmp/<folder>_cache, where the loader looks first',
  },
  {
    what: 'humaneval and apps read the Hub only (load_dataset, hf_hub_download)',
    when: 'data loading',
    cite: 'S/data.py:121-155, 524-579',
    handled: 'refused',
    how: 'a network-isolated config that uses them is refused at plan time (RLVR rule on Hub-only loaders)',
  },
  {
    what: 'load_aime, load_beyondaime and load_ifbench read the Hub only',
    when: 'data loading',
    cite: 'S/data.py:368-441, 723-756',
    handled: 'refused',
    how: "no trainer's dataset table names them (E/train_grpo_sft.py:28-39), so no config reaches them",
  },
  {
    what: 'the LLM-judge verifier loads its tokenizer by name',
    when: 'data loading',
    cite: 'S/verifiers/llm_judge.py:45',
    handled: 'named',
    how: 'only the legacy trainer uses it (verifiers/__init__ imports it lazily; that trainer is chosen by name only): its judge tokenizer must be a folder the job has, e.g. the model channel',
  },
  {
    what: 'sft_jsonl with an s3:// path: boto3 download',
    when: 'data loading',
    cite: 'S/data.py:1082-1139',
    handled: 'channel',
    how: 'sft_data.path becomes a channel and is rewritten to its file',
  },
  {
    what: 'mixed datasets with an s3:// order file: `aws s3 cp`',
    when: 'data loading',
    cite: 'S/data.py:1166-1292',
    handled: 'channel',
    how: 'order files are channels (order-N) and rewritten to their paths',
  },
  {
    what: 'code verifiers run model-written code with `docker run … python:3.11-slim` (a Docker Hub pull) when `docker version` succeeds, else unsandboxed with `timeout python3`',
    when: 'data loading',
    cite: 'S/verifiers/code_executor.py:66-140',
    handled: 'image',
    how: "the image's `docker` is the code sandbox (docker/code-sandbox.py): it honours their flags without a daemon or a pull (the job's Python, standard library only, in a chroot as a user of its own, no sockets, their memory, process, CPU and /tmp limits)",
  },
  {
    what: 'upload_traces_to_s3: boto3 uploads every 10 steps (the other upload helpers are called by no trainer)',
    when: 'data loading',
    cite: 'S/utils.py:46-196, 225-277',
    handled: 'harmless',
    how: 'its errors are caught; the traces stream to S3 through the checkpoint folder',
  },
  {
    what: 'verifiers/ifbench.py: nltk.download(punkt, punkt_tab, stopwords, averaged_perceptron_tagger_eng) at import',
    when: 'import',
    cite: 'S/verifiers/ifbench.py:43-58',
    handled: 'image',
    how: 'the image holds those NLTK packages (NLTK_DATA_PACKAGES, label rlvr.nltk-data; $NLTK_DATA), so it finds them and downloads nothing (no trainer imports it today: only scripts/)',
  },
  {
    what: "their eval script runs lm_eval, which loads each task's dataset (and code_eval for mbpp/humaneval) from the Hub",
    when: 'eval',
    cite: 'E/eval_benchmarks.py:286-317',
    handled: 'image',
    how: 'the image caches the data of LM_EVAL_TASKS (label rlvr.lm-eval-tasks) in HF_HOME; the plan refuses an eval task the image holds no data for',
  },
  {
    what: 'lm_eval\'s ifeval task: nltk.download("punkt_tab") when it loads',
    when: 'eval',
    cite: 'lm_eval 0.4.9.2 tasks/ifeval/instructions_util.py:37-52',
    handled: 'image',
    how: 'the image holds punkt_tab; the plan refuses ifeval with an image that does not',
  },
  {
    what: 'their eval script with watch.s3_prefix, output_dir or checkpoints in s3:// (aws s3 ls/sync, boto3)',
    when: 'eval',
    cite: 'E/eval_benchmarks.py:56-193',
    handled: 'channel',
    how: "the job rewrites the watcher's config: watch.local_dir = its own complete checkpoints, output_dir = the run folder's evals/",
  },
  {
    what: "Ray's usage report at ray.init",
    when: 'start-up',
    cite: 'S/runtime.py:225-243',
    handled: 'harmless',
    how: 'RAY_USAGE_STATS_ENABLED=0 in the job',
  },
];

/**
 * What every trainer of theirs does at run time through `Runtime.from_plan` (S/runtime.py:83-173): its run
 * folder is `$SM_MODEL_DIR/<config stem>_<YYYYmmdd-HHMMSS>[_N]` (else /efs/rlvr-experiments/results/…),
 * with run.json, config.yaml, RESULTS.md, patches/, traces/ and checkpoints/ (`<run>_step<N>`, `<run>_final`
 * via get_checkpoint_dir, S/utils.py:197-212); it overwrites RLVR_RUN_DIR and must keep the trainer role's
 * checkpoint.folder (runtime.py:171-173). Loaders read /tmp/<folder>_cache when it holds dataset_info.json
 * (S/data.py:58-92, 275-323, 772-806, 913-976; mbpp and ifeval only check that it exists), else sync the
 * team's bucket, else the Hub. Torchtitan job configs go to RLVR_TITAN_CONFIG_DIR, read by actors on
 * every host (S/titan_actor.py:613-619).
 */
function theirRuntime(resume?: TrainerRuntime['resumeWith']): TrainerRuntime {
  return {
    runFolder: {
      kind: 'own',
      rootEnv: 'SM_MODEL_DIR',
      fallback: '/efs/rlvr-experiments/results',
      marker: 'run.json',
      checkpoints: 'checkpoints',
      traces: 'traces',
      cite: 'S/runtime.py:83-173',
    },
    ...(resume ? { resumeWith: resume } : {}),
    datasetCache: { path: '/tmp/{folder}_cache', marker: 'dataset_info.json', cite: 'S/data.py:58-92' },
    sharedFolder: { env: 'RLVR_TITAN_CONFIG_DIR', cite: 'S/titan_actor.py:613-619' },
    evalScript: RLVR_EVAL_SCRIPT,
    passkScript: RLVR_PASSK_SCRIPT,
    networkUses: THEIR_NETWORK_USES,
  };
}

/**
 * `training.resume_step` only sets the step counters; the weights come from the trainer's hf_assets_path
 * (or checkpoint.initial_load_path when set, torchtitan's load order, S/model.py:169-180) and each vLLM
 * role's `config.model` (S/vllm_engine_actor.py:47-55). No trainer syncs weights at start, so the rollout
 * must load the checkpoint too; the reference (and a teacher) keep theirs.
 */
function weightsResume(cite: string, rollout = true): TrainerRuntime['resumeWith'] {
  return {
    loadPaths: [
      { role: 'trainer', key: 'model.hf_assets_path' },
      { role: 'trainer', key: 'checkpoint.initial_load_path', ifPresent: true },
      ...(rollout ? [{ role: 'rollout', key: 'model' }] : []),
    ],
    stepKey: 'training.resume_step',
    cite,
  };
}

export const BUILT_IN_PROFILES: readonly TrainerProfile[] = [
  {
    id: 'grpo-sft',
    script: 'entrypoints/train_grpo_sft.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_grpo_sft.py {config}',
    summary: 'GRPO / DrGRPO / DAPO with vLLM rollouts and an optional SFT term (sft_data)',
    requiredSections: GRPO_SECTIONS,
    requiredKeys: {
      'training.prompts_per_rollout_sync': 'E/train_grpo_sft.py:43',
      'training.prompts_per_reference_sync': 'E/train_grpo_sft.py:44',
      'training.prompts_per_optim_step': 'E/train_grpo_sft.py:45',
      'training.prompts_per_forward_backward': 'E/train_grpo_sft.py:46',
      'training.max_staleness': 'E/train_grpo_sft.py:54',
      'sampling.max_tokens': 'E/train_grpo_sft.py:166',
      'training.seq_len_buckets': 'E/train_grpo_sft.py:167',
      'training.completion_len_buckets': 'E/train_grpo_sft.py:168',
      'training.alpha_grpo': 'E/train_grpo_sft.py:434',
      'training.completions_per_micro_batch': 'E/train_grpo_sft.py:435',
      'training.alpha_sft': 'E/train_grpo_sft.py:463 (read on every step, even without sft_data)',
      'training.abort_in_flight': 'E/train_grpo_sft.py:494',
      'training.checkpoint_interval': 'E/train_grpo_sft.py:497',
      'training.max_steps': 'E/train_grpo_sft.py:505',
    },
    missingKeysHint: {
      text: 'Configs without training.alpha_grpo / alpha_sft were written for the former train_grpo.py: for train_grpo_sft add alpha_grpo: 1.0, alpha_sft: 0.0 and max_steps, or run the old trainer knowingly with launcher.trainer: grpo-legacy.',
      ifMissing: ['training.alpha_grpo', 'training.alpha_sft'],
    },
    requiredRoles: ['trainer', 'reference', 'rollout'],
    losses: ['grpo', 'drgrpo', 'dapo'], // E/train_grpo_sft.py:146-154 (default drgrpo)
    samples: true,
    dataSections: [
      GRPO_DATA, // E/train_grpo_sft.py:117-126
      { section: 'sft_data', iterator: 'sft_data_iter', skipChatTemplateDefault: true }, // :133-140
    ],
    checkpoints: exportsHf(), // :497-499, :514-516
    ends: { maxSteps: 'required', numEpochs: false }, // :505; epochs loop forever (:342-350)
    resume: 'weights', // training.resume_step sets the step counter only (:106-111)
    runtime: theirRuntime(weightsResume('E/train_grpo_sft.py:105-112')),
    keys: keyTree([
      ...GRPO_SCHEDULE,
      'training.max_staleness',
      'training.seq_len_buckets',
      'training.completion_len_buckets',
      'training.sft.seq_len_buckets',
      'training.sft.completion_len_buckets',
      'training.sft.micro_batch_size',
      'training.rollout_timeout_s',
      'training.max_concurrent_tasks',
      'training.completions_per_micro_batch',
      'training.completions_per_micro_batch_reference',
      'training.alpha_grpo',
      'training.alpha_sft',
      'training.abort_in_flight',
      'training.checkpoint_interval',
      'training.max_steps',
      'training.resume_step',
    ]),
    cite: 'entrypoints/train_grpo_sft.py',
  },
  {
    id: 'grpo-minimal',
    script: 'entrypoints/train_grpo_minimal.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_grpo_minimal.py {config}',
    summary: 'the didactic GRPO loop: MathVerifier only, no checkpoints',
    requiredSections: GRPO_SECTIONS,
    requiredKeys: {
      'training.prompts_per_optim_step': 'E/train_grpo_minimal.py:72',
      'training.prompts_per_forward_backward': 'E/train_grpo_minimal.py:72',
      'training.prompts_per_rollout_sync': 'E/train_grpo_minimal.py:73',
      'training.prompts_per_reference_sync': 'E/train_grpo_minimal.py:74',
      'training.max_staleness': 'E/train_grpo_minimal.py:75',
      'training.completions_per_micro_batch': 'E/train_grpo_minimal.py:96',
    },
    requiredRoles: ['trainer', 'reference', 'rollout'],
    // loss.name is popped and ignored: always GRPO (E/train_grpo_minimal.py:68-69).
    samples: true,
    dataSections: [
      {
        section: 'data',
        iterator: 'data_iter',
        skipChatTemplateDefault: false, // no setdefault here (E/train_grpo_minimal.py:62)
        datasets: Object.keys(LOADERS),
      },
    ],
    checkpoints: { writes: false, final: false, titanEnableForced: TITAN_ENABLE_FORCED }, // no export_to_hf call
    ends: { maxSteps: 'optional', numEpochs: false }, // :257
    resume: 'none',
    runtime: theirRuntime(), // E/train_grpo_minimal.py:40
    keys: keyTree([
      ...GRPO_SCHEDULE,
      'training.max_staleness',
      'training.completions_per_micro_batch',
      'training.completions_per_micro_batch_reference',
      'training.max_concurrent_tasks',
      'training.abort_in_flight',
      'training.max_steps',
    ]),
    cite: 'entrypoints/train_grpo_minimal.py',
  },
  {
    id: 'grpo-gkd',
    script: 'entrypoints/train_grpo_gkd.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_grpo_gkd.py {config}',
    summary: 'GRPO plus GKD toward a frozen teacher (role "teacher")',
    requiredSections: GRPO_SECTIONS,
    requiredKeys: {
      'training.prompts_per_rollout_sync': 'E/train_grpo_gkd.py:295',
      'training.prompts_per_reference_sync': 'E/train_grpo_gkd.py:296',
      'training.prompts_per_optim_step': 'E/train_grpo_gkd.py:297',
      'training.prompts_per_forward_backward': 'E/train_grpo_gkd.py:298',
      'training.max_staleness': 'E/train_grpo_gkd.py:306',
      'sampling.max_tokens': 'E/train_grpo_gkd.py:412',
      'training.seq_len_buckets': 'E/train_grpo_gkd.py:413',
      'training.completion_len_buckets': 'E/train_grpo_gkd.py:414',
      'training.max_steps': 'E/train_grpo_gkd.py:642',
      'training.completions_per_micro_batch': 'E/train_grpo_gkd.py:666',
      'training.abort_in_flight': 'E/train_grpo_gkd.py:716',
      'training.checkpoint_interval': 'E/train_grpo_gkd.py:722',
    },
    requiredRoles: ['trainer', 'reference', 'rollout', 'teacher'], // :343-350
    losses: ['grpo', 'drgrpo'], // dapo raises at :398-399
    samples: true,
    dataSections: [GRPO_DATA],
    checkpoints: exportsHf(), // :722-724, :741-743
    ends: { maxSteps: 'required', numEpochs: true }, // :641-642
    resume: 'weights', // :353-358
    runtime: theirRuntime(weightsResume('E/train_grpo_gkd.py:353-358')), // the teacher keeps its model (:350, :721)
    keys: keyTree([
      ...GRPO_SCHEDULE,
      'training.max_staleness',
      'training.seq_len_buckets',
      'training.completion_len_buckets',
      'training.rollout_timeout_s',
      'training.max_concurrent_tasks',
      'training.completions_per_micro_batch',
      'training.completions_per_micro_batch_reference',
      'training.alpha_grpo',
      'training.alpha_gkd',
      'training.jsd_alpha',
      'training.teacher_top_k',
      'training.teacher_use_chat_template',
      'training.abort_in_flight',
      'training.checkpoint_interval',
      'training.max_steps',
      'training.num_epochs',
      'training.resume_step',
    ]),
    cite: 'entrypoints/train_grpo_gkd.py',
  },
  {
    id: 'opsd',
    script: 'entrypoints/train_opsd.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_opsd.py {config}',
    summary: 'on-policy self-distillation (optional role "teacher"; otherwise the rollout teaches itself)',
    requiredSections: ROLLOUT_SECTIONS,
    requiredKeys: {
      'training.batch_size': 'E/train_opsd.py:562',
      'training.minibatch_size': 'E/train_opsd.py:563',
      'training.max_staleness': 'E/train_opsd.py:569',
      'sampling.max_tokens': 'E/train_opsd.py:571',
      'training.seq_len_buckets': 'E/train_opsd.py:572',
      'training.completion_len_buckets': 'E/train_opsd.py:573',
      'training.max_steps': 'E/train_opsd.py:844',
      'training.abort_in_flight': 'E/train_opsd.py:907',
      'training.checkpoint_interval': 'E/train_opsd.py:909',
    },
    requiredRoles: ['trainer', 'rollout'], // :515; teacher optional (:519)
    samples: true,
    dataSections: [
      {
        section: 'data',
        iterator: 'data_iter',
        skipChatTemplateDefault: true,
        datasets: ['if_multi_constraints', 'gsm8k'], // :538-552
      },
    ],
    checkpoints: exportsHf(), // :909-911, :927-929
    ends: { maxSteps: 'required', numEpochs: true }, // :843-844
    resume: 'weights', // :527-533
    runtime: theirRuntime(weightsResume('E/train_opsd.py:527-533')), // teacher = rollout without a teacher role (:519-523)
    keys: keyTree([
      ...FLAT_SCHEDULE,
      'training.max_staleness',
      'training.seq_len_buckets',
      'training.completion_len_buckets',
      'training.rollout_timeout_s',
      'training.max_concurrent_tasks',
      'training.teacher_use_chat_template',
      'training.discard_perfect_completions',
      'training.opsd_loss_type',
      'training.jsd_alpha',
      'training.teacher_top_k',
      'training.num_epochs',
      'training.max_steps',
      'training.abort_in_flight',
      'training.checkpoint_interval',
      'training.resume_step',
    ]),
    cite: 'entrypoints/train_opsd.py',
  },
  {
    id: 'gkd',
    script: 'entrypoints/train_gkd.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_gkd.py {config}',
    summary: 'synchronous GKD on GSM8K (optional role "teacher"), one completion per prompt',
    requiredSections: ROLLOUT_SECTIONS,
    requiredKeys: {
      'training.batch_size': 'E/train_gkd.py:131',
      'training.minibatch_size': 'E/train_gkd.py:132',
      'sampling.max_tokens': 'E/train_gkd.py:137',
      'training.seq_len_buckets': 'E/train_gkd.py:138',
      'training.completion_len_buckets': 'E/train_gkd.py:139',
    },
    requiredRoles: ['trainer', 'rollout'], // :97-99
    samples: true,
    dataSections: [
      {
        section: 'data',
        iterator: 'data_iter',
        skipChatTemplateDefault: true,
        datasets: ['gsm8k'],
      },
    ],
    checkpoints: exportsHf(20), // :148, :379-381, :398-400
    ends: { maxSteps: 'optional', maxStepsDefault: 300, numEpochs: false }, // :147, :167-177
    resume: 'weights', // :106-110
    runtime: theirRuntime(weightsResume('E/train_gkd.py:106-110')), // teacher = rollout without a teacher role (:97-104)
    keys: keyTree([
      ...FLAT_SCHEDULE,
      'training.seq_len_buckets',
      'training.completion_len_buckets',
      'training.teacher_use_chat_template',
      'training.teacher_top_k',
      'training.max_steps',
      'training.checkpoint_interval',
      'training.opsd_loss_type',
      'training.jsd_alpha',
      'training.abort_in_flight',
      'training.resume_step',
    ]),
    cite: 'entrypoints/train_gkd.py',
  },
  {
    id: 'sft-only',
    script: 'entrypoints/train_sft_only.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_sft_only.py {config}',
    summary: 'supervised fine-tuning only: no rollouts, verifier or sampling',
    requiredSections: ['run', 'tokenizer', 'training', 'sft_data', 'sft_data_iter', 'buffer'],
    requiredKeys: {
      'training.max_steps': 'E/train_sft_only.py:78',
      'training.checkpoint_interval': 'E/train_sft_only.py:79',
    },
    requiredRoles: ['trainer'], // :52
    samples: false,
    dataSections: [
      { section: 'sft_data', iterator: 'sft_data_iter', skipChatTemplateDefault: true }, // :65-71
    ],
    checkpoints: exportsHf(), // :206-208, :221-223
    ends: { maxSteps: 'required', numEpochs: true }, // :159-160
    resume: 'weights', // :56-59
    runtime: theirRuntime(weightsResume('E/train_sft_only.py:56-59', false)), // trainer only
    keys: keyTree([
      'training.max_steps',
      'training.checkpoint_interval',
      'training.sft_batch_size',
      'training.sft_accumulation_steps',
      'training.prompts_per_forward_backward',
      'training.prompts_per_optim_step',
      'training.sft.micro_batch_size',
      'training.sft.seq_len_buckets',
      'training.sft.completion_len_buckets',
      'training.seq_len_buckets',
      'training.completion_len_buckets',
      'training.num_epochs',
      'training.resume_step',
    ]),
    cite: 'entrypoints/train_sft_only.py',
  },
  {
    id: 'grpo-legacy',
    script: 'entrypoints/train_grpo_LEGACY_DO_NOT_USE.py',
    loaders: LOADERS,
    command: 'python entrypoints/train_grpo_LEGACY_DO_NOT_USE.py {config}',
    summary: 'the former train_grpo.py, kept by the team as LEGACY_DO_NOT_USE (chosen only by name)',
    requiredSections: GRPO_SECTIONS,
    requiredKeys: {
      // _compute_schedule raises unless both are positive (E/train_grpo_LEGACY_DO_NOT_USE.py:73-80).
      'training.prompts_per_optim_step': 'E/train_grpo_LEGACY_DO_NOT_USE.py:75-79',
      'training.prompts_per_forward_backward': 'E/train_grpo_LEGACY_DO_NOT_USE.py:76-79',
    },
    requiredRoles: ['trainer', 'reference', 'rollout'], // :130-132
    losses: ['grpo', 'drgrpo'], // :178-186
    samples: true,
    dataSections: [
      // **plan.data_iter with no skip_chat_template default (:172-174)
      {
        section: 'data',
        iterator: 'data_iter',
        skipChatTemplateDefault: false,
        datasets: GRPO_DATASETS,
      },
    ],
    checkpoints: exportsHf(50), // :196, :703-705, :734
    ends: { maxSteps: 'optional', numEpochs: true }, // :193-194, :614-616
    resume: 'none', // resume_step is never read
    runtime: theirRuntime(), // Runtime.from_plan too (:118-121)
    keys: keyTree([
      ...GRPO_SCHEDULE,
      'training.max_staleness',
      'training.num_epochs',
      'training.max_steps',
      'training.abort_in_flight',
      'training.checkpoint_interval',
      'training.completions_per_micro_batch',
      'training.completions_per_micro_batch_reference',
      'training.adaptive_sampling',
      'training.seq_len_buckets',
      'training.completion_len_buckets',
      'training.rollout_timeout_s',
    ]),
    cite: 'entrypoints/train_grpo_LEGACY_DO_NOT_USE.py',
  },
];
