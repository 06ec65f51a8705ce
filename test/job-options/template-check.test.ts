import { BUILT_IN_TEMPLATES, templateProblems } from '../../lib/job-options';

describe('the pure template check (what the stack runs at synth)', () => {
  it('passes every built-in template', () => {
    for (const [name, values] of Object.entries(BUILT_IN_TEMPLATES))
      expect(templateProblems(name, values)).toEqual([]);
  });

  it('names every problem of a bad one: its name, a shared GPU, a runtime past 28 days', () => {
    expect(
      templateProblems('Bad_Name', {
        instance_type: 'ml.p4de.24xlarge',
        train_gpus: '0-5',
        eval_gpus: '5-7',
        max_runtime: '30d',
      }),
    ).toEqual([
      'name "Bad_Name" must be lowercase letters, digits and "-"',
      'train_gpus (template Bad_Name): GPU 5 is given to both training (0,1,2,3,4,5) and eval (5,6,7)',
      expect.stringContaining('max_runtime'),
    ]);
  });
});
