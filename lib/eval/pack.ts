/**
 * Batch evaluation, the packing: every (checkpoint, task) pair is one unit on one GPU
 * (tensor parallel 1), and the units are spread over every GPU of every host so the job's wall time is
 * near the longest GPU's load. Pure.
 */

/** One evaluation: a checkpoint on a task, on one GPU. */
export interface EvalUnit {
  readonly checkpoint: string;
  readonly task: string;
  readonly numFewshot: number;
  /** Expected seconds (learned from earlier results, else the built-in table). */
  readonly estimateS: number;
}

/** The units one GPU runs, in turn. */
export interface GpuLoad {
  readonly host: number;
  readonly gpu: number;
  readonly units: readonly EvalUnit[];
  readonly loadS: number;
}

export interface Packing {
  /** Every GPU of every host, busy or not, by host then GPU. */
  readonly gpus: readonly GpuLoad[];
  /** The expected wall time: the busiest GPU's load. */
  readonly wallS: number;
  /** No packing can finish sooner: the longest unit, or the total spread evenly. */
  readonly lowerBoundS: number;
  /** GPUs given no unit (paid and idle). */
  readonly idle: number;
}

/**
 * Longest first, each unit to the GPU with the least load so far (ties: the lower host, then GPU):
 * Graham's LPT rule, whose wall time is at most 4/3 of the best possible.
 */
export function packUnits(units: readonly EvalUnit[], hosts: number, gpusPerHost: number): Packing {
  if (!Number.isInteger(hosts) || hosts < 1 || !Number.isInteger(gpusPerHost) || gpusPerHost < 1)
    throw new RangeError(`packUnits: ${hosts} hosts × ${gpusPerHost} GPUs`);
  const gpus = Array.from({ length: hosts * gpusPerHost }, (_, i) => ({
    host: Math.floor(i / gpusPerHost),
    gpu: i % gpusPerHost,
    units: [] as EvalUnit[],
    loadS: 0,
  }));
  const order = [...units].sort(
    (a, b) =>
      b.estimateS - a.estimateS || a.checkpoint.localeCompare(b.checkpoint) || a.task.localeCompare(b.task),
  );
  for (const unit of order) {
    let least = gpus[0];
    for (const g of gpus) if (g.loadS < least.loadS) least = g;
    least.units.push(unit);
    least.loadS += unit.estimateS;
  }
  const total = units.reduce((s, u) => s + u.estimateS, 0);
  return {
    gpus,
    wallS: Math.max(0, ...gpus.map((g) => g.loadS)),
    lowerBoundS: Math.max(0, total / gpus.length, ...units.map((u) => u.estimateS)),
    idle: gpus.filter((g) => g.units.length === 0).length,
  };
}

/**
 * Seconds one unit takes on one GPU with TP 1 for a model of the team's size (1.7B), before any
 * results of theirs are known: rough figures, only their ratios steer the packing.
 */
const BUILT_IN_SECONDS: Readonly<Record<string, number>> = {
  gsm8k: 420,
  gsm8k_cot: 600,
  minerva_math: 1500,
  hendrycks_math: 2400,
  math_500: 600,
  ifeval: 300,
  mbpp: 400,
  humaneval: 200,
  arc_challenge: 120,
  hellaswag: 400,
  mmlu: 900,
};
const UNKNOWN_TASK_SECONDS = 600;

/**
 * A unit's expected seconds: the median of the durations learned for its task (earlier results), else
 * the built-in table (the task's name, or its family before `_`), else a middling guess.
 */
export function estimateSeconds(
  task: string,
  learned: Readonly<Record<string, readonly number[]>> = {},
): number {
  const seen = (learned[task] ?? []).filter((s) => Number.isFinite(s) && s > 0).sort((a, b) => a - b);
  if (seen.length > 0) {
    const mid = Math.floor(seen.length / 2);
    return seen.length % 2 ? seen[mid] : (seen[mid - 1] + seen[mid]) / 2;
  }
  return BUILT_IN_SECONDS[task] ?? BUILT_IN_SECONDS[task.split('_')[0]] ?? UNKNOWN_TASK_SECONDS;
}
