import * as fs from 'node:fs';

/** A JSON object (not null, not an array): what a parsed document's fields are checked with. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON file's value, or `fallback` when it is missing or not (yet) valid JSON. */
export function readJsonFile<T>(file: string, fallback: T): T {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return fallback;
  }
}

/** A text file's content, or undefined when it cannot be read (missing, removed while we looked). */
export function readTextFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
