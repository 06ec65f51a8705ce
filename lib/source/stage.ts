import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import picomatch from 'picomatch';
import { UserError } from '../errors';
import { gitListFiles, gitRoot } from './git';
import { compareBytes, reproducibleTar } from './tar';
import { holdsPrivateKey, withholdRules, type WithheldFile } from './withhold';

/** Outside git, these are never shipped (git's ignore rules do this job inside a repository). */
const NON_GIT_EXCLUDES = [
  '**/.git/**',
  '**/node_modules/**',
  '**/__pycache__/**',
  '**/*.pyc',
  '**/.venv/**',
  'results/**',
];
/** A trainer's source is code and small files; more than this is almost surely data or checkpoints. */
export const DEFAULT_MAX_SOURCE_BYTES = 256 * 1024 * 1024;

export interface StageOptions {
  readonly root: string;
  /** Globs (relative to root) added even when git ignores them, e.g. `data/*.txt`. */
  readonly include?: readonly string[];
  /** Globs removed from what would be shipped. */
  readonly exclude?: readonly string[];
  readonly maxBytes?: number;
}

export interface StagedFile {
  readonly path: string;
  readonly size: number;
  readonly executable: boolean;
  readonly symlinkTarget?: string;
}

export interface StagedSource {
  readonly root: string;
  readonly isGit: boolean;
  readonly files: readonly StagedFile[];
  readonly totalBytes: number;
  /** Files git would ship that an exclude rule removed (shown in the plan). */
  readonly excluded: readonly string[];
  /**
   * Credential files left out whatever git or the include globs say (withhold.ts: the built-in
   * deny-list and the repository's `.rlvrignore`), each with why; shown in the plan apart from `excluded`.
   */
  readonly withheld: readonly WithheldFile[];
}

function walk(root: string, skip: (rel: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.name === '.git') continue;
      if (entry.isDirectory()) {
        if (!skip(`${rel}/`)) visit(rel);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        out.push(rel);
      }
    }
  };
  visit('');
  return out;
}

/** The files git (or, outside git, a walk) would ship, plus what the include globs add. */
async function candidatesOf(
  root: string,
  isGit: boolean,
  options: StageOptions,
  excludeMatch: (rel: string) => boolean,
): Promise<string[]> {
  const candidates = new Set(isGit ? await gitListFiles(root) : walk(root, (rel) => excludeMatch(rel)));
  if (options.include && options.include.length > 0) {
    const includeMatch = picomatch([...options.include], { dot: true });
    for (const rel of walk(root, () => false)) if (includeMatch(rel)) candidates.add(rel);
  }
  return [...candidates].sort(compareBytes);
}

/** Each candidate shipped, excluded by a glob, or withheld as a credential (the deny-list wins). */
function sortCandidates(
  root: string,
  candidates: readonly string[],
  excludeMatch: (rel: string) => boolean,
): Pick<StagedSource, 'files' | 'excluded' | 'withheld' | 'totalBytes'> {
  const withholdWhy = withholdRules(root);
  const files: StagedFile[] = [];
  const excluded: string[] = [];
  const withheld: WithheldFile[] = [];
  let totalBytes = 0;
  for (const rel of candidates) {
    const why = withholdWhy(rel);
    if (why) {
      withheld.push({ path: rel, why });
      continue;
    }
    if (excludeMatch(rel)) {
      excluded.push(rel);
      continue;
    }
    const abs = path.join(root, rel);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(abs);
    } catch {
      continue; // tracked but deleted in the work tree: the job gets the tree as it is
    }
    if (stat.isSymbolicLink()) {
      files.push({ path: rel, size: 0, executable: false, symlinkTarget: fs.readlinkSync(abs) });
    } else if (stat.isFile()) {
      const key = holdsPrivateKey(abs, rel, stat.size);
      if (key) {
        withheld.push({ path: rel, why: key });
        continue;
      }
      files.push({ path: rel, size: stat.size, executable: (stat.mode & 0o111) !== 0 });
      totalBytes += stat.size;
    }
  }
  return { files, excluded, withheld, totalBytes };
}

function checkSize(root: string, files: readonly StagedFile[], totalBytes: number, maxBytes: number): void {
  if (totalBytes <= maxBytes) return;
  const largest = [...files]
    .sort((a, b) => b.size - a.size)
    .slice(0, 5)
    .map((f) => `${f.path} (${(f.size / 1e6).toFixed(1)} MB)`);
  throw new UserError(
    `The trainer source ${root} would ship ${(totalBytes / 1e6).toFixed(0)} MB (limit ${(maxBytes / 1e6).toFixed(0)} MB). ` +
      `Largest files: ${largest.join(', ')}. Upload data with \`rlvr upload\` and add exclude globs to the launcher section.`,
    'SourceTooLarge',
  );
}

/**
 * Chooses the files that travel with a job: git's view of the tree, adjusted by include/exclude globs,
 * less every credential file (withheld, tracked or not: see withhold.ts).
 */
export async function stageSource(options: StageOptions): Promise<StagedSource> {
  const root = path.resolve(options.root);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
    throw new UserError(
      `The trainer source ${root} is not a folder. Pass --trainer-src with the trainer's folder.`,
    );
  }
  const isGit = (await gitRoot(root)) !== undefined;
  const excludeMatch = picomatch([...(options.exclude ?? []), ...(isGit ? [] : NON_GIT_EXCLUDES)], {
    dot: true,
  });
  const candidates = await candidatesOf(root, isGit, options, excludeMatch);
  const sorted = sortCandidates(root, candidates, excludeMatch);
  checkSize(root, sorted.files, sorted.totalBytes, options.maxBytes ?? DEFAULT_MAX_SOURCE_BYTES);
  return { root, isGit, ...sorted };
}

export interface PackedSource {
  readonly gzip: Buffer;
  /** sha256 of the .tar.gz bytes: the object's name in `source/`. */
  readonly sha256: string;
  readonly fileCount: number;
}

/**
 * Packs the staged files reproducibly: same files → same bytes → same hash. Entries are sorted,
 * with fixed mtime, owner and modes (0644, or 0755 when executable); gzip carries no timestamp.
 */
export async function packSource(source: StagedSource): Promise<PackedSource> {
  const tarBytes = await reproducibleTar(
    source.files.map((file) =>
      file.symlinkTarget !== undefined
        ? { path: file.path, symlinkTarget: file.symlinkTarget }
        : {
            path: file.path,
            body: fs.readFileSync(path.join(source.root, file.path)),
            executable: file.executable,
          },
    ),
  );
  const gzip = gzipSync(tarBytes, { level: 6 });
  // The gzip header's OS byte depends on the platform zlib was built for; fix it ("unknown") so a
  // Mac and a Linux workstation produce the same bytes and share one upload.
  gzip[9] = 0xff;
  return { gzip, sha256: createHash('sha256').update(gzip).digest('hex'), fileCount: source.files.length };
}
