/**
 * Pass@k campaigns from the launcher's side: the request, the plan (the repository's script once per
 * GPU of every host), submit, local runs, the merged results of jobs and folders, and what is built from
 * them (curricula, SFT sets).
 */
export { resolvePasskRequest, type PasskOptions, type PasskRequest } from './input';
export { passkProfile, planPasskCampaign, type PasskPlan } from './plan';
export { runPasskLocally } from './local';
export { submitPassk } from './submit';
export { passkResultsOf } from './results';
export { describeOrder, MISSING_PLACEMENTS, type OrderKind } from './curriculum';
export { parseOrderKey } from './order-key';
export { buildCurriculum, buildSft, type CurriculumBuilt } from './build-curriculum';
