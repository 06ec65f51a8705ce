import { App, Stack } from 'aws-cdk-lib';
import { TrainingJobTemplate } from '../../lib/infra/job-template';
import { BUILT_IN_TEMPLATES } from '../../lib/job-options';
import type { JobTemplate } from '../../lib/config';

function make(templateName: string, template: unknown): void {
  const stack = new Stack(new App(), 'T');
  new TrainingJobTemplate(stack, 'Template', { templateName, template: template as JobTemplate });
}

describe('a job template at synth', () => {
  it('publishes a good one', () => {
    const [name, values] = Object.entries(BUILT_IN_TEMPLATES)[0];
    expect(() => make(name, values)).not.toThrow();
  });

  it('refuses a bad name and a value off the schema together, naming both', () => {
    const [, values] = Object.entries(BUILT_IN_TEMPLATES)[0];
    expect(() => make('Bad_Name', { ...values, instance_count: 'two' })).toThrow(
      /Job template Bad_Name is invalid:\n {2}name "Bad_Name" must be lowercase letters, digits and "-"\n {2}instance_count: /,
    );
  });

  it('refuses values the launcher would refuse (the option checks)', () => {
    const [, values] = Object.entries(BUILT_IN_TEMPLATES)[0];
    expect(() => make('ok-name', { ...values, max_runtime: '40d' })).toThrow(
      /Job template ok-name is invalid:\n {2}.*max_runtime/,
    );
  });
});
