/*
 * The curriculum pre-flight: every id of an order file exists in the dataset copy the job
 * will receive. id-rules.ts says how each loader names its prompts, dataset-ids.ts reads the columns
 * that takes from the copy's Arrow streams, cache.ts keeps them by the copy's ETags, read-ids.ts reads a
 * copy's ids through the cache, order-check.ts compares and words the result, order-reference.ts checks one
 * order file of a config against its copy.
 */

export { ID_RULES, resolveIdRule } from './id-rules';
export { defaultCacheDir } from './cache';
export { curriculumWarnings, formatCurriculumLine, missingIdsProblem, uncheckedWarning } from './order-check';

export { readDatasetIds } from './read-ids';
export { checkOrderReference } from './order-reference';
