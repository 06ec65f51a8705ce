import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { planSubmit, type SubmitInput, type SubmitPlan } from '../../lib/training';
import { openSubmitSession } from '../../lib/submission';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const EXAMPLES_DIR = path.join(REPO_ROOT, 'configs', 'examples');
export const EVAL_DIR = path.join(REPO_ROOT, 'configs', 'eval');
export const GSM8K_EXAMPLE = path.join(EXAMPLES_DIR, 'qwen3-1.7B-gsm8k-grpo.yaml');

export function exampleConfigs(): string[] {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(EXAMPLES_DIR, f));
}

const made: string[] = [];

/** A fresh folder under the system's temporary folder, removed after the test file (test/setup.ts). */
export function tempDir(label = 'rlvr-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), label));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=test@example.com', '-c', 'user.name=test', ...args], {
    cwd,
    encoding: 'utf8',
  });
}

/**
 * A trainer repository like the users' own: configs/, entrypoints/, a committed .gitignore that drops
 * data/ (as theirs does), and the GSM8K example config (its eval config next to it).
 */
export function makeTrainerRepo(options: { config?: string; files?: Record<string, string> } = {}): {
  root: string;
  configPath: string;
} {
  const root = tempDir('rlvr-trainer-');
  const files: Record<string, string> = {
    ...Object.fromEntries(
      [
        'train_grpo_sft',
        'train_grpo_minimal',
        'train_grpo_gkd',
        'train_gkd',
        'train_opsd',
        'train_sft_only',
      ].map((t) => [`entrypoints/${t}.py`, 'print("train")\n']),
    ),
    'entrypoints/eval_benchmarks.py': 'print("eval")\n',
    // As theirs: the eval watcher runs lm_eval from the trainer's own dependencies.
    'pyproject.toml': '[project]\nname = "trainer"\ndependencies = ["lm-eval>=0.4.9"]\n',
    '.gitignore': 'data/\n*.log\n',
    'configs/eval/lm_eval_watch.yaml': fs.readFileSync(path.join(EVAL_DIR, 'lm_eval_watch.yaml'), 'utf8'),
    'configs/gsm8k.yaml': (options.config ?? fs.readFileSync(GSM8K_EXAMPLE, 'utf8'))
      .replace('eval_config: ../eval/lm_eval_watch.yaml', 'eval_config: eval/lm_eval_watch.yaml')
      // The repository is the trainer's source itself.
      .replace(/^ {2}trainer_src: .*\n/m, ''),
    ...options.files,
  };
  for (const [rel, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), body);
  }
  git(root, 'init', '-q');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'trainer');
  return { root, configPath: path.join(root, 'configs', 'gsm8k.yaml') };
}

export function writeConfig(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** The GSM8K example with text replacements applied (each must match). */
export function gsm8kWith(...replacements: [string | RegExp, string][]): string {
  let text = fs.readFileSync(GSM8K_EXAMPLE, 'utf8');
  for (const [from, to] of replacements) {
    const next = text.replace(from, to);
    if (next === text) throw new Error(`fixture replacement did not match: ${String(from)}`);
    text = next;
  }
  return text;
}

/** 1-based line of the first line containing `needle` in `text`. */
export function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`not in text: ${needle}`);
  return index + 1;
}

/** A whole safetensors file holding `data` as one U8 tensor (the one completeness rule reads the header). */
export function safetensorsWith(data: Buffer): Buffer {
  let header = JSON.stringify({ w: { dtype: 'U8', shape: [data.length], data_offsets: [0, data.length] } });
  header = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, Buffer.from(header), data]);
}

/** A plan in a session of its own, as a one-job caller makes it. */
export async function planInSession(input: SubmitInput): Promise<SubmitPlan> {
  const session = openSubmitSession(input);
  try {
    return await planSubmit(input, session);
  } finally {
    session.close();
  }
}
