import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ignore from '@balena/dockerignore';
import { UserError } from '../errors';
import { packageRoot } from '../package-root';
import { compareBytes, reproducibleTar, systemFolderReason, type TarEntry } from '../source';
import { rlvrCacheDir, writeFileAtomic } from '../util';
import { planImageBuild, type ImageBuildPlan } from './build-plan';

/** Where the trainer's dependency files go in the build context (the Dockerfile copies this folder). */
export const TRAINER_DEPS_DIR = 'trainer-deps';
/** The bundled in-container entrypoint, in the build context. */
export const ENTRYPOINT_BUNDLE = 'rlvr/entrypoint.js';
/** The lock's pins for the main environment's own step (generated; the Dockerfile copies it). */
export const MAIN_CONSTRAINTS_FILE = 'main-constraints.txt';
/** Content tags start with this; any other tag (a git commit) is an alias. */
export const CONTENT_TAG_PREFIX = 'deps-';

/**
 * The trainer's dependency files — never its source. A change in any other file of the trainer
 * changes nothing in the image.
 */
const DEPENDENCY_FILE_PATTERNS: readonly RegExp[] = [
  /^pyproject\.toml$/,
  /^uv\.lock$/,
  /^requirements[^/]*\.txt$/,
  /^constraints[^/]*\.txt$/,
];

export function isTrainerDependencyFile(relPath: string): boolean {
  return DEPENDENCY_FILE_PATTERNS.some((p) => p.test(relPath));
}

export type ContextFile = TarEntry;

export interface BuildContext {
  readonly dockerDir: string;
  readonly files: readonly ContextFile[];
  readonly buildArgs: Readonly<Record<string, string>>;
  /** `deps-<hash>`: a hash of every context file and build argument, and nothing else. */
  readonly tag: string;
  /** Every build argument with where its value came from, the checks, the labels. */
  readonly plan: ImageBuildPlan;
}

export interface ContextOptions {
  /** The folder holding the Dockerfile (default: this package's `docker/`). */
  readonly dockerDir?: string;
  /** The trainer's folder: its dependency files go into the context. */
  readonly trainerSrc?: string;
  /** `--build-arg` values: checked against the trainer's lock, the rest from it or the Dockerfile. */
  readonly buildArgs?: Readonly<Record<string, string>>;
  /** Generated files (the bundled entrypoint); default: bundle this package's entrypoint. */
  readonly generated?: readonly { path: string; body: Buffer; executable?: boolean }[];
}

export function defaultDockerDir(): string {
  return path.join(packageRoot(), 'docker');
}

function readTree(root: string): ContextFile[] {
  const out: ContextFile[] = [];
  const visit = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const abs = path.join(root, childRel);
      if (entry.isDirectory()) visit(childRel);
      else if (entry.isSymbolicLink()) out.push({ path: childRel, symlinkTarget: fs.readlinkSync(abs) });
      else if (entry.isFile()) {
        const executable = (fs.statSync(abs).mode & 0o111) !== 0;
        out.push({ path: childRel, body: fs.readFileSync(abs), executable });
      }
    }
  };
  visit('');
  return out;
}

/**
 * What the entrypoint's bundle is made of: every TypeScript file of lib/ (what main.ts can reach through
 * the faces), the package, lock and TypeScript settings, and esbuild's version.
 */
function bundleInputsDigest(esbuildVersion: string): string {
  const root = packageRoot();
  const hash = createHash('sha256').update(`esbuild ${esbuildVersion}\0`);
  for (const name of ['package.json', 'package-lock.json', 'tsconfig.json']) {
    const file = path.join(root, name);
    if (fs.existsSync(file)) hash.update(`${name}\0`).update(fs.readFileSync(file)).update('\0');
  }
  const walk = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (e.name.endsWith('.ts'))
        hash
          .update(`${r}\0`)
          .update(fs.readFileSync(path.join(dir, e.name)))
          .update('\0');
    }
  };
  walk(path.join(root, 'lib'), 'lib');
  return hash.digest('hex').slice(0, 32);
}

/**
 * Bundles the in-container entrypoint (lib/container) into one file with esbuild. The package declares
 * `"sideEffects": false`, so a folder's face (index.ts) brings into the bundle only what the entrypoint
 * uses: the job's program stays free of the AWS SDK, zod and the Docker client (tested).
 *
 * Every image command and submit needs the bundle (the image's tag hashes it), and esbuild takes about
 * a third of a second to walk the faces: the bundle is kept in the cache under a digest of its inputs,
 * so it is built once per change of the code (hashing them takes a few milliseconds).
 */
export async function bundleEntrypoint(env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  const esbuild = await import('esbuild');
  const cached = path.join(rlvrCacheDir('entrypoint', env), `${bundleInputsDigest(esbuild.version)}.js`);
  try {
    return fs.readFileSync(cached);
  } catch {
    // not built for this code yet
  }
  const result = await esbuild.build({
    entryPoints: [path.join(packageRoot(), 'lib', 'container', 'main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    write: false,
    minify: false,
    legalComments: 'none',
    logLevel: 'silent',
    // Paths in the bundle's comments are relative to this, so the bundle is the same on every machine.
    absWorkingDir: packageRoot(),
  });
  const bundle = Buffer.from(result.outputFiles[0].contents);
  try {
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    writeFileAtomic(cached, bundle);
  } catch {
    // a cache that cannot be written costs the next command the build, nothing else
  }
  return bundle;
}

/**
 * Assembles the build context: the Docker folder (as `.dockerignore` filters it), the trainer's
 * dependency files under `trainer-deps/`, and the bundled entrypoint. Deterministic: the tag is a
 * hash of exactly these bytes, their paths and modes, and the build arguments.
 */
export async function assembleContext(options: ContextOptions = {}): Promise<BuildContext> {
  const dockerDir = path.resolve(options.dockerDir ?? defaultDockerDir());
  if (!fs.existsSync(path.join(dockerDir, 'Dockerfile'))) {
    throw new UserError(
      `No Dockerfile in ${dockerDir}. Pass --docker-dir with the folder holding it.`,
      'NoDockerfile',
    );
  }
  const files: ContextFile[] = readTree(dockerDir);
  const dockerfile = files.find((f) => f.path === 'Dockerfile')!.body!.toString('utf8');
  const src = options.trainerSrc !== undefined ? path.resolve(options.trainerSrc) : undefined;

  if (src !== undefined) {
    // As for a submit's source: the image reads dependency files from it, never from a system folder.
    const systemFolder = systemFolderReason(src);
    if (systemFolder) {
      throw new UserError(
        `The trainer source ${src} ${systemFolder}. Pass --trainer-src with the trainer's folder.`,
        'BadTrainerSource',
      );
    }
    if (!fs.existsSync(src) || !fs.statSync(src).isDirectory()) {
      throw new UserError(
        `The trainer source ${src} is not a folder. Pass --trainer-src with the trainer's folder.`,
      );
    }
    const deps = fs
      .readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isFile() && isTrainerDependencyFile(e.name))
      .map((e) => e.name);
    if (deps.length === 0) {
      throw new UserError(
        `No dependency files in the trainer source ${src} (looked for pyproject.toml, uv.lock, requirements*.txt, constraints*.txt). ` +
          "The image installs the trainer's dependencies from them; add one or pass --trainer-src with the right folder.",
        'NoDependencyFiles',
      );
    }
    for (const name of deps) {
      files.push({
        path: `${TRAINER_DEPS_DIR}/${name}`,
        body: fs.readFileSync(path.join(src, name)),
      });
    }
  }
  // Before anything is bundled or built: a flag that contradicts the lock stops here (exit 2).
  const planned = planImageBuild({ dockerfile, trainerSrc: src, flags: options.buildArgs ?? {} });
  const plan = {
    ...planned,
    dependencyFiles: files
      .filter((f) => f.path.startsWith(`${TRAINER_DEPS_DIR}/`))
      .map((f) => f.path.slice(TRAINER_DEPS_DIR.length + 1)),
  };
  files.push({ path: MAIN_CONSTRAINTS_FILE, body: Buffer.from(plan.mainConstraints) });
  for (const g of options.generated ?? [{ path: ENTRYPOINT_BUNDLE, body: await bundleEntrypoint() }]) {
    files.push(g);
  }

  const dockerignore = path.join(dockerDir, '.dockerignore');
  const ig = ignore();
  if (fs.existsSync(dockerignore)) ig.add(fs.readFileSync(dockerignore, 'utf8'));
  // Docker always sends the Dockerfile and .dockerignore, whatever .dockerignore says.
  const kept = files
    .filter((f) => f.path === 'Dockerfile' || f.path === '.dockerignore' || !ig.ignores(f.path))
    .sort((a, b) => compareBytes(a.path, b.path));
  const buildArgs = Object.fromEntries(
    plan.args.map((a) => [a.name, a.value] as const).sort(([a], [b]) => compareBytes(a, b)),
  );
  return { dockerDir, files: kept, buildArgs, tag: contentTag(kept, buildArgs), plan };
}

/** `deps-` + 24 hex digits of a sha256 over (path, mode, content hash) of each file and the build args. */
export function contentTag(files: readonly TarEntry[], buildArgs: Readonly<Record<string, string>>): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => compareBytes(a.path, b.path))) {
    const kind = f.symlinkTarget !== undefined ? `l:${f.symlinkTarget}` : f.executable ? 'x' : 'f';
    const body = createHash('sha256')
      .update(f.body ?? '')
      .digest('hex');
    hash.update(`${f.path}\0${kind}\0${body}\n`);
  }
  for (const [k, v] of Object.entries(buildArgs).sort(([a], [b]) => compareBytes(a, b))) {
    hash.update(`arg\0${k}\0${v}\n`);
  }
  return `${CONTENT_TAG_PREFIX}${hash.digest('hex').slice(0, 24)}`;
}

export function contextTar(context: BuildContext): Promise<Buffer> {
  return reproducibleTar(context.files);
}
