/*
 * One measured side of the dashboard's index row, in its own process (so /usr/bin/time reports its own
 * peak RSS): `index <trace>` builds the column store from nothing; `split <trace>` is the baseline, a
 * plain line split of the same file (node:readline over a file stream, every line a string);
 * `reopen <trace>` opens the indexed run and reads every series, as the run view does. Prints JSON.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
// The index module alone, not the dashboard's face: this process's peak RSS is the row's figure, and
// the server, the report and their packages would be counted in it.
// eslint-disable-next-line no-restricted-imports
import { indexDirOf, openIndex } from '../lib/dashboard/trace-index';

async function main(): Promise<void> {
  const [mode, trace] = process.argv.slice(2);
  const t0 = process.hrtime.bigint();
  let out: Record<string, unknown> = {};
  if (mode === 'split') {
    const rl = readline.createInterface({ input: fs.createReadStream(trace), crlfDelay: Infinity });
    let lines = 0;
    for await (const line of rl) if (line.length >= 0) lines++;
    out = { lines };
  } else if (mode === 'index') {
    fs.rmSync(indexDirOf(trace), { recursive: true, force: true });
    const { stats, index } = await openIndex(trace);
    out = { ...stats, series: index.keys('series').length };
  } else if (mode === 'reopen') {
    const { stats, index } = await openIndex(trace);
    let values = 0;
    for (const k of index.keys('series')) values += index.column('series', k).length;
    for (const k of index.keys('spans')) values += index.column('spans', k).length;
    out = { ...stats, values };
  } else throw new Error(`mode ${mode}?`);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write(`${JSON.stringify({ seconds, ...out })}\n`);
}

void main();
