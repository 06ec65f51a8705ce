import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Problem } from '../../lib/errors';
import { evalRequestOfFlags, type EvalFlags } from '../../bin/commands/eval-flags';
import { BUILT_IN_SUITES } from '../../lib/eval/input';
import { parseBenchmarks } from '../../lib/eval/refs';
import { KNOWN_TASKS, parseDeviations, taskWarnings } from '../../lib/eval/standard';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { evalProblems } from './eval-problems';

const problems = evalProblems;

const OK: EvalFlags = { checkpoints: ['s3://bucket-a/ckpt/'], benchmarks: ['gsm8k_cot:8'] };
const text = (p: Problem[]) => p.map((x) => `${x.where}: ${x.message} ${x.hint ?? ''}`).join('\n');

describe('one gsm8k standard across the watcher config, the suites and the docs', () => {
  const watch = parseYaml(
    fs.readFileSync(path.join(REPO_ROOT, 'configs/eval/lm_eval_watch.yaml'), 'utf8'),
  ) as {
    benchmarks: { task: string; num_fewshot: number }[];
    watch: { task_groups: { benchmarks: { task: string; num_fewshot: number }[] }[] };
  };
  const standardShots = BUILT_IN_SUITES.standard.find((b) => b.task === 'gsm8k_cot')!.numFewshot;

  it("the watcher config's gsm8k_cot shots equal the standard suite's", () => {
    const inWatcher = [...watch.benchmarks, ...watch.watch.task_groups.flatMap((g) => g.benchmarks)].filter(
      (b) => b.task === 'gsm8k_cot',
    );
    expect(inWatcher.length).toBeGreaterThan(0);
    for (const b of inWatcher) expect(b.num_fewshot).toBe(standardShots);
  });

  it('the other setting (the Qwen3 report’s 4-shot) is a named suite; the docs say which is standard', () => {
    expect(BUILT_IN_SUITES['qwen3-report']).toContainEqual({ task: 'gsm8k_cot', numFewshot: 4 });
    const docs = fs.readFileSync(path.join(REPO_ROOT, 'docs/evaluation.md'), 'utf8');
    expect(docs).toContain(`gsm8k_cot:${standardShots}`);
    expect(docs).toContain('qwen3-report');
  });
});

describe('SageMaker limits on --max-retries and --max-runtime, as submit applies them', () => {
  it('--max-retries 0 is refused naming the flag and 1–30', () => {
    const found = problems({ ...OK, maxRetries: '0' });
    expect(found).toEqual([expect.objectContaining({ where: '--max-retries' })]);
    expect(text(found)).toMatch(/1 to 30/);
  });

  it('--max-runtime 29d is refused naming the flag and 28 days', () => {
    const found = problems({ ...OK, maxRuntime: '29d' });
    expect(found).toEqual([expect.objectContaining({ where: '--max-runtime' })]);
    expect(text(found)).toMatch(/28 days/);
  });
});

describe('--gpus values say what is wrong', () => {
  it.each([
    ['3-0', /3-0 is a reversed range/],
    ['abc', /"abc" is not a GPU number/],
    ['0,0', /GPU 0 is given twice/],
    ['0-3,2', /GPU 2 is given twice/],
    ['0-100000000', /no machine has a GPU 100000000/],
  ])('--gpus %s', (gpus, message) => {
    const found = problems({ ...OK, local: true, gpus });
    expect(found).toEqual([expect.objectContaining({ where: '--gpus' })]);
    expect(text(found)).toMatch(message);
  });

  it.each([
    ['0 - 3', [0, 1, 2, 3]],
    ['3,1', [1, 3]],
    [' 0, 2-3 ', [0, 2, 3]],
  ])('takes --gpus %s as the job options do (spaces, any order): %j', (gpus, expected) => {
    const request = evalRequestOfFlags({ ...OK, local: true, gpus }, tempDir('rlvr-eval-lim-'));
    expect(request.local?.gpus).toEqual(expected);
  });
});

describe('tasks, shots, deviations and local-only flags', () => {
  it('an unknown task is warned about with the nearest known one', () => {
    expect(taskWarnings('gsm8k_cott').join('\n')).toMatch(/did you mean gsm8k_cot\?/);
    expect(taskWarnings('gsm8k_cot')).toEqual([]);
    expect(taskWarnings('minerva_math_algebra')).toEqual([]);
  });

  it("the known tasks are the image's default LM_EVAL_TASKS", () => {
    const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'docker/Dockerfile'), 'utf8');
    const declared = /^ARG LM_EVAL_TASKS="([^"]*)"/m.exec(dockerfile)![1].split(/\s+/);
    expect([...KNOWN_TASKS].sort()).toEqual(declared.sort());
  });

  it('shots above 64 are refused', () => {
    const parsed = parseBenchmarks('gsm8k_cot:99999');
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toMatch(/at most 64/);
  });

  it('--deviate max_gen_toks.<unknown task> is refused, listing the tasks it takes', () => {
    const parsed = parseDeviations(['max_gen_toks.nosuch=5']);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toMatch(/nosuch.*gsm8k_cot/s);
    expect(parseDeviations(['max_gen_toks.ifeval=2048']).ok).toBe(true);
  });

  it('--deviate max_gen_toks.<a task of this run> is taken even when not a known one', () => {
    expect(parseDeviations(['max_gen_toks.my_task=5'], ['my_task']).ok).toBe(true);
  });

  it.each([
    [{ spot: true }, '--spot'],
    [{ maxRetries: '3' }, '--max-retries'],
  ])('--local with %p is refused', (extra, flag) => {
    const found = problems({ ...OK, local: true, gpus: '0', ...extra });
    expect(found).toEqual([expect.objectContaining({ where: flag })]);
    expect(text(found)).toMatch(/--local/);
  });
});

describe('eval configs', () => {
  it('checkpoints written as strings: the error gives the {name, path} form', () => {
    const cwd = tempDir('rlvr-eval-lim-');
    fs.writeFileSync(
      path.join(cwd, 'eval.yaml'),
      'benchmarks:\n  - {task: ifeval, num_fewshot: 0}\ncheckpoints:\n  - s3://bucket-a/step100/\n',
    );
    const found = problems({ config: 'eval.yaml' }, cwd);
    expect(text(found)).toContain('- {name: step100, path: s3://');
    expect(found[0].location).toEqual(expect.objectContaining({ line: 4 }));
  });

  it('the OLMES watcher config: its tasks are named and rlvr eval says what to use instead', () => {
    const found = problems(
      { checkpoints: ['s3://bucket-a/ckpt/'], config: 'configs/eval/olmes_watch.yaml' },
      REPO_ROOT,
    );
    expect(found).toHaveLength(1);
    expect(found[0].where).toBe('olmes.tasks');
    expect(text(found)).toMatch(/gsm8k::olmes/);
    expect(text(found)).toMatch(/--harness olmes --benchmarks/);
    expect(text(found)).not.toMatch(/no benchmarks/);
  });
});
