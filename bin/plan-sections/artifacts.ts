/** The sections of what the job ships: the trainer's writes to the platform's variables, its source, the uploads. */
import { describeWrite } from '../../lib/training';
import { describeSource, hasEfa } from '../../lib/job-options';
import { formatBytes } from '../output';
import { planSection, row } from './section';

/**
 * What the job holds of the platform's variables: the interface SageMaker names on every job (and the
 * EFA transport where the host has it), in every Python process when hold_platform_env is on, against
 * each write of the trainer's modules at import the plan found.
 */
export const platformEnvSection = planSection({
  id: 'platform-env',
  text: (plan) => {
    const o = plan.options;
    const efa = hasEfa(o.instanceType.value) ? '; on hosts with EFA: FI_PROVIDER=efa, NCCL_NET unset' : '';
    const what = `NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME = the interface SageMaker names${efa}`;
    if (!o.holdPlatformEnv.value)
      return row('platform env', `${what} (not held)`, describeSource(o.holdPlatformEnv.source));
    let out = row(
      'platform env',
      `held in every Python process: ${what}; the HF offline switches as the job sets them`,
      describeSource(o.holdPlatformEnv.source),
    );
    for (const h of plan.platformEnv.held)
      out += row('', `kept against ${describeWrite(h.write)} (at import)`);
    return out;
  },
  json: (plan) => ({
    platformEnv: {
      hold: plan.options.holdPlatformEnv.value,
      held: plan.platformEnv.held.map((h) => describeWrite(h.write)),
      writesAtImport: plan.platformEnv.writes.map((w) => ({
        at: describeWrite(w.write),
        verdict: w.verdict,
        why: w.why,
      })),
    },
  }),
});

/** The trainer's source and where it goes, the commit, the checkpoints, the job log. */
export const sourceSection = planSection({
  id: 'source',
  title: 'Source and outputs',
  text: (plan) => {
    const { layout, source } = plan;
    const kind = source.isGit ? 'git' : 'folder';
    let out = row(
      'source',
      `${source.root} (${kind}, ${source.fileCount} files, ${formatBytes(source.bytes)})`,
    );
    out += row('', `→ ${layout.uri(source.key)} (uploaded once per content hash)`);
    if (plan.git?.commit) {
      const dirty = plan.git.dirty ? ' + uncommitted changes (captured in patches/)' : '';
      out += row('commit', `${plan.git.commit}${dirty}`);
    }
    if (source.excluded.length > 0) out += row('excluded', source.excluded.slice(0, 10).join(', '));
    for (const w of source.withheld) out += row('withheld', w.path, `${w.why}: credentials never leave`);
    out += row(
      'checkpoints',
      `${layout.uri(layout.checkpointsPrefix(plan.jobName))} (streamed while the job runs)`,
    );
    return out + row('job log', plan.jobLogPath);
  },
  json: (plan) => ({ source: plan.source }),
});

/** The objects a submit writes, in order. */
export const uploadsSection = planSection({
  id: 'uploads',
  title: 'Uploads at submit',
  text: (plan) =>
    plan.uploads
      .map((u) => row('', plan.layout.uri(u.key), `${u.what}${u.onlyIfAbsent ? ', if absent' : ''}`))
      .join(''),
  json: (plan) => ({ uploads: plan.uploads }),
});
