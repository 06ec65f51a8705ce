import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  rebuildWorkFile,
  SegmentedFile,
  Segmenter,
  streamedFiles,
  type SegmentBounds,
} from '../../lib/container/segments';
import { readPasskFolder, segmentName } from '../../lib/passk-records';
import { tempDir } from '../helpers/fixtures';

const RESULTS = 'verification_results.jsonl';
const COMPLETIONS = 'completions.jsonl';

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A results line as their script writes it, padded to about `bytes` with completions' text. */
function resultLine(id: string, bytes: number): string {
  const head = `{"prompt_id": "${id}", "num_completions": 4, "num_correct": 1, "pass_rate": 0.25, "scores": [0, 0, 0, 1], "completions": [`;
  const text = 'x'.repeat(Math.max(1, bytes - head.length - 30));
  return `${head}{"text": "${text}", "score": 1}]}\n`;
}

function completionsLine(id: string): string {
  return `{"prompt_id": "${id}", "prompt": "Q: ${id}", "problem": {"answer": "1"}, "completions": []}\n`;
}

/** Every changed file of `dir` (recursively) sent whole, as the checkpoint sync is assumed to do. */
class SyncModel {
  private seen = new Map<string, string>();
  sent = 0;
  pass(dir: string): void {
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else {
          const st = fs.statSync(p);
          const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
          if (this.seen.get(p) !== stamp) {
            this.seen.set(p, stamp);
            this.sent += st.size;
          }
        }
      }
    };
    walk(dir);
  }
}

describe('segments of an appended file', () => {
  it('a simulated campaign: the sync sends about the output once, where the single growing file is sent many times', () => {
    const root = tempDir('rlvr-segments-sim-');
    const work = path.join(root, 'work', 'shard_0');
    const dir = path.join(root, 'checkpoints', 'passk', 'shard_0');
    fs.mkdirSync(work, { recursive: true });
    fs.mkdirSync(dir, { recursive: true });
    let now = 0;
    const bounds: SegmentBounds = { bytes: 8 * 1024 * 1024, ageMs: 60_000, tickMs: 2_000 };
    const results = new SegmentedFile(path.join(work, RESULTS), dir, RESULTS);
    const completions = new SegmentedFile(path.join(work, COMPLETIONS), dir, COMPLETIONS);
    const segmenter = new Segmenter([results, completions], bounds, () => now);
    const sync = new SyncModel();
    const rand = random(7);
    // One simulated hour: a prompt every ~12 s (64-512 completions of a few hundred tokens: 20-400 KB a
    // line), each line written in two pieces a tick apart; a sync every 30 s, a look every 2 s.
    const SYNC_MS = 30_000;
    const END = 3600_000;
    let nextPrompt = 0;
    let prompt = 0;
    let half: string | undefined;
    let oldSent = 0;
    let lastOldSize = -1;
    for (now = 0; now <= END; now += 1_000) {
      if (half !== undefined) {
        fs.appendFileSync(path.join(work, RESULTS), half);
        half = undefined;
      } else if (now >= nextPrompt) {
        const id = `p${prompt++}`;
        const line = resultLine(id, 20_000 + Math.floor(rand() * 380_000));
        fs.appendFileSync(path.join(work, COMPLETIONS), completionsLine(id));
        const cut = Math.floor(line.length / 2);
        fs.appendFileSync(path.join(work, RESULTS), line.slice(0, cut));
        half = line.slice(cut);
        nextPrompt = now + 6_000 + Math.floor(rand() * 12_000);
      }
      if (now % bounds.tickMs === 0) segmenter.tick();
      if (now % SYNC_MS === 0) {
        sync.pass(dir);
        // The old layout: the script's two files in the streamed folder, each sent whole when changed.
        const size =
          fs.statSync(path.join(work, RESULTS)).size + fs.statSync(path.join(work, COMPLETIONS)).size;
        if (size !== lastOldSize) oldSent += size;
        lastOldSize = size;
      }
    }
    if (half !== undefined) fs.appendFileSync(path.join(work, RESULTS), half);
    segmenter.flush(true);
    sync.pass(dir);
    const output =
      fs.statSync(path.join(work, RESULTS)).size + fs.statSync(path.join(work, COMPLETIONS)).size;
    const ratio = sync.sent / output;
    const oldRatio = oldSent / output;
    // The figure asked for: printed for comparison with the single-file layout.
    process.stdout.write(
      `segments simulation: output ${(output / 2 ** 20).toFixed(1)} MiB; segments sent ${(sync.sent / 2 ** 20).toFixed(1)} MiB (${ratio.toFixed(3)}x); one growing file sent ${(oldSent / 2 ** 20).toFixed(1)} MiB (${oldRatio.toFixed(1)}x)\n`,
    );
    expect(sync.sent).toBeLessThanOrEqual(1.2 * output);
    expect(oldRatio).toBeGreaterThan(20);
    // The segments are the file's bytes, once each, in order.
    const joined = Buffer.concat(streamedFiles(dir, RESULTS).map((f) => fs.readFileSync(f)));
    expect(joined.equals(fs.readFileSync(path.join(work, RESULTS)))).toBe(true);
    expect(streamedFiles(dir, RESULTS).every((f) => fs.readFileSync(f).at(-1) === 0x0a)).toBe(true);
    // No segment is sealed much past its bounds: the size bound (plus one line) or the age bound.
    const sizes = streamedFiles(dir, RESULTS).map((f) => fs.statSync(f).size);
    expect(Math.max(...sizes)).toBeLessThan(bounds.bytes + 2 * 400_000);
    expect(sizes.length).toBeGreaterThan(prompt / 10);
  });

  it('never copies a partial last line, and seals by age', () => {
    const root = tempDir('rlvr-segments-age-');
    const work = path.join(root, 'w.jsonl');
    let now = 0;
    const f = new SegmentedFile(work, root, RESULTS);
    const s = new Segmenter([f], { bytes: 1 << 20, ageMs: 10_000, tickMs: 1_000 }, () => now);
    fs.writeFileSync(work, '{"prompt_id": "a"}\n{"prompt_id": "b"');
    expect(s.tick()).toBe(false);
    now = 9_999;
    expect(s.tick()).toBe(false);
    now = 10_000;
    expect(s.tick()).toBe(true);
    expect(fs.readFileSync(path.join(root, segmentName(RESULTS, 0)), 'utf8')).toBe('{"prompt_id": "a"}\n');
    s.flush(true);
    expect(fs.existsSync(path.join(root, segmentName(RESULTS, 1)))).toBe(false);
    fs.appendFileSync(work, '}\n');
    s.flush(true);
    expect(fs.readFileSync(path.join(root, segmentName(RESULTS, 1)), 'utf8')).toBe('{"prompt_id": "b"}\n');
    // No temporary name is left behind.
    expect(fs.readdirSync(root).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('a log (not lines) gives its last bytes when its process has ended', () => {
    const root = tempDir('rlvr-segments-log-');
    const work = path.join(root, 'work.log');
    fs.writeFileSync(work, 'one\ntwo, no newline');
    const s = new Segmenter([new SegmentedFile(work, root, 'shard.log', { lines: false })]);
    s.flush(true);
    expect(fs.readFileSync(path.join(root, 'shard.00000.log'), 'utf8')).toBe('one\ntwo, no newline');
  });
});

/**
 * A stand-in for their script on one shard: resume reads the results file's ids and skips them; each
 * prompt's completions line is written before its result.
 */
function scriptRun(work: string, prompts: readonly string[], steps: number, onStep: () => void): void {
  const resultsFile = path.join(work, RESULTS);
  const done = new Set(
    fs.existsSync(resultsFile)
      ? fs
          .readFileSync(resultsFile, 'utf8')
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => (JSON.parse(l) as { prompt_id: string }).prompt_id)
      : [],
  );
  let step = 0;
  for (const id of prompts) {
    if (done.has(id)) continue;
    if (step++ >= steps) return;
    fs.appendFileSync(path.join(work, COMPLETIONS), completionsLine(id));
    fs.appendFileSync(resultsFile, resultLine(id, 300 + (id.length % 7) * 50));
    onStep();
  }
}

describe('a shard killed mid-segment and restarted', () => {
  it('rebuilds its work files from the segments (legacy file first); the merge has every prompt exactly once', async () => {
    const root = tempDir('rlvr-segments-resume-');
    const dir = path.join(root, 'checkpoints', 'shard_0');
    fs.mkdirSync(dir, { recursive: true });
    const prompts = Array.from({ length: 60 }, (_, i) => `gsm8k_${i}`);
    // An older job's single file, cut off by its stop: its prompts are kept, its cut line dropped.
    fs.writeFileSync(
      path.join(dir, RESULTS),
      `${resultLine('gsm8k_0', 400)}${resultLine('gsm8k_1', 400)}{"prompt_id": "gsm8k_2", "num_co`,
    );
    fs.writeFileSync(
      path.join(dir, COMPLETIONS),
      `${completionsLine('gsm8k_0')}${completionsLine('gsm8k_1')}`,
    );
    let lostToKill = 0;
    let now = 0;
    for (const steps of [17, 13, Infinity]) {
      // A new instance: its work folder is empty, then rebuilt from the run folder.
      const work = path.join(root, `work-${steps}`);
      const before = rebuildWorkFile(dir, RESULTS, path.join(work, RESULTS));
      rebuildWorkFile(dir, COMPLETIONS, path.join(work, COMPLETIONS));
      const files = [RESULTS, COMPLETIONS].map(
        (n) => new SegmentedFile(path.join(work, n), dir, n, { from: fs.statSync(path.join(work, n)).size }),
      );
      const s = new Segmenter(files, { bytes: 4_000, ageMs: 5_000, tickMs: 1_000 }, () => now);
      scriptRun(work, prompts, steps, () => {
        now += 1_000;
        s.tick();
      });
      if (steps === Infinity) s.flush(true);
      else {
        // Killed: what was not sealed stays in the lost work folder, and is generated again.
        const sealed = streamedFiles(dir, RESULTS).reduce((n, f) => n + fs.statSync(f).size, 0);
        const legacyCut = '{"prompt_id": "gsm8k_2", "num_co'.length;
        lostToKill += fs.statSync(path.join(work, RESULTS)).size + before.cut - (sealed - legacyCut);
      }
    }
    expect(lostToKill).toBeGreaterThan(0);
    const merged = await readPasskFolder(path.join(root, 'checkpoints'));
    expect(merged!.prompts.map((p) => p.promptId).sort()).toEqual([...prompts].sort());
    expect(merged!.duplicates).toBe(0);
    // The legacy file's cut line is its only bad line.
    expect(merged!.badLines).toEqual([expect.objectContaining({ shard: 0, line: 3 })]);
  });
});
