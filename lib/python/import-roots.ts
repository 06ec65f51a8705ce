import * as path from 'node:path';
import { STDLIB_MODULES } from './stdlib';
import type { Pyproject } from './pyproject';

/**
 * Where the trainer's own packages are imported from, inside the shipped source: a folder that goes on
 * PYTHONPATH for every process of the job (the trainer, its eval script, `ray start` on every host, so
 * the Ray workers that host its actors import them too). The image holds dependencies only, so these
 * are the only copy of the trainer's code the job has.
 */
export interface ImportRoot {
  /** Relative to the source root, `/`-separated; `.` is the root itself. */
  readonly path: string;
  /** Where it came from, for the plan. */
  readonly why: string;
  /** The top-level packages (folders with `__init__.py`) and modules it holds. */
  readonly packages: readonly string[];
}

export interface ImportRootsInput {
  /** The shipped files, relative to the source root. */
  readonly files: readonly string[];
  readonly pyproject: Pyproject | undefined;
  /** Roots a trainer profile names (`runtime.import_roots`), with the profile that names them. */
  readonly named?: { readonly paths: readonly string[]; readonly by: string };
}

const under = (root: string, file: string): string | undefined =>
  root === '.' ? file : file.startsWith(`${root}/`) ? file.slice(root.length + 1) : undefined;

/** Top-level packages and modules of `root` among `files`. */
function topLevel(root: string, files: readonly string[], withModules: boolean): string[] {
  const names = new Set<string>();
  for (const f of files) {
    const rel = under(root, f);
    if (!rel) continue;
    const parts = rel.split('/');
    if (parts.length === 2 && parts[1] === '__init__.py' && /^[A-Za-z_]\w*$/.test(parts[0]))
      names.add(parts[0]);
    else if (withModules && parts.length === 1 && /^[A-Za-z_]\w*\.py$/.test(parts[0]))
      names.add(parts[0].slice(0, -3));
  }
  return [...names].sort();
}

/**
 * The import roots: those a profile names, then those pyproject.toml's build configuration declares;
 * without a declaration, `src/` when it holds a package or module (the src layout setuptools and uv
 * discover), else the repository root.
 */
export function findImportRoots(input: ImportRootsInput): ImportRoot[] {
  const { files, pyproject } = input;
  const roots: ImportRoot[] = [];
  const add = (p: string, why: string) => {
    const clean = path.posix.normalize(p.replace(/^\.\//, '').replace(/\/+$/, '') || '.');
    if (roots.some((r) => r.path === clean)) return;
    roots.push({ path: clean, why, packages: topLevel(clean, files, true) });
  };
  for (const p of input.named?.paths ?? []) add(p, input.named!.by);
  if (pyproject?.declaredRoots) {
    for (const r of pyproject.declaredRoots) add(r.path, `pyproject.toml ${r.by}`);
  } else if (topLevel('src', files, true).length > 0) {
    add('src', pyproject?.isPackage ? 'pyproject.toml: a package in a src layout' : 'a src layout');
  }
  if (roots.length === 0) add('.', 'the repository root (no src layout)');
  return roots;
}

/** A problem with the import roots: the message names the file and line it concerns when there is one. */
export interface ImportProblem {
  readonly message: string;
  readonly hint: string;
}

/** Roots that ship nothing: the job's PYTHONPATH would name a folder that is not there. */
export function missingRoots(roots: readonly ImportRoot[], files: readonly string[]): ImportProblem[] {
  return roots
    .filter((r) => r.path !== '.' && !files.some((f) => f.startsWith(`${r.path}/`)))
    .map((r) => ({
      message: `import root ${r.path}/ (${r.why}) is not in the shipped source`,
      hint: `Ship it (check launcher.exclude and .gitignore), or correct the root.`,
    }));
}

/** The top-level names a Python file imports at column 0 (`import a.b`, `from a import b`; not relative ones). */
export function topLevelImports(text: string): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const from = /^from\s+([A-Za-z_][\w.]*)\s+import\b/.exec(lines[i]);
    const imp = /^import\s+([A-Za-z_][\w.]*(?:\s+as\s+\w+)?(?:\s*,\s*[A-Za-z_][\w.]*(?:\s+as\s+\w+)?)*)/.exec(
      lines[i],
    );
    const names = from ? [from[1]] : imp ? imp[1].split(',').map((s) => s.trim().split(/\s+/)[0]) : [];
    for (const n of names) out.push({ name: n.split('.')[0], line: i + 1 });
  }
  return out;
}

/**
 * Where `name` is a top-level package or module among `files` — in a folder that is no package itself
 * (no `__init__.py`), so it could be an import root — or undefined. `verifiers/math.py` inside a package
 * is that package's module, not a top-level `math`.
 */
function locate(name: string, files: readonly string[]): string | undefined {
  const present = new Set(files);
  for (const f of files) {
    const m = new RegExp(`^(?:(.*)/)?${name}(?:/__init__\\.py|\\.py)$`).exec(f);
    if (!m) continue;
    const folder = m[1] ?? '.';
    if (!present.has(folder === '.' ? '__init__.py' : `${folder}/__init__.py`)) return folder;
  }
  return undefined;
}

/**
 * What a script imports from the repository but would not find: a package that ships, but under no
 * import root and not beside the script (Python puts the script's folder first on sys.path). Standard
 * library names and the names of the project's dependencies are never the repository's.
 */
export function unreachableImports(
  script: string,
  text: string,
  roots: readonly ImportRoot[],
  files: readonly string[],
  dependencies: readonly string[] = [],
): ImportProblem[] {
  const problems: ImportProblem[] = [];
  const beside = path.posix.dirname(script);
  const seen = new Set<string>();
  for (const { name, line } of topLevelImports(text)) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (STDLIB_MODULES.has(name) || dependencies.includes(name.toLowerCase().replace(/_/g, '-'))) continue;
    const inRoot = [...roots.map((r) => r.path), beside].some((r) =>
      files.some(
        (f) =>
          f === (r === '.' ? `${name}.py` : `${r}/${name}.py`) ||
          f.startsWith(r === '.' ? `${name}/` : `${r}/${name}/`),
      ),
    );
    if (inRoot) continue;
    const where = locate(name, files);
    if (where === undefined) continue; // a dependency: the image's business
    problems.push({
      message: `${script}:${line} imports ${name}, which ships in ${where === '.' ? 'the repository root' : `${where}/`} but is on no import root (${roots.map((r) => `${r.path}/`).join(', ')}): the job would fail with ModuleNotFoundError`,
      hint: `Declare the root in pyproject.toml (e.g. a src layout) or name it in the trainer's profile (runtime.import_roots in rlvr-trainers.yaml).`,
    });
  }
  return problems;
}

/**
 * Modules of an import root named like the standard library's: on PYTHONPATH they come first, so every
 * process of the job (the trainer, Ray's workers, vLLM) would import them instead.
 */
export function shadowedStdlib(roots: readonly ImportRoot[]): ImportProblem[] {
  return roots.flatMap((r) =>
    r.packages
      .filter((p) => STDLIB_MODULES.has(p))
      .map((p) => ({
        message: `${r.path === '.' ? '' : `${r.path}/`}${p} on import root ${r.path}/ shadows the standard library's ${p} in every process of the job`,
        hint: `Rename it, or move the code it belongs to under a package (a src layout).`,
      })),
  );
}
