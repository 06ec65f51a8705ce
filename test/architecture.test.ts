import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './helpers/fixtures';
import {
  folderGraph,
  folderOf,
  importEdges,
  pastTheFace,
  twoFileCircles,
  type ImportEdge,
} from './helpers/imports';
import { faceUsage } from '../scripts/face-usage';

/**
 * The house as docs/architecture.md draws it, checked against the imports: the picture's rows top to
 * bottom, each a list of folders (`bin`, a lib folder's name, `lib/*.ts` for lib's own files).
 */
function pictureRows(): string[][] {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = doc.split(/^## The layers$/m)[1];
  if (!section) throw new Error('docs/architecture.md has no "## The layers" section');
  const block = /```\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('"## The layers" has no picture (a fenced block)');
  return block[1]
    .split('\n')
    .filter((l) => l.trim())
    .map((l) =>
      l
        .trim()
        .split(/\s+/)
        .map((name) => (name === 'bin' ? 'bin' : name === 'lib/*.ts' ? 'lib' : `lib/${name}`)),
    );
}

const EDGES: readonly ImportEdge[] = importEdges(['lib', 'bin', 'bench']);
const libFolders = fs
  .readdirSync(path.join(REPO_ROOT, 'lib'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => `lib/${e.name}`);

/**
 * The imports allowed past a face, each for a reason: the dashboard index row measures the peak RSS of a
 * process that loads the index module alone.
 */
const PAST_THE_FACE = ['bench/dashboard-child.ts → lib/dashboard/trace-index.ts'];

/** Names a face exports though no other production folder imports them, each for a reason. */
const FACE_EXTRAS: Record<string, string> = {
  'lib/container/index.ts: registerContainerProgram':
    'extension API: a kind defined outside lib registers its program',
  'lib/container/index.ts: ContainerProgram': "extension API: the type of a registered kind's program",
  'lib/container/index.ts: ProgramOptions': "extension API: the options a registered kind's program receives",
  'lib/job-kinds/index.ts: registerJobKind': 'extension API: a kind defined outside lib registers itself',
  'lib/dashboard/index.ts: DashboardData': 'bench measures the dashboard and enters lib only through faces',
  'lib/dashboard/index.ts: jobViews': 'bench measures the dashboard and enters lib only through faces',
  'lib/dashboard/index.ts: startServer': 'bench measures the dashboard and enters lib only through faces',
  'lib/dashboard/index.ts: updateIndex': 'bench measures the dashboard and enters lib only through faces',
};

describe('the house', () => {
  it('reads the imports it checks (the graph is not empty)', () => {
    // A reader that found nothing would pass every test below.
    expect(EDGES.length).toBeGreaterThan(500);
    expect(EDGES).toContainEqual({ from: 'bin/commands/submit.ts', to: 'lib/training/index.ts' });
  });

  it('has no two files importing each other', () => {
    expect(twoFileCircles(EDGES)).toEqual([]);
  });

  it('has no circle between folders', () => {
    const graph = folderGraph(EDGES);
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (folder: string, trail: string[]): void => {
      state.set(folder, 'open');
      for (const next of graph.get(folder) ?? []) {
        if (state.get(next) === 'open') circles.push([...trail.slice(trail.indexOf(next)), next].join(' → '));
        else if (!state.has(next)) visit(next, [...trail, next]);
      }
      state.set(folder, 'done');
    };
    for (const folder of graph.keys()) if (!state.has(folder)) visit(folder, [folder]);
    expect(circles).toEqual([]);
  });

  it('gives every lib folder a face (index.ts)', () => {
    const faceless = libFolders.filter((f) => !fs.existsSync(path.join(REPO_ROOT, f, 'index.ts')));
    expect(faceless).toEqual([]);
  });

  it("enters every lib folder through its face from lib, bin and bench (bench may use test's helpers)", () => {
    const past = pastTheFace(EDGES).filter(
      (e) => e.to.startsWith('lib/') && !PAST_THE_FACE.includes(`${e.from} → ${e.to}`),
    );
    expect(past.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it('exports from every face only what another production folder imports (scripts/face-usage.ts)', () => {
    // A name only tests use is imported by them from its named file; the face tells what the folder offers.
    const extra = faceUsage().flatMap((r) =>
      [...r.benchOnly, ...r.testOnly, ...r.nobody].map((n) => `${r.face}: ${n}`),
    );
    expect(extra.filter((e) => !(e in FACE_EXTRAS))).toEqual([]);
    // An allowed name another production folder came to import needs no entry any more.
    expect(Object.keys(FACE_EXTRAS).filter((e) => !extra.includes(e))).toEqual([]);
  });

  it('keeps the stack apart from the planner: lib/infra imports nothing of lib/training', () => {
    const graph = folderGraph(EDGES);
    expect([...(graph.get('lib/infra') ?? [])]).not.toContain('lib/training');
  });

  describe("docs/architecture.md's picture", () => {
    const rows = pictureRows();
    const rowOf = new Map<string, number>();
    rows.forEach((names, i) => names.forEach((n) => rowOf.set(n, i)));

    it('names every folder once, and only folders that exist', () => {
      const named = rows.flat();
      expect(named.filter((n, i) => named.indexOf(n) !== i)).toEqual([]);
      expect([...named].sort()).toEqual(['bin', 'lib', ...libFolders].sort());
    });

    it('has every import pointing to a lower row', () => {
      const upward = EDGES.filter((e) => !e.from.startsWith('bench/'))
        .map((e) => [folderOf(e.from), folderOf(e.to)] as const)
        .filter(([a, b]) => a !== b && !(rowOf.get(a)! < rowOf.get(b)!))
        .map(([a, b]) => `${a} (row ${rowOf.get(a)! + 1}) → ${b} (row ${rowOf.get(b)! + 1})`);
      expect([...new Set(upward)]).toEqual([]);
    });
  });
});
