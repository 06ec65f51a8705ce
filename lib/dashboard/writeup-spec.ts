import * as fs from 'node:fs';
import * as path from 'node:path';
import { didYouMean, formatKeyPath, YamlFile, type KeyPath } from '../config';
import { ProblemsError, UserError, type Problem, type SourceLocation } from '../errors';

/*
 * The writeup spec (`rlvr report --spec writeup.yaml`): which runs a writeup page compares, against
 * which base model. It takes the team's own spec for generate_staleness_plots.py as it is (`runs:
 * [{id, run_dir, label, color, family}]`, `base_model: {label, evals_dir}`, `exclude_benchmarks`,
 * `presets`, `output`, `html_prefix`) and adds ours: `run:` (a run id in the results folder) beside
 * `run_dir:`, and `passk:` (pass@k folders) on a run and on the base model. Paths are relative to the
 * spec file, so a spec kept beside its runs works from anywhere.
 *
 * Every problem is reported at once with the spec's file:line:column. An unknown key close to a known
 * one is refused (a misspelt `run_dir` would silently drop a run's curves); any other unknown key is
 * ignored with a note, since their specs grow keys their JS reads and this page does not need.
 */

/** A pass@k folder: ours (`passk-plan.json` + `passk/shard_<i>/`) or their script's bare `shard_<i>/`. */
export interface PasskSource {
  readonly dir: string;
  /** The benchmark it is drawn under; default: the campaign's dataset, else the folder's name. */
  readonly benchmark?: string;
  readonly at: SourceLocation;
}

export interface WriteupRunSpec {
  readonly id: string;
  readonly label: string;
  readonly color?: string;
  readonly family?: string;
  /** A run folder anywhere (theirs): resolved against the spec's folder. */
  readonly runDir?: string;
  /** A run id in the results folder (ours). */
  readonly run?: string;
  readonly passk: readonly PasskSource[];
  readonly at: SourceLocation;
  /** Where `run_dir` / `run` is written, for problems found when it is read. */
  readonly sourceAt: SourceLocation;
}

export interface WriteupBaseSpec {
  readonly label: string;
  /** Their evals folder (`<evals_dir>/<bench>/summary.json`), or a run's `evals/` of ours. */
  readonly evalsDir?: string;
  readonly runDir?: string;
  readonly run?: string;
  readonly passk: readonly PasskSource[];
  readonly at: SourceLocation;
}

export interface WriteupPreset {
  readonly id: string;
  readonly label: string;
  readonly runs: readonly string[];
  readonly text?: string;
}

export interface WriteupSpec {
  readonly file: string;
  readonly title: string;
  readonly runs: readonly WriteupRunSpec[];
  readonly base?: WriteupBaseSpec;
  /** Benchmark name prefixes left out of every panel (their JS matches them as prefixes too). */
  readonly excludeBenchmarks: readonly string[];
  readonly presets: readonly WriteupPreset[];
  /** `output:` when it names an HTML file (resolved): the default for --out. */
  readonly output?: string;
  /** What the reader ignored or assumed, for the page and the terminal. */
  readonly notes: readonly string[];
}

const TOP_KEYS = [
  'title',
  'runs',
  'base_model',
  'exclude_benchmarks',
  'presets',
  'output',
  'html_prefix',
] as const;
const RUN_KEYS = ['id', 'run_dir', 'run', 'label', 'color', 'family', 'passk', 'path', 'evals'] as const;
const BASE_KEYS = ['label', 'evals_dir', 'run_dir', 'run', 'passk'] as const;
const PRESET_KEYS = ['id', 'label', 'runs', 'text'] as const;
const PASSK_KEYS = ['dir', 'benchmark'] as const;

type Obj = Record<string, unknown>;

/** A folder that is not there, with the path it resolved to when that is not what was written. */
const noFolder = (v: string, abs: string): string => `${v}: no such folder${abs === v ? '' : ` (${abs})`}`;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reader {
  readonly problems: Problem[] = [];
  readonly notes: string[] = [];
  constructor(
    readonly file: YamlFile,
    readonly dir: string,
  ) {}

  problem(at: KeyPath, message: string, hint?: string, key = false): void {
    this.problems.push(this.file.problem(at, message, hint, { key }));
  }

  /** Unknown keys: a likely misspelling is a problem, anything else a note. */
  keys(value: Obj, at: KeyPath, known: readonly string[]): void {
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      const guess = didYouMean(key, known);
      if (guess)
        this.problem(
          [...at, key],
          `unknown key "${key}" — did you mean "${guess}"?`,
          `The writeup reads "${guess}", not "${key}": rename it.`,
          true,
        );
      else {
        const loc = this.file.locate([...at, key], { key: true });
        this.notes.push(
          `${loc.file}:${loc.line}:${loc.column}: ${formatKeyPath([...at, key])}: not a writeup key; ignored.`,
        );
      }
    }
  }

  string(value: Obj, key: string, at: KeyPath): string | undefined {
    const v = value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string' && v.trim() !== '') return v;
    if (typeof v === 'number' && key !== 'run_dir' && key !== 'evals_dir') return String(v);
    this.problem([...at, key], `${key}: a non-empty string, not ${JSON.stringify(v)}`);
    return undefined;
  }

  /** A path relative to the spec's folder, which must exist as a folder. */
  folder(value: Obj, key: string, at: KeyPath): string | undefined {
    const v = this.string(value, key, at);
    if (v === undefined) return undefined;
    const abs = this.resolve(v);
    let ok = false;
    try {
      ok = fs.statSync(abs).isDirectory();
    } catch {
      ok = false;
    }
    if (!ok)
      this.problem(
        [...at, key],
        noFolder(v, abs),
        'Paths are relative to the spec file: give the run folder (the one with traces/ and evals/).',
      );
    return ok ? abs : undefined;
  }

  stringList(value: Obj, key: string, at: KeyPath): string[] {
    const v = value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' || typeof x === 'number')) {
      this.problem([...at, key], `${key}: a list of names`);
      return [];
    }
    return v.map(String);
  }

  passk(value: Obj, at: KeyPath): PasskSource[] {
    const v = value.passk;
    if (v === undefined || v === null) return [];
    const items = typeof v === 'string' || isObj(v) ? [v] : v;
    if (!Array.isArray(items)) {
      this.problem([...at, 'passk'], 'passk: a list of pass@k folders (or of {dir, benchmark})');
      return [];
    }
    const out: PasskSource[] = [];
    items.forEach((item, i) => {
      const where: KeyPath = Array.isArray(v) ? [...at, 'passk', i] : [...at, 'passk'];
      const entry: Obj | undefined =
        typeof item === 'string' ? { dir: item } : isObj(item) ? item : undefined;
      if (!entry) {
        this.problem(where, 'a pass@k folder (a path) or {dir, benchmark}');
        return;
      }
      if (isObj(item)) this.keys(item, where, PASSK_KEYS);
      const dir =
        typeof item === 'string'
          ? this.folderValue(item, where)
          : entry.dir === undefined
            ? (this.problem(where, 'dir: the pass@k folder is missing'), undefined)
            : this.folder(entry, 'dir', where);
      const benchmark = isObj(item) ? this.string(entry, 'benchmark', where) : undefined;
      if (dir) out.push({ dir, benchmark, at: this.file.locate(where) });
    });
    return out;
  }

  /** A path as written: relative to the spec's folder, `~` the home folder. */
  resolve(v: string): string {
    return path.resolve(this.dir, v.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
  }

  private folderValue(v: string, where: KeyPath): string | undefined {
    const abs = this.resolve(v);
    try {
      if (fs.statSync(abs).isDirectory()) return abs;
    } catch {
      // reported below
    }
    this.problem(where, noFolder(v, abs), 'Paths are relative to the spec file.');
    return undefined;
  }
}

function readRun(r: Reader, value: unknown, i: number, taken: Set<string>): WriteupRunSpec | undefined {
  const at: KeyPath = ['runs', i];
  if (!isObj(value)) {
    r.problem(at, 'a run: a mapping with run_dir (a run folder) or run (a run id), and a label');
    return undefined;
  }
  r.keys(value, at, RUN_KEYS);
  if (value.path !== undefined || value.evals !== undefined) {
    r.problem(
      [...at, value.path !== undefined ? 'path' : 'evals'],
      'a trace file and evals file given apart are not read here',
      'Give run_dir: the run folder (traces/trace.jsonl and evals/ inside it).',
      true,
    );
  }
  const runDir = r.folder(value, 'run_dir', at);
  const run = r.string(value, 'run', at);
  if (value.run_dir !== undefined && value.run !== undefined)
    r.problem([...at, 'run'], 'give run_dir or run, not both', undefined, true);
  else if (value.run_dir === undefined && value.run === undefined && value.path === undefined)
    r.problem(
      at,
      'no run_dir or run: which run is this?',
      'run_dir: a run folder; run: a run id in --results.',
    );
  const label = r.string(value, 'label', at);
  const id = r.string(value, 'id', at) ?? run ?? (runDir ? path.basename(runDir) : label);
  const color = r.string(value, 'color', at);
  if (color !== undefined && !/^(#[0-9a-fA-F]{3,8}|[a-zA-Z]+|(rgb|hsl)a?\([0-9.,%\s]+\))$/.test(color))
    r.problem([...at, 'color'], `color ${JSON.stringify(color)}: a CSS colour (#3b82f6, a name, rgb(…))`);
  if (id !== undefined && taken.has(id))
    r.problem(
      [...at, value.id !== undefined ? 'id' : 'label'],
      `run id "${id}" is used twice`,
      'Give each run its own id.',
    );
  if (id !== undefined) taken.add(id);
  const passk = r.passk(value, at);
  if (id === undefined) return undefined;
  return {
    id,
    label: label ?? id,
    color,
    family: r.string(value, 'family', at),
    runDir,
    run,
    passk,
    at: r.file.locate(at),
    sourceAt: r.file.locate([...at, value.run !== undefined ? 'run' : 'run_dir']),
  };
}

function readBase(r: Reader, value: unknown): WriteupBaseSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const at: KeyPath = ['base_model'];
  if (!isObj(value)) {
    r.problem(at, 'base_model: a mapping with label and evals_dir (or run_dir, run) and passk');
    return undefined;
  }
  r.keys(value, at, BASE_KEYS);
  const sources = ['evals_dir', 'run_dir', 'run'].filter((k) => value[k] !== undefined);
  if (sources.length > 1)
    r.problem(
      [...at, sources[1]],
      `give one of evals_dir, run_dir, run (not ${sources.join(' and ')})`,
      undefined,
      true,
    );
  return {
    label: r.string(value, 'label', at) ?? 'base model',
    evalsDir: r.folder(value, 'evals_dir', at),
    runDir: r.folder(value, 'run_dir', at),
    run: r.string(value, 'run', at),
    passk: r.passk(value, at),
    at: r.file.locate(at),
  };
}

function readPresets(r: Reader, value: unknown, ids: ReadonlySet<string>): WriteupPreset[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    r.problem(['presets'], 'presets: a list of {id, label, runs, text}');
    return [];
  }
  const out: WriteupPreset[] = [];
  value.forEach((p, i) => {
    const at: KeyPath = ['presets', i];
    if (!isObj(p)) {
      r.problem(at, 'a preset: {id, label, runs, text}');
      return;
    }
    r.keys(p, at, PRESET_KEYS);
    const runs = r.stringList(p, 'runs', at);
    runs.forEach((id, j) => {
      if (!ids.has(id)) {
        const guess = didYouMean(id, [...ids]);
        r.problem(
          [...at, 'runs', j],
          `no run "${id}" in runs:${guess ? ` — did you mean "${guess}"?` : ''}`,
          `A preset names runs by their id (${[...ids].join(', ')}).`,
        );
      }
    });
    const label = r.string(p, 'label', at);
    const id = r.string(p, 'id', at) ?? label ?? `preset-${i + 1}`;
    out.push({ id, label: label ?? id, runs, text: r.string(p, 'text', at) });
  });
  return out;
}

/** Reads and checks a writeup spec; every problem at once as a ProblemsError (exit 2). */
export function readWriteupSpec(file: string, displayPath = file): WriteupSpec {
  const yaml = YamlFile.read(file, displayPath);
  const value = yaml.toJS();
  const r = new Reader(yaml, path.dirname(path.resolve(file)));
  if (!isObj(value))
    throw new ProblemsError(`${displayPath} is not a writeup spec`, [
      r.file.problem([], 'a mapping with runs: [...] (and base_model, exclude_benchmarks, presets)'),
    ]);
  r.keys(value, [], TOP_KEYS);
  const taken = new Set<string>();
  let runs: WriteupRunSpec[] = [];
  if (!Array.isArray(value.runs) || value.runs.length === 0)
    r.problem(
      value.runs === undefined ? [] : ['runs'],
      'runs: a list of at least one run ({id, run_dir or run, label, color})',
    );
  else
    runs = value.runs.flatMap((v, i) => {
      const run = readRun(r, v, i, taken);
      return run ? [run] : [];
    });
  const base = readBase(r, value.base_model);
  const excludeBenchmarks = r.stringList(value, 'exclude_benchmarks', []);
  const presets = readPresets(r, value.presets, taken);
  let output: string | undefined;
  const out = r.string(value, 'output', []);
  if (out !== undefined) {
    if (/\.html?$/i.test(out)) output = path.resolve(r.dir, out);
    else
      r.notes.push(
        `output: ${out} is their generator's JavaScript file; this page is written where --out says.`,
      );
  }
  if (value.html_prefix !== undefined)
    r.notes.push('html_prefix: their generator names its page elements by it; one page here needs none.');
  if (r.problems.length)
    throw new ProblemsError(`${displayPath}: not a writeup spec this can read`, r.problems);
  const title =
    r.string(value, 'title', []) ??
    (typeof value.html_prefix === 'string' && value.html_prefix
      ? `${value.html_prefix} writeup`
      : path.basename(displayPath).replace(/\.ya?ml$/i, ''));
  return { file: displayPath, title, runs, base, excludeBenchmarks, presets, output, notes: r.notes };
}

/** Reads the spec `--spec` names, which must be a regular file (a folder or FIFO is bad input). */
export function readWriteupSpecFile(file: string): WriteupSpec {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st) throw new UserError(`--spec ${file}: no such file.`, 'BadFlag');
  if (!st.isFile())
    throw new UserError(
      `--spec ${file}: not a regular file (${st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : 'a device or socket'}): name the spec's YAML file.`,
      'BadFlag',
    );
  return readWriteupSpec(file);
}

/** Whether the spec names runs of the results folder (`run:`), so that folder must be given. */
export function writeupNeedsResults(spec: WriteupSpec): boolean {
  return spec.runs.some((r) => r.run !== undefined) || spec.base?.run !== undefined;
}
