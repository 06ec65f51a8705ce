/**
 * `rlvr doctor --trainer-src DIR`: what a job of this trainer repository would meet, without AWS or an
 * engine — where its own packages are imported from, the image its lock makes, whether each trainer's
 * script finds its imports, and every place its start-up reaches for the network with how a job without
 * network copes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadTrainerProfiles, mergeProfiles } from '../config';
import { ProblemsError, RlvrError, UserError, formatProblem } from '../errors';
import { defaultDockerDir, describeArgSource, planImageBuild } from '../image';
import { BUILT_IN_DEFAULTS } from '../job-options';
import { describeImportRoots, describeWrite, importTimeWrites, judgeWrite, sourceReader } from '../training';
import {
  findImportRoots,
  missingRoots,
  networkCalls,
  readPyproject,
  readUvLock,
  reachableModules,
  shadowedStdlib,
  unreachableImports,
  type ImportRoot,
  type NetworkCall,
  type Pyproject,
  type UvLock,
} from '../python';
import { stageSource } from '../source';
import {
  BUILT_IN_PROFILES,
  CITE_FOLDERS,
  RLVR_EVAL_SCRIPT,
  type NetworkUse,
  type TrainerProfile,
} from '../trainers';
import type { DoctorCheck } from './check';

interface CitedRange {
  readonly file: string;
  readonly from: number;
  readonly to: number;
}

/**
 * `S/data.py:47-104` → src/rlvr_experiments/data.py lines 47–104, for every such cite in the text; a
 * range after a comma belongs to the file before it (`S/data.py:368-441, 723-756`).
 */
function citedRanges(cite: string): CitedRange[] {
  const out: CitedRange[] = [];
  let file: string | undefined;
  for (const part of cite.split(/,\s*/)) {
    const m = /(?:^|[\s(])([A-Z])\/([\w/.-]+\.py):(\d+)(?:-(\d+))?/.exec(part);
    const more = /^(\d+)(?:-(\d+))?/.exec(part);
    if (m) {
      const folder = CITE_FOLDERS[m[1]];
      file = folder ? `${folder}${m[2]}` : undefined;
      if (file) out.push({ file, from: Number(m[3]), to: Number(m[4] ?? m[3]) });
    } else if (more && file) {
      out.push({ file, from: Number(more[1]), to: Number(more[2] ?? more[1]) });
    } else file = undefined;
  }
  return out;
}

const covers = (ranges: readonly CitedRange[], call: NetworkCall) =>
  ranges.some((r) => r.file === call.file && call.line >= r.from && call.line <= r.to);

const level = (ok: boolean): DoctorCheck['level'] => (ok ? 'ok' : 'fail');

/** The Dockerfile the image would be built from: it must be there before anything else is looked at. */
function dockerfileIn(dockerDir: string): string {
  const dockerfilePath = path.join(dockerDir, 'Dockerfile');
  if (!fs.existsSync(dockerfilePath)) {
    throw new UserError(
      `No Dockerfile in ${path.dirname(dockerfilePath)}. Pass --docker-dir with the folder holding it.`,
      'NoDockerfile',
    );
  }
  return dockerfilePath;
}

/** The shipped pyproject.toml and uv.lock, or the failing check that says why they cannot be read. */
function readProject(
  root: string,
  files: readonly string[],
): { pyproject: Pyproject | undefined; lock: UvLock | undefined } | { failure: DoctorCheck } {
  try {
    const pyproject = files.includes('pyproject.toml') ? readPyproject(root) : undefined;
    const lock = files.includes('uv.lock') ? readUvLock(root) : undefined;
    return { pyproject, lock };
  } catch (err) {
    if (!(err instanceof RlvrError)) throw err;
    return { failure: { name: 'python project', level: 'fail', detail: err.message } };
  }
}

function projectCheck(pyproject: Pyproject | undefined, lock: UvLock | undefined): DoctorCheck {
  return pyproject
    ? {
        name: 'python project',
        level: 'ok',
        detail: `${pyproject.name ?? '(no name)'}${pyproject.requiresPython ? `, requires-python ${pyproject.requiresPython}` : ''}${pyproject.isPackage ? ', a package' : ''}; ${lock ? `uv.lock with ${lock.packages.length} packages` : 'no uv.lock'}`,
      }
    : {
        name: 'python project',
        level: 'warn',
        detail: 'no pyproject.toml shipped',
        fix: "The image installs the trainer's dependencies from pyproject.toml/uv.lock or requirements*.txt.",
      };
}

/** What the image installs, never the project itself (the lock lists it, editable). */
function installedDependencies(pyproject: Pyproject | undefined, lock: UvLock | undefined): string[] {
  return [
    ...(pyproject?.dependencies ?? []),
    ...(lock?.packages.filter((p) => p.source.kind === 'registry').map((p) => p.name) ?? []),
  ];
}

/** The import roots (a present trainer's profile may name them), checked: each there, none shadowing the stdlib. */
function importRootChecks(
  files: readonly string[],
  pyproject: Pyproject | undefined,
  present: readonly TrainerProfile[],
): { roots: ImportRoot[]; checks: DoctorCheck[] } {
  const named = present.find((p) => p.runtime.importRoots)?.runtime.importRoots;
  const roots = findImportRoots({
    files,
    pyproject,
    ...(named ? { named: { paths: named.paths, by: named.cite } } : {}),
  });
  const missing = missingRoots(roots, files);
  const checks: DoctorCheck[] = [
    {
      name: 'import roots',
      level: level(missing.length === 0),
      detail: `${describeImportRoots(roots)}${missing.length ? `; ${missing.map((m) => m.message).join('; ')}` : ''}`,
      ...(missing.length ? { fix: missing[0].hint } : {}),
    },
  ];
  for (const shadow of shadowedStdlib(roots)) {
    checks.push({ name: 'import roots', level: 'warn', detail: shadow.message, fix: shadow.hint });
  }
  return { roots, checks };
}

/** The image its dependency files make: the main build arguments with where each comes from, and the plan's checks. */
function imageChecks(dockerfilePath: string, root: string): DoctorCheck[] {
  try {
    const dockerfile = fs.readFileSync(dockerfilePath, 'utf8');
    const plan = planImageBuild({ dockerfile, trainerSrc: root, flags: {} });
    const shown = ['TORCH_VERSION', 'VLLM_VERSION', 'RAY_VERSION', 'PYTHON_VERSION', 'BASE_IMAGE'];
    return [
      {
        name: 'image',
        level: 'ok',
        detail: plan.args
          .filter((a) => shown.includes(a.name))
          .map((a) => `${a.name}=${a.value} (${describeArgSource(a.source)})`)
          .join(', '),
      },
      ...plan.checks.map((c): DoctorCheck => ({
        name: 'image',
        level: c.ok ? 'ok' : 'warn',
        detail: c.message,
      })),
    ];
  } catch (err) {
    if (!(err instanceof RlvrError)) throw err;
    return [
      {
        name: 'image',
        level: 'fail',
        detail: err instanceof ProblemsError ? err.problems.map(formatProblem).join('; ') : err.message,
        fix: 'rlvr image build --dry-run --trainer-src <this folder> shows the whole plan.',
      },
    ];
  }
}

/** Which of the profiles' trainers have their script here, and which do not. */
function trainersCheck(profiles: readonly TrainerProfile[], present: readonly TrainerProfile[]): DoctorCheck {
  const absent = profiles.filter((p) => !present.includes(p)).map((p) => p.id);
  return {
    name: 'trainers',
    level: present.length ? 'ok' : 'warn',
    detail: `${present.map((p) => `${p.id} (${p.script})`).join(', ') || "none of the profiles' scripts is here"}${absent.length ? `; not here: ${absent.join(', ')}` : ''}`,
    ...(present.length ? {} : { fix: "Describe the repository's trainers in rlvr-trainers.yaml." }),
  };
}

/** The scripts a job runs: each present trainer's, and the eval script when it is here. */
function scriptsOf(present: readonly TrainerProfile[], files: readonly string[]): string[] {
  const evalScript =
    present.find((p) => p.runtime.evalScript)?.runtime.evalScript?.script ?? RLVR_EVAL_SCRIPT.script;
  return [...new Set([...present.map((p) => p.script), ...(files.includes(evalScript) ? [evalScript] : [])])];
}

/** Each script's imports: whether it finds them, and which of the repository's own packages it takes. */
function scriptImportChecks(o: {
  scripts: readonly string[];
  read: (file: string) => string;
  roots: readonly ImportRoot[];
  files: readonly string[];
  dependencies: readonly string[];
}): DoctorCheck[] {
  const { read, roots } = o;
  return o.scripts.map((script) => {
    const problems = unreachableImports(script, read(script), roots, o.files, o.dependencies);
    const own = [
      ...new Set(
        roots
          .flatMap((r) => r.packages)
          .filter((pkg) => new RegExp(`^\\s*(from|import)\\s+${pkg}\\b`, 'm').test(read(script))),
      ),
    ];
    return {
      name: `imports of ${script}`,
      level: level(problems.length === 0),
      detail: problems.length
        ? problems.map((p) => p.message).join('; ')
        : own.length
          ? `${own.join(', ')} from ${roots.map((r) => `${r.path}/`).join(', ')}`
          : "nothing of the repository's own packages",
      ...(problems.length ? { fix: problems[0].hint } : {}),
    };
  });
}

/** The network at start: what the profiles describe, and what the code they run calls. */
function networkChecks(o: {
  present: readonly TrainerProfile[];
  files: readonly string[];
  roots: readonly ImportRoot[];
  scripts: readonly string[];
  read: (file: string) => string;
}): DoctorCheck[] {
  const { present, read } = o;
  const checks: DoctorCheck[] = [];
  const uses = new Map<string, NetworkUse>();
  for (const p of present) for (const u of p.runtime.networkUses ?? []) uses.set(u.what, u);
  for (const u of uses.values()) {
    checks.push({
      name: `network (${u.when})`,
      level: 'ok',
      detail: `${u.what} [${u.cite}] → ${u.handled}: ${u.how}`,
    });
  }
  const reachable = reachableModules({
    files: o.files,
    roots: o.roots.map((r) => r.path),
    scripts: o.scripts,
    read,
  });
  const calls = networkCalls(reachable, read);
  const known = [...uses.values()].flatMap((u) => citedRanges(u.cite));
  const loaderCites = present.flatMap((p) =>
    Object.values(p.loaders ?? {}).flatMap((l) => citedRanges(l.cite)),
  );
  const unknown = calls.filter((c) => !covers([...known, ...loaderCites], c));
  checks.push({
    name: 'network calls',
    level: unknown.length ? 'warn' : 'ok',
    detail: `${calls.length} in the ${reachable.length} files the trainers' scripts import${unknown.length ? `; not described by a profile: ${unknown.map((c) => `${c.file}:${c.line} ${c.call}${c.atImport ? ' (at import)' : ''}`).join(', ')}` : ', each described above'}`,
    ...(unknown.length
      ? {
          fix: 'A job has no network: provide what each fetches (a channel, or the image) and describe it in rlvr-trainers.yaml (runtime.network).',
        }
      : {}),
  });
  return checks;
}

export async function trainerRepositoryChecks(
  root: string,
  options: { readonly dockerDir?: string } = {},
): Promise<DoctorCheck[]> {
  const dockerfilePath = dockerfileIn(options.dockerDir ?? defaultDockerDir());
  const staged = await stageSource({ root });
  const files = staged.files.map((f) => f.path);
  const { read } = sourceReader(root);

  // The Python project and its import roots.
  const project = readProject(root, files);
  if ('failure' in project) return [project.failure];
  const { pyproject, lock } = project;
  const checks: DoctorCheck[] = [projectCheck(pyproject, lock)];
  const repositoryProfiles = loadTrainerProfiles(root);
  const profiles = mergeProfiles(BUILT_IN_PROFILES, repositoryProfiles);
  const present = profiles.filter((p) => files.includes(p.script));
  const { roots, checks: rootChecks } = importRootChecks(files, pyproject, present);
  checks.push(...rootChecks);

  checks.push(...imageChecks(dockerfilePath, root));

  // Each trainer whose script is here (and the eval script): its imports of the repository's packages.
  checks.push(trainersCheck(profiles, present));
  const scripts = scriptsOf(present, files);
  const dependencies = installedDependencies(pyproject, lock);
  checks.push(...scriptImportChecks({ scripts, read, roots, files, dependencies }));

  checks.push(...networkChecks({ present, files, roots, scripts, read }));
  checks.push(...platformEnvChecks({ root, files, roots: roots.map((r) => r.path), scripts }));
  return checks;
}

/**
 * Every write at import, in the modules the trainers' scripts import, of a variable the platform owns
 * or of NCCL, Gloo and libfabric: harmful or not, judged for a one-host job of the default instance
 * type (the submit judges each job's own).
 */
function platformEnvChecks(input: Parameters<typeof importTimeWrites>[0]): DoctorCheck[] {
  const { writes } = importTimeWrites(input);
  const job = {
    instanceType: BUILT_IN_DEFAULTS.instance_type,
    instanceCount: 1,
    networkIsolation: BUILT_IN_DEFAULTS.network_isolation,
  };
  if (writes.length === 0)
    return [
      {
        name: 'platform env at import',
        level: 'ok',
        detail: 'no module assigns NCCL, Gloo, libfabric, GPU or rendezvous variables when imported',
      },
    ];
  return writes.map((w) => {
    const j = judgeWrite(w, job);
    return {
      name: 'platform env at import',
      level: j.verdict === 'error' ? 'fail' : j.verdict === 'warning' ? 'warn' : 'ok',
      detail: `${describeWrite(w)}${w.kind === 'assign' ? ' (assigned)' : w.kind === 'default' ? ' (a default)' : ''}: ${j.why}`,
      ...(j.verdict !== 'harmless'
        ? {
            fix: `os.environ.setdefault(${JSON.stringify(w.variable)}, …) keeps a value the job sets${j.holdable ? "; or submit with launcher.hold_platform_env: true, which keeps the platform's values in every process" : ''}`,
          }
        : {}),
    };
  });
}
