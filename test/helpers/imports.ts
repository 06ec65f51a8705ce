import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './fixtures';

/**
 * The house as its imports draw it: every TypeScript file of lib/ and bin/ and the files it imports
 * (relative specifiers resolved to files; packages left out). Read as text: `import … from`,
 * `export … from`, `import '…'`, `require('…')` and `import('…')`.
 */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/gm;

function resolve(fromFile: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile() && candidate.endsWith('.ts'))
      return candidate;
  }
  return undefined;
}

/** Every import edge between the project's own files under `roots` (relative to the repository). */
export function importEdges(roots: readonly string[] = ['lib', 'bin']): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const root of roots) {
    for (const file of tsFiles(path.join(REPO_ROOT, root))) {
      const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, '$1');
      for (const m of text.matchAll(SPECIFIER)) {
        const target = resolve(file, m[1] ?? m[2] ?? m[3]);
        if (target)
          edges.push({ from: path.relative(REPO_ROOT, file), to: path.relative(REPO_ROOT, target) });
      }
    }
  }
  return edges;
}

/** `lib/training/plan.ts` → `lib/training`; `lib/errors.ts` → `lib`; `bin/commands/x.ts` → `bin`. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'bin') return 'bin';
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Pairs of files that import each other (directly). */
export function twoFileCircles(edges: readonly ImportEdge[]): [string, string][] {
  const set = new Set(edges.map((e) => `${e.from}\0${e.to}`));
  const out: [string, string][] = [];
  for (const e of edges) {
    if (e.from < e.to && set.has(`${e.to}\0${e.from}`)) out.push([e.from, e.to]);
  }
  return out;
}

/** Imports from one folder into another folder's file that is not its face (`index.ts`). */
export function pastTheFace(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.filter((e) => {
    const [a, b] = [folderOf(e.from), folderOf(e.to)];
    if (a === b || b === 'lib' || b === 'bin') return false;
    return path.basename(e.to) !== 'index.ts' || path.dirname(e.to) !== b;
  });
}

/** The folder graph: folder → the folders it imports. */
export function folderGraph(edges: readonly ImportEdge[]): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  for (const e of edges) {
    const [a, b] = [folderOf(e.from), folderOf(e.to)];
    if (a === b) continue;
    if (!g.has(a)) g.set(a, new Set());
    g.get(a)!.add(b);
  }
  return g;
}
