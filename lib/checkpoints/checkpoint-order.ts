/** Checkpoint folders of one run by their names: which is later, and their order. */
import { parseCheckpointFolder } from '../layout';

/**
 * The writer-finished half: a later checkpoint (higher step, or `_final`) beside it says the trainer
 * moved on. `siblings` are the folder names of the same run.
 */
export function laterCheckpointExists(name: string, siblings: readonly string[]): boolean {
  const me = parseCheckpointFolder(name);
  if (!me || me.final) return false;
  const prefix = name.slice(0, name.length - `_step${me.step}`.length);
  return siblings.some((s) => {
    const other = parseCheckpointFolder(s);
    if (!other || !s.startsWith(prefix)) return false;
    return other.final || (other.step ?? -1) > (me.step ?? -1);
  });
}

export function compareCheckpoints(a: string, b: string): number {
  const pa = parseCheckpointFolder(a);
  const pb = parseCheckpointFolder(b);
  const ra = a.replace(/_(step\d+|final)$/, '');
  const rb = b.replace(/_(step\d+|final)$/, '');
  if (ra !== rb) return ra < rb ? -1 : 1;
  const sa = pa?.final ? Number.POSITIVE_INFINITY : (pa?.step ?? -1);
  const sb = pb?.final ? Number.POSITIVE_INFINITY : (pb?.step ?? -1);
  return sa - sb;
}
