import { parseBenchmarks, parseCheckpointRef } from '../../lib/eval/refs';

const JOB = 'annotations-adhoc-20260125-192905';

describe('batch evaluation: checkpoint references', () => {
  it.each([
    [JOB, { label: JOB, ref: { kind: 'job', job: JOB, select: 'final' } }],
    [
      `${JOB}:step100,step200,final`,
      {
        label: `${JOB}:step100,step200,final`,
        ref: { kind: 'job', job: JOB, select: ['step100', 'step200', 'final'] },
      },
    ],
    [`${JOB}:all`, { ref: { kind: 'job', job: JOB, select: 'all' } }],
    ['base=Qwen/Qwen3-1.7B-Base', { label: 'base', ref: { kind: 'model', name: 'Qwen/Qwen3-1.7B-Base' } }],
    [
      'mine=s3://team-bucket/rlvr-experiments/checkpoints/j/run_step20',
      {
        label: 'mine',
        ref: { kind: 's3', uri: 's3://team-bucket/rlvr-experiments/checkpoints/j/run_step20/' },
      },
    ],
    [
      './results/run/checkpoints/r_final',
      { ref: { kind: 'local', path: './results/run/checkpoints/r_final' } },
    ],
    [`early=${JOB}:step20`, { label: 'early', ref: { kind: 'job', job: JOB, select: ['step20'] } }],
  ])('%s', (given, want) => {
    const r = parseCheckpointRef(given);
    expect(r).toMatchObject({ ok: true, value: want });
  });

  it.each([
    [`${JOB}:step-5`, /"step-5" is not a checkpoint: stepN or final/],
    [`${JOB}:`, /"" is not a checkpoint/],
    ['s3://Bad_Bucket/x', /is not an S3 folder/],
    ['not a job!', /is neither a job name/],
    ['bad label=Qwen/Qwen3-1.7B-Base', /"bad label" is not a label/],
    ['', /an empty checkpoint reference/],
  ])('refuses %j', (given, problem) => {
    const r = parseCheckpointRef(given);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.problem).toMatch(problem);
  });
});

describe('batch evaluation: benchmarks', () => {
  it('reads task:num_fewshot lists', () => {
    expect(parseBenchmarks('gsm8k_cot:8, minerva_math:4,ifeval:0,mbpp:3')).toEqual({
      ok: true,
      value: [
        { task: 'gsm8k_cot', numFewshot: 8 },
        { task: 'minerva_math', numFewshot: 4 },
        { task: 'ifeval', numFewshot: 0 },
        { task: 'mbpp', numFewshot: 3 },
      ],
    });
  });

  it.each([
    ['gsm8k_cot', /"gsm8k_cot" is not task:num_fewshot/],
    ['gsm8k:8,gsm8k:4', /gsm8k is listed with 8 and 4 shots/],
    ['ifeval:0,ifeval:0', /ifeval is listed twice/],
    [' , ', /no benchmarks/],
    ['gsm8k:-1', /is not task:num_fewshot/],
  ])('refuses %j', (given, problem) => {
    const r = parseBenchmarks(given);
    expect(r.ok ? '' : r.problem).toMatch(problem);
  });
});
