import * as fs from 'node:fs';
import * as path from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../lib/infra';
import { tempDir } from '../helpers/fixtures';

/** Every optional feature on. */
export const FULL_CONTEXT = {
  'rlvr:vpc': true,
  // us-west-2's com.amazonaws.us-west-2.s3 managed prefix list.
  'rlvr:s3PrefixListId': 'pl-68a54001',
  'rlvr:sharedFileSystem': 'efs',
  'rlvr:sharedFileSystemIsolation': 'optional',
  'rlvr:interContainerTrafficEncryption': true,
  'rlvr:checkpointExpiryDays': 14,
  'rlvr:githubRepository': 'acme/grpo-trainer',
  'rlvr:githubBranch': 'main',
  'rlvr:notificationEmails': 'ml-team@example.com',
  'rlvr:notificationHttpsEndpoints': 'https://hooks.example.com/rlvr',
  'rlvr:submitterPrincipalArns': 'arn:aws:iam::123456789012:role/researcher',
};

export interface Synthesized {
  readonly template: Template;
  readonly json: Record<string, unknown>;
  readonly templatePath: string;
  readonly outdir: string;
}

/** Synthesizes the app as `cdk synth` does (nag packs on); throws on unacknowledged findings. */
export function synth(context: Record<string, unknown> = {}): Synthesized {
  const outdir = tempDir('rlvr-cdk-');
  const { app } = buildApp({ outdir, context });
  const assembly = app.synth();
  const templatePath = path.join(outdir, assembly.stacks[0].templateFile);
  const json = JSON.parse(fs.readFileSync(templatePath, 'utf8'));
  return { template: Template.fromJSON(json), json, templatePath, outdir };
}

/**
 * The findings the nag packs report with acknowledgements switched off, and the acknowledgements the
 * stack makes, as "constructPath ruleId" — to prove they match one to one.
 */
export function findingsAndAcknowledgements(context: Record<string, unknown>): {
  findings: string[];
  acks: { key: string; reason: string }[];
} {
  const acks: { key: string; reason: string }[] = [];
  const spy = jest.spyOn(Validations.prototype, 'acknowledge').mockImplementation(function (
    this: Validations,
    ...rules
  ) {
    const scope = (this as unknown as { scope: { node: { path: string } } }).scope;
    for (const r of rules) acks.push({ key: `${scope.node.path} ${r.id}`, reason: r.reason });
  });
  try {
    const outdir = tempDir('rlvr-cdk-');
    const { app } = buildApp({ outdir, context });
    expect(() => app.synth()).toThrow(/wildcard permissions/); // with acknowledgements off, findings fail synth
    const report = JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8'));
    const findings: string[] = [];
    for (const plugin of report.pluginReports) {
      for (const v of plugin.violations) {
        for (const c of v.violatingConstructs ?? [])
          findings.push(`${c.constructPath.replace(/\/Resource$/, '')} ${v.ruleName}`);
      }
    }
    return {
      findings: findings.sort(),
      acks: acks.filter((a) => !a.key.includes('CloudFormation-Validate::')),
    };
  } finally {
    spy.mockRestore();
  }
}

/**
 * cdk-nag's findings (acknowledgements off) that no acknowledgement covers, and acknowledgements that
 * cover no finding, for a context; an acknowledgement on a construct covers the findings of its children.
 */
export function nagMismatches(context: Record<string, unknown>): {
  findings: string[];
  acks: { key: string; reason: string }[];
  unacknowledged: string[];
  unfounded: string[];
} {
  const { findings, acks } = findingsAndAcknowledgements(context);
  const split = (entry: string) => [
    entry.slice(0, entry.lastIndexOf(' ')),
    entry.slice(entry.lastIndexOf(' ') + 1),
  ];
  const covers = (ack: string, finding: string) => {
    const [ackPath, ackRule] = split(ack);
    const [path, rule] = split(finding);
    return rule === ackRule && (path === ackPath || path.startsWith(`${ackPath}/`));
  };
  return {
    findings,
    acks,
    unacknowledged: findings.filter((f) => !acks.some((a) => covers(a.key, f))),
    unfounded: acks.filter((a) => !findings.some((f) => covers(a.key, f))).map((a) => a.key),
  };
}
