import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { UserError } from '../errors';

/** What the launcher reads of a trainer's `pyproject.toml`. */
export interface Pyproject {
  readonly file: string;
  readonly name?: string;
  /** `[project] requires-python`, e.g. `>=3.11,<3.12`. */
  readonly requiresPython?: string;
  /** The names (PEP 503-normalized) of `[project] dependencies`. */
  readonly dependencies?: readonly string[];
  /** Whether the project itself is a package (a build system, or `[tool.uv] package = true`). */
  readonly isPackage: boolean;
  /**
   * Folders the build configuration names as the roots of its packages (setuptools `package-dir` /
   * `packages.find.where`, hatch `packages`, poetry `from`, uv_build `module-root`, pdm `package-dir`);
   * undefined when it names none.
   */
  readonly declaredRoots?: readonly { readonly path: string; readonly by: string }[];
}

type Table = Record<string, unknown>;

const table = (v: unknown): Table | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Table) : undefined;
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
const at = (root: Table | undefined, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => table(v)?.[k], root);

/** `src/pkg` → `src`; `pkg` → `.` */
const parentOf = (p: string): string => path.posix.dirname(p.replace(/\/+$/, '')) || '.';

/** The roots the build configuration states, each with the key that states it. */
function declaredRoots(doc: Table): { path: string; by: string }[] {
  const out: { path: string; by: string }[] = [];
  const add = (p: string, by: string) => {
    const clean = path.posix.normalize(p.replace(/^\.\//, '') || '.');
    if (!out.some((r) => r.path === clean)) out.push({ path: clean, by });
  };
  const setuptools = table(at(doc, 'tool', 'setuptools'));
  const packageDir = table(setuptools?.['package-dir']);
  if (typeof packageDir?.[''] === 'string') add(packageDir[''], '[tool.setuptools] package-dir');
  for (const w of strings(at(setuptools, 'packages', 'find', 'where')))
    add(w, '[tool.setuptools.packages.find] where');
  for (const p of strings(at(doc, 'tool', 'hatch', 'build', 'targets', 'wheel', 'packages')))
    add(parentOf(p), '[tool.hatch.build.targets.wheel] packages');
  const poetry = at(doc, 'tool', 'poetry', 'packages');
  if (Array.isArray(poetry)) {
    for (const p of poetry) {
      const from = table(p)?.from;
      if (typeof from === 'string') add(from, '[tool.poetry] packages.from');
    }
  }
  const backend = at(doc, 'build-system', 'build-backend');
  const uvRoot = at(doc, 'tool', 'uv', 'build-backend', 'module-root');
  if (typeof uvRoot === 'string') add(uvRoot, '[tool.uv.build-backend] module-root');
  else if (typeof backend === 'string' && backend.startsWith('uv_build'))
    add('src', 'build-backend uv_build (module-root defaults to src)');
  const pdm = at(doc, 'tool', 'pdm', 'build', 'package-dir');
  if (typeof pdm === 'string') add(pdm, '[tool.pdm.build] package-dir');
  return out;
}

/** `root/pyproject.toml`, or undefined when there is none. A file that is not TOML exits 2. */
export function readPyproject(root: string): Pyproject | undefined {
  const file = path.join(root, 'pyproject.toml');
  if (!fs.existsSync(file)) return undefined;
  let doc: Table;
  try {
    doc = parseToml(fs.readFileSync(file, 'utf8')) as Table;
  } catch (err) {
    throw new UserError(
      `${file} is not valid TOML: ${(err as Error).message.split('\n')[0]}. Fix it (uv and pip read it too).`,
      'BadPyproject',
    );
  }
  const project = table(doc.project);
  const roots = declaredRoots(doc);
  const dependencies = strings(project?.dependencies)
    .map((d) => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(d)?.[1])
    .filter((n): n is string => Boolean(n))
    .map((n) => n.toLowerCase().replace(/[-_.]+/g, '-'));
  return {
    file,
    ...(typeof project?.name === 'string' ? { name: project.name } : {}),
    ...(typeof project?.['requires-python'] === 'string'
      ? { requiresPython: project['requires-python'] }
      : {}),
    dependencies,
    isPackage: table(doc['build-system']) !== undefined || at(doc, 'tool', 'uv', 'package') === true,
    ...(roots.length > 0 ? { declaredRoots: roots } : {}),
  };
}
