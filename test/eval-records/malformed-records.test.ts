import * as path from 'node:path';
import { parseUnitRecord, readLocalResults } from '../../lib/eval-records/results';
import { buildTable, tableJson, tableMarkdown } from '../../lib/eval-records/table';
import { tempDir } from '../helpers/fixtures';
import { BAD_RECORDS, writeMalformedUnits } from './malformed-fixture';

describe('a unit record that is not one', () => {
  it('is a problem saying what is wrong, never an exception', () => {
    const good = {
      id: '30842d754c5d0d8f',
      checkpoint: { label: 'base', id: 'm', from: 'm' },
      task: 'mbpp',
      numFewshot: 3,
      harness: 'lm_eval',
      argv: ['lm_eval'],
      deviations: [],
      host: 'algo-1',
      gpu: 0,
      startedAt: '2026-01-26T10:20:00.000Z',
      wallS: 1,
      exitCode: 0,
    };
    expect(parseUnitRecord(JSON.stringify(good))).toEqual({ record: good });
    expect(parseUnitRecord(JSON.stringify({ ...good, exitCode: null, failure: 'x' }))).toHaveProperty(
      'record',
    );
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- left out on purpose
    const { deviations: _, ...noDeviations } = good;
    expect(parseUnitRecord(JSON.stringify(noDeviations))).toEqual({
      problem: expect.stringMatching(/deviations: missing/),
    });
    expect(parseUnitRecord('{"checkpoint": 5}')).toEqual({
      problem: expect.stringMatching(/checkpoint: .*5/),
    });
    expect(parseUnitRecord('{"checkpoint": ')).toEqual({ problem: expect.stringMatching(/^not JSON/) });
    expect(parseUnitRecord('[1]')).toEqual({ problem: expect.stringMatching(/not a JSON object/) });
    expect(parseUnitRecord(JSON.stringify({ ...good, deviations: [1] }))).toEqual({
      problem: expect.stringMatching(/deviations: /),
    });
    expect(parseUnitRecord(JSON.stringify({ ...good, harness: 'x' }))).toEqual({
      problem: expect.stringMatching(/harness: /),
    });
  });

  it('is a failed cell of its unit with a warning naming its file; the good unit is its row', () => {
    const dir = writeMalformedUnits(tempDir('rlvr-malformed-'));
    const rows = readLocalResults(dir, 'local run', 'run', 'run');
    const table = buildTable(rows);
    expect(table.rows.map((r) => r.label)).toEqual(['base']);
    const base = table.rows[0];
    const cell = (task: string) => {
      const i = table.columns.findIndex((c) => c.task === task);
      expect(i).toBeGreaterThanOrEqual(0);
      return base.cells[i];
    };
    expect(cell('gsm8k_cot')).toMatchObject({ value: 0.6717 });
    for (const task of ['mbpp', 'ifeval', 'minerva_math'])
      expect(cell(task)).toEqual({ failed: expect.stringMatching(/unreadable unit record/) });
    expect(table.warnings).toHaveLength(3);
    expect(table.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`${path.posix.join('run', BAD_RECORDS.noDeviations)}.*deviations: missing`),
        ),
        expect.stringMatching(
          new RegExp(`${path.posix.join('run', BAD_RECORDS.checkpointFive)}.*checkpoint`),
        ),
        expect.stringMatching(new RegExp(`${path.posix.join('run', BAD_RECORDS.notJson)}.*not JSON`)),
      ]),
    );
    // Every form of the table says so.
    const md = tableMarkdown(table);
    for (const f of Object.values(BAD_RECORDS)) expect(md).toContain(f);
    expect(JSON.parse(tableJson(table)).warnings).toEqual(table.warnings);
  });

  it('names the file where the run folder is when no other name is given', () => {
    const dir = writeMalformedUnits(tempDir('rlvr-malformed-'));
    const table = buildTable(readLocalResults(dir, 'local run'));
    expect(table.warnings.join('\n')).toContain(path.join(dir, BAD_RECORDS.notJson));
  });
});
