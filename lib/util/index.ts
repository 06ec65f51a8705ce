/**
 * Small helpers with no knowledge of jobs, S3 or trainers: files read and written safely (no link
 * followed, replaced atomically), JSON and text readers, a tar extractor that refuses unsafe entries,
 * line blocks of growing files, a bounded pool, a tree walk, the cache folder and sleep.
 */
export { rlvrCacheDir } from './cache-dir';
export { UnsafeEntryError, extractTarGz } from './extract-tar';
export { isObject, readJsonFile, readTextFile } from './json-file';
export { isLoopbackHost } from './loopback';
export { MAX_LINE, TAIL_BYTES, forEachLineBlock, tailBefore } from './line-blocks';
export { mapLimited } from './pool';
export { existingRegularFile, replaceRegularFile, prepareOutFile } from './replace-file';
export {
  NOFOLLOW,
  isRegularFile,
  openRegularFile,
  readInto,
  readRegularText,
  appendFileAtomic,
  copyBytes,
  copyFileAtomic,
  writeFileAtomic,
  writeFileAtomicWith,
} from './safe-file';
export { sleep } from './sleep';
export { walkTree } from './walk';
