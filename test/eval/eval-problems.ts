import { ProblemsError, type Problem } from '../../lib/errors';
import { evalRequestOfFlags, type EvalFlags } from '../../bin/commands/eval-flags';
import { tempDir } from '../helpers/fixtures';

/** The problems reading and resolving these flags reports: it must throw ProblemsError. */
export function evalProblems(flags: EvalFlags, cwd = tempDir('rlvr-eval-in-')): Problem[] {
  try {
    evalRequestOfFlags(flags, cwd);
  } catch (err) {
    if (err instanceof ProblemsError) return [...err.problems];
    throw err;
  }
  throw new Error('no problem reported');
}
