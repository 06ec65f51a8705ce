import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  clockOfTail,
  liveProgress,
  recordOf,
  runtimeVerdict,
  shapeOf,
  type RunShape,
} from '../../lib/forecast';
import { forecastJob } from '../../lib/forecast/forecast';
import { mergeRuns, runMeasure, type PastRun } from '../../lib/forecast/past-runs';
import { traceTiming } from '../../lib/forecast/step-clock';
import { tempDir } from '../helpers/fixtures';
import { traceLines, writeTrace } from '../helpers/traces';

const SHAPE: RunShape = shapeOf({
  trainer: 'grpo-sft',
  model: 's3://b/p/models/Qwen3-1.7B-Base/',
  instanceType: 'ml.p4de.24xlarge',
  instanceCount: 1,
  trainGpus: [0, 1, 2, 3, 4, 5],
  evalGpus: '6,7',
  config: { training: { prompts_per_optim_step: 64 }, sampling: { n: 8, max_tokens: 1024 } },
});

function run(id: string, rate: number, n = 50, shape: RunShape = SHAPE, firstStepTs = 200): PastRun {
  return { id, source: 'results', shape, intervals: Array.from({ length: n }, () => rate), firstStepTs };
}

const base = { perHour: 36, evalWaitSeconds: 0, seen: 4, unknownShape: 0 };

describe('a run shape', () => {
  it('is the model folder, instance, GPU counts and the batch keys', () => {
    expect(SHAPE).toEqual({
      trainer: 'grpo-sft',
      model: 'Qwen3-1.7B-Base',
      instanceType: 'ml.p4de.24xlarge',
      instanceCount: '1',
      trainGpus: '6',
      evalGpus: '2',
      batch: '64×8×1024',
    });
  });
});

describe('step times from a trace', () => {
  const dir = tempDir('rlvr-clock-');

  it('reads a small trace whole: every step, the first step’s end, the last own step', () => {
    const file = path.join(dir, 'small.jsonl');
    writeTrace(file, { steps: 40, stepSeconds: 20, startTs: 100 });
    const t = traceTiming(file);
    expect(t.steps).toBe(40);
    expect(t.intervals).toHaveLength(39);
    for (const i of t.intervals) expect(i).toBeCloseTo(20, 5);
    // their trainers emit `metrics` after the step's generation and optimizer step: 0.9 of it in
    expect(t.firstStepTs).toBeCloseTo(100 + 20 * 0.9, 5);
    expect(t.lastStep).toBe(40);
  });

  it('reads a big trace at its two ends only: the same rate and first step, the steps not counted', () => {
    const file = path.join(dir, 'big.jsonl');
    const size = writeTrace(file, { steps: 400, stepSeconds: 25, startTs: 50, batch: 2 });
    const window = 512 * 1024;
    expect(size).toBeGreaterThan(4 * window);
    const t = traceTiming(file, window);
    expect(t.steps).toBeUndefined();
    expect(t.intervals.length).toBeGreaterThan(1);
    expect(t.intervals.length).toBeLessThan(399);
    for (const i of t.intervals) expect(i).toBeCloseTo(25, 5);
    expect(t.firstStepTs).toBeCloseTo(50 + 25 * 0.9, 5);
    expect(t.lastStep).toBe(400);
  });

  it('a restarted trainer appending to the trace starts its clock again: that gap is not a step', () => {
    const file = path.join(dir, 'restart.jsonl');
    writeTrace(file, { steps: 10, stepSeconds: 30 });
    writeTrace(file, { steps: 10, stepSeconds: 30, firstStep: 11, startTs: 5 - 10 * 30 }, true);
    const t = traceTiming(file);
    expect(t.intervals.every((i) => Math.abs(i - 30) < 1e-6)).toBe(true);
    expect(t.intervals).toHaveLength(18);
  });

  it('a tail read mid-line skips the cut line and the line still being written', () => {
    const text = [...traceLines({ steps: 5, stepSeconds: 10 })].join('');
    const buf = Buffer.from(text);
    const cut = buf.subarray(37, buf.length - 20); // mid-line at both ends
    const c = clockOfTail(cut, true);
    expect(c.marker).toBe('metrics');
    expect(c.markers.length).toBeGreaterThanOrEqual(4);
  });
});

describe('forecastJob', () => {
  it('takes the median of the similar runs’ rates; the different run does not count', () => {
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 300,
      maxRuntimeSeconds: 6 * 3600,
      runs: [run('a', 30), run('b', 33), run('c', 40), run('d', 90, 50, { ...SHAPE, instanceCount: '2' })],
    });
    expect(f.similar.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(f.secondsPerStep!.median).toBe(33);
    expect(f.outsideSeconds).toBe(200 - 33);
    expect(f.outsideMeasured).toBe(false);
    expect(f.wallSeconds).toBe(167 + 300 * 33);
    expect(f.cost).toBeCloseTo((36 * (167 + 9900)) / 3600, 6);
    expect(f.verdict).toBe('covers');
  });

  it('short: the step it would be cut at, and a runtime with the margin and the eval wait', () => {
    const f = forecastJob({
      ...base,
      evalWaitSeconds: 1800,
      shape: SHAPE,
      maxSteps: 300,
      maxRuntimeSeconds: 3600,
      runs: [run('a', 30, 50, SHAPE, 30)],
    });
    expect(f.verdict).toBe('short');
    expect(f.cutAtStep).toBe(120);
    expect(f.fitsSeconds).toBe(Math.ceil((9000 * 1.15 + 1800) / 900) * 900);
  });

  it('thin and generous margins', () => {
    const at = (maxRuntimeSeconds: number) =>
      forecastJob({
        ...base,
        shape: SHAPE,
        maxSteps: 100,
        maxRuntimeSeconds,
        runs: [run('a', 100, 50, SHAPE, 100)],
      }).verdict;
    expect(at(10_500)).toBe('thin');
    expect(at(12_000)).toBe('covers');
    expect(at(5 * 86_400)).toBe('generous');
  });

  it('with no similar run: no number, the nearest named', () => {
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 300,
      maxRuntimeSeconds: 3600,
      runs: [],
      others: [{ id: 'x', shape: { ...SHAPE, model: 'Qwen3-8B' } }],
    });
    expect(f.verdict).toBe('unknown');
    expect(f.secondsPerStep).toBeUndefined();
    expect(f.wallSeconds).toBeUndefined();
    expect(f.nearest).toEqual([{ id: 'x', differs: ['model'] }]);
  });
});

describe('forecastJob: what the wall time counts', () => {
  it('the steps that save a checkpoint count: a run’s average step, not its median', () => {
    // 30 s steps, and every 10th 300 s longer (a checkpoint export): 200 steps take 12,000 s.
    const intervals = Array.from({ length: 200 }, (_, i) => (i % 10 === 9 ? 330 : 30));
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 200,
      maxRuntimeSeconds: 3 * 3600,
      runs: [{ id: 'a', source: 'results', shape: SHAPE, intervals, firstStepTs: 60 }],
    });
    expect(f.secondsPerStep!.median).toBe(60);
    expect(f.wallSeconds).toBe(200 * 60);
    expect(f.verdict).toBe('short');
    expect(f.cutAtStep).toBe(180);
  });

  it('a resumed job counts only the steps from its resume step', () => {
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 200,
      fromStep: 180,
      maxRuntimeSeconds: 24 * 3600,
      runs: [run('a', 600, 50, SHAPE, 600)],
    });
    expect(f.wallSeconds).toBe(20 * 600);
    expect(f.fromStep).toBe(180);
    const cut = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 200,
      fromStep: 180,
      maxRuntimeSeconds: 3000,
      runs: [run('a', 600, 50, SHAPE, 600)],
    });
    expect(cut.cutAtStep).toBe(185);
  });

  it('the eval wait after the last step: a runtime that covers training but not the evaluations is thin', () => {
    const f = forecastJob({
      ...base,
      evalWaitSeconds: 1800,
      shape: SHAPE,
      maxSteps: 100,
      maxRuntimeSeconds: 2 * 3600 + 20 * 60,
      runs: [run('a', 72, 50, SHAPE, 72)],
    });
    expect(f.wallSeconds).toBe(7200);
    expect(f.verdict).toBe('thin');
    expect(f.fitsSeconds).toBe(Math.ceil((7200 * 1.15 + 1800) / 900) * 900);
  });

  it('the container’s setup before the trainer, when the run recorded it, is part of the startup', () => {
    const withSetup = { ...run('a', 30, 50, SHAPE, 130), setupSeconds: 45 };
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 10,
      maxRuntimeSeconds: 86_400,
      runs: [withSetup],
    });
    expect(f.outsideSeconds).toBe(45 + 100);
  });
});

describe('forecastJob: runs that say too little alone', () => {
  /** A run stopped at step 8 of 200 before its first checkpoint (30 s steps, no export seen). */
  const early: PastRun = {
    ...run('early', 30, 7, SHAPE, 330),
    steps: 8,
    plannedSteps: 200,
    checkpoints: 0,
    ended: 'Stopped',
  };
  const whole = (id: string): PastRun => ({
    ...run(id, 60, 199, SHAPE, 330),
    steps: 200,
    plannedSteps: 200,
    checkpoints: 20,
    ended: 'Completed',
    outsideSeconds: 630,
  });

  it('alone, it gives a rough floor: every number flagged, no runtime called sufficient', () => {
    const f = forecastJob({ ...base, shape: SHAPE, maxSteps: 200, maxRuntimeSeconds: 9000, runs: [early] });
    expect(f.basis).toBe('rough');
    expect(f.verdict).toBe('unproven');
    expect(f.similar[0]).toMatchObject({
      id: 'early',
      used: true,
      steps: 8,
      checkpoints: 0,
      ended: 'Stopped',
    });
    expect(f.similar[0].notAlone).toMatch(/no checkpoint.*; 8 of its 200 steps/);
    expect(f.caveats!.join('\n')).toMatch(/^rough: no similar run is enough alone \(early: no checkpoint/);
    const v = runtimeVerdict(f)!;
    expect(v.severity).toBe('warning');
    expect(v.message).toMatch(
      /cannot say whether max runtime 2h30m covers the job: 200 steps at 30\.0 s\/step \(1 similar run\) take at least/,
    );
    // far too short even on the floor: said, as a warning (the floor is rough)
    const short = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 200,
      maxRuntimeSeconds: 1800,
      runs: [early],
    });
    expect(short.verdict).toBe('short');
    expect(runtimeVerdict(short)).toMatchObject({ severity: 'warning' });
    expect(runtimeVerdict(short)!.message).toMatch(
      /would stop training at about step \d+ of 200 even on a rough forecast/,
    );
    // and the record a job keeps says so
    expect(recordOf(f)).toMatchObject({ rough: true, similarRuns: 1 });
  });

  it('beside runs enough alone it is listed, not used', () => {
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 200,
      maxRuntimeSeconds: 5 * 3600,
      runs: [early, whole('a'), whole('b')],
    });
    expect(f.basis).toBe('measured');
    expect(f.similar.map((s) => [s.id, s.used])).toEqual([
      ['early', false],
      ['a', true],
      ['b', true],
    ]);
    expect(f.secondsPerStep!.median).toBe(60);
    expect(f.outsideMeasured).toBe(true);
    expect(f.outsideSeconds).toBe(630 - 60);
    expect(f.wallSeconds).toBe(570 + 200 * 60);
    expect(f.caveats).toEqual([]);
    expect(f.verdict).toBe('covers');
  });

  it('a tenth of its steps is enough; under is not; a run whose checkpoints are not known is not held to it', () => {
    const at = (steps: number, checkpoints?: number) =>
      forecastJob({
        ...base,
        shape: SHAPE,
        maxSteps: 200,
        maxRuntimeSeconds: 86_400,
        runs: [
          {
            ...run('r', 30, steps - 1),
            steps,
            plannedSteps: 200,
            ...(checkpoints !== undefined ? { checkpoints } : {}),
          },
        ],
      }).basis;
    expect(at(20, 2)).toBe('measured');
    expect(at(19, 1)).toBe('rough');
    expect(at(100)).toBe('measured');
    expect(at(100, 0)).toBe('rough');
  });

  it('a run without its given steps recorded is judged against the job’s', () => {
    const f = forecastJob({
      ...base,
      shape: SHAPE,
      maxSteps: 500,
      maxRuntimeSeconds: 86_400,
      runs: [{ ...run('r', 30, 39), steps: 40, checkpoints: 4 }],
    });
    expect(f.similar[0].notAlone).toBe('40 of its 500 steps');
  });
});

describe('runMeasure: what a run’s own records say', () => {
  const runInfo = (status: string, attempts: object[]) => ({ status, forecast: { maxSteps: 200 }, attempts });
  const attempt = {
    startedAt: '2026-11-01T00:00:00Z',
    trainerStartedAt: '2026-11-01T00:01:00Z',
    trainerEndedAt: '2026-11-01T03:25:00Z',
  };

  it('a completed run of one attempt: what is not steps, measured whole', () => {
    const m = runMeasure({
      runInfo: runInfo('Completed', [attempt]),
      checkpoints: 20,
      plannedSteps: 100,
      steps: 200,
      span: { first: 297, last: 11_967 },
    });
    // 3h25m = 12,300 s, less the 11,670 s from the first step's end to the last's
    expect(m).toEqual({
      setupSeconds: 60,
      steps: 200,
      plannedSteps: 200,
      checkpoints: 20,
      ended: 'Completed',
      outsideSeconds: 630,
    });
  });

  it('not measured whole: a stopped run, a restarted one, or steps in several traces', () => {
    const span = { first: 297, last: 11_967 };
    const base = { checkpoints: 20, plannedSteps: undefined, steps: 200 };
    expect(
      runMeasure({ ...base, runInfo: runInfo('Stopped', [attempt]), span }).outsideSeconds,
    ).toBeUndefined();
    expect(
      runMeasure({ ...base, runInfo: runInfo('Completed', [attempt, attempt]), span }).outsideSeconds,
    ).toBeUndefined();
    expect(
      runMeasure({ ...base, runInfo: runInfo('Completed', [attempt]), span: undefined }).outsideSeconds,
    ).toBeUndefined();
    // SageMaker's status when run.json has none
    expect(
      runMeasure({ ...base, runInfo: { attempts: [attempt] }, status: 'Completed', span }).outsideSeconds,
    ).toBe(630);
  });
});

describe('liveProgress', () => {
  it('step N of M, the recent rate, the ETA, cost at finish, and the flag past the max runtime', () => {
    const text = [...traceLines({ steps: 30, stepSeconds: 60 })].join('');
    const clock = clockOfTail(Buffer.from(text), false);
    const p = liveProgress({
      clock,
      checkpointStep: 20,
      maxSteps: 100,
      elapsedSeconds: 1900,
      maxRuntimeSeconds: 4 * 3600,
      perHour: 36,
      costSoFar: 19,
    });
    expect(p.step).toBe(30);
    expect(p.secondsPerStep).toBeCloseTo(60, 5);
    expect(p.etaSeconds).toBeCloseTo(70 * 60, 3);
    expect(p.costAtFinish).toBeCloseTo(19 + 36 * (70 / 60), 3);
    expect(p.pastMaxRuntime).toBe(false);
    const late = liveProgress({
      ...p,
      clock,
      checkpointStep: 20,
      elapsedSeconds: 3 * 3600,
      maxRuntimeSeconds: 4 * 3600,
      perHour: 36,
      costSoFar: 108,
    });
    expect(late.pastMaxRuntime).toBe(true);
    expect(late.cutAtStep).toBe(30 + 60);
  });

  it('the rate counts the checkpoint steps of its window (their average)', () => {
    const clock = { marker: 'metrics', markers: [0, 10, 20, 130, 140], lastStep: 4 };
    const p = liveProgress({
      clock,
      checkpointStep: undefined,
      maxSteps: 8,
      elapsedSeconds: 0,
      maxRuntimeSeconds: undefined,
      perHour: undefined,
      costSoFar: undefined,
    });
    expect(p.secondsPerStep).toBe(35);
    expect(p.etaSeconds).toBe(140);
  });

  it('no explicit step in the trace: the newest checkpoint’s', () => {
    const lines = [...traceLines({ steps: 3, stepSeconds: 10 })].filter((l) => !l.includes('"step"'));
    fs.mkdirSync(path.join(tempDir(), 'x'), { recursive: true });
    const p = liveProgress({
      clock: clockOfTail(Buffer.from(lines.join('')), false),
      checkpointStep: 2,
      maxSteps: 10,
      elapsedSeconds: 0,
      maxRuntimeSeconds: undefined,
      perHour: undefined,
      costSoFar: undefined,
    });
    expect(p.step).toBe(2);
    expect(p.etaSeconds).toBeCloseTo(80, 5);
  });
});

describe('mergeRuns', () => {
  it('a job both downloaded and in SageMaker counts once, and is unknown only when neither tells its shape', () => {
    const local = {
      runs: [run('a', 30)],
      others: [],
      seen: 2,
      unknownShape: 1,
      seenIds: ['a', 'b'],
      unknownIds: ['b'],
    };
    const sm = {
      runs: [run('a', 31, 50, SHAPE)],
      others: [{ id: 'b', shape: { ...SHAPE, model: 'x' } }],
      seen: 3,
      unknownShape: 1,
      seenIds: ['a', 'b', 'c'],
      unknownIds: ['c'],
    };
    const m = mergeRuns(local, sm);
    expect(m.runs.map((r) => r.id)).toEqual(['a']);
    expect(m.seen).toBe(3);
    expect(m.unknownIds).toEqual(['c']);
  });
});
