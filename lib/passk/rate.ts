/**
 * How fast earlier campaigns went: prompts per second per shard (per GPU) from the attempts their jobs
 * recorded beside each shard's output, for campaigns of the same dataset, n, sampling and instance type
 * in the results folder. The time includes loading the model and vLLM's start, as a new job's will.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  PASSK_DIR,
  readPasskPlan,
  SHARD_RECORD_FILE,
  shardFolder,
  type PasskCampaign,
  type ShardRecord,
} from '../passk-records';
import { readJsonFile } from '../util';
import { campaignId } from './campaign';

export interface PasskRate {
  readonly promptsPerSecond: number;
  readonly startupS: number;
  /** The campaigns (run folders) it comes from. */
  readonly from: readonly string[];
}

/** The same campaign, whatever its shard count: the rate is per shard. */
const sameShape = (a: PasskCampaign, b: PasskCampaign) => campaignId(a, 0) === campaignId(b, 0);

export function earlierCampaignRate(
  resultsDir: string,
  campaign: PasskCampaign,
  instanceType: string,
): PasskRate | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync(resultsDir);
  } catch {
    return undefined;
  }
  let prompts = 0;
  let seconds = 0;
  const from: string[] = [];
  for (const name of entries.sort()) {
    const dir = path.join(resultsDir, name);
    // Checked as every reader of run folders checks a plan: a regular file, its shape, paths inside.
    const plan = readPasskPlan(dir);
    if (!plan?.campaign || !sameShape(plan.campaign, campaign)) continue;
    let used = false;
    for (const shard of plan.shards) {
      const record = readJsonFile<ShardRecord | undefined>(
        path.join(dir, PASSK_DIR, shardFolder(plan.files, shard.index), SHARD_RECORD_FILE),
        undefined,
        1024 * 1024,
      );
      const attempts = Array.isArray(record?.attempts) ? record.attempts.slice(0, 1000) : [];
      for (const a of attempts) {
        if (a.instanceType !== instanceType || !a.endedAt || a.promptsAfter === undefined) continue;
        const s = (Date.parse(a.endedAt) - Date.parse(a.startedAt)) / 1000;
        const done = a.promptsAfter - a.promptsBefore;
        if (!(s > 0) || done <= 0) continue;
        prompts += done;
        seconds += s;
        used = true;
      }
    }
    if (used) from.push(name);
  }
  return seconds > 0 && prompts > 0 ? { promptsPerSecond: prompts / seconds, startupS: 0, from } : undefined;
}
