import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLocalResults } from '../../lib/eval-records/results';
import { buildTable, judgedMetrics, tableCsv, tableJson, tableMarkdown } from '../../lib/eval-records/table';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'eval-results');
const TRAINING = 'annotations-adhoc-20260125-192905';
const read = (...p: string[]) => JSON.parse(fs.readFileSync(path.join(FIXTURES, ...p), 'utf8'));

/** The harness results file of a unit folder of the eval-run fixture. */
function harnessJson(label: string, unit: string): unknown {
  const dir = path.join(FIXTURES, 'eval-run', 'evals', label, unit, 'harness');
  const model = fs.readdirSync(dir)[0];
  const file = fs.readdirSync(path.join(dir, model)).find((f) => f.startsWith('results_'))!;
  return read('eval-run', 'evals', label, unit, 'harness', model, file);
}

describe('the results table', () => {
  it('judges each task by its metrics, with the standard error where lm_eval gives one', () => {
    expect(judgedMetrics('gsm8k_cot', harnessJson('base', 'gsm8k_cot_8shot'))).toEqual([
      { metric: 'strict', value: 0.6717, stderr: 0.0129 },
      { metric: 'flex', value: 0.7324, stderr: 0.0122 },
    ]);
    // A group task: its own line (and `groups`), not a subtask's.
    expect(judgedMetrics('minerva_math', harnessJson('base', 'minerva_math_4shot'))).toEqual([
      { metric: 'exact_match', value: 0.282, stderr: 0.0062 },
      { metric: 'math_verify', value: 0.3908, stderr: 0.0068 },
    ]);
    // lm_eval writes "N/A" for IFEval's instance-level stderr: no stderr then.
    expect(judgedMetrics('ifeval', harnessJson('base', 'ifeval_0shot'))).toEqual([
      { metric: 'prompt_strict', value: 0.2126, stderr: 0.0176 },
      { metric: 'inst_strict', value: 0.3285 },
    ]);
    expect(judgedMetrics('mbpp', harnessJson('base', 'mbpp_3shot'))).toEqual([
      { metric: 'pass@1', value: 0.404, stderr: 0.0218 },
    ]);
    // A task outside the table: its first metric.
    expect(
      judgedMetrics('arc_challenge', {
        results: {
          arc_challenge: { alias: 'arc', 'acc,none': 0.5, 'acc_stderr,none': 0.01, 'acc_norm,none': 0.6 },
        },
      }),
    ).toEqual([{ metric: 'acc', value: 0.5, stderr: 0.01 }]);
  });

  it("merges an eval job's units and a training job's watcher summaries by checkpoint id, with deltas to the baseline", () => {
    const rows = [
      ...readLocalResults(path.join(FIXTURES, 'training-run'), `watcher of ${TRAINING}`, TRAINING),
      ...readLocalResults(path.join(FIXTURES, 'eval-run'), 'eval job'),
    ];
    const table = buildTable(rows, 'base');
    expect(table.rows.map((r) => [r.label, r.checkpointId])).toEqual([
      ['base', 's3://sagemaker-us-west-2-123456789012/rlvr-experiments/models/Qwen3-1.7B-Base/'],
      ['step100', `${TRAINING}:step100`],
      [`${TRAINING}:step200`, `${TRAINING}:step200`],
      ['final', `${TRAINING}:final`],
    ]);
    // step100 came from both: one row, its eval label, both sources.
    const step100 = table.rows[1];
    expect(step100.sources).toEqual([`watcher of ${TRAINING}`, 'eval job']);
    const col = (task: string, metric: string) =>
      table.columns.findIndex((c) => c.task === task && c.metric === metric);
    const strict = col('gsm8k_cot', 'strict');
    // 0.7445 - 0.6717, computed by hand.
    expect(step100.cells[strict]).toEqual({
      value: 0.7445,
      stderr: 0.0129,
      delta: expect.closeTo(0.0728, 10),
    });
    expect(table.rows[0].cells[strict]).toEqual({ value: 0.6717, stderr: 0.0129 });
    expect(step100.cells[col('mbpp', 'pass@1')]).toEqual({
      failed: expect.stringContaining('illegal memory access'),
    });
    expect(table.rows[2].cells[col('ifeval', 'prompt_strict')]).toEqual({ failed: 'RuntimeError: boom' });
    expect(table.rows[2].cells[col('minerva_math', 'exact_match')]).toBeUndefined();

    const md = tableMarkdown(table);
    expect(md).toMatch(/^\| checkpoint +\| gsm8k_cot \(8-shot\) strict +\|/);
    expect(md).toMatch(/\| base \(baseline\) +\| +67\.2 ± 1\.3 \|/);
    expect(md).toMatch(/\| step100 +\| +74\.5 ± 1\.3 \(\+7\.3\) \|/);
    expect(md).toContain('- step100 × mbpp: exit 1: RuntimeError: CUDA error');

    const csv = tableCsv(table).trim().split('\n');
    expect(csv[0]).toBe('checkpoint,checkpoint_id,task,num_fewshot,metric,value,stderr,delta,failed');
    expect(csv).toContain(`step100,${TRAINING}:step100,gsm8k_cot,8,strict,0.7445,0.0129,${0.7445 - 0.6717},`);
    expect(csv.filter((l) => l.endsWith(',') === false && l.includes('FAILED'))).toEqual([]);
    expect(csv.some((l) => /^step100,.*,mbpp,3,pass@1,,,,"?exit 1: RuntimeError/.test(l))).toBe(true);

    const json = JSON.parse(tableJson(table));
    expect(json.baseline).toBe('base');
    expect(json.rows).toHaveLength(4);
    expect(json.columns.map((c: { task: string }) => c.task)).toEqual(
      expect.arrayContaining(['gsm8k_cot', 'ifeval', 'mbpp', 'minerva_math']),
    );
  });

  it('a deviation is noted with the row; a baseline that is no row leaves the cells without deltas', () => {
    const row = {
      checkpointId: 'x',
      label: 'x',
      task: 'ifeval',
      numFewshot: 0,
      metrics: [{ metric: 'prompt_strict', value: 0.3 }],
      source: 's',
      deviations: ['seed=123'],
    };
    const table = buildTable([row], 'nope');
    expect(table.baseline).toBeUndefined();
    expect(table.rows[0].cells[0]).toEqual({ value: 0.3 });
    expect(tableMarkdown(table)).toContain('- x: not the standard (ifeval: seed=123)');
    expect(tableMarkdown(buildTable([]))).toBe('No evaluation results found.\n');
  });
});
