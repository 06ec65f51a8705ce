/** What `rlvr eval` prints: the plan (text or JSON), the submitted job, a local run, the results table. */
import type { EvalPlan, EvalSubmitResult, ResultsOfJobs } from '../lib/eval';
import { tableCsv, tableJson, tableMarkdown, type ResultsTable } from '../lib/eval-records';
import type { LocalRunResult } from '../lib/local';
import { EVAL_TENSOR_PARALLEL_SIZE, maxGenToksFor } from '../lib/config';
import { formatUsd, PRICES_AS_OF } from '../lib/job-options';
import { formatSeconds } from './commands/common';

const minutes = (s: number) => formatSeconds(Math.round(s));

function hostName(i: number): string {
  return `algo-${i + 1}`;
}

export function evalPlanJson(plan: EvalPlan): Record<string, unknown> {
  return {
    ok: true,
    dryRun: true,
    jobName: plan.jobName,
    image: plan.image,
    checkpoints: plan.checkpoints.map((c) => ({
      label: c.label,
      id: c.id,
      from: plan.jobPlan.checkpoints.find((p) => p.label === c.label)!.from,
      notes: c.notes,
      ...(c.unresolved ? { unresolved: c.unresolved } : {}),
    })),
    benchmarks: plan.request.benchmarks.map((b) => ({ task: b.task, num_fewshot: b.numFewshot })),
    deviations: plan.request.deviations,
    assignments: plan.jobPlan.units.map((u) => ({
      host: hostName(u.host),
      gpu: u.gpu,
      checkpoint: u.checkpoint,
      task: u.task,
      num_fewshot: u.numFewshot,
      argv: u.argv,
      env: u.env,
      estimateSeconds: u.estimateS,
    })),
    skipped: plan.skipped.map((s) => ({ id: s.id, doneIn: s.where, folder: s.folder })),
    idleGpus: plan.packing.idle,
    wallSeconds: plan.packing.wallS,
    lowerBoundSeconds: plan.packing.lowerBoundS,
    maxRuntimeSeconds: plan.maxRuntimeSeconds,
    costUsd: plan.costUsd ?? null,
    warnings: plan.warnings,
    notes: plan.notes,
    placeholders: plan.placeholders,
    createTrainingJobRequest: plan.request.local ? null : plan.buildRequest(plan.jobName),
  };
}

export function renderEvalPlan(plan: EvalPlan): string {
  const { request, packing } = plan;
  const out: string[] = [];
  const row = (label: string, text: string) => out.push(`  ${label.padEnd(14)}${text}`);
  out.push(
    request.local
      ? `Eval plan (local run, ${request.local.gpus.length} GPU(s): ${request.local.gpus.join(',')})`
      : `Eval plan  ${plan.jobName}  (the first free name is claimed at submit)`,
  );
  row('image', `${plan.image}  (${plan.imageFrom})`);
  if (!request.local) {
    const gpus = plan.hosts * plan.gpusPerHost;
    row(
      'instances',
      `${plan.hosts} × ${request.instanceType} = ${gpus} GPU(s)${request.spot ? ' (spot)' : ''}`,
    );
  }
  const width = Math.max(...plan.checkpoints.map((c) => c.label.length));
  plan.checkpoints.forEach((c, i) => {
    const from = plan.jobPlan.checkpoints.find((p) => p.label === c.label)!.from;
    row(
      i === 0 ? 'checkpoints' : '',
      `${c.label.padEnd(width)}  ${from}${c.unresolved ? `  (${c.unresolved})` : ''}`,
    );
  });
  row(
    'benchmarks',
    `${request.benchmarks.map((b) => `${b.task}:${b.numFewshot}`).join(' ')}  (${request.benchmarksFrom})`,
  );
  const s = request.settings;
  row(
    'standard',
    `tensor parallel ${EVAL_TENSOR_PARALLEL_SIZE} · seed ${s.seed} · temperature ${s.temperature} · max_model_len ${s.maxModelLen} · gpu_memory_utilization ${s.gpuMemoryUtilization} · ${s.dtype} · harness ${request.harness}`,
  );
  row('max_gen_toks', request.benchmarks.map((b) => `${b.task} ${maxGenToksFor(b.task, s)}`).join(', '));
  row(
    'deviations',
    request.deviations.length ? `${request.deviations.join(', ')} (recorded with the results)` : 'none',
  );
  const skippedIn = [...new Set(plan.skipped.map((x) => x.where))];
  row(
    'units',
    `${plan.jobPlan.units.length} to run` +
      (plan.skipped.length
        ? `, ${plan.skipped.length} skipped: done in ${skippedIn.join(', ')} (--force runs them again)`
        : ''),
  );
  out.push('  assignment');
  for (const g of packing.gpus) {
    const units = g.units.map((u) => `${u.checkpoint}/${u.task}`).join(', ');
    out.push(
      `    ${hostName(g.host)} gpu${String(g.gpu).padEnd(2)} ${minutes(g.loadS).padStart(7)}  ${units || '(idle)'}`,
    );
  }
  row(
    'wall time',
    `~${minutes(packing.wallS)} (no packing beats ${minutes(packing.lowerBoundS)}) · max runtime ${minutes(plan.maxRuntimeSeconds)}`,
  );
  if (!request.local)
    row(
      'cost',
      `~${formatUsd(plan.costUsd)} (${plan.hosts} × ${request.instanceType} for the wall time; prices of ${PRICES_AS_OF})`,
    );
  for (const n of plan.notes) out.push(`  note: ${n}`);
  for (const w of plan.warnings) out.push(`  warning: ${w}`);
  if (plan.placeholders.length)
    out.push(`  not resolved (dry-run without AWS): ${plan.placeholders.join(', ')}`);
  return `${out.join('\n')}\n`;
}

export function renderEvalSubmitted(result: EvalSubmitResult, plan: EvalPlan, asJson: boolean): string {
  if (asJson)
    return `${JSON.stringify({ ok: true, ...result, units: plan.jobPlan.units.length, skipped: plan.skipped.length, createTrainingJobRequest: plan.buildRequest(result.jobName) }, null, 2)}\n`;
  return (
    `Submitted ${result.jobName}: ${plan.jobPlan.units.length} unit(s) over ${plan.hosts * plan.gpusPerHost} GPU(s), ~${minutes(plan.packing.wallS)}\n` +
    `  results stream to ${result.checkpointsUri}evals/\n` +
    `  console: ${result.consoleUrl}\n` +
    `  the table: rlvr eval results ${result.jobName}\n`
  );
}

/** Every unit has results already (`skipped`: how many, when the plan counted them). */
export function nothingToRun(skipped?: number): string {
  const counted = skipped === undefined ? '' : `${skipped} skipped; `;
  return `Nothing to run: every unit was done earlier (${counted}--force runs them again).\n`;
}

export function renderEvalLocal(result: LocalRunResult, table: ResultsTable, asJson: boolean): string {
  if (asJson) {
    const results = JSON.parse(tableJson(table));
    return `${JSON.stringify({ ok: result.exitCode === 0, ...result, results }, null, 2)}\n`;
  }
  return `\n${tableMarkdown(table)}\n• exit ${result.exitCode}; run folder ${result.runDir}\n`;
}

export function renderResultsTable(table: ResultsTable, format: 'md' | 'csv' | 'json'): string {
  return format === 'csv' ? tableCsv(table) : format === 'json' ? tableJson(table) : tableMarkdown(table);
}

/** Where `eval results` read its files (on stderr). */
export function readStatsLine(stats: NonNullable<ResultsOfJobs['stats']>): string {
  return `• read ${stats.files} result file(s), ${stats.fetched} from S3, ${stats.files - stats.fetched} from the local cache\n`;
}
