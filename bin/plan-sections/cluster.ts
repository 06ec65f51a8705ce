/** The sections of the job's hosts: how a multi-host job's hosts split and talk, and what they cost. */
import { formatDuration } from '../../lib/config';
import type { SubmitPlan } from '../../lib/training';
import { EFA_LABEL } from '../../lib/image';
import { describeSource, formatUsd, hasEfa, PRICES_AS_OF, PRICES_SOURCE } from '../../lib/job-options';
import { planSection, row } from './section';

/**
 * A multi-host job's hosts: the GPU split each host gets, and how the hosts talk (the entrypoint pins
 * NCCL and Gloo to the interface SageMaker names, and sets FI_PROVIDER=efa where there are EFA devices).
 */
function clusterRows(plan: SubmitPlan): string {
  const o = plan.options;
  const train = o.trainGpus.value.length;
  const evalGpus = o.evalGpus.value.length;
  const perHost =
    evalGpus > 0
      ? `${train} train + ${evalGpus} eval GPU${evalGpus === 1 ? '' : 's'} on each; the eval watcher on the head only`
      : `${train} train GPU${train === 1 ? '' : 's'} on each`;
  const type = o.instanceType.value;
  const efa = plan.image.labels?.[EFA_LABEL];
  const link = hasEfa(type)
    ? `EFA between hosts: FI_PROVIDER=efa, NCCL through aws-ofi-nccl (${efa === undefined ? 'the image was not read' : efa === 'none' ? 'the image has no EFA stack: TCP instead' : `the image has ${efa}`})`
    : `TCP sockets between hosts (${type} has no EFA)`;
  return (
    row('cluster', `${plan.cluster.hosts} hosts × (${perHost})`) +
    row('', `${link}; NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME = the interface SageMaker names`)
  );
}

/** Shown for a multi-host job only: its hosts, and how long they have to join Ray. */
export const clusterSection = planSection({
  id: 'cluster',
  text: (plan) => {
    const o = plan.options;
    if (o.instanceCount.value <= 1) return undefined;
    const join = o.clusterJoinTimeoutSeconds;
    return (
      clusterRows(plan) +
      row(
        'join timeout',
        `${formatDuration(join.value)} for every host to join Ray`,
        describeSource(join.source),
      )
    );
  },
  json: (plan) => ({ cluster: plan.cluster }),
});

function costText(plan: SubmitPlan): string {
  const e = plan.estimate;
  if (!e) return 'no price known for this instance type';
  const each = e.instances > 1 ? ` (${e.instances} × ${formatUsd(e.perInstanceHour)}/h)` : '';
  return `${formatUsd(e.perHour)}/h${each}, at most ${formatUsd(e.maxRuntimeCost)} for the max runtime${e.note ? ` (${e.note})` : ''}`;
}

/** The on-demand estimate: per hour, and for the whole max runtime. */
export const costSection = planSection({
  id: 'cost',
  text: (plan) => row('cost', costText(plan), `${PRICES_SOURCE}, ${PRICES_AS_OF}`),
  json: (plan) => ({ estimate: plan.estimate ?? null }),
});
