/**
 * What each face (lib/<folder>/index.ts) exports, and who imports each name: another production folder
 * (lib/<other>, lib/*.ts, bin, docker), only bench or tests, or nobody outside the folder. A face should
 * export only what other production folders use; a name only tests import belongs in its named file.
 *
 *   node --import tsx scripts/face-usage.ts                  the table, one row per face and the totals
 *   node --import tsx scripts/face-usage.ts --names          and, per face, the names no production folder imports
 *   node --import tsx scripts/face-usage.ts --json           everything as JSON
 *   node --import tsx scripts/face-usage.ts --check a,b      exit 1 when faces a, b export such names
 *
 * Imports are read statically with the TypeScript parser: `import … from`, `export … from`,
 * `import x = require(…)` and `import('…').Name` types. A namespace import (`import * as x`) or a bare
 * `require` of a face counts as a use of every name it exports.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const REPO = path.resolve(__dirname, '..');
const PRODUCTION_ROOTS = ['lib', 'bin', 'docker'];
const OTHER_ROOTS = ['test', 'bench'];

type Use = 'production' | 'bench' | 'test';

interface FaceReport {
  readonly face: string;
  readonly exported: number;
  readonly production: number;
  /** Imported by bench (and perhaps tests) but no production folder. */
  readonly benchOnly: readonly string[];
  readonly testOnly: readonly string[];
  readonly nobody: readonly string[];
}

function tsFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

/** A relative specifier → the .ts file it names; packages and node: modules → undefined. */
function resolve(fromFile: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    if (candidate.endsWith('.ts') && fs.existsSync(candidate) && fs.statSync(candidate).isFile())
      return candidate;
  }
  return undefined;
}

const hasExport = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The names a module exports: its own declarations and its re-exports (`export *` followed). */
function exportedNames(file: string, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(file)) return names;
  seen.add(file);
  for (const s of parse(file).statements) {
    if (ts.isExportDeclaration(s)) {
      if (s.exportClause && ts.isNamedExports(s.exportClause))
        s.exportClause.elements.forEach((e) => names.add(e.name.text));
      else if (s.exportClause && ts.isNamespaceExport(s.exportClause)) names.add(s.exportClause.name.text);
      else if (s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier)) {
        const target = resolve(file, s.moduleSpecifier.text);
        if (target) exportedNames(target, seen).forEach((n) => names.add(n));
      }
    } else if (ts.isExportAssignment(s)) names.add('default');
    else if (hasExport(s)) {
      if (ts.isVariableStatement(s)) {
        for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
      } else if (
        (ts.isFunctionDeclaration(s) ||
          ts.isClassDeclaration(s) ||
          ts.isInterfaceDeclaration(s) ||
          ts.isTypeAliasDeclaration(s) ||
          ts.isEnumDeclaration(s)) &&
        s.name
      )
        names.add(s.name.text);
    }
  }
  return names;
}

/** `lib/training/plan.ts` → `lib/training`; `lib/errors.ts` → `lib`; `bin/x/y.ts` → `bin`; `test/…` → `test`. */
function folderOf(relative: string): string {
  const parts = relative.split('/');
  return parts[0] === 'lib' && parts.length > 2 ? `lib/${parts[1]}` : parts[0];
}

/** Every (face, name) a file imports, `*` for all of a face's names. */
function importsOf(file: string, faces: ReadonlySet<string>): { face: string; name: string }[] {
  const out: { face: string; name: string }[] = [];
  const faceOf = (spec: ts.Expression | undefined): string | undefined => {
    if (!spec || !ts.isStringLiteral(spec)) return undefined;
    const target = resolve(file, spec.text);
    return target && faces.has(target) ? target : undefined;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const face = faceOf(node.moduleSpecifier);
      const clause = node.importClause;
      if (face && clause) {
        if (clause.name) out.push({ face, name: 'default' });
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) out.push({ face, name: '*' });
        else if (bindings)
          bindings.elements.forEach((e) => out.push({ face, name: (e.propertyName ?? e.name).text }));
      }
    } else if (ts.isExportDeclaration(node)) {
      const face = faceOf(node.moduleSpecifier);
      if (face) {
        if (node.exportClause && ts.isNamedExports(node.exportClause))
          node.exportClause.elements.forEach((e) =>
            out.push({ face, name: (e.propertyName ?? e.name).text }),
          );
        else out.push({ face, name: '*' });
      }
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const face = faceOf(node.moduleReference.expression);
      if (face) out.push({ face, name: '*' });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const face = faceOf(node.argument.literal as ts.Expression);
      if (face) {
        const q = node.qualifier;
        out.push({ face, name: q ? (ts.isIdentifier(q) ? q.text : q.left.getText()) : '*' });
      }
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      const face = faceOf(node.arguments[0]);
      if (face) out.push({ face, name: '*' });
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(file));
  return out;
}

export function faceUsage(repo: string = REPO): FaceReport[] {
  const libDir = path.join(repo, 'lib');
  const faceFiles = fs
    .readdirSync(libDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(libDir, e.name, 'index.ts')))
    .map((e) => path.join(libDir, e.name, 'index.ts'))
    .sort();
  const faces = new Set(faceFiles);
  // face → name → the kinds of importer outside the face's folder.
  const uses = new Map<string, Map<string, Set<Use>>>(faceFiles.map((f) => [f, new Map()]));
  const roots: [string, Use | undefined][] = [
    ...PRODUCTION_ROOTS.map((r): [string, Use | undefined] => [r, 'production']),
    ...OTHER_ROOTS.map((r): [string, Use | undefined] => [r, r === 'bench' ? 'bench' : 'test']),
  ];
  for (const [root, kind] of roots) {
    for (const file of tsFiles(path.join(repo, root))) {
      const from = folderOf(path.relative(repo, file));
      for (const { face, name } of importsOf(file, faces)) {
        if (folderOf(path.relative(repo, face)) === from) continue; // the folder itself
        const byName = uses.get(face)!;
        if (!byName.has(name)) byName.set(name, new Set());
        byName.get(name)!.add(kind!);
      }
    }
  }
  return faceFiles.map((face) => {
    const byName = uses.get(face)!;
    const all = byName.get('*') ?? new Set<Use>();
    const kinds = (name: string) => new Set([...(byName.get(name) ?? []), ...all]);
    const names = [...exportedNames(face)].sort();
    const production = names.filter((n) => kinds(n).has('production'));
    const rest = names.filter((n) => !kinds(n).has('production'));
    return {
      face: path.relative(repo, face),
      exported: names.length,
      production: production.length,
      benchOnly: rest.filter((n) => kinds(n).has('bench')),
      testOnly: rest.filter((n) => !kinds(n).has('bench') && kinds(n).has('test')),
      nobody: rest.filter((n) => kinds(n).size === 0),
    };
  });
}

function main(argv: readonly string[]): number {
  const reports = faceUsage();
  if (argv.includes('--json')) {
    console.log(JSON.stringify(reports, null, 2));
  } else {
    const rows = reports.map((r) => [
      r.face,
      r.exported,
      r.production,
      r.benchOnly.length,
      r.testOnly.length,
      r.nobody.length,
    ]);
    const sum = (i: number) => rows.reduce((a, r) => a + (r[i] as number), 0);
    rows.push(['total', sum(1), sum(2), sum(3), sum(4), sum(5)]);
    const header = ['face', 'exported', 'production', 'bench only', 'tests only', 'nobody'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
    const line = (cells: readonly (string | number)[]) =>
      cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
    console.log(line(header));
    rows.forEach((r) => console.log(line(r)));
    if (argv.includes('--names')) {
      for (const r of reports) {
        if (r.exported === r.production) continue;
        console.log(`\n${r.face}`);
        if (r.benchOnly.length) console.log(`  bench only: ${r.benchOnly.join(', ')}`);
        if (r.testOnly.length) console.log(`  tests only: ${r.testOnly.join(', ')}`);
        if (r.nobody.length) console.log(`  nobody:     ${r.nobody.join(', ')}`);
      }
    }
  }
  const check = argv[argv.indexOf('--check') + 1];
  if (argv.includes('--check') && check) {
    const wanted = check.split(',').map((f) => `lib/${f}/index.ts`);
    const bad = reports.filter((r) => wanted.includes(r.face) && r.exported !== r.production);
    for (const r of bad)
      console.error(
        `${r.face} exports names no other production folder imports: ${[...r.benchOnly, ...r.testOnly, ...r.nobody].join(', ')}`,
      );
    return bad.length > 0 ? 1 : 0;
  }
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
