import * as path from 'node:path';
import { compareCheckpoints, laterCheckpointExists } from './checkpoint-order';
import { weightsVerdict } from './folder-verdict';
import { checkpointFolders, localCheckpointFiles } from './local-folder';

/**
 * Watches checkpoint folders while a trainer runs: a folder becomes complete once its weights are whole
 * and its writer finished (a later checkpoint appeared, or nothing changed for `stableMs`).
 */
export class CheckpointTracker {
  private readonly seen = new Map<string, { signature: string; since: number }>();
  private readonly done = new Map<string, string>();

  constructor(
    private readonly dirs: () => readonly string[],
    private readonly stableMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Complete checkpoints, by name, with their folder. */
  complete(): { name: string; path: string }[] {
    return [...this.done.entries()]
      .map(([name, p]) => ({ name, path: p }))
      .sort((a, b) => compareCheckpoints(a.name, b.name));
  }

  /**
   * Looks once; returns the folders that became complete with this look. `ended`: the trainer has
   * exited, so nothing grows any more (weights must still be whole).
   */
  scan(ended = false): { name: string; path: string }[] {
    const newly: { name: string; path: string }[] = [];
    for (const dir of this.dirs()) {
      const names = checkpointFolders(dir);
      for (const name of names) {
        if (this.done.has(name)) continue;
        const folder = path.join(dir, name);
        let files: ReturnType<typeof localCheckpointFiles>;
        try {
          files = localCheckpointFiles(folder);
        } catch {
          continue; // removed while we looked
        }
        if (!weightsVerdict(files).complete) {
          this.seen.delete(name);
          continue;
        }
        let finished = ended || laterCheckpointExists(name, names);
        if (!finished) {
          const prev = this.seen.get(name);
          if (!prev || prev.signature !== files.signature) {
            this.seen.set(name, { signature: files.signature, since: this.now() });
            finished = this.stableMs === 0;
          } else finished = this.now() - prev.since >= this.stableMs;
        }
        if (!finished) continue;
        this.done.set(name, folder);
        newly.push({ name, path: folder });
      }
    }
    return newly;
  }
}
