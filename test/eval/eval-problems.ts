import { ProblemsError, type Problem } from '../../lib/errors';
import { parseEvalRequest, type EvalFlags } from '../../lib/eval/input';
import { tempDir } from '../helpers/fixtures';

/** The problems `parseEvalRequest` reports for these flags: it must throw ProblemsError. */
export function evalProblems(flags: EvalFlags, cwd = tempDir('rlvr-eval-in-')): Problem[] {
  try {
    parseEvalRequest(flags, cwd);
  } catch (err) {
    if (err instanceof ProblemsError) return [...err.problems];
    throw err;
  }
  throw new Error('no problem reported');
}
