import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { UserError } from '../errors';
import { isCorrectScore, parsePythonJson, streamOrder } from '../passk-records';
import { isRegularFile, openRegularFile } from '../util';

/*
 * An SFT set from pass@k results, by the rule of their scripts/build_sft_from_pass_at_k.py: every prompt
 * with min ≤ pass_rate < max (defaults 0 and 0.5) that has a correct completion (score > 0) gives one line
 * {prompt_id, prompt, problem, completion, pass_rate, source}, the completion picked with
 * random.Random(seed).choice over its correct ones; the lines are then rng.shuffle'd with the same
 * generator. The lines are what their load_sft_jsonl reads.
 *
 * Their random choice is reproduced, not approximated: PyRandom below is CPython's MT19937 with its
 * integer seeding (init_by_array), getrandbits and _randbelow (the rejection loop choice and shuffle use),
 * a few dozen lines. Given the results in the same order, the picks and the final order are theirs, and a
 * team member can check a line against their script. Where the output can still differ:
 * - their `--subset both` runs gsm8k then math through one generator, then shuffles once: buildMixedSftSet
 *   (`--datasets gsm8k,math`) does the same; without it, each campaign is its own set.
 * - the results' order: their merged all_verification_results.jsonl concatenates `sorted(glob("shard_*"))`
 *   (shard_10 before shard_2); readSftShards reads in that order too.
 * - a prompt id listed twice is kept once here (the first); their script would emit it twice.
 * - numbers in `problem` are written from JavaScript numbers: a float with an integral value (1.0) comes out
 *   as 1. The pass rate is always written as Python writes a float.
 */

// ---------------------------------------------------------------------------------------------------
// CPython's random.Random (Modules/_randommodule.c, Lib/random.py)

const N = 624;
const M = 397;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private index = N + 1;

  /** random.Random(seed) for an int seed: the key is |seed| in 32-bit words, least significant first. */
  constructor(seed: number | bigint) {
    let n = typeof seed === 'bigint' ? (seed < 0n ? -seed : seed) : BigInt(Math.abs(Math.trunc(seed)));
    const key: number[] = [];
    while (n > 0n) {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      mt[i] = (Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** genrand_uint32 */
  private next(): number {
    const mt = this.mt;
    if (this.index >= N) {
      let kk = 0;
      let y: number;
      for (; kk < N - M; kk++) {
        y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
        mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      for (; kk < N - 1; kk++) {
        y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
        mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      y = (mt[N - 1] & 0x80000000) | (mt[0] & 0x7fffffff);
      mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** getrandbits(k) for 0 < k ≤ 32: the top k bits of one word. */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k <= 0 || k > 32)
      throw new RangeError(`getrandbits(${k}): 1 to 32 bits only`);
    return this.next() >>> (32 - k);
  }

  /** _randbelow_with_getrandbits(n): k = n.bit_length() bits, drawn again while ≥ n. */
  randbelow(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > 0xffffffff) throw new RangeError(`randbelow(${n})`);
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new RangeError('Cannot choose from an empty sequence');
    return seq[this.randbelow(seq.length)];
  }

  /** random.shuffle in place: for i from len-1 down to 1, swap x[i] with x[randbelow(i + 1)]. */
  shuffle<T>(x: T[]): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Python's json.dumps (default: ensure_ascii, separators ", " and ": ")

/** repr(float): the shortest round-trip digits, fixed for 1e-4 ≤ |x| < 1e16, else d.ddde±XX. */
export function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = mant.startsWith('-') ? '-' : '';
  const digits = mant.replace(/^-/, '').replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const int = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${int}.${frac || '0'}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
}

function pyString(s: string): string {
  // JSON.stringify escapes as json does below U+0080; ensure_ascii escapes the rest, UTF-16 units (surrogate
  // pairs for astral characters), in lower-case hex.
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** json.dumps(value) as Python writes it; `floats` are the key paths Python holds as floats. */
export function pyJsonDumps(value: unknown, floats: ReadonlySet<string> = new Set(), at = ''): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    return floats.has(at) || !Number.isInteger(value) || Math.abs(value) >= 1e16
      ? pyFloat(value)
      : String(value);
  }
  if (typeof value === 'string') return pyString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyJsonDumps(v, floats, `${at}[]`)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${pyString(k)}: ${pyJsonDumps(v, floats, at ? `${at}.${k}` : k)}`).join(', ')}}`;
}

// ---------------------------------------------------------------------------------------------------
// The set

export interface SftResult {
  readonly promptId: string;
  readonly scores: readonly number[];
  readonly completions: readonly { readonly text: string }[];
  readonly passRate: number;
}

export interface SftPrompt {
  readonly prompt: string;
  readonly problem: Readonly<Record<string, unknown>>;
}

export interface SftInput {
  /** In the order their merged results file lists them. */
  readonly results: readonly SftResult[];
  readonly prompts: ReadonlyMap<string, SftPrompt>;
  /** `source`, and `problem.dataset_name` when the problem has none. */
  readonly dataset: string;
  readonly minPassRate?: number;
  readonly maxPassRate?: number;
  readonly seed?: number;
}

export interface SftSet {
  /** JSONL lines (no newline), in their script's final (shuffled) order. */
  readonly lines: string[];
  readonly skippedNoCorrect: number;
  readonly skippedNoPrompt: number;
}

export const SFT_DEFAULTS = { minPassRate: 0, maxPassRate: 0.5, seed: 42 } as const;

/** In band as their script tests it: skipped when pass_rate < min or pass_rate >= max. */
export function inSftBand(passRate: number, min: number, max: number): boolean {
  return !(passRate < min || passRate >= max);
}

export function buildSftSet(input: SftInput): SftSet {
  const rng = new PyRandom(input.seed ?? SFT_DEFAULTS.seed);
  const set = selectSftExamples(input, rng);
  rng.shuffle(set.lines);
  return set;
}

/**
 * One set from several datasets' results, as their `--subset both` makes it: one random.Random(seed)
 * draws each dataset's choices in turn (in the order given: theirs is gsm8k, then math), and one shuffle
 * of all the lines follows. Each part's min/max/seed are ignored for the ones given here.
 */
export function buildMixedSftSet(
  parts: readonly Pick<SftInput, 'results' | 'prompts' | 'dataset'>[],
  options: Pick<SftInput, 'minPassRate' | 'maxPassRate' | 'seed'> = {},
): SftSet & { readonly perDataset: readonly { readonly dataset: string; readonly examples: number }[] } {
  const rng = new PyRandom(options.seed ?? SFT_DEFAULTS.seed);
  const lines: string[] = [];
  let skippedNoCorrect = 0;
  let skippedNoPrompt = 0;
  const perDataset: { dataset: string; examples: number }[] = [];
  for (const part of parts) {
    const set = selectSftExamples({ ...part, ...options }, rng);
    lines.push(...set.lines);
    skippedNoCorrect += set.skippedNoCorrect;
    skippedNoPrompt += set.skippedNoPrompt;
    perDataset.push({ dataset: part.dataset, examples: set.lines.length });
  }
  rng.shuffle(lines);
  return { lines, skippedNoCorrect, skippedNoPrompt, perDataset };
}

/** build_sft_examples: the lines of one dataset in results order, each choice drawn from `rng`; not shuffled. */
function selectSftExamples(input: SftInput, rng: PyRandom): SftSet {
  const min = input.minPassRate ?? SFT_DEFAULTS.minPassRate;
  const max = input.maxPassRate ?? SFT_DEFAULTS.maxPassRate;
  const examples: string[] = [];
  let skippedNoCorrect = 0;
  let skippedNoPrompt = 0;
  for (const item of input.results) {
    if (!inSftBand(item.passRate, min, max)) continue;
    const info = input.prompts.get(item.promptId);
    if (!info) {
      skippedNoPrompt++;
      continue;
    }
    // zip(completions, scores): as many as the shorter has.
    const correct: { text: string }[] = [];
    const pairs = Math.min(item.completions.length, item.scores.length);
    for (let i = 0; i < pairs; i++) if (isCorrectScore(item.scores[i])) correct.push(item.completions[i]);
    if (correct.length === 0) {
      skippedNoCorrect++;
      continue;
    }
    const chosen = rng.choice(correct);
    // dict(problem) then setdefault: existing keys keep their place and value, missing ones go last.
    const problem: Record<string, unknown> = { ...info.problem };
    if (!('prompt_id' in problem)) problem.prompt_id = item.promptId;
    if (!('dataset_name' in problem)) problem.dataset_name = input.dataset;
    examples.push(
      pyJsonDumps(
        {
          prompt_id: item.promptId,
          prompt: info.prompt,
          problem,
          completion: chosen.text,
          pass_rate: item.passRate,
          source: input.dataset,
        },
        new Set(['pass_rate']),
      ),
    );
  }
  return { lines: examples, skippedNoCorrect, skippedNoPrompt };
}

// ---------------------------------------------------------------------------------------------------
// Reading a run folder's shards without holding them

export interface SftShardsRead {
  /** In-band results, shard folders in sorted-name order then line order, each id once (its first). */
  readonly results: SftResult[];
  /** Prompts of the in-band results only. */
  readonly prompts: Map<string, SftPrompt>;
  readonly shards: readonly string[];
  /** Results read, in band or not. */
  readonly resultsRead: number;
  readonly duplicates: number;
  readonly badLines: readonly { readonly file: string; readonly line: number; readonly why: string }[];
}

/** A shard file's non-empty lines; nothing from what is not a regular file (a FIFO would block the read). */
async function* lines(file: string): AsyncGenerator<{ line: string; n: number }> {
  const opened = openRegularFile(file);
  if (!opened) return;
  const input = fs.createReadStream('', { fd: opened.fd, autoClose: true });
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of rl) {
      n++;
      if (line.trim()) yield { line, n };
    }
  } finally {
    rl.close();
  }
}

/** A JSON string literal's value, or undefined when it is not one (a bad escape: the line is then parsed whole, and reported). */
function jsonString(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

/** The JSON string that opens a line the script wrote (`{"prompt_id": "…", …`), without parsing the rest. */
const LEADING_ID = /^\{"prompt_id": ("(?:[^"\\]|\\.)*")/;
/** The script's results lines put pass_rate fourth, before the (large) scores and completions. */
const PASS_RATE =
  /^\{"prompt_id": "(?:[^"\\]|\\.)*", "num_completions": \d+, "num_correct": \d+, "pass_rate": ([-+.\deE]+|NaN)[,}]/;

/**
 * A shard folder's files of one output (`name` itself, which older jobs and their script leave, then its
 * segments in sequence order, as our job leaves them): read one after another as one file.
 */
function streamFiles(folder: string, name: string): string[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(folder);
  } catch {
    return [];
  }
  return streamOrder(name, entries).map((e) => path.join(folder, e));
}

/**
 * The shards of a pass@k output folder (`<dir>/shard_*`), streamed: a results line outside the band is
 * dropped after its pass rate is read (the lines are matched before they are parsed), and only the
 * correct completions of those in the band are kept (the choice is among them alone, in the same order,
 * so the pick is the same). completions.jsonl lines are parsed only for the prompts kept.
 */
export async function readSftShards(
  dir: string,
  band: { readonly minPassRate?: number; readonly maxPassRate?: number } = {},
): Promise<SftShardsRead> {
  const min = band.minPassRate ?? SFT_DEFAULTS.minPassRate;
  const max = band.maxPassRate ?? SFT_DEFAULTS.maxPassRate;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new UserError(`cannot read the pass@k folder ${dir}: ${(e as Error).message}`);
  }
  // Their merge's order: sorted(output_dir.glob('shard_*')), by name.
  const shards = entries
    .filter((e) => e.isDirectory() && e.name.startsWith('shard_'))
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const results: SftResult[] = [];
  const seen = new Set<string>();
  const badLines: { file: string; line: number; why: string }[] = [];
  let resultsRead = 0;
  let duplicates = 0;

  for (const file of shards.flatMap((shard) =>
    streamFiles(path.join(dir, shard), 'verification_results.jsonl'),
  )) {
    if (!isRegularFile(file)) badLines.push({ file, line: 0, why: 'not a regular file: not read' });
    for await (const { line, n } of lines(file)) {
      const quick = PASS_RATE.exec(line);
      const id = quick ? jsonString(LEADING_ID.exec(line)![1]) : undefined;
      if (quick && id !== undefined && !inSftBand(Number(quick[1]), min, max)) {
        resultsRead++;
        if (seen.has(id)) duplicates++;
        else seen.add(id);
        continue;
      }
      let item: {
        prompt_id?: unknown;
        pass_rate?: unknown;
        scores?: unknown;
        completions?: unknown;
      };
      try {
        item = parsePythonJson(line) as typeof item;
      } catch (e) {
        badLines.push({ file, line: n, why: (e as Error).message });
        continue;
      }
      if (
        !item ||
        typeof item.prompt_id !== 'string' ||
        typeof item.pass_rate !== 'number' ||
        !Array.isArray(item.scores) ||
        !Array.isArray(item.completions)
      ) {
        badLines.push({
          file,
          line: n,
          why: 'not a result record (prompt_id, pass_rate, scores, completions)',
        });
        continue;
      }
      resultsRead++;
      if (seen.has(item.prompt_id)) {
        duplicates++;
        continue;
      }
      seen.add(item.prompt_id);
      if (!inSftBand(item.pass_rate, min, max)) continue;
      const scores: number[] = [];
      const completions: { text: string }[] = [];
      const all = item.completions as { text?: unknown }[];
      const pairs = Math.min(all.length, item.scores.length);
      for (let i = 0; i < pairs; i++) {
        const s: unknown = item.scores[i];
        if (isCorrectScore(s)) {
          scores.push(s === true ? 1 : (s as number));
          completions.push({ text: String(all[i]?.text ?? '') });
        }
      }
      results.push({ promptId: item.prompt_id, scores, completions, passRate: item.pass_rate });
    }
  }

  const wanted = new Set(results.map((r) => r.promptId));
  const prompts = new Map<string, SftPrompt>();
  for (const file of shards.flatMap((shard) => streamFiles(path.join(dir, shard), 'completions.jsonl'))) {
    if (!isRegularFile(file)) badLines.push({ file, line: 0, why: 'not a regular file: not read' });
    for await (const { line, n } of lines(file)) {
      const lead = LEADING_ID.exec(line);
      const leadId = lead ? jsonString(lead[1]) : undefined;
      if (leadId !== undefined && !wanted.has(leadId)) continue;
      let item: { prompt_id?: unknown; prompt?: unknown; problem?: unknown };
      try {
        item = parsePythonJson(line) as typeof item;
      } catch (e) {
        badLines.push({ file, line: n, why: (e as Error).message });
        continue;
      }
      if (!item || typeof item.prompt_id !== 'string' || !wanted.has(item.prompt_id)) continue;
      if (typeof item.prompt !== 'string') {
        badLines.push({ file, line: n, why: 'no prompt' });
        continue;
      }
      // Their dict keeps the last line of an id; the lines of one id are the same prompt.
      const problem =
        item.problem && typeof item.problem === 'object' && !Array.isArray(item.problem)
          ? (item.problem as Record<string, unknown>)
          : {};
      prompts.set(item.prompt_id, { prompt: item.prompt, problem });
    }
  }
  return { results, prompts, shards, resultsRead, duplicates, badLines };
}
