import * as fs from 'node:fs';
import * as path from 'node:path';

/*
 * A run folder's eval units as a hostile tester leaves them: one good unit (a copy of the eval-run
 * fixture's `base × gsm8k_cot`, with its harness results) beside three unit records that are not
 * records — one missing `deviations`, one `{"checkpoint": 5}`, one that is not JSON.
 */

const FIXTURE_UNITS = path.join(__dirname, '..', 'fixtures', 'eval-results', 'eval-run', 'evals', 'base');

export const BAD_RECORDS = {
  noDeviations: 'evals/base/mbpp_3shot/unit-30842d754c5d0d8f.json',
  checkpointFive: 'evals/base/ifeval_0shot/unit-7d3503c6c848831b.json',
  notJson: 'evals/base/minerva_math_4shot/unit-63451cd440cc86e7.json',
} as const;

export const GOOD_RECORD = 'evals/base/gsm8k_cot_8shot/unit-409d7eff886cf1dc.json';

/** Writes the four units under `runDir` (made if missing); returns the folder. */
export function writeMalformedUnits(runDir: string): string {
  fs.mkdirSync(path.join(runDir, 'evals', 'base'), { recursive: true });
  fs.cpSync(
    path.join(FIXTURE_UNITS, 'gsm8k_cot_8shot'),
    path.join(runDir, 'evals', 'base', 'gsm8k_cot_8shot'),
    {
      recursive: true,
    },
  );
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(runDir, rel)), { recursive: true });
    fs.writeFileSync(path.join(runDir, rel), text);
  };
  const mbpp = JSON.parse(
    fs.readFileSync(path.join(FIXTURE_UNITS, 'mbpp_3shot', 'unit-30842d754c5d0d8f.json'), 'utf8'),
  ) as Record<string, unknown>;
  delete mbpp.deviations;
  write(BAD_RECORDS.noDeviations, JSON.stringify(mbpp, null, 2));
  write(BAD_RECORDS.checkpointFive, JSON.stringify({ checkpoint: 5 }));
  write(BAD_RECORDS.notJson, '{"id": "63451cd440cc86e7", "checkpoint": ');
  return runDir;
}
