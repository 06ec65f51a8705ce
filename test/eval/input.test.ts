import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProblemsError, type Problem } from '../../lib/errors';
import { evalRequestOfFlags, type EvalFlags } from '../../bin/commands/eval-flags';
import { BUILT_IN_SUITES } from '../../lib/eval/input';
import { EVAL_STANDARD as STANDARD } from '../../lib/config';
import { lineOf, tempDir } from '../helpers/fixtures';
import { evalProblems } from './eval-problems';

const problems = evalProblems;

function only(flags: EvalFlags, cwd?: string): Problem {
  const found = problems(flags, cwd);
  expect(found).toHaveLength(1);
  return found[0];
}

/** 1-based line and column of `token` on the first line containing `lineNeedle`. */
function positionOf(text: string, lineNeedle: string, token: string): { line: number; column: number } {
  const line = lineOf(text, lineNeedle);
  const column = text.split('\n')[line - 1].indexOf(token) + 1;
  if (column < 1) throw new Error(`${token} not on the line of ${lineNeedle}`);
  return { line, column };
}

const OK: EvalFlags = {
  checkpoints: ['annotations-adhoc-20260125-192905:step100,final'],
  benchmarks: ['gsm8k_cot:4,ifeval:0'],
};

describe('rlvr eval flags: the flags themselves', () => {
  it('turns flags into a request with the defaults', () => {
    const cwd = tempDir('rlvr-eval-in-');
    const request = evalRequestOfFlags(OK, cwd);
    expect(request.refs).toEqual([
      expect.objectContaining({
        label: 'annotations-adhoc-20260125-192905:step100,final',
        ref: { kind: 'job', job: 'annotations-adhoc-20260125-192905', select: ['step100', 'final'] },
      }),
    ]);
    expect(request.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 4 },
      { task: 'ifeval', numFewshot: 0 },
    ]);
    expect(request.instanceType).toBe('ml.g6e.48xlarge');
    expect(request.instanceCount).toBe(1);
    expect(request.harness).toBe('lm_eval');
    expect(request.settings).toEqual(STANDARD);
    expect(request.deviations).toEqual([]);
    expect(request.logSamples).toBe(false);
    expect(request.spot).toBe(false);
    expect(request.local).toBeUndefined();
    expect(request.maxRuntimeSeconds).toBeUndefined();
    expect(request.cwd).toBe(cwd);
    expect(request.benchmarksFrom).toBe('--benchmarks');
  });

  it('takes labelled references and several --checkpoints/--benchmarks values', () => {
    const request = evalRequestOfFlags(
      {
        checkpoints: ['base=Qwen/Qwen3-1.7B-Base', 's3://my-bucket/ckpts/step20'],
        benchmarks: ['gsm8k_cot:8', 'minerva_math:4'],
      },
      tempDir(),
    );
    expect(request.refs.map((r) => r.label)).toEqual(['base', 's3://my-bucket/ckpts/step20']);
    expect(request.refs[0].ref).toEqual({ kind: 'model', name: 'Qwen/Qwen3-1.7B-Base' });
    expect(request.refs[1].ref).toEqual({ kind: 's3', uri: 's3://my-bucket/ckpts/step20/' });
    expect(request.benchmarks.map((b) => b.task)).toEqual(['gsm8k_cot', 'minerva_math']);
  });

  it('takes the options given', () => {
    const request = evalRequestOfFlags(
      {
        ...OK,
        harness: 'olmes',
        instanceType: 'ml.p4d.24xlarge',
        instanceCount: '8',
        maxRuntime: '6h',
        spot: true,
        logSamples: true,
        deviate: ['seed=123', 'max_gen_toks.ifeval=2048'],
      },
      tempDir(),
    );
    expect(request.harness).toBe('olmes');
    expect(request.instanceType).toBe('ml.p4d.24xlarge');
    expect(request.instanceCount).toBe(8);
    expect(request.maxRuntimeSeconds).toBe(6 * 3600);
    expect(request.spot).toBe(true);
    expect(request.logSamples).toBe(true);
    expect(request.deviations).toEqual(['seed=123', 'max_gen_toks.ifeval=2048']);
    expect(request.settings.seed).toBe(123);
    expect(request.settings.maxGenToks.ifeval).toBe(2048);
    expect(request.settings.temperature).toBe(0);
  });

  it('--local with --gpus: the GPUs to use', () => {
    const request = evalRequestOfFlags({ ...OK, local: true, gpus: '0-3' }, tempDir());
    expect(request.local).toEqual({ gpus: [0, 1, 2, 3] });
  });

  it('no checkpoints: nothing to evaluate', () => {
    const problem = only({ benchmarks: ['ifeval:0'] });
    expect(problem.where).toBe('--checkpoints');
    expect(problem.message).toMatch(/nothing to evaluate/);
    expect(problem.hint).toMatch(/--checkpoints/);
  });

  it('no benchmarks: says how to name them', () => {
    const problem = only({ checkpoints: OK.checkpoints });
    expect(problem.where).toBe('--benchmarks');
    expect(problem.message).toMatch(/no benchmarks/);
    expect(problem.hint).toMatch(/--suite standard/);
  });

  it('a task asked with two numbers of shots is refused; the same twice is one benchmark', () => {
    const problem = only({ checkpoints: OK.checkpoints, benchmarks: ['gsm8k_cot:4', 'gsm8k_cot:8'] });
    expect(problem.where).toBe('--benchmarks');
    expect(problem.message).toContain('gsm8k_cot');
    expect(problem.message).toMatch(/4 and 8 shots/);

    const request = evalRequestOfFlags(
      { checkpoints: OK.checkpoints, benchmarks: ['gsm8k_cot:4', 'gsm8k_cot:4,ifeval:0'] },
      tempDir(),
    );
    expect(request.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 4 },
      { task: 'ifeval', numFewshot: 0 },
    ]);
  });

  it('a --benchmarks task that the suite asks with other shots is refused', () => {
    const problem = only({ checkpoints: OK.checkpoints, benchmarks: ['gsm8k_cot:4'], suite: 'standard' });
    expect(problem.message).toMatch(/gsm8k_cot is asked with 4 and 8 shots/);
  });

  it('a bad --harness', () => {
    const problem = only({ ...OK, harness: 'helm' });
    expect(problem.where).toBe('--harness');
    expect(problem.message).toMatch(/helm: lm_eval or olmes/);
  });

  it('--gpus without --local', () => {
    const problem = only({ ...OK, gpus: '0,1' });
    expect(problem.where).toBe('--gpus');
    expect(problem.message).toMatch(/--local/);
  });

  it.each([undefined, ''])('--local with --gpus %p: says to name the GPUs', (gpus) => {
    const problem = only({ ...OK, local: true, ...(gpus === undefined ? {} : { gpus }) });
    expect(problem.where).toBe('--gpus');
    expect(problem.message).toMatch(/--local needs the GPUs/);
  });

  it.each(['0', '9', 'x', '1.5'])('--instance-count %s is refused (1 to 8)', (count) => {
    const problem = only({ ...OK, instanceCount: count });
    expect(problem.where).toBe('--instance-count');
    expect(problem.message).toBe(`${count} is not a whole number from 1 to 8`);
  });

  it.each(['soon', '6 hours', '-1h'])('--max-runtime %p is refused', (value) => {
    const problem = only({ ...OK, maxRuntime: value });
    expect(problem.where).toBe('--max-runtime');
    expect(problem.message).toContain(value);
    expect(problem.hint).toMatch(/6h/);
  });

  it('a bad --deviate and a bad --checkpoints are flag problems', () => {
    const found = problems({ ...OK, checkpoints: ['not a ref!'], deviate: ['tensor_parallel_size=2'] });
    expect(found.map((p) => p.where).sort()).toEqual(['--checkpoints', '--deviate']);
    expect(found.find((p) => p.where === '--deviate')!.message).toMatch(/tensor parallel 1/);
  });

  it('reports every problem of one call together', () => {
    let caught: unknown;
    try {
      evalRequestOfFlags(
        {
          ...OK,
          harness: 'helm',
          instanceCount: '9',
          maxRuntime: 'soon',
          gpus: '0',
          deviate: ['seed=-1'],
        },
        tempDir(),
      );
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProblemsError);
    const found = (caught as ProblemsError).problems;
    expect(found.map((p) => p.where).sort()).toEqual([
      '--deviate',
      '--gpus',
      '--harness',
      '--instance-count',
      '--max-runtime',
    ]);
    expect((caught as ProblemsError).message).toMatch(/5 problem/);
  });
});

describe('rlvr eval flags: suites', () => {
  it('the built-in standard suite: gsm8k_cot:8 (the watcher’s), ifeval:0, minerva_math:4 and no hendrycks_math', () => {
    const request = evalRequestOfFlags({ checkpoints: OK.checkpoints, suite: 'standard' }, tempDir());
    expect(request.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 8 },
      { task: 'ifeval', numFewshot: 0 },
      { task: 'minerva_math', numFewshot: 4 },
    ]);
    expect(request.benchmarks).toEqual(BUILT_IN_SUITES.standard);
    expect(request.benchmarksFrom).toMatch(/standard.*built in/);
  });

  it('the built-in code suite holds the code tasks', () => {
    expect(BUILT_IN_SUITES.code.map((b) => b.task).sort()).toEqual(['humaneval', 'mbpp']);
  });

  it('a suite from a suites file, both item forms', () => {
    const dir = tempDir('rlvr-suites-');
    fs.writeFileSync(
      path.join(dir, 'my-suites.yaml'),
      [
        'suites:',
        '  quick:',
        '    - gsm8k_cot:8',
        '    - {task: ifeval, num_fewshot: 0}',
        '  math:',
        '    - minerva_math:4',
        '',
      ].join('\n'),
    );
    const request = evalRequestOfFlags(
      { checkpoints: OK.checkpoints, suite: 'quick', suitesFile: 'my-suites.yaml' },
      dir,
    );
    expect(request.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 8 },
      { task: 'ifeval', numFewshot: 0 },
    ]);
    expect(request.benchmarksFrom).toContain('my-suites.yaml');
  });

  it('the trainer repository suites file is read without --suites-file; a built-in name it lacks is still ours', () => {
    const dir = tempDir('rlvr-suites-');
    fs.mkdirSync(path.join(dir, 'configs', 'eval'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'configs', 'eval', 'suites.yaml'), 'suites:\n  tiny:\n    - ifeval:0\n');
    const tiny = evalRequestOfFlags({ checkpoints: OK.checkpoints, suite: 'tiny' }, dir);
    expect(tiny.benchmarks).toEqual([{ task: 'ifeval', numFewshot: 0 }]);
    const standard = evalRequestOfFlags({ checkpoints: OK.checkpoints, suite: 'standard' }, dir);
    expect(standard.benchmarks).toEqual(BUILT_IN_SUITES.standard);
  });

  it('a malformed entry of the suite is refused at its file:line:column', () => {
    const dir = tempDir('rlvr-suites-');
    const text = ['# our suites', 'suites:', '  quick:', '    - gsm8k_cot:8', '    - ifeval', ''].join('\n');
    fs.writeFileSync(path.join(dir, 'suites.yaml'), text);
    const problem = only({ checkpoints: OK.checkpoints, suite: 'quick', suitesFile: 'suites.yaml' }, dir);
    expect(problem.location).toEqual({ file: 'suites.yaml', ...positionOf(text, '- ifeval', 'ifeval') });
    expect(problem.location).toEqual({ file: 'suites.yaml', line: 5, column: 7 });
    expect(problem.where).toBe('suites.quick.1');
    expect(problem.message).toMatch(/task:num_fewshot/);
  });

  it('a mapping entry without num_fewshot is refused at its position', () => {
    const dir = tempDir('rlvr-suites-');
    const text = ['suites:', '  quick:', '    - task: gsm8k_cot', '      shots: 8', ''].join('\n');
    fs.writeFileSync(path.join(dir, 'suites.yaml'), text);
    const problem = only({ checkpoints: OK.checkpoints, suite: 'quick', suitesFile: 'suites.yaml' }, dir);
    expect(problem.location).toEqual({ file: 'suites.yaml', ...positionOf(text, 'task: gsm8k_cot', 'task') });
  });

  it("another suite's malformed entry does not stop this one", () => {
    const dir = tempDir('rlvr-suites-');
    fs.writeFileSync(
      path.join(dir, 'suites.yaml'),
      'suites:\n  good:\n    - ifeval:0\n  broken:\n    - gsm8k_cot\n',
    );
    const request = evalRequestOfFlags(
      { checkpoints: OK.checkpoints, suite: 'good', suitesFile: 'suites.yaml' },
      dir,
    );
    expect(request.benchmarks).toEqual([{ task: 'ifeval', numFewshot: 0 }]);
  });

  it('a suites file without `suites:` is refused with the form to write', () => {
    const dir = tempDir('rlvr-suites-');
    fs.writeFileSync(path.join(dir, 'suites.yaml'), 'quick:\n  - ifeval:0\n');
    const found = problems({ checkpoints: OK.checkpoints, suite: 'quick', suitesFile: 'suites.yaml' }, dir);
    const shape = found.find((p) => /expected `suites:`/.test(p.message));
    expect(shape).toBeDefined();
    expect(shape!.location?.file).toBe('suites.yaml');
  });

  it('an unknown suite names the ones there are', () => {
    const builtIn = only({ checkpoints: OK.checkpoints, suite: 'everything' });
    expect(builtIn.where).toBe('--suite');
    expect(builtIn.message).toContain('everything');
    expect(builtIn.hint).toMatch(/standard, qwen3-report, code/);

    const dir = tempDir('rlvr-suites-');
    fs.writeFileSync(
      path.join(dir, 'suites.yaml'),
      'suites:\n  quick:\n    - ifeval:0\n  math:\n    - minerva_math:4\n',
    );
    const fromFile = only(
      { checkpoints: OK.checkpoints, suite: 'everything', suitesFile: 'suites.yaml' },
      dir,
    );
    expect(fromFile.where).toBe('--suite');
    expect(fromFile.message).toContain('everything');
    expect(fromFile.hint).toMatch(/quick, math/);
  });
});

/** The team's eval config, non-watch form. */
const EVAL_CONFIG = [
  '# checkpoints to compare',
  'seed: 42',
  'output_dir: /tmp/eval_results',
  '',
  'vllm:',
  '  tensor_parallel_size: 1',
  '  dtype: bfloat16',
  '  gpu_memory_utilization: 0.8',
  '  max_model_len: 4096',
  '',
  'max_gen_toks:',
  '  gsm8k_cot: 1024',
  '  minerva_math: 2048',
  '  ifeval: 4096',
  '  default: 1024',
  '',
  'checkpoints:',
  '  - name: base',
  '    path: Qwen/Qwen3-1.7B-Base',
  '  - name: step100',
  '    path: s3://team-bucket/checkpoints/run_xyz/step100',
  '',
  'benchmarks:',
  '  - task: gsm8k_cot',
  '    num_fewshot: 4',
  '  - task: ifeval',
  '    num_fewshot: 0',
  '  - task: minerva_math',
  '    num_fewshot: 4',
  '',
].join('\n');

function withConfig(text: string): { dir: string; text: string } {
  const dir = tempDir('rlvr-eval-config-');
  fs.writeFileSync(path.join(dir, 'eval.yaml'), text);
  return { dir, text };
}

function edited(from: string, to: string): string {
  const next = EVAL_CONFIG.replace(from, to);
  if (next === EVAL_CONFIG) throw new Error(`not in the config: ${from}`);
  return next;
}

describe('rlvr eval flags: eval config in the team format', () => {
  it('its checkpoints become labelled references and its benchmarks the benchmarks', () => {
    const { dir } = withConfig(EVAL_CONFIG);
    const request = evalRequestOfFlags({ config: 'eval.yaml' }, dir);
    expect(request.refs.map((r) => [r.label, r.ref])).toEqual([
      ['base', { kind: 'model', name: 'Qwen/Qwen3-1.7B-Base' }],
      ['step100', { kind: 's3', uri: 's3://team-bucket/checkpoints/run_xyz/step100/' }],
    ]);
    expect(request.benchmarks).toEqual([
      { task: 'gsm8k_cot', numFewshot: 4 },
      { task: 'ifeval', numFewshot: 0 },
      { task: 'minerva_math', numFewshot: 4 },
    ]);
    expect(request.settings).toEqual(STANDARD);
    expect(request.deviations).toEqual([]);
    expect(request.benchmarksFrom).toBe('eval.yaml');
  });

  it('a benchmark without num_fewshot is zero-shot', () => {
    const { dir } = withConfig(edited('  - task: ifeval\n    num_fewshot: 0\n', '  - task: ifeval\n'));
    const request = evalRequestOfFlags({ config: 'eval.yaml' }, dir);
    expect(request.benchmarks).toContainEqual({ task: 'ifeval', numFewshot: 0 });
  });

  it('--checkpoints add to the config checkpoints', () => {
    const { dir } = withConfig(EVAL_CONFIG);
    const request = evalRequestOfFlags(
      { config: 'eval.yaml', checkpoints: ['other=Qwen/Qwen3-4B-Base'] },
      dir,
    );
    expect(request.refs.map((r) => r.label).sort()).toEqual(['base', 'other', 'step100']);
  });

  it('harness: olmes in the config is the harness unless --harness says otherwise', () => {
    const { dir } = withConfig(`harness: olmes\nolmes:\n  tasks: [gsm8k_cot]\n${EVAL_CONFIG}`);
    expect(evalRequestOfFlags({ config: 'eval.yaml' }, dir).harness).toBe('olmes');
    expect(evalRequestOfFlags({ config: 'eval.yaml', harness: 'lm_eval' }, dir).harness).toBe('lm_eval');
  });

  it('seed: 123 without --deviate is refused at the seed, with the --deviate to pass', () => {
    const { dir, text } = withConfig(edited('seed: 42', 'seed: 123'));
    const problem = only({ config: 'eval.yaml' }, dir);
    expect(problem.location).toEqual({ file: 'eval.yaml', ...positionOf(text, 'seed: 123', '123') });
    expect(problem.location).toEqual({ file: 'eval.yaml', line: 2, column: 7 });
    expect(problem.where).toBe('seed');
    expect(problem.message).toMatch(/123.*standard 42/);
    expect(problem.hint).toContain('--deviate seed=123');
  });

  it('seed: 123 with --deviate seed=123 runs, the deviation recorded', () => {
    const { dir } = withConfig(edited('seed: 42', 'seed: 123'));
    const request = evalRequestOfFlags({ config: 'eval.yaml', deviate: ['seed=123'] }, dir);
    expect(request.settings).toEqual({ ...STANDARD, seed: 123 });
    expect(request.deviations).toEqual(['seed=123']);
  });

  it('a --deviate of another value does not excuse the config', () => {
    const { dir } = withConfig(edited('seed: 42', 'seed: 123'));
    const problem = only({ config: 'eval.yaml', deviate: ['seed=7'] }, dir);
    expect(problem.where).toBe('seed');
  });

  it.each([
    [
      '  max_model_len: 4096',
      '  max_model_len: 8192',
      'vllm.max_model_len',
      '8192',
      '--deviate max_model_len=8192',
    ],
    ['  dtype: bfloat16', '  dtype: float16', 'vllm.dtype', 'float16', '--deviate dtype=float16'],
    ['  ifeval: 4096', '  ifeval: 2048', 'max_gen_toks.ifeval', '2048', '--deviate max_gen_toks.ifeval=2048'],
    [
      '  gpu_memory_utilization: 0.8',
      '  gpu_memory_utilization: 0.9',
      'vllm.gpu_memory_utilization',
      '0.9',
      '--deviate gpu_memory_utilization=0.9',
    ],
  ])('%s → %s is refused at its position, and runs with its --deviate', (from, to, where, value, hint) => {
    const { dir, text } = withConfig(edited(from, to));
    const problem = only({ config: 'eval.yaml' }, dir);
    expect(problem.where).toBe(where);
    expect(problem.location).toEqual({ file: 'eval.yaml', ...positionOf(text, to, value) });
    expect(problem.hint).toContain(hint);
    const request = evalRequestOfFlags(
      { config: 'eval.yaml', deviate: [hint.slice('--deviate '.length)] },
      dir,
    );
    expect(request.deviations).toEqual([hint.slice('--deviate '.length)]);
  });

  it('vllm.tensor_parallel_size: 2 is refused at its position', () => {
    const { dir, text } = withConfig(edited('  tensor_parallel_size: 1', '  tensor_parallel_size: 2'));
    const problem = only({ config: 'eval.yaml' }, dir);
    expect(problem.location).toEqual({
      file: 'eval.yaml',
      ...positionOf(text, 'tensor_parallel_size: 2', '2'),
    });
    expect(problem.location!.line).toBe(6);
    expect(problem.message).toMatch(/tensor parallel/);
  });

  it('--deviate cannot let tensor_parallel_size: 2 through', () => {
    const { dir } = withConfig(edited('  tensor_parallel_size: 1', '  tensor_parallel_size: 2'));
    expect(() =>
      evalRequestOfFlags({ config: 'eval.yaml', deviate: ['tensor_parallel_size=2'] }, dir),
    ).toThrow(ProblemsError);
  });

  it('a config without `checkpoints` (the watch form) gives benchmarks only: nothing to evaluate without --checkpoints', () => {
    const { dir } = withConfig(
      edited(
        'checkpoints:\n  - name: base\n    path: Qwen/Qwen3-1.7B-Base\n  - name: step100\n    path: s3://team-bucket/checkpoints/run_xyz/step100\n',
        '',
      ),
    );
    const found = problems({ config: 'eval.yaml' }, dir);
    expect(found.map((p) => [p.where, p.message])).toEqual([['--checkpoints', 'nothing to evaluate']]);
    expect(found[0].hint).toMatch(/eval\.yaml has no `checkpoints:`.*add --checkpoints/);
    const withFlag = evalRequestOfFlags({ config: 'eval.yaml', checkpoints: ['job-1:final'] }, dir);
    expect(withFlag.refs.map((r) => r.label)).toEqual(['job-1:final']);
    expect(withFlag.benchmarks.length).toBeGreaterThan(0);
  });

  it('a relative folder in a config is a local folder; an org/Model that is no folder here is the model', () => {
    const { dir } = withConfig(edited('    path: Qwen/Qwen3-1.7B-Base', '    path: checkpoints/run/step100'));
    const request = evalRequestOfFlags({ config: 'eval.yaml' }, dir);
    expect(request.refs[0].ref).toEqual({ kind: 'local', path: './checkpoints/run/step100' });
    const model = withConfig(EVAL_CONFIG);
    expect(evalRequestOfFlags({ config: 'eval.yaml' }, model.dir).refs[0].ref).toEqual({
      kind: 'model',
      name: 'Qwen/Qwen3-1.7B-Base',
    });
    // The same text where such a folder exists: the folder.
    fs.mkdirSync(path.join(model.dir, 'Qwen', 'Qwen3-1.7B-Base'), { recursive: true });
    expect(evalRequestOfFlags({ config: 'eval.yaml' }, model.dir).refs[0].ref).toEqual({
      kind: 'local',
      path: './Qwen/Qwen3-1.7B-Base',
    });
  });

  it('a checkpoint that is no reference is refused at its entry', () => {
    const { dir, text } = withConfig(
      edited('    path: Qwen/Qwen3-1.7B-Base', '    path: "s3://Bad Bucket/x"'),
    );
    const problem = only({ config: 'eval.yaml' }, dir);
    expect(problem.where).toBe('checkpoints[0]');
    expect(problem.location).toEqual({ file: 'eval.yaml', ...positionOf(text, '- name: base', 'name') });
  });

  it('config problems and flag problems come together', () => {
    const { dir } = withConfig(edited('seed: 42', 'seed: 123'));
    const found = problems({ config: 'eval.yaml', harness: 'helm', instanceCount: '0' }, dir);
    expect(found.map((p) => p.where).sort()).toEqual(['--harness', '--instance-count', 'seed']);
  });
});
