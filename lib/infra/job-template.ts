import { Stack } from 'aws-cdk-lib';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { jobTemplateSchema, type JobTemplate } from '../config';
import { templateNameProblems, templateProblems } from '../job-options';
import { templateParameterName } from '../layout';

export interface TrainingJobTemplateProps {
  /** The name `--template NAME` selects. */
  readonly templateName: string;
  /** How the job runs: instance, GPU split, runtime, spot, … (the launcher's template schema). */
  readonly template: JobTemplate;
}

/**
 * A named preset of how a job runs, published as an SSM parameter the launcher reads. Validated at
 * synth with the launcher's own schema and option checks, so a bad template never deploys.
 */
export class TrainingJobTemplate extends Construct {
  readonly parameter: ssm.StringParameter;

  constructor(scope: Construct, id: string, props: TrainingJobTemplateProps) {
    super(scope, id);
    const parsed = jobTemplateSchema.safeParse(props.template);
    // A bad name is said whatever else is wrong; the option checks need values the schema accepted.
    const problems = parsed.success
      ? templateProblems(props.templateName, parsed.data)
      : [
          ...templateNameProblems(props.templateName),
          ...parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
        ];
    if (problems.length > 0) {
      throw new Error(`Job template ${props.templateName} is invalid:\n  ${problems.join('\n  ')}`);
    }
    this.parameter = new ssm.StringParameter(this, 'Parameter', {
      parameterName: templateParameterName(props.templateName),
      description: `rlvr job template ${props.templateName}${props.template.description ? `: ${props.template.description}` : ''}`,
      stringValue: Stack.of(this).toJsonString(parsed.data),
    });
  }
}
