import { EVAL_STANDARD as STANDARD, isCodeTask, maxGenToksFor, type EvalSettings } from '../../lib/config';
import {
  applyDeviations,
  parseDeviations,
  taskWarnings,
  unitCommand,
  type Deviation,
} from '../../lib/eval/standard';
import type { Harness } from '../../lib/eval-records';

const MODEL = '/opt/ml/input/data/ckpt/step100';
const OUT = '/opt/ml/output/unit-3';

function command(
  task: string,
  options: { harness?: Harness; numFewshot?: number; logSamples?: boolean; settings?: EvalSettings } = {},
) {
  return unitCommand({
    harness: options.harness ?? 'lm_eval',
    model: MODEL,
    task,
    numFewshot: options.numFewshot ?? 4,
    outputDir: OUT,
    settings: options.settings ?? STANDARD,
    logSamples: options.logSamples ?? false,
  });
}

/** The value following `flag` in argv. */
function after(argv: readonly string[], flag: string): string {
  const i = argv.indexOf(flag);
  if (i < 0 || i + 1 >= argv.length) throw new Error(`no ${flag} in ${argv.join(' ')}`);
  return argv[i + 1];
}

function deviations(...given: string[]): Deviation[] {
  const parsed = parseDeviations(given);
  if (!parsed.ok) throw new Error(`refused: ${parsed.problem}`);
  return parsed.value;
}

function refusal(...given: string[]): string {
  const parsed = parseDeviations(given);
  if (parsed.ok) throw new Error(`accepted: ${given.join(' ')}`);
  return parsed.problem;
}

describe("STANDARD (the team's evaluation standard)", () => {
  it('holds the team values: seed 42, temperature 0, max_model_len 4096, gpu 0.8, bfloat16', () => {
    expect(STANDARD).toMatchObject({
      seed: 42,
      temperature: 0,
      maxModelLen: 4096,
      gpuMemoryUtilization: 0.8,
      dtype: 'bfloat16',
    });
  });
});

describe('maxGenToksFor', () => {
  it.each([
    ['gsm8k_cot', 1024],
    ['minerva_math', 2048],
    ['hendrycks_math', 2048],
    ['ifeval', 4096],
  ])('%s → %i', (task, n) => {
    expect(maxGenToksFor(task)).toBe(n);
  });

  it('a task of a family takes the family budget', () => {
    expect(maxGenToksFor('minerva_math_algebra')).toBe(2048);
    expect(maxGenToksFor('hendrycks_math_geometry')).toBe(2048);
  });

  it('a family match needs the underscore: a task merely starting with the name is not of the family', () => {
    expect(maxGenToksFor('ifevalx')).toBe(1024);
  });

  it('an unknown task takes the default 1024', () => {
    expect(maxGenToksFor('arc_challenge')).toBe(1024);
    expect(maxGenToksFor('mbpp')).toBe(1024);
  });

  it('reads the given settings, not the standard', () => {
    const settings = applyDeviations(deviations('max_gen_toks.ifeval=2048', 'max_gen_toks.default=512'));
    expect(maxGenToksFor('ifeval', settings)).toBe(2048);
    expect(maxGenToksFor('arc_easy', settings)).toBe(512);
    expect(maxGenToksFor('minerva_math_algebra', settings)).toBe(2048);
    // The standard itself is untouched.
    expect(maxGenToksFor('ifeval')).toBe(4096);
    expect(maxGenToksFor('arc_easy')).toBe(1024);
  });
});

describe('isCodeTask', () => {
  it('mbpp and humaneval (and their variants) run code; the math and instruction tasks do not', () => {
    expect(isCodeTask('mbpp')).toBe(true);
    expect(isCodeTask('humaneval')).toBe(true);
    expect(isCodeTask('mbpp_plus')).toBe(true);
    expect(isCodeTask('gsm8k_cot')).toBe(false);
    expect(isCodeTask('ifeval')).toBe(false);
    expect(isCodeTask('minerva_math')).toBe(false);
  });
});

describe('unitCommand: lm_eval', () => {
  it('is the exact standard command', () => {
    const { argv, env } = command('gsm8k_cot', { numFewshot: 8 });
    expect(argv).toEqual([
      'lm_eval',
      '--model',
      'vllm',
      '--model_args',
      `pretrained=${MODEL},tensor_parallel_size=1,dtype=bfloat16,gpu_memory_utilization=0.8,max_model_len=4096,seed=42`,
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
      OUT,
    ]);
    expect(env).toEqual({});
  });

  it.each([
    ['gsm8k_cot', 1024],
    ['minerva_math', 2048],
    ['hendrycks_math', 2048],
    ['ifeval', 4096],
    ['minerva_math_algebra', 2048],
    ['arc_challenge', 1024],
  ])('%s generates up to %i tokens', (task, n) => {
    expect(after(command(task).argv, '--gen_kwargs')).toBe(`temperature=0,max_gen_toks=${n}`);
  });

  it('zero-shot passes --num_fewshot 0', () => {
    expect(after(command('ifeval', { numFewshot: 0 }).argv, '--num_fewshot')).toBe('0');
  });

  it.each(['mbpp', 'humaneval'])(
    'code task %s: HF_ALLOW_CODE_EVAL=1 and --confirm_run_unsafe_code',
    (task) => {
      const { argv, env } = command(task);
      expect(env).toEqual({ HF_ALLOW_CODE_EVAL: '1' });
      expect(argv).toContain('--confirm_run_unsafe_code');
    },
  );

  it.each(['gsm8k_cot', 'ifeval', 'minerva_math'])('%s: no code execution', (task) => {
    const { argv, env } = command(task);
    expect(env).not.toHaveProperty('HF_ALLOW_CODE_EVAL');
    expect(argv).not.toContain('--confirm_run_unsafe_code');
  });

  it('--log_samples only when asked', () => {
    expect(command('ifeval').argv).not.toContain('--log_samples');
    expect(command('ifeval', { logSamples: true }).argv).toContain('--log_samples');
  });

  it('deviations reach the model args, --seed and --gen_kwargs; tensor parallel stays 1', () => {
    const settings = applyDeviations(
      deviations(
        'seed=123',
        'max_model_len=8192',
        'temperature=0.6',
        'dtype=float16',
        'max_gen_toks.ifeval=2048',
      ),
    );
    const { argv } = command('ifeval', { settings });
    expect(after(argv, '--model_args')).toBe(
      `pretrained=${MODEL},tensor_parallel_size=1,dtype=float16,gpu_memory_utilization=0.8,max_model_len=8192,seed=123`,
    );
    expect(after(argv, '--seed')).toBe('123');
    expect(after(argv, '--gen_kwargs')).toBe('temperature=0.6,max_gen_toks=2048');
  });
});

describe('unitCommand: OLMES', () => {
  it('runs the launcher from its own venv with the standard model args as JSON', () => {
    const { argv, env } = command('gsm8k_cot', { harness: 'olmes', numFewshot: 8 });
    expect(argv.slice(0, 3)).toEqual(['/opt/olmes-venv/bin/python', '-m', 'oe_eval.launch']);
    expect(after(argv, '--model')).toBe(MODEL);
    expect(after(argv, '--output-dir')).toBe(OUT);
    const modelArgs = JSON.parse(after(argv, '--model-args')) as Record<string, unknown>;
    expect(modelArgs).toMatchObject({
      tensor_parallel_size: 1,
      seed: 42,
      dtype: 'bfloat16',
      gpu_memory_utilization: 0.8,
      max_length: 4096,
    });
    const task = JSON.parse(after(argv, '--task')) as Record<string, unknown>;
    expect(task).toEqual({
      task_name: 'gsm8k_cot',
      num_shots: 8,
      generation_kwargs: { temperature: 0, max_gen_toks: 1024 },
    });
    expect(argv).not.toContain('lm_eval');
    expect(env).toEqual({});
  });

  it('a code task gets HF_ALLOW_CODE_EVAL=1 under OLMES too', () => {
    const { argv, env } = command('humaneval', { harness: 'olmes', numFewshot: 0 });
    expect(env).toEqual({ HF_ALLOW_CODE_EVAL: '1' });
    expect(argv).toContain('--allow-code-execution');
    expect(command('ifeval', { harness: 'olmes' }).argv).not.toContain('--allow-code-execution');
  });

  it('keeps tensor parallel 1 and carries a deviated seed', () => {
    const settings = applyDeviations(deviations('seed=7'));
    const modelArgs = JSON.parse(
      after(command('ifeval', { harness: 'olmes', settings }).argv, '--model-args'),
    );
    expect(modelArgs).toMatchObject({ tensor_parallel_size: 1, seed: 7 });
  });
});

describe('parseDeviations', () => {
  it.each([
    ['seed=123', { name: 'seed', value: 123 }],
    ['max_model_len=8192', { name: 'max_model_len', value: 8192 }],
    ['max_gen_toks.ifeval=2048', { name: 'max_gen_toks.ifeval', value: 2048 }],
    ['temperature=0.6', { name: 'temperature', value: 0.6 }],
    ['dtype=float16', { name: 'dtype', value: 'float16' }],
    ['gpu_memory_utilization=0.9', { name: 'gpu_memory_utilization', value: 0.9 }],
    ['temperature=0', { name: 'temperature', value: 0 }],
  ])('accepts %s', (text, expected) => {
    expect(deviations(text)).toEqual([expected]);
  });

  it('accepts several, in order', () => {
    expect(deviations('seed=123', 'dtype=float16')).toEqual([
      { name: 'seed', value: 123 },
      { name: 'dtype', value: 'float16' },
    ]);
  });

  it('nothing given is no deviation', () => {
    expect(deviations()).toEqual([]);
  });

  it('tensor_parallel_size is always refused, whatever the value, saying why', () => {
    for (const v of ['2', '1', '8']) {
      const problem = refusal(`tensor_parallel_size=${v}`);
      expect(problem).toMatch(/tensor_parallel_size/);
      expect(problem).toMatch(/tensor parallel 1/);
      expect(problem).toMatch(/no flag changes it/);
    }
  });

  it('an unknown name is refused, listing the names it takes', () => {
    const problem = refusal('top_p=0.9');
    expect(problem).toMatch(/top_p/);
    expect(problem).toMatch(/not a setting/);
    for (const name of [
      'seed',
      'temperature',
      'max_model_len',
      'gpu_memory_utilization',
      'dtype',
      'max_gen_toks.<task>',
    ])
      expect(problem).toContain(name);
  });

  it('text without name=value is refused with the form to write', () => {
    const problem = refusal('seed');
    expect(problem).toMatch(/name=value/);
    expect(problem).toContain('seed');
  });

  it.each([
    'seed=-1',
    'seed=1.5',
    'seed=abc',
    'max_model_len=0',
    'max_gen_toks.ifeval=-5',
    'gpu_memory_utilization=1.5',
    'gpu_memory_utilization=0',
    'temperature=-0.1',
  ])('refuses the bad value %s, naming it', (text) => {
    const problem = refusal(text);
    expect(problem).toContain(text);
    expect(problem).toMatch(/not a valid value/);
  });

  it('refuses an unknown dtype, naming the ones it takes', () => {
    const problem = refusal('dtype=int4');
    expect(problem).toContain('dtype=int4');
    expect(problem).toMatch(/bfloat16, float16, float32 or auto/);
  });

  it('one bad value refuses the whole list', () => {
    expect(parseDeviations(['seed=123', 'seed=-1']).ok).toBe(false);
  });
});

describe('applyDeviations', () => {
  it('with none, is the standard', () => {
    expect(applyDeviations([])).toEqual(STANDARD);
  });

  it('changes only what is named', () => {
    const settings = applyDeviations(deviations('seed=123'));
    expect(settings).toEqual({ ...STANDARD, seed: 123 });
  });

  it('maps each name to its setting', () => {
    const settings = applyDeviations(
      deviations('temperature=0.6', 'max_model_len=8192', 'gpu_memory_utilization=0.9', 'dtype=float16'),
    );
    expect(settings).toEqual({
      ...STANDARD,
      temperature: 0.6,
      maxModelLen: 8192,
      gpuMemoryUtilization: 0.9,
      dtype: 'float16',
    });
  });

  it('a per-task budget changes that task only, and leaves STANDARD itself alone', () => {
    const before = JSON.stringify(STANDARD);
    const settings = applyDeviations(deviations('max_gen_toks.ifeval=2048'));
    expect(settings.maxGenToks).toEqual({ ...STANDARD.maxGenToks, ifeval: 2048 });
    expect({ ...settings, maxGenToks: STANDARD.maxGenToks }).toEqual(STANDARD);
    expect(JSON.stringify(STANDARD)).toBe(before);
    expect(STANDARD.maxGenToks.ifeval).toBe(4096);
  });
});

describe('taskWarnings', () => {
  it('hendrycks_math warns and points at minerva_math', () => {
    const warnings = taskWarnings('hendrycks_math');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('hendrycks_math');
    expect(warnings[0]).toContain('minerva_math');
  });

  it('a hendrycks_math subtask warns too', () => {
    expect(taskWarnings('hendrycks_math_algebra')).toHaveLength(1);
  });

  it.each(['minerva_math', 'gsm8k_cot', 'ifeval', 'mbpp', 'humaneval'])('%s: no warning', (task) => {
    expect(taskWarnings(task)).toEqual([]);
  });
});
