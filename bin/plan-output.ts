/** The plan of a submit, as text (the dry-run) and as JSON (`--json`). */
import { formatDuration, formatKeyPath } from '../lib/config';
import { formatProblem } from '../lib/errors';
import {
  describeWrite,
  LOCAL_VOLUME,
  s3Uri,
  sharedFileSystemIsolationNote,
  sharedFileSystemPath,
  type SubmitPlan,
} from '../lib/jobs';
import { cudaDriverPlanLine, EFA_LABEL } from '../lib/image';
import { describeSource, formatUsd, hasEfa, PRICES_AS_OF, PRICES_SOURCE } from '../lib/job-options';
import { SETTINGS_ENV_PATTERN, SETTINGS_PARAMETER_NAME, SHARED_FILE_SYSTEM } from '../lib/layout';
import type { SettingName } from '../lib/settings';
import { forecastSection } from './forecast-output';
import { formatBytes } from './output';

export function planJson(plan: SubmitPlan) {
  return {
    ok: true,
    dryRun: true,
    jobName: plan.jobName,
    createTrainingJobRequest: plan.request,
    uploads: plan.uploads,
    preflight: plan.preflight,
    placeholders: plan.placeholders,
    settings: Object.fromEntries(
      (Object.keys(plan.settings.sources) as SettingName[]).map((k) => [
        k,
        { value: plan.settings.values[k] ?? null, source: plan.settings.sources[k] },
      ]),
    ),
    template: plan.template ?? null,
    options: Object.fromEntries(
      Object.entries(plan.options).map(([k, v]) => [k, { value: v.value, source: describeSource(v.source) }]),
    ),
    image: plan.image,
    estimate: plan.estimate ?? null,
    cluster: plan.cluster,
    sharedFileSystem: plan.sharedFileSystem
      ? {
          ...plan.sharedFileSystem,
          mountPath: sharedFileSystemPath(plan.sharedFileSystem),
          jobFolder: `${SHARED_FILE_SYSTEM.jobsFolder}/${plan.jobName}/`,
          line: sharedFileSystemLine(plan),
          isolationNote: sharedFileSystemIsolationNote(plan.sharedFileSystem),
        }
      : null,
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
    trainer: {
      id: plan.trainer.profile.id,
      script: plan.trainer.profile.script,
      how: plan.trainer.how,
      reason: plan.trainer.reason,
      resume: plan.trainer.profile.resume,
      runtime: plan.runtimeNotes,
    },
    model: {
      uri: s3Uri(plan.inputs.model.location),
      mappings: plan.inputs.model.mappings,
    },
    otherModels: plan.inputs.otherModels.map((m) => ({
      channel: m.channel,
      uri: s3Uri(m.location),
      mappings: m.mappings,
    })),
    datasets: plan.inputs.datasets.map((d) => ({
      folder: d.folder,
      kind: d.kind,
      channel: d.channel,
      uri: s3Uri(d.location),
      note: d.note,
    })),
    orderFiles: plan.inputs.orderFiles.map((o) => ({
      channel: o.channel,
      uri: s3Uri(o.location),
      note: o.note,
    })),
    source: plan.source,
    warnings: plan.warnings.map((w) => ({ ...w, text: formatProblem(w) })),
    forecast: { ...plan.forecast.forecast, resultsDir: plan.forecast.resultsDir },
    allowed: [...plan.config.allowed, ...plan.forecast.allowed, ...plan.platformEnv.allowed],
    platformEnv: {
      hold: plan.options.holdPlatformEnv.value,
      held: plan.platformEnv.held.map((h) => describeWrite(h.write)),
      writesAtImport: plan.platformEnv.writes.map((w) => ({
        at: describeWrite(w.write),
        verdict: w.verdict,
        why: w.why,
      })),
    },
  };
}

function row(label: string, value: string, source?: string): string {
  const left = `  ${label.padEnd(16)}${value}`;
  return source ? `${left.padEnd(64)}  ← ${source}\n` : `${left}\n`;
}

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

function isPlaceholder(plan: SubmitPlan, name: string): boolean {
  return plan.placeholders.includes(name as never);
}

function headerSection(plan: SubmitPlan): string {
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
}

function settingsSection(plan: SubmitPlan): string {
  let out = '\nSettings\n';
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
}

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

function costText(plan: SubmitPlan): string {
  const e = plan.estimate;
  if (!e) return 'no price known for this instance type';
  const each = e.instances > 1 ? ` (${e.instances} × ${formatUsd(e.perInstanceHour)}/h)` : '';
  return `${formatUsd(e.perHour)}/h${each}, at most ${formatUsd(e.maxRuntimeCost)} for the max runtime${e.note ? ` (${e.note})` : ''}`;
}

function runSection(plan: SubmitPlan): string {
  const o = plan.options;
  const src = describeSource;
  let out = '\nHow the job runs\n';
  out += instanceRows(plan);
  out += row('train GPUs', o.trainGpus.value.join(',') || 'none', src(o.trainGpus.source));
  out += row('eval GPUs', o.evalGpus.value.join(',') || 'none', src(o.evalGpus.source));
  out += row('max runtime', formatDuration(o.maxRuntimeSeconds.value), src(o.maxRuntimeSeconds.source));
  out += row('spot', o.spot.value ? 'yes' : 'no', src(o.spot.source));
  out += waitAndRetryRows(plan);
  const keepAlive = o.keepAliveSeconds.value > 0 ? formatDuration(o.keepAliveSeconds.value) : 'off';
  out += row('warm pool', keepAlive, src(o.keepAliveSeconds.source));
  if (o.instanceCount.value > 1) {
    out += clusterRows(plan);
    const join = o.clusterJoinTimeoutSeconds;
    out += row('join timeout', `${formatDuration(join.value)} for every host to join Ray`, src(join.source));
  }
  if (plan.evalConfig)
    out += row('eval wait', formatDuration(o.evalWaitSeconds.value), src(o.evalWaitSeconds.source));
  out += row('volume', `${o.volumeGb.value} GB`, src(o.volumeGb.source));
  out += networkRows(plan);
  out += row('command', o.trainerCommand.value, src(o.trainerCommand.source));
  const ray = o.instanceCount.value > 1 ? "one cluster of every host's train GPUs" : 'head on the train GPUs';
  out += row('ray', o.useRay.value ? ray : 'off', src(o.useRay.source));
  out += platformEnvRows(plan);
  const shared = sharedFileSystemLine(plan);
  if (shared) out += `  ${shared}\n`;
  out += row(
    'image',
    isPlaceholder(plan, 'image') ? '<UNRESOLVED image>' : plan.image.uri,
    plan.image.source,
  );
  const has = imageHas(plan.image.labels);
  if (has) out += row('', has);
  const driver = cudaDriverPlanLine(plan.image.labels);
  if (driver) out += row('', driver);
  return out + row('cost', costText(plan), `${PRICES_SOURCE}, ${PRICES_AS_OF}`);
}

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

/**
 * What the job holds of the platform's variables: the interface SageMaker names on every job (and the
 * EFA transport where the host has it), in every Python process when hold_platform_env is on, against
 * each write of the trainer's modules at import the plan found.
 */
function platformEnvRows(plan: SubmitPlan): string {
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
  for (const h of plan.platformEnv.held) out += row('', `kept against ${describeWrite(h.write)} (at import)`);
  return out;
}

/**
 * The isolation row: a job mounting the shared file system runs as shared_fs_network_isolation says
 * (AWS documents a file-system channel with isolation neither way, so the plan always says which).
 */
function networkRows(plan: SubmitPlan): string {
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
}

/** `shared file system: fs-… mounted rw at /opt/ml/input/data/shared on every host (2 hosts); … ← cite`. */
export function sharedFileSystemLine(plan: SubmitPlan): string | undefined {
  const s = plan.sharedFileSystem;
  if (!s) return undefined;
  const id = isPlaceholder(plan, 'fileSystemId') ? '<UNRESOLVED fileSystemId>' : s.fileSystemId;
  const cite = plan.trainer.profile.runtime.sharedFolder?.cite ?? s.why;
  // A local run's folder is named after the run (its results folder), not the job name planned.
  const folder = s.fileSystemId === LOCAL_VOLUME ? '<the local run>' : plan.jobName;
  return `shared file system: ${id} mounted rw at ${sharedFileSystemPath(s)} on every host (${plan.cluster.hosts} hosts); $${s.env} and the trainer's run root in ${SHARED_FILE_SYSTEM.jobsFolder}/${folder}/ ← ${cite}`;
}

/** What our build recorded the image has: `torch 2.9.0 · vLLM 0.11.2 · Ray 2.51.2 · Python 3.11 · CUDA 12.8 · EFA …`. */
function imageHas(labels: Readonly<Record<string, string>> | undefined): string | undefined {
  if (!labels) return undefined;
  const parts = [
    ['rlvr.torch', 'torch'],
    ['rlvr.vllm', 'vLLM'],
    ['rlvr.ray', 'Ray'],
    ['rlvr.python', 'Python'],
    ['rlvr.cuda', 'CUDA'],
    ['rlvr.efa', 'EFA'],
  ]
    .filter(([k]) => labels[k] !== undefined)
    .map(([k, name]) => `${name} ${labels[k]}`);
  return parts.length ? parts.join(' · ') : undefined;
}

function inputsSection(plan: SubmitPlan): string {
  const mode = plan.options.modelInputMode.value;
  let out = '\nInputs (jobs cannot reach the Hugging Face Hub: everything comes from S3)\n';
  const model = plan.inputs.model;
  for (const m of model.mappings) out += row('model', `${m.value} → ${s3Uri(model.location)}`, m.note);
  out += row('', `channel model (${mode}) at ${model.containerPath}`);
  for (const other of plan.inputs.otherModels) {
    for (const m of other.mappings) out += row('model', `${m.value} → ${s3Uri(other.location)}`, m.note);
    out += row('', `channel ${other.channel} (${mode}) at ${other.containerPath}`);
  }
  for (const d of plan.inputs.datasets)
    out += row(d.kind === 'file' ? 'data file' : 'dataset', s3Uri(d.location), d.note);
  for (const d of plan.inputs.notCarried) out += row('dataset', d.name, `no channel: ${d.why}`);
  for (const f of plan.inputs.orderFiles)
    out += row(
      'order file',
      s3Uri(f.location),
      f.note ? `channel ${f.channel}; ${f.note}` : `channel ${f.channel}`,
    );
  for (const f of plan.inputs.localFiles)
    out += row(
      'local file',
      `${f.value} (${formatKeyPath(f.referencedAt)})`,
      "travels with the trainer's source",
    );
  return out;
}

function sourceSection(plan: SubmitPlan): string {
  const { layout, source } = plan;
  let out = '\nSource and outputs\n';
  const kind = source.isGit ? 'git' : 'folder';
  out += row('source', `${source.root} (${kind}, ${source.fileCount} files, ${formatBytes(source.bytes)})`);
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
  out += row('job log', plan.jobLogPath);
  out += '\nUploads at submit\n';
  for (const u of plan.uploads)
    out += row('', layout.uri(u.key), `${u.what}${u.onlyIfAbsent ? ', if absent' : ''}`);
  return out;
}

function checksSection(plan: SubmitPlan): string {
  let out = '\nPre-flight\n';
  if (!plan.preflight.ran) out += `  not run: ${plan.preflight.reason}\n`;
  for (const c of plan.preflight.checks)
    out += row(c.ok ? 'ok' : 'FAILED', `${c.what}: ${c.target}`, c.detail);
  if (plan.warnings.length > 0) {
    out += '\nWarnings\n';
    for (const w of plan.warnings) out += `  ${formatProblem(w)}\n`;
  }
  const allowed = [...plan.config.allowed, ...plan.forecast.allowed, ...plan.platformEnv.allowed];
  if (allowed.length > 0) {
    out += '\nAllowed by launcher.allow (not checked for this config)\n';
    for (const a of allowed) out += `  ${a.rule} ${a.name}: ${a.message}\n    reason: ${a.reason}\n`;
  }
  return out;
}

export function renderPlan(plan: SubmitPlan): string {
  return (
    `Plan for ${plan.jobName} (dry run: nothing was created)\n\n` +
    headerSection(plan) +
    settingsSection(plan) +
    runSection(plan) +
    forecastSection(plan.forecast, row) +
    inputsSection(plan) +
    sourceSection(plan) +
    checksSection(plan) +
    `\nRun without --dry-run to submit; --json prints the exact CreateTrainingJob request.\n`
  );
}
