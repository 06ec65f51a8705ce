import * as fs from 'node:fs';
import * as path from 'node:path';
import { outPathError, UserError } from '../errors';
import { LOCAL } from '../layout';
import { prepareOutFile, replaceRegularFile } from '../util';

/*
 * The paths a user names for the dashboard and its reports, checked before any work so that a wrong
 * one costs nothing: the results folder (--results), and the page to write (--out), which is never
 * written over anything but a regular file (see replaceRegularFile). A refusal is bad input naming the
 * flag (exit 2).
 */

/** The results folder `--results` names, as an absolute path; it must be a folder. */
export function resultsFolder(dir: string): string {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory())
    throw new UserError(
      `--results ${dir}: no such folder. Give the folder \`rlvr download\` and \`submit --local\` write to (default ${LOCAL.resultsDir}/).`,
      'BadFlag',
    );
  return abs;
}

/** `--out`'s path, checked: absent or a regular file, its folder made. Returns the absolute path. */
export function checkOutFile(out: string): string {
  try {
    return prepareOutFile(out);
  } catch (e) {
    throw outPathError('--out', out, e);
  }
}

/** Writes the page to `--out`, checking the path again first (it may have changed meanwhile). */
export function writeOutFile(out: string, html: string): void {
  const abs = checkOutFile(out);
  try {
    replaceRegularFile(abs, html);
  } catch (e) {
    throw outPathError('--out', out, e);
  }
}
