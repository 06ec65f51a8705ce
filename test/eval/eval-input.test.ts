import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProblemsError, type Problem } from '../../lib/errors';
import { parseEvalRequest, type EvalFlags } from '../../lib/eval/input';
import { lineOf, tempDir } from '../helpers/fixtures';

/** The problems a call reports (it must throw ProblemsError). */
function problems(flags: EvalFlags, cwd = tempDir('rlvr-eval-input-')): Problem[] {
  try {
    parseEvalRequest(flags, cwd);
  } catch (err) {
    if (err instanceof ProblemsError) return [...err.problems];
    throw err;
  }
  throw new Error('no problem reported');
}

const BASE: EvalFlags = {
  checkpoints: ['annotations-adhoc-20260125-192905:step100'],
  benchmarks: ['ifeval:0'],
};

/** Their eval config's non-watch form (BRIEF §6), with `edit` applied. */
function evalConfig(dir: string, edit = (t: string) => t): string {
  const text = edit(
    [
      'seed: 42',
      'vllm:',
      '  tensor_parallel_size: 1',
      '  dtype: bfloat16',
      '  gpu_memory_utilization: 0.8',
      '  max_model_len: 4096',
      'max_gen_toks:',
      '  gsm8k_cot: 1024',
      '  default: 1024',
      'benchmarks:',
      '  - task: gsm8k_cot',
      '    num_fewshot: 4',
      '  - task: ifeval',
      '    num_fewshot: 0',
      'checkpoints:',
      '  - name: base',
      '    path: s3://my-bucket/rlvr-experiments/models/Qwen3-1.7B-Base/',
      '  - name: step100',
      '    path: annotations-adhoc-20260125-192905:step100',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'eval.yaml'), text);
  return text;
}

describe('rlvr eval: the input', () => {
  it('flags → what to evaluate and how, with the defaults', () => {
    const r = parseEvalRequest(
      {
        checkpoints: ['base=Qwen/Qwen3-1.7B-Base', 'job-1:step20,final'],
        benchmarks: ['gsm8k_cot:8,ifeval:0', 'mbpp:3'],
      },
      '/w',
    );
    expect(r.refs.map((x) => [x.label, x.ref.kind])).toEqual([
      ['base', 'model'],
      ['job-1:step20,final', 'job'],
    ]);
    expect(r.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 8 },
      { task: 'ifeval', numFewshot: 0 },
      { task: 'mbpp', numFewshot: 3 },
    ]);
    expect(r).toMatchObject({
      instanceType: 'ml.g6e.48xlarge',
      instanceCount: 1,
      harness: 'lm_eval',
      deviations: [],
      force: false,
    });
    expect(r.local).toBeUndefined();
  });

  it('every problem of the flags at once (exit 2)', () => {
    const found = problems({
      benchmarks: ['gsm8k_cot:8', 'gsm8k_cot:4'],
      harness: 'helm',
      gpus: '0-3',
      instanceCount: '9',
      maxRuntime: 'soon',
      deviate: ['tensor_parallel_size=2'],
      checkpoints: ['a=b=c:d'],
    });
    const text = found.map((p) => `${p.where}: ${p.message}`).join('\n');
    expect(text).toMatch(/--deviate: .*tensor parallel 1/);
    expect(text).toMatch(/--checkpoints: /);
    expect(text).toMatch(/--benchmarks: gsm8k_cot is asked with 8 and 4 shots: one per run/);
    expect(text).toMatch(/--harness: helm: lm_eval or olmes/);
    expect(text).toMatch(/--instance-count: 9 is not a whole number from 1 to 8/);
    expect(text).toMatch(/--max-runtime: soon is not a duration/);
    expect(text).toMatch(/--gpus: --gpus is for --local runs/);
    expect(problems({ ...BASE, local: true }).map((p) => p.message)).toEqual([
      '--local needs the GPUs to use: e.g. --gpus 0-7',
    ]);
    expect(problems({ benchmarks: ['ifeval:0'] })[0].message).toBe('nothing to evaluate');
    expect(problems({ checkpoints: BASE.checkpoints })[0].message).toBe('no benchmarks');
  });

  it('suites: ours, and a suites file whose problems are located', () => {
    expect(
      parseEvalRequest({ checkpoints: BASE.checkpoints, suite: 'standard' }, tempDir('w-')).benchmarks,
    ).toEqual([
      { task: 'gsm8k_cot', numFewshot: 4 },
      { task: 'ifeval', numFewshot: 0 },
      { task: 'minerva_math', numFewshot: 4 },
    ]);
    const dir = tempDir('rlvr-suites-');
    const text =
      'suites:\n  quick:\n    - gsm8k_cot:8\n    - {task: ifeval, num_fewshot: 0}\n  broken:\n    - gsm8k_cot\n';
    fs.mkdirSync(path.join(dir, 'configs', 'eval'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'configs', 'eval', 'suites.yaml'), text);
    // Found in the working folder (the trainer repository) without a flag.
    const quick = parseEvalRequest({ checkpoints: BASE.checkpoints, suite: 'quick' }, dir);
    expect(quick.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 8 },
      { task: 'ifeval', numFewshot: 0 },
    ]);
    expect(quick.benchmarksFrom).toBe('suite quick (configs/eval/suites.yaml)');
    // Another suite's broken entry is not this run's problem; asking for it is.
    const [p] = problems({ checkpoints: BASE.checkpoints, suite: 'broken' }, dir);
    expect(p.location).toEqual({
      file: 'configs/eval/suites.yaml',
      line: 6,
      column: 7,
    });
    expect(p.message).toMatch(/"gsm8k_cot" is not task:num_fewshot/);
    const unknown = problems(
      { checkpoints: BASE.checkpoints, suite: 'nightly', suitesFile: 'configs/eval/suites.yaml' },
      dir,
    );
    expect(unknown.map((x) => x.message)).toContain(
      `no suite "nightly" in ${path.join(dir, 'configs', 'eval', 'suites.yaml')}`,
    );
    expect(unknown.find((x) => x.where === '--suite')!.hint).toBe('its suites: quick, broken');
  });

  it("an eval config in the team's format: its checkpoints and benchmarks; a value off the standard refused at its position unless --deviate names it", () => {
    const dir = tempDir('rlvr-eval-config-');
    evalConfig(dir);
    const r = parseEvalRequest({ config: 'eval.yaml' }, dir);
    expect(r.refs.map((x) => [x.label, x.ref.kind])).toEqual([
      ['base', 's3'],
      ['step100', 'job'],
    ]);
    expect(r.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 4 },
      { task: 'ifeval', numFewshot: 0 },
    ]);
    expect(r.benchmarksFrom).toBe('eval.yaml');

    const text = evalConfig(dir, (t) =>
      t.replace('seed: 42', 'seed: 123').replace('  gsm8k_cot: 1024', '  gsm8k_cot: 256'),
    );
    const found = problems({ config: 'eval.yaml' }, dir);
    expect(found.map((p) => [p.location, p.message, p.hint])).toEqual([
      [
        { file: 'eval.yaml', line: lineOf(text, 'seed: 123'), column: 7 },
        "seed 123 is not the team's standard 42: scores would not be comparable",
        'set 42, or pass --deviate seed=123 to run it and record the deviation with the results',
      ],
      [
        { file: 'eval.yaml', line: lineOf(text, 'gsm8k_cot: 256'), column: 14 },
        "max_gen_toks.gsm8k_cot 256 is not the team's standard 1024: scores would not be comparable",
        'set 1024, or pass --deviate max_gen_toks.gsm8k_cot=256 to run it and record the deviation with the results',
      ],
    ]);
    const deviated = parseEvalRequest(
      { config: 'eval.yaml', deviate: ['seed=123', 'max_gen_toks.gsm8k_cot=256'] },
      dir,
    );
    expect(deviated.settings.seed).toBe(123);
    expect(deviated.deviations).toEqual(['seed=123', 'max_gen_toks.gsm8k_cot=256']);

    const tp = evalConfig(dir, (t) => t.replace('tensor_parallel_size: 1', 'tensor_parallel_size: 2'));
    expect(() => parseEvalRequest({ config: 'eval.yaml' }, dir)).toThrow(ProblemsError);
    try {
      parseEvalRequest({ config: 'eval.yaml' }, dir);
    } catch (err) {
      const [p] = (err as ProblemsError).problems;
      expect(p.location).toMatchObject({ file: 'eval.yaml', line: lineOf(tp, 'tensor_parallel_size: 2') });
      expect(p.message).toMatch(/tensor parallelism > 1 gives wrong scores/);
    }

    evalConfig(dir, (t) => t.slice(0, t.indexOf('checkpoints:')));
    expect(problems({ config: 'eval.yaml' }, dir).map((p) => p.message)).toContain(
      'no `checkpoints:` list (the non-watch form names each: {name, path})',
    );
  });
});
