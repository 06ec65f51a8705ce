import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { UserError } from '../errors';

/** One `[[package]]` of a uv.lock. */
export interface LockedPackage {
  readonly name: string;
  readonly version: string;
  /** `registry` URL, or `editable`/`directory`/`git`/`url` for the others. */
  readonly source: { readonly kind: string; readonly value: string };
  /** 1-based line of its `version = …` in the file (for messages that point at the pin). */
  readonly line: number;
  readonly dependencies: readonly LockedDependency[];
  /** `[package.optional-dependencies]`: extra → dependencies. */
  readonly extras: Readonly<Record<string, readonly LockedDependency[]>>;
  /** `resolution-markers`: set when the lock holds more than one version of this package. */
  readonly markers?: readonly string[];
}

export interface LockedDependency {
  readonly name: string;
  readonly extras: readonly string[];
}

export interface UvLock {
  readonly file: string;
  /** The lock's `requires-python`, e.g. `==3.11.*`. */
  readonly requiresPython?: string;
  readonly packages: readonly LockedPackage[];
}

type Table = Record<string, unknown>;
const table = (v: unknown): Table | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Table) : undefined;

/** PEP 503: names compare lower-case with runs of `-`, `_`, `.` as one `-`. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

function dependencies(v: unknown): LockedDependency[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((d) => {
    const t = table(d);
    if (typeof t?.name !== 'string') return [];
    const extras = Array.isArray(t.extra) ? t.extra.filter((e): e is string => typeof e === 'string') : [];
    return [{ name: normalizeName(t.name), extras }];
  });
}

/**
 * The lines of each `[[package]]` header's `version = "…"`: the k-th header is the k-th element of the
 * `package` array (TOML writes an array of tables in order), so the pin of each package is found without
 * a parser that keeps positions.
 */
function versionLines(text: string): number[] {
  const lines = text.split('\n');
  const out: number[] = [];
  let inPackage = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].trim();
    if (l === '[[package]]') {
      inPackage = true;
      out.push(i + 1);
    } else if (l.startsWith('[')) inPackage = false;
    else if (inPackage && /^version\s*=/.test(l)) out[out.length - 1] = i + 1;
  }
  return out;
}

/** `root/uv.lock`, or undefined. A lock that is not TOML, or not uv's, exits 2. */
export function readUvLock(root: string): UvLock | undefined {
  const file = path.join(root, 'uv.lock');
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, 'utf8');
  let doc: Table;
  try {
    doc = parseToml(text) as Table;
  } catch (err) {
    throw new UserError(
      `${file} is not valid TOML: ${(err as Error).message.split('\n')[0]}. Regenerate it with \`uv lock\`.`,
      'BadLock',
    );
  }
  if (!Array.isArray(doc.package)) {
    throw new UserError(
      `${file} has no [[package]] entries: is it uv's lock? Regenerate it with \`uv lock\`.`,
      'BadLock',
    );
  }
  const lines = versionLines(text);
  const packages = doc.package.flatMap((raw, i): LockedPackage[] => {
    const p = table(raw);
    if (typeof p?.name !== 'string') return [];
    const source = table(p.source) ?? {};
    const [kind, value] = Object.entries(source)[0] ?? ['unknown', ''];
    const extras = Object.fromEntries(
      Object.entries(table(p['optional-dependencies']) ?? {}).map(([k, v]) => [k, dependencies(v)]),
    );
    const markers = Array.isArray(p['resolution-markers'])
      ? p['resolution-markers'].filter((m): m is string => typeof m === 'string')
      : undefined;
    return [
      {
        name: normalizeName(p.name),
        version: typeof p.version === 'string' ? p.version : '',
        source: { kind, value: String(value) },
        line: lines[i] ?? 0,
        dependencies: dependencies(p.dependencies),
        extras,
        ...(markers && markers.length ? { markers } : {}),
      },
    ];
  });
  return {
    file,
    ...(typeof doc['requires-python'] === 'string' ? { requiresPython: doc['requires-python'] } : {}),
    packages,
  };
}

/** The locked versions of `name` (usually one). */
export function lockedVersions(lock: UvLock, name: string): LockedPackage[] {
  const n = normalizeName(name);
  return lock.packages.filter((p) => p.name === n);
}

/**
 * `roots` (with extras, e.g. `ray[default]`) and everything they depend on in the lock, through the
 * extras each dependency asks for: the packages a step that installs `roots` installs.
 */
export function lockClosure(lock: UvLock, roots: readonly LockedDependency[]): LockedPackage[] {
  const byName = new Map<string, LockedPackage[]>();
  for (const p of lock.packages) byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
  const seen = new Map<string, Set<string>>();
  const queue = [...roots.map((r) => ({ name: normalizeName(r.name), extras: r.extras }))];
  const out = new Set<LockedPackage>();
  while (queue.length > 0) {
    const { name, extras } = queue.shift()!;
    const done = seen.get(name);
    const fresh = extras.filter((e) => !done?.has(e));
    if (done && fresh.length === 0) continue;
    seen.set(name, new Set([...(done ?? []), ...extras]));
    for (const p of byName.get(name) ?? []) {
      out.add(p);
      const deps = [...(done ? [] : p.dependencies), ...fresh.flatMap((e) => p.extras[e] ?? [])];
      queue.push(...deps);
    }
  }
  return [...out].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Pins for a pip/uv constraints file: `name==version` for each package from a registry (a package the
 * lock holds in several versions gets each with its resolution markers). Packages from git, paths or
 * URLs are left to the lock's own install.
 */
export function constraintLines(packages: readonly LockedPackage[]): string[] {
  return packages
    .filter((p) => p.source.kind === 'registry' && p.version)
    .map((p) =>
      p.markers
        ? `${p.name}==${p.version} ; ${p.markers.map((m) => `(${m})`).join(' or ')}`
        : `${p.name}==${p.version}`,
    );
}
