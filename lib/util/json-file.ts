import { readRegularText } from './safe-file';

/** A JSON object (not null, not an array): what a parsed document's fields are checked with. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The most these readers take: their files are state, records and manifests, which sit in folders a
 * job's downloads or another user can write, so a file larger than this is taken as not readable.
 */
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * A JSON file's value, or `fallback` when it is missing, not (yet) valid JSON, or not a regular file
 * (a FIFO never blocks: see readRegularText). A link to a regular file is read: a checkpoint from a
 * Hugging Face cache is links to its blobs; readers that must stay inside a folder check the path first.
 */
export function readJsonFile<T>(file: string, fallback: T, maxBytes = MAX_BYTES): T {
  const text = readTextFile(file, maxBytes);
  if (text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** A regular file's text (through a link too), or undefined when it cannot be read (missing, removed, a FIFO, too large). */
export function readTextFile(file: string, maxBytes = MAX_BYTES): string | undefined {
  try {
    return readRegularText(file, maxBytes, { followLinks: true });
  } catch {
    return undefined;
  }
}
