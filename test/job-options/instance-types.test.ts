import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { TrainingInstanceType } from '@aws-sdk/client-sagemaker';
import { YamlFile } from '../../lib/config';
import { resolveJobOptions } from '../../lib/job-options/options';
import {
  checkInstanceType,
  gpuCount,
  gpuInstanceTypes,
  hasLocalStorage,
} from '../../lib/job-options/instance-types';

function resolveInstance(instanceType: string) {
  return resolveJobOptions({
    flags: { instance_type: instanceType },
    launcher: undefined,
    configFile: YamlFile.parse('{}', 'cfg.yaml'),
    template: undefined,
    hasEvalConfig: false,
  });
}

describe('instance types', () => {
  it('runs jobs only on GPU types SageMaker training accepts (the GPU table is a subset of the SDK list)', () => {
    const sagemaker = new Set<string>(Object.values(TrainingInstanceType));
    const table = gpuInstanceTypes();
    expect(table.length).toBeGreaterThan(20);
    expect(table.filter((t) => !sagemaker.has(t))).toEqual([]);
    for (const t of table) expect(gpuCount(t)).toBeGreaterThanOrEqual(1);
  });

  it('says whether a rejected type is a typo or a real type without GPUs this launcher splits', () => {
    expect(checkInstanceType('ml.g5.12xlarge')).toEqual({ ok: true, gpus: 4 });
    expect(checkInstanceType('ml.m5.xlarge')).toEqual({ ok: false, reason: 'not-gpu-type' });
    expect(checkInstanceType('ml.p4de.24xlarg')).toEqual({
      ok: false,
      reason: 'not-training-type',
      suggestion: 'ml.p4de.24xlarge',
    });
    expect(checkInstanceType('p5.48xlarge')).toMatchObject({ suggestion: 'ml.p5.48xlarge' });
  });

  it('names the problem in the job options', () => {
    const cpu = resolveInstance('ml.m5.xlarge').problems[0];
    expect(cpu.message).toBe('"ml.m5.xlarge" is not a GPU instance type this launcher knows');
    expect(cpu.hint).toBe('Use a p4d, p4de, p5, g5, g6 or g6e instance.');
    const typo = resolveInstance('ml.p4de.24xlarg').problems[0];
    expect(typo.message).toBe('"ml.p4de.24xlarg" is not an instance type SageMaker training accepts');
    expect(typo.hint).toBe('Did you mean "ml.p4de.24xlarge"?');
    const nonsense = resolveInstance('zzz').problems[0];
    expect(nonsense.message).toBe('"zzz" is not an instance type SageMaker training accepts');
    expect(resolveInstance('ml.p5.48xlarge').problems).toEqual([]);
  });

  it("loads the SDK's list only to explain a type outside the GPU table", () => {
    // A fresh node: jest's module registry would hide what is loaded.
    const script = `require('tsx/cjs');
const loaded = () => Object.keys(require.cache).some((k) => k.includes('client-sagemaker'));
const { checkInstanceType } = require('./lib/job-options/instance-types');
const table = checkInstanceType('ml.p4de.24xlarge').ok;
const afterTableType = loaded();
const other = checkInstanceType('ml.m5.xlarge').ok;
console.log(JSON.stringify({ table, afterTableType, other, afterOtherType: loaded() }));`;
    const out = execFileSync(process.execPath, ['-e', script], {
      cwd: path.join(__dirname, '..', '..'),
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({
      table: true,
      afterTableType: false,
      other: false,
      afterOtherType: true,
    });
  });
});

describe('hasLocalStorage: the instance types that refuse a volume KMS key', () => {
  it.each([
    ['ml.p4de.24xlarge', true],
    ['ml.p5.48xlarge', true],
    ['ml.g5.2xlarge', true],
    ['ml.g6e.12xlarge', true],
    ['ml.m5d.2xlarge', true],
    ['ml.p3.16xlarge', false],
    ['ml.m5.2xlarge', false],
    ['ml.c5.4xlarge', false],
  ])('%s → %s', (type, local) => {
    expect(hasLocalStorage(type)).toBe(local);
  });
});
