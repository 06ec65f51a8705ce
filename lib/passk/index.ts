/**
 * Pass@k campaigns from the launcher's side: the request, the plan (the repository's script once per
 * GPU of every host), submit, local runs, the merged results of jobs and folders, and what is built from
 * them (curricula, SFT sets).
 */
export { parsePasskRequest, type PasskFlags, type PasskRequest } from './input';
export { passkProfile, planPasskCampaign, shardArgv, type PasskPlan } from './plan';
export { campaignId, campaignOf } from './campaign';
export { localJobOfPasskPlan, requireLocalImage, runPasskLocally } from './local';
export { passkSubmission, submitPassk } from './submit';
export { passkResultsOf, type PasskResultsOptions } from './results';
export {
  buildOrder,
  curriculumConfigLines,
  describeOrder,
  keyDescription,
  MISSING_PLACEMENTS,
  type BuildOrderOptions,
  type MissingPlacement,
  type CurriculumOrder,
  type OrderKind,
} from './curriculum';
export { orderKeyLabel, parseOrderKey, RATE_KEY, type OrderKey } from './order-key';
export { buildSftSet, readSftShards, SFT_DEFAULTS, type SftSet } from './sft';
export {
  buildCurriculum,
  buildSft,
  orderFileName,
  type CurriculumBuildInput,
  type CurriculumBuilt,
} from './build-curriculum';
