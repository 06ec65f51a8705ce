/**
 * Merging the script's shards: each shard's `verification_results.jsonl` (one line per finished prompt;
 * in a run folder, its segments read as one stream: segments.ts) into one list of per-prompt counts and the pass@k table. Only the counts are kept: a line carries the
 * prompt's n completions' full text, and a campaign's files run to gigabytes.
 */
import { UserError } from '../errors';
import { isObject } from '../util';
import { MAX_COMPLETIONS_PER_PROMPT, passAtKTable, unequalNOf } from './estimator';
import { MAX_PLAN_SHARDS, PASSK_PLAN_FILE, planPathProblem, type PasskJobPlan } from './job-plan';
import type { MergedPasskResults, PromptResult } from './merged';

export interface ShardLines {
  /** The script's --gpu-index: the `<i>` of `shard_<i>`. */
  readonly index: number;
  /** The results' lines in file order: the legacy single file's, then each segment's in sequence order. */
  readonly lines: Iterable<string> | AsyncIterable<string>;
}

export interface MergeInput {
  readonly source: string;
  readonly plan?: PasskJobPlan;
  readonly shards: readonly ShardLines[];
}

type Bad = { shard: number; line: number; why: string };
type Counts = Omit<PromptResult, 'shard'>;

/** A verifier score as their script judges it (`s > 0`); false for anything `> 0` would be false for. */
export function isCorrectScore(score: unknown): boolean {
  return (typeof score === 'number' && score > 0) || score === true;
}

/** A score their script could have written: a number, a bool, or null (a NaN read back, see parseLine). */
function isScore(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'boolean' || v === null;
}

function fromScores(promptId: string, scores: readonly unknown[]): Counts {
  const n = scores.length;
  const firstCorrect = scores.findIndex(isCorrectScore);
  const c = scores.reduce<number>((sum, s) => sum + (isCorrectScore(s) ? 1 : 0), 0);
  return { promptId, n, c, passRate: n > 0 ? c / n : 0, firstCorrect };
}

/** The counts of one record, or why it is not one (counts no campaign has among the reasons). */
function counts(record: unknown): Counts | string {
  const got = countsOf(record);
  if (typeof got !== 'string' && got.n > MAX_COMPLETIONS_PER_PROMPT)
    return `num_completions ${got.n} is over ${MAX_COMPLETIONS_PER_PROMPT} completions per prompt: no campaign's count`;
  return got;
}

function countsOf(record: unknown): Counts | string {
  if (!isObject(record)) return 'not a JSON object';
  const id = record.prompt_id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) return 'no prompt_id';
  const promptId = String(id);
  const { scores, completions } = record;
  if (scores !== undefined) {
    if (!Array.isArray(scores) || !scores.every(isScore)) return 'scores is not a list of numbers';
    return fromScores(promptId, scores);
  }
  // No scores list: each completion carries its own score in their records, in the same order.
  if (
    Array.isArray(completions) &&
    completions.length > 0 &&
    completions.every((x) => isObject(x) && isScore(x.score))
  )
    return fromScores(
      promptId,
      completions.map((x) => (x as Record<string, unknown>).score),
    );
  const n = record.num_completions;
  const c = record.num_correct;
  if (typeof n !== 'number' || typeof c !== 'number') return 'no scores, nor num_correct and num_completions';
  if (!Number.isInteger(n) || !Number.isInteger(c) || c < 0 || c > n)
    return `num_correct ${c} of num_completions ${n} is not a count`;
  // Which completion came first is known only when none or all were correct.
  const firstCorrect = c > 0 && c === n ? 0 : -1;
  return { promptId, n, c, passRate: n > 0 ? c / n : 0, firstCorrect };
}

const PYTHON_NON_JSON = /NaN|Infinity/;
/** String literals (passed over as they are) or Python's bare NaN / ±Infinity (outside strings). */
const LITERAL_OR_NON_JSON = /"[^"\\]*(?:\\.[^"\\]*)*"|(-?)Infinity|NaN/g;

/**
 * JSON.parse, and Python's json.dumps extensions read back: a verifier score of nan or inf is written
 * bare (`NaN`, `Infinity`), which JSON.parse refuses. NaN becomes null (their `nan > 0` is false) and
 * ±Infinity a number that parses to ±Infinity.
 */
export function parsePythonJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (e) {
    if (!PYTHON_NON_JSON.test(line)) throw e;
    let rewritten: string;
    try {
      rewritten = line.replace(LITERAL_OR_NON_JSON, (m: string, sign?: string) =>
        m.startsWith('"') ? m : m === 'NaN' ? 'null' : `${sign ?? ''}1e999`,
      );
    } catch {
      throw e;
    }
    try {
      return JSON.parse(rewritten);
    } catch {
      throw e;
    }
  }
}

/**
 * Their records put the counts and scores before the completions (json.dumps keeps the dict's order:
 * prompt_id, num_completions, num_correct, pass_rate, scores, completions), and the completions are all
 * but a few hundred bytes of the line: the head alone is parsed when the line is a whole record (it ends
 * the completions list and the object). Anything else is parsed whole.
 */
const COMPLETIONS_KEY = ', "completions": [';

function parseRecord(line: string): unknown {
  const at = line.indexOf(COMPLETIONS_KEY);
  if (at > 0 && line.endsWith(']}')) {
    try {
      const head: unknown = JSON.parse(`${line.slice(0, at)}}`);
      if (isObject(head) && Array.isArray(head.scores)) return head;
    } catch {
      // A head that does not parse alone (a NaN score, a key spelt inside a string): the whole line.
    }
  }
  return parsePythonJson(line);
}

function shortWhy(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.length > 80 ? `${msg.slice(0, 77)}…` : msg;
}

/**
 * The shards merged: read in index order and each line in file order; a prompt id's first record wins
 * (a resumed or re-run shard may have written one twice); lines that are not a record are listed, not
 * thrown, since a shard stopped mid-write leaves a cut-off last line.
 */
export async function mergeShards(input: MergeInput): Promise<MergedPasskResults> {
  // Checked before any shard is opened: a job's plan (read from S3) names the keys its shards are read at.
  const pathProblem = input.plan ? planPathProblem(input.plan.files) : undefined;
  if (pathProblem)
    throw new UserError(`${input.source}: ${PASSK_PLAN_FILE}: ${pathProblem}: not read`, 'BadPasskPlan');
  const shards = [...input.shards].sort((a, b) => a.index - b.index);
  const seen = new Set<string>();
  const prompts: PromptResult[] = [];
  const badLines: Bad[] = [];
  let duplicates = 0;

  for (const shard of shards) {
    let lineNo = 0;
    let lastRecordLine = 0;
    let lastBad: Bad | undefined;
    for await (const raw of shard.lines) {
      lineNo++;
      const line = raw.trim();
      if (line === '') continue;
      lastRecordLine = lineNo;
      let parsed: unknown;
      try {
        parsed = parseRecord(line);
      } catch (e) {
        lastBad = { shard: shard.index, line: lineNo, why: `not JSON (${shortWhy(e)})` };
        badLines.push(lastBad);
        continue;
      }
      const got = counts(parsed);
      if (typeof got === 'string') {
        lastBad = { shard: shard.index, line: lineNo, why: got };
        badLines.push(lastBad);
        continue;
      }
      // Their scripts key prompts by the id as json.loads gives it: 1 and "1" are two prompts (1.0 is 1).
      const key =
        typeof (parsed as { prompt_id?: unknown }).prompt_id === 'number'
          ? `\u0000${got.promptId}`
          : got.promptId;
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      prompts.push({ ...got, shard: shard.index });
    }
    // A shard's process stopped mid-write: its last line is the cut one, and the prompt is redone on resume.
    if (lastBad && lastBad.line === lastRecordLine && lastBad.why.startsWith('not JSON'))
      lastBad.why = `cut off: the file's last line is not whole JSON (${lastBad.why.slice('not JSON ('.length)}`;
  }

  const shardsRead = [...new Set(shards.map((s) => s.index))];
  const plan = input.plan;
  const passAtK = passAtKTable(prompts);
  const unequalN = unequalNOf(prompts, passAtK);
  return {
    source: input.source,
    ...(plan
      ? {
          campaign: plan.campaign,
          shardsExpected: plan.shards.length,
        }
      : {}),
    shardsRead,
    missingShards: plan
      ? plan.shards
          .map((s) => s.index)
          .filter((i) => !shardsRead.includes(i))
          .sort((a, b) => a - b)
      : shardGaps(shardsRead),
    prompts,
    duplicates,
    badLines,
    passAtK,
    ...(unequalN ? { unequalN } : {}),
  };
}

/**
 * A bare folder's missing shards: the numbers below the highest shard read that have no results (their
 * script numbers shards 0…N−1 and records N nowhere in its output, so shards past the highest are not seen).
 */
export function shardGaps(read: readonly number[]): number[] {
  const have = new Set(read);
  const highest = Math.max(-1, ...read);
  const gaps: number[] = [];
  // Bounded whatever a folder's name says (shard_999999999): no campaign has more shards.
  for (let i = 0; i < Math.min(highest, MAX_PLAN_SHARDS); i++) if (!have.has(i)) gaps.push(i);
  return gaps;
}
