/** What `rlvr passk` prints: the plan (text or JSON), the submitted job, a local run, the merged results. */
import type { LocalRunResult } from '../lib/local';
import type { PasskPlan } from '../lib/passk';
import {
  passAtKCsv,
  passkCsv,
  passkJson,
  passkMarkdown,
  type MergedPasskResults,
} from '../lib/passk-records';
import type { SubmittedJob } from '../lib/submission';
import { formatUsd, PRICES_AS_OF } from '../lib/job-options';
import { formatSeconds } from './commands/common';

const minutes = (s: number) => formatSeconds(Math.round(s));
const hostName = (i: number) => `algo-${i + 1}`;

function timeLine(plan: PasskPlan): string {
  if (plan.promptsPerShard === undefined) return `unknown: the dataset copy's size was not read`;
  if (!plan.rate || plan.wallS === undefined)
    return `unknown: no earlier campaign of this model, dataset, n and sampling${plan.request.local ? '' : ` on ${plan.request.instanceType}`} in ${plan.request.resultsDir}`;
  return `~${minutes(plan.wallS)} at ${plan.rate.promptsPerSecond.toFixed(3)} prompts/s per GPU (measured in ${plan.rate.from.join(', ')})`;
}

export function passkPlanJson(plan: PasskPlan): Record<string, unknown> {
  return {
    ok: true,
    dryRun: true,
    jobName: plan.jobName,
    image: plan.image,
    campaign: plan.jobPlan.campaign,
    campaignId: plan.jobPlan.campaignId,
    dataset: plan.datasetFrom,
    datasetPrompts: plan.jobPlan.datasetPrompts ?? null,
    promptsPerShard: plan.promptsPerShard ?? null,
    shards: plan.jobPlan.shards.map((s) => ({
      index: s.index,
      host: hostName(s.host),
      gpu: s.gpu,
      argv: s.argv,
    })),
    continues: plan.continued ?? null,
    promptsPerSecondPerGpu: plan.rate?.promptsPerSecond ?? null,
    wallSeconds: plan.wallS ?? null,
    maxRuntimeSeconds: plan.maxRuntimeSeconds,
    costUsd: plan.costUsd ?? null,
    source: { sha256: plan.source.packed.sha256, files: plan.source.packed.fileCount },
    warnings: plan.warnings,
    notes: plan.notes,
    placeholders: plan.placeholders,
    createTrainingJobRequest: plan.request.local ? null : plan.buildRequest(plan.jobName),
  };
}

export function renderPasskPlan(plan: PasskPlan): string {
  const { request, jobPlan } = plan;
  const { campaign } = jobPlan;
  const out: string[] = [];
  const row = (label: string, text: string) => out.push(`  ${label.padEnd(14)}${text}`);
  out.push(
    request.local
      ? `Pass@k plan (local run, ${request.local.gpus.length} GPU(s): ${request.local.gpus.join(',')})`
      : `Pass@k plan  ${plan.jobName}  (the first free name is claimed at submit)`,
  );
  row('image', `${plan.image}  (${plan.imageFrom})`);
  if (!request.local)
    row(
      'instances',
      `${plan.hosts} × ${request.instanceType} = ${jobPlan.shards.length} GPU(s)${request.spot ? ' (spot)' : ''}`,
    );
  row('model', `${campaign.model.label}  ${campaign.model.from}`);
  row(
    'script',
    `${plan.script.script} (trainer profile ${plan.profile.id}), source ${plan.source.packed.fileCount} files`,
  );
  row(
    'dataset',
    `${campaign.dataset} split ${campaign.split}${campaign.level ? ` level ${campaign.level}` : ''}  ${plan.datasetFrom}${jobPlan.datasetPrompts !== undefined ? `  (${jobPlan.datasetPrompts} prompts)` : ''}`,
  );
  row(
    'sampling',
    `n ${campaign.n} · ${Object.entries(campaign.sampling)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ')} (recorded with the results)`,
  );
  row(
    'shards',
    `${jobPlan.shards.length} (one per GPU), ${plan.promptsPerShard !== undefined ? `≤ ${plan.promptsPerShard} prompts each` : 'prompts per shard unknown'}; the script drops prompts longer than max_model_len − max_tokens`,
  );
  for (const s of jobPlan.shards)
    out.push(`    shard ${String(s.index).padStart(2)}  ${hostName(s.host)} gpu${s.gpu}`);
  if (plan.continued)
    row(
      'continues',
      `${plan.continued.from}${plan.continued.prompts ? `: ${plan.continued.prompts} prompt(s) done are kept` : plan.continued.shards ? `: ${plan.continued.shards} shard(s) with results are kept` : ''} (campaign ${jobPlan.campaignId})`,
    );
  row('time', timeLine(plan));
  row('max runtime', minutes(plan.maxRuntimeSeconds));
  if (!request.local)
    row(
      'cost',
      plan.costUsd === undefined
        ? 'unknown (no time to go by)'
        : `~${formatUsd(plan.costUsd)} (prices of ${PRICES_AS_OF})`,
    );
  for (const n of plan.notes) out.push(`  note: ${n}`);
  for (const w of plan.warnings) out.push(`  warning: ${w}`);
  if (plan.placeholders.length)
    out.push(`  not resolved (dry-run without AWS): ${plan.placeholders.join(', ')}`);
  return `${out.join('\n')}\n`;
}

export function renderPasskSubmitted(result: SubmittedJob, plan: PasskPlan, asJson: boolean): string {
  if (asJson)
    return `${JSON.stringify({ ok: true, ...result, shards: plan.jobPlan.shards.length, campaignId: plan.jobPlan.campaignId, createTrainingJobRequest: plan.buildRequest(result.jobName) }, null, 2)}\n`;
  return (
    `Submitted ${result.jobName}: ${plan.jobPlan.shards.length} shard(s) of ${plan.jobPlan.campaign.dataset}/${plan.jobPlan.campaign.split}, n=${plan.jobPlan.campaign.n}\n` +
    `  results stream to ${result.checkpointsUri}passk/\n` +
    `  console: ${result.consoleUrl}\n` +
    `  merged: rlvr passk results ${result.jobName}\n`
  );
}

export function renderPasskLocal(result: LocalRunResult, asJson: boolean): string {
  const summary = { ok: result.exitCode === 0, ...result };
  return asJson
    ? `${JSON.stringify(summary, null, 2)}\n`
    : `• exit ${result.exitCode}; run folder ${result.runDir}\n  merged: rlvr passk results ${result.runDir}${result.interrupted ? `\n  continue it: the same command with --continue ${result.runDir}` : ''}\n`;
}

export type PasskResultsFormat = 'md' | 'csv' | 'pass-at-k-csv' | 'json';

export function renderPasskResults(
  results: readonly MergedPasskResults[],
  format: PasskResultsFormat,
  prompts: boolean,
): string {
  return format === 'csv'
    ? passkCsv(results)
    : format === 'pass-at-k-csv'
      ? passAtKCsv(results)
      : format === 'json'
        ? passkJson(results)
        : passkMarkdown(results, { prompts });
}

/** A source's missing shards and skipped lines, each a warning line (on stderr). */
export function passkResultsWarnings(results: readonly MergedPasskResults[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    if (r.missingShards.length)
      out.push(`warning: ${r.source}: shard(s) ${r.missingShards.join(', ')} have no results\n`);
    if (r.badLines.length)
      out.push(`warning: ${r.source}: ${r.badLines.length} line(s) that are not a result were skipped\n`);
  }
  return out;
}
