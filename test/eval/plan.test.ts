import { ProblemsError } from '../../lib/errors';
import { evalRequestOfFlags } from '../../bin/commands/eval-flags';
import { planEval } from '../../lib/eval/plan';
import { offlineConnection } from '../helpers/eval';

const plan = (checkpoints: string[], benchmarks = 'gsm8k_cot:8,hendrycks_math:4') =>
  planEval(
    evalRequestOfFlags({ checkpoints, benchmarks: [benchmarks], instanceType: 'ml.g6e.12xlarge' }, '/w'),
    offlineConnection(),
  );

describe('rlvr eval: the plan without AWS (a dry-run)', () => {
  it('one row per checkpoint: the same checkpoint twice, or two under one name, is refused', async () => {
    await expect(plan(['a=Qwen/Qwen3-1.7B-Base', 'b=Qwen/Qwen3-1.7B-Base'])).rejects.toThrow(
      /a=Qwen\/Qwen3-1\.7B-Base and b=Qwen\/Qwen3-1\.7B-Base name the same checkpoint/,
    );
    const twoNames = plan(['x=Qwen/Qwen3-1.7B-Base', 'x=s3://my-bucket/models/other/']);
    await expect(twoNames).rejects.toBeInstanceOf(ProblemsError);
    await expect(twoNames).rejects.toThrow(/would share the row "x"/);
  });

  it('plans with marked placeholders, the MATH warning and the idle GPUs', async () => {
    const p = await plan(['job-1:step20,final']);
    expect(p.placeholders).toEqual(expect.arrayContaining(['image', 'roleArn']));
    expect(p.checkpoints.map((c) => [c.label, c.unresolved !== undefined])).toEqual([
      ['step20', true],
      ['final', true],
    ]);
    // 4 units on a 4-GPU instance: none idle; hendrycks_math named with the task the team uses.
    expect(p.jobPlan.units).toHaveLength(4);
    expect(p.packing.idle).toBe(0);
    expect(p.warnings.join('\n')).toMatch(/hendrycks_math: .*minerva_math/);
    const few = await plan(['job-1:final'], 'ifeval:0');
    expect(few.warnings.join('\n')).toMatch(
      /3 of 4 GPUs get no unit \(1 unit\(s\)\): they are paid and idle/,
    );
  });
});
