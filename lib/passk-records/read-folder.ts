/**
 * Reading a pass@k campaign's results from a folder: a run folder our job wrote (the plan at
 * `<dir>/passk-plan.json`, the script's output under `<dir>/passk/shard_<i>/`, each shard's results in
 * segments: segments.ts) or a bare folder of their script's output (`<dir>/shard_<i>/`, as
 * launch_pass_at_k.sh leaves it, one results file). The folder may be a download
 * anyone could have put files in: no symlink is followed and no FIFO opened, and nothing outside the
 * folder is read whatever its plan names.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { UserError } from '../errors';
import { isObject, isRegularFile, openRegularFile, readRegularText } from '../util';
import {
  PASSK_DIR,
  MAX_PLAN_SHARDS,
  PASSK_PLAN_FILE,
  planPathProblem,
  shardFolder,
  type PasskFiles,
  type PasskJobPlan,
} from './job-plan';
import { mergeShards } from './merge';
import type { MergedPasskResults } from './merged';
import { streamOrder } from './segments';

/** Their script's names (eval_pass_at_k.py), for a folder without a plan saying otherwise. */
const DEFAULT_FILES: Pick<PasskFiles, 'shardFolder' | 'results'> = {
  shardFolder: 'shard_{shard}',
  results: 'verification_results.jsonl',
};

/** A plan is a few kilobytes; a larger file there is not one. */
const MAX_PLAN_BYTES = 16 * 1024 * 1024;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `shard_{shard}` as a pattern for a folder name, its index captured (no leading zeros: one name per index). */
function folderPattern(template: string): RegExp | undefined {
  const parts = template.split('{shard}');
  if (parts.length < 2 || template.includes('/')) return undefined;
  const index = '(0|[1-9][0-9]*)';
  return new RegExp(`^${parts.map(escapeRegExp).join(index)}$`);
}

function isDirectory(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The shard folders (results file or not) under `base`, by index. */
function shardFolders(base: string, files: Pick<PasskFiles, 'shardFolder'>, planned: readonly number[]) {
  const found = new Map<number, string>();
  const pattern = folderPattern(files.shardFolder);
  let entries: fs.Dirent[] = [];
  try {
    entries = fs.readdirSync(base, { withFileTypes: true });
  } catch {
    // No such folder: no shards in it.
  }
  for (const e of entries) {
    const m = pattern?.exec(e.name);
    if (!m || !e.isDirectory()) continue;
    // Several {shard} in one name must agree to be one shard's folder.
    if (new Set(m.slice(1)).size !== 1) continue;
    found.set(Number(m[1]), path.join(base, e.name));
  }
  // A template the listing cannot match (a nested one) is still found for the shards the plan names.
  for (const i of planned) {
    const folder = path.join(base, shardFolder(files, i));
    if (!found.has(i) && isDirectory(folder)) found.set(i, folder);
  }
  return [...found].sort((a, b) => a[0] - b[0]).map(([index, folder]) => ({ index, folder }));
}

/** The folder the shard folders are in: `<dir>/passk` in a run folder, else `<dir>` itself. */
function locate(dir: string, files: Pick<PasskFiles, 'shardFolder'>, planned: readonly number[]) {
  for (const base of [path.join(dir, PASSK_DIR), dir]) {
    const folders = shardFolders(base, files, planned);
    if (folders.length > 0) return folders;
  }
  return [];
}

/**
 * `<dir>/passk-plan.json` when it is there and has a plan's shape, and its file names stay inside the
 * folder (see planPathProblem); undefined otherwise.
 */
export function readPasskPlan(dir: string): PasskJobPlan | undefined {
  const plan = planOfShape(dir);
  return plan && !planPathProblem(plan.files) ? plan : undefined;
}

function planOfShape(dir: string): PasskJobPlan | undefined {
  const text = readRegularText(path.join(dir, PASSK_PLAN_FILE), MAX_PLAN_BYTES);
  if (text === undefined) return undefined;
  let plan: unknown;
  try {
    plan = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (
    !isObject(plan) ||
    plan.version !== 1 ||
    !isObject(plan.campaign) ||
    !Array.isArray(plan.shards) ||
    plan.shards.length > MAX_PLAN_SHARDS ||
    !plan.shards.every(
      (s) =>
        isObject(s) &&
        Number.isInteger(s.index) &&
        (s.index as number) >= 0 &&
        (s.index as number) < MAX_PLAN_SHARDS,
    )
  )
    return undefined;
  return plan as unknown as PasskJobPlan;
}

function resultFiles(plan: PasskJobPlan | undefined): Pick<PasskFiles, 'shardFolder' | 'results'> {
  const f: unknown = plan?.files;
  if (isObject(f) && typeof f.shardFolder === 'string' && typeof f.results === 'string')
    return { shardFolder: f.shardFolder, results: f.results };
  return DEFAULT_FILES;
}

/** Where `file` really is when a link on its way leads out of `dir`; undefined when it stays inside. */
export function linkedOutside(dir: string, file: string): string | undefined {
  try {
    const real = fs.realpathSync(file);
    const rel = path.relative(fs.realpathSync(dir), real);
    return rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)
      ? real
      : undefined;
  } catch {
    // Gone since it was listed: nothing is read from it.
    return undefined;
  }
}

/** A folder's entry names, or none when it cannot be listed (missing, not a folder). */
function entryNames(folder: string): string[] {
  try {
    return fs.readdirSync(folder);
  } catch {
    return [];
  }
}

/**
 * Each present file of each shard's results stream (a regular file itself), in reading order (the legacy
 * single file, then the segments: see segments.ts), with, when a link leads it out of `dir`, where to.
 */
function listShardFiles(
  dir: string,
  files: Pick<PasskFiles, 'shardFolder' | 'results'>,
  plannedShards: readonly number[],
): { index: number; file: string; outside?: string }[] {
  const name = path.basename(files.results);
  return locate(dir, files, plannedShards)
    .flatMap(({ index, folder }) => {
      const where = path.join(folder, path.dirname(files.results));
      return streamOrder(name, entryNames(where)).map((e) => ({ index, file: path.join(where, e) }));
    })
    .filter(({ file }) => isRegularFile(file))
    .map((f) => {
      const outside = linkedOutside(dir, f.file);
      return outside === undefined ? f : { ...f, outside };
    });
}

/**
 * The shards' results files in `dir` (either layout), by index, a shard's files in reading order (its
 * legacy file, then its segments; one entry each): only those present as regular files,
 * and inside `dir` (a link on the way out of it is not followed). The names are `files`' (a plan's),
 * else their script's; names that go up or are absolute find none.
 */
export function shardFiles(
  dir: string,
  files: Pick<PasskFiles, 'shardFolder' | 'results'> = DEFAULT_FILES,
  plannedShards: readonly number[] = [],
): { index: number; file: string }[] {
  if (planPathProblem(files)) return [];
  return listShardFiles(dir, files, plannedShards)
    .filter((f) => f.outside === undefined)
    .map(({ index, file }) => ({ index, file }));
}

/** A file's lines, streamed; opened when first read, so the shards merged one after another hold one fd. */
async function* fileLines(file: string): AsyncGenerator<string> {
  const opened = openRegularFile(file);
  // Gone (or replaced by something that is not a file) since it was listed: nothing to read.
  if (!opened) return;
  const input = fs.createReadStream('', { fd: opened.fd, autoClose: true });
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  try {
    yield* lines;
  } finally {
    lines.close();
    input.destroy();
  }
}

/** The lines of several files as one stream, each opened when the one before it is done. */
async function* filesLines(files: readonly string[]): AsyncGenerator<string> {
  for (const file of files) yield* fileLines(file);
}

/**
 * A folder's pass@k results merged (see mergeShards), or undefined when it has neither shard folders nor a
 * plan: it is no pass@k folder.
 */
export async function readPasskFolder(dir: string): Promise<MergedPasskResults | undefined> {
  const planFile = path.join(dir, PASSK_PLAN_FILE);
  const plan = planOfShape(dir);
  const pathProblem = plan && planPathProblem(plan.files);
  if (pathProblem) throw new UserError(`${planFile}: ${pathProblem}: not read`, 'BadPasskPlan');
  const files = resultFiles(plan);
  const planned = plan ? plan.shards.map((s) => s.index) : [];
  if (!plan && locate(dir, files, planned).length === 0) return undefined;
  const listed = listShardFiles(dir, files, planned);
  const out = listed.find((f) => f.outside !== undefined);
  if (out)
    throw plan
      ? new UserError(
          `${planFile}: shard ${out.index}'s ${path.relative(dir, out.file)} leads through a link to ${out.outside}, outside the run folder: not read`,
          'BadPasskPlan',
        )
      : new UserError(
          `${out.file} leads through a link to ${out.outside}, outside the folder: not read`,
          'PasskLinkOutside',
        );
  const byShard = new Map<number, string[]>();
  for (const { index, file } of listed) byShard.set(index, [...(byShard.get(index) ?? []), file]);
  const shards = [...byShard].map(([index, list]) => ({ index, lines: filesLines(list) }));
  return mergeShards({ source: dir, plan, shards });
}
