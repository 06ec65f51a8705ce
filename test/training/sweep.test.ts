import { loadTrainingConfigText, YamlFile } from '../../lib/config';
import { parseSweepFlag } from '../../lib/training';
import { expandSweep, resolveSweepKey, sweepLiteral } from '../../lib/training/sweep';
import { hostOf } from '../../lib/operate/watch';
import { jobCost } from '../../lib/operate/inspect';
import { costOf } from '../../lib/job-options';
import { GSM8K_EXAMPLE, gsm8kWith } from '../helpers/fixtures';

const file = () => YamlFile.parse(gsm8kWith(), 'cfg.yaml');

describe('sweeps', () => {
  it('parses KEY=V1,V2 with numbers, booleans and strings', () => {
    expect(parseSweepFlag('optimizer.lr=5e-5,1e-5')).toEqual({ key: 'optimizer.lr', values: [5e-5, 1e-5] });
    expect(parseSweepFlag('data_iter.skip_chat_template=true')).toEqual({
      key: 'data_iter.skip_chat_template',
      values: [true],
    });
    expect(parseSweepFlag('run.name=a,b')).toEqual({ key: 'run.name', values: ['a', 'b'] });
    for (const bad of ['optimizer.lr', 'optimizer.lr=', '=1', 'optimizer.lr=1,,2'])
      expect(() => parseSweepFlag(bad)).toThrow(/--sweep/);
  });

  it('resolves keys at the top level, in the trainer role, or in a named role', () => {
    expect(resolveSweepKey(file(), 'loss.beta')).toEqual(['loss', 'beta']);
    expect(resolveSweepKey(file(), 'optimizer.lr')).toEqual(['roles', 0, 'config', 'optimizer', 'lr']);
    expect(resolveSweepKey(file(), 'roles.rollout.config.max_num_seqs')).toEqual([
      'roles',
      2,
      'config',
      'max_num_seqs',
    ]);
    expect(() => resolveSweepKey(file(), 'optimizer.lrr')).toThrow(/Did you mean optimizer\.lr\?/);
    expect(() => resolveSweepKey(file(), 'loss')).toThrow(/is a section, not a value/);
  });

  it('expands the cartesian product, first axis slowest, keeping the rest of the file', () => {
    const variants = expandSweep(file(), [
      parseSweepFlag('optimizer.lr=5e-5,1e-6'),
      parseSweepFlag('loss.beta=0.001,0'),
    ]);
    expect(variants.map((v) => v.label)).toEqual([
      'optimizer.lr=5.0e-5 loss.beta=0.001',
      'optimizer.lr=5.0e-5 loss.beta=0',
      'optimizer.lr=1.0e-6 loss.beta=0.001',
      'optimizer.lr=1.0e-6 loss.beta=0',
    ]);
    const loaded = loadTrainingConfigText(variants[1].text, GSM8K_EXAMPLE, 'cfg');
    const trainer = loaded.value.roles[0];
    expect(trainer.kind === 'titan' && trainer.config?.optimizer?.lr).toBe(5e-5);
    expect(loaded.value.loss?.beta).toBe(0);
    const original = gsm8kWith().split('\n');
    const changed = variants[1].text.split('\n');
    expect(changed).toHaveLength(original.length);
    expect(changed.filter((l, i) => l !== original[i])).toEqual(['  beta: 0', '        lr: 5.0e-5']);
  });

  it('refuses the same key twice', () => {
    expect(() => expandSweep(file(), [parseSweepFlag('loss.beta=1'), parseSweepFlag('loss.beta=2')])).toThrow(
      /given twice/,
    );
  });

  it('refuses a value given twice, compared once parsed (1 and 1.0 are the same job)', () => {
    expect(() => parseSweepFlag('optimizer.lr=1,1')).toThrow(/the value 1 is given twice/);
    expect(() => parseSweepFlag('optimizer.lr=1,1.0')).toThrow(
      /the value 1 is given twice \("1" and "1\.0"\)/,
    );
    expect(() => parseSweepFlag('optimizer.lr=1e-5,2e-5,0.00001')).toThrow(
      /the value 1\.0e-5 is given twice/,
    );
    expect(() => parseSweepFlag('run.name=a,b,a')).toThrow(/the value "a" is given twice/);
    expect(() => parseSweepFlag('optimizer.lr=1,1')).toThrow(expect.objectContaining({ code: 'BadSweep' }));
    expect(parseSweepFlag('run.name=1,"1"').values).toHaveLength(2);
  });

  it('writes literals the trainer reads back as the same value', () => {
    expect(sweepLiteral(1e-6)).toBe('1.0e-6');
    expect(sweepLiteral(64)).toBe('64');
    expect(sweepLiteral('a b')).toBe('"a b"');
  });
});

describe('cost and hosts', () => {
  it('prices instance-hours from the table', () => {
    expect(costOf('ml.p4de.24xlarge', 'us-west-2', 2, 1800)).toBeCloseTo(47.11, 5);
    expect(costOf('ml.unknown', 'us-west-2', 1, 3600)).toBeUndefined();
  });

  it('bills a finished spot job by billable time and reports the saving', () => {
    const start = new Date('2026-01-01T00:00:00Z');
    const cost = jobCost(
      {
        TrainingJobStatus: 'Completed',
        TrainingStartTime: start,
        TrainingEndTime: new Date(start.getTime() + 3600_000),
        TrainingTimeInSeconds: 3600,
        BillableTimeInSeconds: 1200,
        EnableManagedSpotTraining: true,
        ResourceConfig: { InstanceType: 'ml.g5.2xlarge', InstanceCount: 1, VolumeSizeInGB: 1 },
      } as never,
      'us-west-2',
      new Date(),
    );
    expect(cost).toMatchObject({ elapsedSeconds: 3600, billableSeconds: 1200, final: true });
    expect(cost.cost).toBeCloseTo(1.515 / 3, 6);
    expect(cost.spotSavings).toBeCloseTo(2 / 3, 6);
  });

  it('names hosts from stream names', () => {
    expect(hostOf('job-1/algo-2-1700000000', 'job-1')).toBe('algo-2');
  });
});
