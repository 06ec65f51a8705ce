import {
  applyDeviations,
  maxGenToksFor,
  parseDeviations,
  STANDARD,
  taskWarnings,
  unitCommand,
} from '../../lib/eval/standard';

const unit = (task: string, extra: Partial<Parameters<typeof unitCommand>[0]> = {}) =>
  unitCommand({
    harness: 'lm_eval',
    model: '/tmp/rlvr-eval-models/step100',
    task,
    numFewshot: 8,
    outputDir: '/opt/ml/checkpoints/evals/step100/x/harness',
    settings: STANDARD,
    logSamples: false,
    ...extra,
  });

describe('the evaluation standard', () => {
  it('the lm_eval command: tensor parallel 1, seed 42 in the model args and --seed, temperature 0, the vLLM settings', () => {
    expect(unit('gsm8k_cot')).toEqual({
      argv: [
        'lm_eval',
        '--model',
        'vllm',
        '--model_args',
        'pretrained=/tmp/rlvr-eval-models/step100,tensor_parallel_size=1,dtype=bfloat16,gpu_memory_utilization=0.8,max_model_len=4096,seed=42',
        '--tasks',
        'gsm8k_cot',
        '--num_fewshot',
        '8',
        '--batch_size',
        'auto',
        '--seed',
        '42',
        '--gen_kwargs',
        'temperature=0,max_gen_toks=1024',
        '--output_path',
        '/opt/ml/checkpoints/evals/step100/x/harness',
      ],
      env: {},
    });
  });

  it('max_gen_toks per task: 1024 gsm8k, 2048 MATH, 4096 IFEval, a family takes its own, else 1024', () => {
    expect(
      [
        'gsm8k_cot',
        'gsm8k',
        'minerva_math',
        'hendrycks_math',
        'minerva_math_algebra',
        'ifeval',
        'arc_challenge',
      ].map((t) => maxGenToksFor(t)),
    ).toEqual([1024, 1024, 2048, 2048, 2048, 4096, 1024]);
  });

  it('code tasks run with HF_ALLOW_CODE_EVAL=1 and --confirm_run_unsafe_code; others without', () => {
    for (const task of ['mbpp', 'humaneval', 'mbpp_plus']) {
      const c = unit(task);
      expect(c.env).toEqual({ HF_ALLOW_CODE_EVAL: '1' });
      expect(c.argv).toContain('--confirm_run_unsafe_code');
    }
    const plain = unit('ifeval');
    expect(plain.env).toEqual({});
    expect(plain.argv).not.toContain('--confirm_run_unsafe_code');
    expect(unit('ifeval', { logSamples: true }).argv).toContain('--log_samples');
    expect(plain.argv).not.toContain('--log_samples');
  });

  it('OLMES runs from its own venv with the same model settings', () => {
    const c = unit('gsm8k', { harness: 'olmes', numFewshot: 8 });
    expect(c.argv.slice(0, 3)).toEqual(['/opt/olmes-venv/bin/python', '-m', 'oe_eval.launch']);
    const modelArgs = JSON.parse(c.argv[c.argv.indexOf('--model-args') + 1]);
    expect(modelArgs).toMatchObject({
      tensor_parallel_size: 1,
      seed: 42,
      max_length: 4096,
      gpu_memory_utilization: 0.8,
    });
    const task = JSON.parse(c.argv[c.argv.indexOf('--task') + 1]);
    expect(task).toEqual({
      task_name: 'gsm8k',
      num_shots: 8,
      generation_kwargs: { temperature: 0, max_gen_toks: 1024 },
    });
  });

  it('deviations: named and valid ones change only what they name; tensor parallel never', () => {
    const ok = parseDeviations([
      'seed=123',
      'max_model_len=8192',
      'max_gen_toks.ifeval=2048',
      'temperature=0.6',
      'dtype=float16',
    ]);
    expect(ok.ok).toBe(true);
    const settings = applyDeviations(ok.ok ? ok.value : []);
    expect(settings).toMatchObject({
      seed: 123,
      maxModelLen: 8192,
      temperature: 0.6,
      dtype: 'float16',
      gpuMemoryUtilization: 0.8,
    });
    expect(maxGenToksFor('ifeval', settings)).toBe(2048);
    expect(maxGenToksFor('gsm8k_cot', settings)).toBe(1024);
    // The standard itself is untouched.
    expect(STANDARD.seed).toBe(42);
    expect(maxGenToksFor('ifeval')).toBe(4096);
    const c = unit('ifeval', { settings });
    expect(c.argv.join(' ')).toContain('seed=123');
    expect(c.argv.join(' ')).toContain('--seed 123');

    const refused = (text: string) => {
      const r = parseDeviations([text]);
      return r.ok ? undefined : r.problem;
    };
    expect(refused('tensor_parallel_size=2')).toMatch(/tensor parallel 1 .*no flag changes it/);
    expect(refused('top_p=0.9')).toMatch(
      /not a setting of the standard \(seed, temperature, .*max_gen_toks.<task>\)/,
    );
    expect(refused('seed=-1')).toMatch(/not a valid value/);
    expect(refused('gpu_memory_utilization=1.5')).toMatch(/not a valid value/);
    expect(refused('dtype=int4')).toMatch(/bfloat16, float16, float32 or auto/);
    expect(refused('seed')).toMatch(/write name=value/);
  });

  it('hendrycks_math warns and names the task the team judges MATH by', () => {
    expect(taskWarnings('hendrycks_math')[0]).toMatch(/under-reports base models.*minerva_math/);
    expect(taskWarnings('minerva_math')).toEqual([]);
  });
});
