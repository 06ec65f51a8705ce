import * as fs from 'node:fs';
import * as path from 'node:path';
import { MODEL_INDEX_FILE, parseCheckpointFolder } from '../layout';

/**
 * Which checkpoint folders are complete: every file the index names is present (or, without an index,
 * a weights file), and no file changed size or time between two looks at least `stableMs` apart.
 * The eval watcher is only ever shown complete checkpoints (BRIEF §6).
 */
export class CheckpointTracker {
  private readonly seen = new Map<string, { signature: string; since: number }>();
  private readonly done = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly stableMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Checkpoint folders present, complete or not. */
  folders(): string[] {
    if (!fs.existsSync(this.dir)) return [];
    return fs
      .readdirSync(this.dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && parseCheckpointFolder(e.name))
      .map((e) => e.name)
      .sort();
  }

  complete(): string[] {
    return [...this.done].sort();
  }

  /** Looks once; returns the folders that became complete with this look. */
  scan(): string[] {
    const newly: string[] = [];
    for (const name of this.folders()) {
      if (this.done.has(name)) continue;
      const folder = path.join(this.dir, name);
      const state = folderState(folder);
      if (!state.hasAllFiles) {
        this.seen.delete(name);
        continue;
      }
      const prev = this.seen.get(name);
      if (!prev || prev.signature !== state.signature) {
        this.seen.set(name, { signature: state.signature, since: this.now() });
        if (this.stableMs > 0) continue;
      } else if (this.now() - prev.since < this.stableMs) {
        continue;
      }
      this.done.add(name);
      newly.push(name);
    }
    return newly;
  }
}

function folderState(folder: string): { hasAllFiles: boolean; signature: string } {
  const files = new Map<string, fs.Stats>();
  const visit = (rel: string) => {
    for (const e of fs.readdirSync(path.join(folder, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) visit(r);
      else if (e.isFile()) files.set(r, fs.statSync(path.join(folder, r)));
    }
  };
  try {
    visit('');
  } catch {
    return { hasAllFiles: false, signature: '' }; // removed while we looked
  }
  let needed: string[];
  if (files.has(MODEL_INDEX_FILE)) {
    try {
      const index = JSON.parse(fs.readFileSync(path.join(folder, MODEL_INDEX_FILE), 'utf8')) as {
        weight_map?: Record<string, string>;
      };
      needed = [...new Set(Object.values(index.weight_map ?? {}))];
    } catch {
      return { hasAllFiles: false, signature: '' }; // index still being written
    }
    if (needed.length === 0) return { hasAllFiles: false, signature: '' };
  } else {
    const weights = [...files.keys()].filter((f) => /\.(safetensors|bin|pt)$/.test(f));
    if (weights.length === 0) return { hasAllFiles: false, signature: '' };
    needed = weights;
  }
  const hasAllFiles = needed.every((f) => files.has(f));
  const signature = [...files.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([f, st]) => `${f}:${st.size}:${st.mtimeMs}`)
    .join('|');
  return { hasAllFiles, signature };
}

/** Shows a complete checkpoint to the eval watcher: a symlink in its watch folder. */
export function exposeCheckpoint(viewDir: string, checkpointDir: string, name: string): void {
  fs.mkdirSync(viewDir, { recursive: true });
  const link = path.join(viewDir, name);
  if (!fs.existsSync(link)) fs.symlinkSync(path.join(checkpointDir, name), link);
}
