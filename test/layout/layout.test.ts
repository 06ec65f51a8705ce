import {
  isValidTrainingJobName,
  jobNameCandidate,
  jobNamePrefixOf,
  normalisePrefix,
  parseCheckpointFolder,
  S3Layout,
} from '../../lib/layout';

describe('job names', () => {
  const at = new Date(Date.UTC(2026, 0, 25, 9, 5, 7));
  it('are annotations-adhoc-YYYYMMDD-HHMMSS in UTC, then -2, -3 …', () => {
    expect(jobNameCandidate('annotations-adhoc', at, 1)).toBe('annotations-adhoc-20260125-090507');
    expect(jobNameCandidate('annotations-adhoc', at, 2)).toBe('annotations-adhoc-20260125-090507-2');
    expect(jobNameCandidate('annotations-adhoc', at, 3)).toBe('annotations-adhoc-20260125-090507-3');
  });
  it('give back the prefix they were made from', () => {
    expect(jobNamePrefixOf(jobNameCandidate('annotations-adhoc-passk', at, 1))).toBe(
      'annotations-adhoc-passk',
    );
    expect(jobNamePrefixOf(jobNameCandidate('annotations-adhoc', at, 3))).toBe('annotations-adhoc');
    expect(jobNamePrefixOf('my-own-job')).toBeUndefined();
  });
  it('uses UTC whatever the local time zone', () => {
    const local = new Date('2026-01-25T23:30:00-08:00');
    expect(jobNameCandidate('p', local, 1)).toBe('p-20260126-073000');
  });
  it.each([
    ['annotations-adhoc-20260125-090507', true],
    ['a', true],
    ['a--b', true],
    ['-a', false],
    ['a-', false],
    ['a_b', false],
    ['x'.repeat(63), true],
    ['x'.repeat(64), false],
  ])('%s valid: %p', (name, ok) => expect(isValidTrainingJobName(name)).toBe(ok));
});

describe('S3 layout', () => {
  const layout = new S3Layout('sagemaker-us-west-2-123456789012');
  it("owns the keys of the team's S3 layout", () => {
    expect(layout.modelPrefix('Qwen3-1.7B-Base')).toBe('rlvr-experiments/models/Qwen3-1.7B-Base/');
    expect(layout.datasetPrefix('gsm8k_train')).toBe('rlvr-experiments/datasets/gsm8k_train/');
    expect(layout.curriculumKey('gsm8k_curriculum.txt')).toBe(
      'rlvr-experiments/curricula/gsm8k_curriculum.txt',
    );
    expect(layout.checkpointsPrefix('j')).toBe('rlvr-experiments/checkpoints/j/');
    expect(layout.sourceKey('ab')).toBe('rlvr-experiments/source/ab.tar.gz');
    expect(layout.jobPrefix('j')).toBe('rlvr-experiments/jobs/j/');
    expect(layout.modelArtifactKey('j')).toBe('rlvr-experiments/output/j/output/model.tar.gz');
    expect(layout.uri(layout.jobPrefix('j'))).toBe(
      's3://sagemaker-us-west-2-123456789012/rlvr-experiments/jobs/j/',
    );
  });
  it('normalises root prefixes', () => {
    expect(normalisePrefix('/a/b')).toBe('a/b/');
    expect(normalisePrefix('a/b//')).toBe('a/b/');
    expect(normalisePrefix('')).toBe('');
    expect(new S3Layout('b', '').modelPrefix('m')).toBe('models/m/');
  });
});

describe('checkpoint folders', () => {
  it.each([
    ['qwen3-1.7B-gsm8k-grpo_step20', { step: 20, final: false }],
    ['run_final', { final: true }],
    ['traces', undefined],
    ['run_step', undefined],
    ['run_final_old', undefined],
  ])('%s', (name, expected) => expect(parseCheckpointFolder(name)).toEqual(expected));
});
