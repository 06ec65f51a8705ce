import * as path from 'node:path';

/**
 * The repository's own Python files a set of scripts imports, directly or through each other: the code
 * that runs when a trainer starts. Read statically: every `import` and `from … import` (at any depth:
 * an import inside a function runs when it is called), resolved against the import roots and the
 * script's own folder; what resolves to no file of the repository is a dependency, not followed.
 */
export function reachableModules(input: {
  readonly files: readonly string[];
  /** Import roots, relative (`.` is the repository root). */
  readonly roots: readonly string[];
  readonly scripts: readonly string[];
  readonly read: (file: string) => string;
}): string[] {
  const present = new Set(input.files);
  const join = (root: string, rel: string) => (root === '.' ? rel : `${root}/${rel}`);
  /** The file of module `a.b.c` under `root`, and the packages it passes through. */
  const resolve = (name: string, searchRoots: readonly string[]): string[] => {
    const parts = name.split('.');
    for (const root of searchRoots) {
      const rel = parts.join('/');
      const found = [`${rel}.py`, `${rel}/__init__.py`].map((f) => join(root, f)).find((f) => present.has(f));
      if (!found) continue;
      const inits = parts
        .slice(0, -1)
        .map((_, i) => join(root, `${parts.slice(0, i + 1).join('/')}/__init__.py`))
        .filter((f) => present.has(f));
      return [...inits, found];
    }
    return [];
  };
  /** The dotted package a file belongs to, under the root that holds it. */
  const packageOf = (file: string): { root: string; pkg: string[] } | undefined => {
    for (const root of [...input.roots].sort((a, b) => b.length - a.length)) {
      const rel = root === '.' ? file : file.startsWith(`${root}/`) ? file.slice(root.length + 1) : undefined;
      if (rel === undefined) continue;
      const dirs = path.posix
        .dirname(rel)
        .split('/')
        .filter((p) => p && p !== '.');
      return { root, pkg: dirs };
    }
    return undefined;
  };

  // Python puts the running script's folder first on sys.path: the entry scripts' folders, not every file's.
  const scriptFolders = [...new Set(input.scripts.map((s) => path.posix.dirname(s) || '.'))];
  const searchRoots = [...new Set([...input.roots, ...scriptFolders])];
  const seen = new Set<string>();
  const queue = input.scripts.filter((s) => present.has(s));
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = input.read(file);
    const targets: string[] = [];
    for (const m of text.matchAll(/^[ \t]*import[ \t]+([\w., \t]+)/gm)) {
      for (const part of m[1].split(',')) targets.push(...resolve(part.trim().split(/\s+/)[0], searchRoots));
    }
    for (const m of text.matchAll(
      /^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w, \t]+))/gm,
    )) {
      const names = (m[3] ?? m[4])
        .split(',')
        .map((n) => n.trim().split(/\s+/)[0])
        .filter(Boolean);
      if (m[1]) {
        const at = packageOf(file);
        if (!at) continue;
        const up = at.pkg.slice(0, Math.max(0, at.pkg.length - (m[1].length - 1)));
        const base = [...up, ...(m[2] ? m[2].split('.') : [])].join('.');
        if (base) targets.push(...resolve(base, [at.root]));
        for (const n of names) targets.push(...resolve(base ? `${base}.${n}` : n, [at.root]));
      } else {
        targets.push(...resolve(m[2], searchRoots));
        for (const n of names) targets.push(...resolve(`${m[2]}.${n}`, searchRoots));
      }
    }
    for (const t of targets) if (!seen.has(t)) queue.push(t);
  }
  return [...seen].sort();
}

/** A call that reaches for the network, found in the source. */
export interface NetworkCall {
  readonly file: string;
  readonly line: number;
  readonly call: string;
  /** At the top level of its module: it runs when the module is imported. */
  readonly atImport: boolean;
}

const NETWORK_CALLS: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: 'nltk.download', pattern: /\bnltk\.download\(/ },
  { name: 'hf_hub_download', pattern: /\bhf_hub_download\(/ },
  { name: 'snapshot_download', pattern: /\bsnapshot_download\(/ },
  { name: 'load_dataset', pattern: /\bload_dataset\(/ },
  { name: 'from_pretrained', pattern: /\.from_pretrained\(/ },
  { name: 'evaluate.load', pattern: /\bevaluate\.load\(/ },
  { name: 'boto3', pattern: /\bboto3\.(client|resource|Session)\(/ },
  { name: 'aws s3', pattern: /["']aws["']\s*,\s*["']s3["']|["']aws s3 / },
  { name: 'docker run', pattern: /["']docker["']\s*,\s*["']run["']/ },
  { name: 'requests', pattern: /\brequests\.(get|post|put|request)\(/ },
  { name: 'urlopen', pattern: /\burlopen\(/ },
];

/** Calls in `files` that reach for the network (comments left out). */
export function networkCalls(files: readonly string[], read: (file: string) => string): NetworkCall[] {
  const out: NetworkCall[] = [];
  for (const file of files) {
    read(file)
      .split('\n')
      .forEach((raw, i) => {
        const line = raw.replace(/#.*$/, '');
        for (const c of NETWORK_CALLS) {
          if (c.pattern.test(line))
            out.push({ file, line: i + 1, call: c.name, atImport: !/^\s/.test(line) });
        }
      });
  }
  return out;
}
