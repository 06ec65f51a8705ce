import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  PASSK_DIR,
  PASSK_PLAN_FILE,
  readPasskFolder,
  readPasskPlan,
  shardFiles,
  unequalNNote,
  type MergedPasskResults,
  type PassAtK,
  type PasskFiles,
  type PasskJobPlan,
} from '../passk-records';
import { isObject } from '../util';
import { listRunIds, runDir } from './runs';

/*
 * `/api/passk`: the pass@k campaigns of the results folder, for the page's #/passk view. A campaign is a
 * run folder with `passk-plan.json` (its shards under `passk/shard_<i>/`), or a bare folder of their
 * script's output (`shard_<i>/` directly). The merge is passk-records' (readPasskFolder); what is here is
 * finding the campaigns and not reading them twice: a campaign's results files run to gigabytes, so each
 * is read once and read again only when a results file's size or mtime (or the plan's) changed. Each
 * request costs a listing and a stat per file. A folder that cannot be read is listed with its problem.
 */

export interface PasskCampaignAnswer {
  /** The run folder's name in the results folder. */
  readonly id: string;
  /** `run`: a folder our job wrote (a plan); `bare`: their script's shard folders only. */
  readonly layout: 'run' | 'bare';
  /** What the chart groups by: `dataset/split` (levels appended), or the folder for a bare one. */
  readonly benchmark: string;
  readonly dataset: string | null;
  readonly split: string | null;
  readonly level: string | null;
  /** The plan's model label, else the folder name. */
  readonly model: string;
  readonly modelId: string | null;
  /** Completions per prompt: the plan's, else the largest the prompts have (null: none read). */
  readonly n: number | null;
  readonly prompts: number;
  readonly shardsRead: readonly number[];
  /** null without a plan (its shard count is not known). */
  readonly shardsExpected: number | null;
  readonly missingShards: readonly number[];
  readonly duplicates: number;
  readonly badLines: number;
  /** The first few bad lines, with where (a cut-off last line of a shard stopped mid-write, say). */
  readonly badLineExamples: readonly {
    readonly shard: number;
    readonly line: number;
    readonly why: string;
  }[];
  /** k = 1, 2, 4, …: the unbiased estimate and their script's first-k figure. */
  readonly passAtK: readonly PassAtK[];
  /** What a reader must know before trusting the figures; empty when nothing is amiss. */
  readonly problems: readonly string[];
}

export interface PasskAnswer {
  readonly campaigns: readonly PasskCampaignAnswer[];
}

const BAD_LINE_EXAMPLES = 5;

/** A file's identity for the cache: a changed size or mtime (or a replaced file) means read again. */
function stamp(file: string): string | undefined {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() ? `${st.size}:${st.mtimeMs}:${st.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

const SHARD_NAME = /^shard_(0|[1-9][0-9]*)$/;

/** Whether any entry of `dir` is a shard folder of their script's naming (the default layout). */
function hasShardFolders(dir: string): boolean {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .some((e) => e.isDirectory() && SHARD_NAME.test(e.name));
  } catch {
    return false;
  }
}

/** A cheap look (a listing, no file read): is the folder a campaign, and in which layout. */
function looksLikeCampaign(dir: string): 'run' | 'bare' | undefined {
  if (fs.existsSync(path.join(dir, PASSK_PLAN_FILE))) return 'run';
  if (isDir(path.join(dir, PASSK_DIR)) && hasShardFolders(path.join(dir, PASSK_DIR))) return 'run';
  return hasShardFolders(dir) ? 'bare' : undefined;
}

/** The plan's file names, as read-folder.ts takes them (their script's when the plan gives none). */
function filesOf(plan: PasskJobPlan | undefined): Pick<PasskFiles, 'shardFolder' | 'results'> {
  const f: unknown = plan?.files;
  if (isObject(f) && typeof f.shardFolder === 'string' && typeof f.results === 'string')
    return { shardFolder: f.shardFolder, results: f.results };
  return { shardFolder: 'shard_{shard}', results: 'verification_results.jsonl' };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The answer for one merged campaign: the plan's fields checked (a plan is only shape-checked on read). */
function describe(
  id: string,
  layout: 'run' | 'bare',
  r: MergedPasskResults,
  planProblem: string | undefined,
): PasskCampaignAnswer {
  const c: Record<string, unknown> = isObject(r.campaign)
    ? (r.campaign as unknown as Record<string, unknown>)
    : {};
  const model: Record<string, unknown> = isObject(c.model) ? c.model : {};
  const dataset = str(c.dataset);
  const split = str(c.split);
  const level = str(c.level);
  const planN = typeof c.n === 'number' && Number.isInteger(c.n) && c.n > 0 ? c.n : null;
  const promptN = r.prompts.reduce((m, p) => Math.max(m, p.n), 0);
  const problems: string[] = [];
  if (planProblem) problems.push(planProblem);
  if (r.campaign && (!dataset || !split))
    problems.push(`${PASSK_PLAN_FILE}: its campaign names no dataset or split`);
  if (r.prompts.length === 0) problems.push('no result lines yet: its shards have not finished a prompt');
  if (r.missingShards.length)
    problems.push(`missing shards ${r.missingShards.join(', ')} of ${r.shardsExpected}: figures are partial`);
  if (r.badLines.length)
    problems.push(
      `${r.badLines.length} bad line(s) skipped (${r.badLines[0].why}, shard ${r.badLines[0].shard} line ${r.badLines[0].line})`,
    );
  if (r.duplicates) problems.push(`${r.duplicates} duplicate record(s) dropped (the first kept)`);
  const unequal = unequalNNote(r);
  if (unequal) problems.push(unequal);
  const benchmark = dataset
    ? `${dataset}${split ? `/${split}` : ''}${level ? ` (levels ${level})` : ''}`
    : `${id} (no plan)`;
  return {
    id,
    layout,
    benchmark,
    dataset,
    split,
    level,
    model: str(model.label) ?? id,
    modelId: str(model.id),
    n: planN ?? (promptN > 0 ? promptN : null),
    prompts: r.prompts.length,
    shardsRead: r.shardsRead,
    shardsExpected: r.shardsExpected ?? null,
    missingShards: r.missingShards,
    duplicates: r.duplicates,
    badLines: r.badLines.length,
    badLineExamples: r.badLines.slice(0, BAD_LINE_EXAMPLES),
    passAtK: r.passAtK,
    problems,
  };
}

/** A folder that could not be merged at all: listed with why, no figures. */
function unreadable(id: string, layout: 'run' | 'bare', why: string): PasskCampaignAnswer {
  return {
    id,
    layout,
    benchmark: `${id} (unreadable)`,
    dataset: null,
    split: null,
    level: null,
    model: id,
    modelId: null,
    n: null,
    prompts: 0,
    shardsRead: [],
    shardsExpected: null,
    missingShards: [],
    duplicates: 0,
    badLines: 0,
    badLineExamples: [],
    passAtK: [],
    problems: [`could not be read: ${why}`],
  };
}

interface Cached {
  /** The plan's stamp and the plan read with it (the listing of shard files depends on it). */
  planStamp: string | undefined;
  plan: PasskJobPlan | undefined;
  /** The stamps of the plan and every results file, as one string. */
  key: string;
  answer: Promise<PasskCampaignAnswer>;
}

export class PasskCampaigns {
  private cache = new Map<string, Cached>();
  /** Campaign folders merged (files read) since this was made: what tests check the cache by. */
  reads = 0;

  constructor(readonly resultsDir: string) {}

  /** Every campaign of the results folder, each merged again only when its files changed. */
  async answer(): Promise<PasskAnswer> {
    const found: Promise<PasskCampaignAnswer>[] = [];
    const seen = new Set<string>();
    for (const id of listRunIds(this.resultsDir)) {
      let dir: string | undefined;
      try {
        dir = runDir(this.resultsDir, id);
      } catch {
        dir = undefined;
      }
      if (!dir) continue;
      const layout = looksLikeCampaign(dir);
      if (!layout) continue;
      seen.add(id);
      found.push(
        this.campaign(id, dir, layout).catch((e: unknown) =>
          unreadable(id, layout, String((e as Error).message ?? e)),
        ),
      );
    }
    // a folder gone from the results folder lets go of its figures
    for (const id of [...this.cache.keys()]) if (!seen.has(id)) this.cache.delete(id);
    return { campaigns: await Promise.all(found) };
  }

  private campaign(id: string, dir: string, layout: 'run' | 'bare'): Promise<PasskCampaignAnswer> {
    const prev = this.cache.get(id);
    const planFile = path.join(dir, PASSK_PLAN_FILE);
    const planStamp = stamp(planFile);
    // the plan is read again only when it changed: it names the shard folders and results files
    const plan =
      prev && prev.planStamp === planStamp
        ? prev.plan
        : planStamp !== undefined
          ? readPasskPlan(dir)
          : undefined;
    const planProblem =
      planStamp !== undefined && !plan
        ? `${PASSK_PLAN_FILE} is not a pass@k plan (JSON with version 1, campaign and shards): read as their script's bare output`
        : fs.existsSync(planFile) && planStamp === undefined
          ? `${PASSK_PLAN_FILE} is not a regular file: not read`
          : undefined;
    const planned = plan && Array.isArray(plan.shards) ? plan.shards.map((s) => s.index) : [];
    const files = shardFiles(dir, filesOf(plan), planned);
    const key = JSON.stringify([
      planStamp ?? null,
      ...files.map((f) => [f.index, f.file, stamp(f.file) ?? null]),
    ]);
    if (prev && prev.key === key) return prev.answer;
    // stamped before reading: a file that grows during the read differs at the next request, and is read then
    this.reads++;
    const answer = readPasskFolder(dir).then((r) =>
      r
        ? describe(id, layout, r, planProblem)
        : unreadable(id, layout, planProblem ?? 'no plan and no shard folders any more'),
    );
    const entry: Cached = { planStamp, plan, key, answer };
    this.cache.set(id, entry);
    // a failed read is not kept: the next request tries again
    answer.catch(() => {
      if (this.cache.get(id) === entry) this.cache.delete(id);
    });
    return answer;
  }
}
