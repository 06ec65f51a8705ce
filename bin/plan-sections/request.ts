/** The sections of the job's request: what runs (config, trainer, template), its settings and its options. */
import { formatDuration } from '../../lib/config';
import { sharedFileSystemIsolationNote, type SubmitPlan } from '../../lib/training';
import { describeSource } from '../../lib/job-options';
import { SETTINGS_ENV_PATTERN, SETTINGS_PARAMETER_NAME } from '../../lib/layout';
import type { SettingName } from '../../lib/settings';
import { isPlaceholder, planSection, row } from './section';

/** The config, the trainer that runs it and why, the eval config, the template, the description. */
export const requestSection = planSection({
  id: 'request',
  text: (plan) => {
    const run = plan.config.value.run?.name;
    let out = row('config', `${plan.config.displayPath}${run ? ` (run ${run})` : ''}`);
    out += row('trainer', `${plan.trainer.profile.id}: ${plan.trainer.profile.summary}`, plan.trainer.reason);
    for (const note of plan.runtimeNotes) out += row('', note);
    out += row('eval config', plan.evalConfig ? plan.evalConfig.displayPath : 'none');
    const from =
      plan.template?.from === 'built-in'
        ? 'built-in; the deployed stack publishes its own'
        : 'published by the stack';
    out += row('template', plan.template ? `${plan.template.name} (${from})` : 'none');
    return out + row('description', plan.description || '(none: pass --description)');
  },
  json: (plan) => ({
    createTrainingJobRequest: plan.request,
    template: plan.template ?? null,
    trainer: {
      id: plan.trainer.profile.id,
      script: plan.trainer.profile.script,
      how: plan.trainer.how,
      reason: plan.trainer.reason,
      resume: plan.trainer.profile.resume,
      runtime: plan.runtimeNotes,
    },
  }),
});

const SETTINGS_SHOWN: readonly SettingName[] = [
  'bucket',
  'prefix',
  'roleArn',
  'repositoryUri',
  'region',
  'subnets',
  'securityGroups',
  'kmsKeyId',
  'fileSystemId',
];

export const settingsSection = planSection({
  id: 'settings',
  title: 'Settings',
  text: (plan) => {
    let out = '';
    for (const name of SETTINGS_SHOWN) {
      const v = plan.settings.values[name];
      const shown =
        v === undefined
          ? isPlaceholder(plan, name)
            ? `<UNRESOLVED ${name}>`
            : '-'
          : Array.isArray(v)
            ? v.join(',')
            : String(v);
      out += row(name, shown, plan.settings.sources[name]);
    }
    if (plan.placeholders.length > 0) {
      out += `  Unresolved settings are placeholders: pass flags, set ${SETTINGS_ENV_PATTERN} variables, or deploy the stack (it publishes ${SETTINGS_PARAMETER_NAME}).\n`;
    }
    return out;
  },
  json: (plan) => ({
    placeholders: plan.placeholders,
    settings: Object.fromEntries(
      (Object.keys(plan.settings.sources) as SettingName[]).map((k) => [
        k,
        { value: plan.settings.values[k] ?? null, source: plan.settings.sources[k] },
      ]),
    ),
  }),
});

/** `2 × ml.p4de.24xlarge`, then `= 16 GPUs (12 train, 4 eval)`; the count's source when it is not the type's. */
function instanceRows(plan: SubmitPlan): string {
  const o = plan.options;
  const c = plan.cluster;
  const countSource =
    describeSource(o.instanceCount.source) === describeSource(o.instanceType.source)
      ? ''
      : `, count: ${describeSource(o.instanceCount.source)}`;
  let out = row(
    'instance',
    `${c.hosts} × ${o.instanceType.value}`,
    `${describeSource(o.instanceType.source)}${countSource}`,
  );
  const gpus = c.totalGpus === undefined ? '? GPUs' : `${c.totalGpus} GPU${c.totalGpus === 1 ? '' : 's'}`;
  out += row('', `= ${gpus} (${c.trainGpus} train, ${c.evalGpus} eval)`);
  return out;
}

/** Spot's max wait, and SageMaker's retries of a job failed by an internal error. */
function waitAndRetryRows(plan: SubmitPlan): string {
  const o = plan.options;
  let out = '';
  const wait = plan.request.StoppingCondition?.MaxWaitTimeInSeconds;
  if (o.spot.value && wait !== undefined)
    out += row(
      'spot wait',
      `up to ${formatDuration(wait)} (MaxWaitTimeInSeconds ${wait})`,
      describeSource(o.maxWaitSeconds.source),
    );
  const n = o.maxRetries.value;
  out += row(
    'retries',
    n === undefined ? 'none (no RetryStrategy)' : `up to ${n} (RetryStrategy.MaximumRetryAttempts ${n})`,
    describeSource(o.maxRetries.source),
  );
  return out;
}

/** The job's options: the instances and GPU split, how long, spot, retries, the warm pool. */
export const optionsSection = planSection({
  id: 'options',
  title: 'How the job runs',
  text: (plan) => {
    const o = plan.options;
    const src = describeSource;
    let out = instanceRows(plan);
    out += row('train GPUs', o.trainGpus.value.join(',') || 'none', src(o.trainGpus.source));
    out += row('eval GPUs', o.evalGpus.value.join(',') || 'none', src(o.evalGpus.source));
    out += row('max runtime', formatDuration(o.maxRuntimeSeconds.value), src(o.maxRuntimeSeconds.source));
    out += row('spot', o.spot.value ? 'yes' : 'no', src(o.spot.source));
    out += waitAndRetryRows(plan);
    const keepAlive = o.keepAliveSeconds.value > 0 ? formatDuration(o.keepAliveSeconds.value) : 'off';
    return out + row('warm pool', keepAlive, src(o.keepAliveSeconds.source));
  },
  json: (plan) => ({
    options: Object.fromEntries(
      Object.entries(plan.options).map(([k, v]) => [k, { value: v.value, source: describeSource(v.source) }]),
    ),
    retries: {
      maxRetryAttempts: plan.options.maxRetries.value ?? null,
      source: describeSource(plan.options.maxRetries.source),
    },
    spotWait: plan.options.spot.value
      ? {
          maxWaitTimeInSeconds: plan.request.StoppingCondition?.MaxWaitTimeInSeconds ?? null,
          source: describeSource(plan.options.maxWaitSeconds.source),
        }
      : null,
  }),
});

/** How long the eval watcher waits once training ends (with an eval config), and the volume. */
export const evalWaitAndVolumeSection = planSection({
  id: 'eval-wait-and-volume',
  text: (plan) => {
    const o = plan.options;
    let out = '';
    if (plan.evalConfig)
      out += row(
        'eval wait',
        formatDuration(o.evalWaitSeconds.value),
        describeSource(o.evalWaitSeconds.source),
      );
    return out + row('volume', `${o.volumeGb.value} GB`, describeSource(o.volumeGb.source));
  },
});

/**
 * The isolation row: a job mounting the shared file system runs as shared_fs_network_isolation says
 * (AWS documents a file-system channel with isolation neither way, so the plan always says which).
 */
export const networkSection = planSection({
  id: 'network',
  text: (plan) => {
    const o = plan.options;
    const shared = plan.sharedFileSystem;
    if (!shared || !o.networkIsolation.value) {
      const general = row(
        'network',
        o.networkIsolation.value ? 'isolated' : 'not isolated',
        describeSource(o.networkIsolation.source),
      );
      return shared ? general + row('', sharedFileSystemIsolationNote(shared)) : general;
    }
    const isolation = o.sharedFsNetworkIsolation;
    const value = isolation.value
      ? 'isolated'
      : 'off: shared_fs_network_isolation false (a job mounting the shared file system)';
    return (
      row('network', value, describeSource(isolation.source)) + row('', sharedFileSystemIsolationNote(shared))
    );
  },
});

/** The trainer's command, and Ray. */
export const commandSection = planSection({
  id: 'command',
  text: (plan) => {
    const o = plan.options;
    const ray =
      o.instanceCount.value > 1 ? "one cluster of every host's train GPUs" : 'head on the train GPUs';
    return (
      row('command', o.trainerCommand.value, describeSource(o.trainerCommand.source)) +
      row('ray', o.useRay.value ? ray : 'off', describeSource(o.useRay.source))
    );
  },
});
