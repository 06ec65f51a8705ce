import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ProblemsError } from '../errors';
import {
  BUILT_IN_PROFILES,
  keyTree,
  LAUNCHER_RUNTIME,
  mergeKeyTrees,
  RLVR_EVAL_SCRIPT,
  type TrainerProfile,
  type TrainerRuntime,
} from '../trainers';
import { YamlFile } from './yaml-file';
import { zodIssuesToProblems } from './zod-problems';

/**
 * A trainer repository can describe its own trainers in `rlvr-trainers.yaml` at its root, so the team
 * updates a profile with their code and not with a launcher release. The format is ours: strict.
 *
 * ```yaml
 * trainers:
 *   - id: grpo-sft                 # a built-in id changes that profile; a new id adds one
 *     extends: grpo-sft            # start from a built-in (a new id without it states everything)
 *     script: entrypoints/train_grpo_sft.py
 *     required_keys: {training.alpha_sft: "train_grpo_sft.py:463"}
 *     keys: [training.my_new_knob] # known keys, for typo detection
 *     recognised_by: [training.my_new_knob]
 * ```
 */
export const TRAINER_PROFILE_FILE = 'rlvr-trainers.yaml';

const dotted = z
  .string()
  .regex(/^[A-Za-z_][\w-]*(\.([A-Za-z_][\w-]*|\[\]))*$/, 'a dotted key such as training.max_steps');

const profileEntry = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and "-"'),
  extends: z.string().optional(),
  script: z.string().min(1).optional(),
  command: z.string().includes('{config}').optional(),
  summary: z.string().optional(),
  required_sections: z.array(z.string().min(1)).optional(),
  required_keys: z.record(dotted, z.string()).optional(),
  required_roles: z.array(z.string().min(1)).optional(),
  losses: z.array(z.string().min(1)).optional(),
  samples: z.boolean().optional(),
  data_sections: z
    .array(
      z.strictObject({
        section: z.string().min(1),
        iterator: z.string().min(1),
        skip_chat_template_default: z.boolean().default(false),
        datasets: z.array(z.string().min(1)).optional(),
      }),
    )
    .optional(),
  checkpoints: z
    .strictObject({
      writes: z.boolean(),
      interval_key: dotted.optional(),
      interval_default: z.number().int().min(0).optional(),
      final: z.boolean().default(true),
      titan_enable_forced: z.boolean().default(false),
    })
    .optional(),
  ends: z
    .strictObject({
      max_steps: z.enum(['required', 'optional']),
      max_steps_default: z.number().int().positive().optional(),
      num_epochs: z.boolean().default(false),
    })
    .optional(),
  resume: z.enum(['none', 'weights', 'full']).optional(),
  runtime: z
    .strictObject({
      run_folder: z
        .discriminatedUnion('kind', [
          z.strictObject({ kind: z.literal('launcher') }),
          z.strictObject({
            kind: z.literal('own'),
            root_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name'),
            fallback: z.string().default(''),
            marker: z.string().min(1).default('run.json'),
            checkpoints: z.string().min(1).default('checkpoints'),
            traces: z.string().min(1).default('traces'),
          }),
        ])
        .optional(),
      resume_with: z
        .strictObject({
          load_paths: z
            .array(
              z.strictObject({
                role: z.string().min(1),
                key: dotted,
                if_present: z.boolean().default(false),
              }),
            )
            .min(1),
          step_key: dotted,
        })
        .optional(),
      dataset_cache: z
        .strictObject({
          path: z.string().includes('{folder}'),
          marker: z.string().min(1).default('dataset_info.json'),
        })
        .optional(),
      // false: this trainer needs no folder shared across hosts (a built-in's is dropped).
      shared_folder: z
        .union([z.literal(false), z.strictObject({ env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/) })])
        .optional(),
      network: z
        .array(
          z.strictObject({
            what: z.string().min(1),
            when: z.enum(['import', 'start-up', 'data loading', 'eval']),
            cite: z.string().min(1).optional(),
            handled: z.enum(['channel', 'image', 'refused', 'harmless', 'named']),
            how: z.string().min(1),
          }),
        )
        .optional(),
      import_roots: z
        .array(
          z
            .string()
            .min(1)
            .refine(
              (p) => !p.startsWith('/') && !p.split('/').includes('..'),
              'a folder inside the repository',
            ),
        )
        .min(1)
        .optional(),
      eval_script: z
        .strictObject({
          script: z.string().min(1),
          command: z.string().includes('{config}'),
          ends: z.enum(['never', 'done-file']),
          summaries: z.string().min(1).default('summary_*.json'),
          result_key: z.string().includes('{task}').default('{task}_{shots}shot'),
          accepts: z.array(z.string().min(1)).min(1).optional(),
          poll_key: dotted.default('watch.poll_interval_s'),
          poll_default: z.number().positive().default(300),
        })
        .optional(),
    })
    .optional(),
  keys: z.array(dotted).optional(),
  recognised_by: z.array(dotted).optional(),
});

const profileFile = z.strictObject({ trainers: z.array(profileEntry).min(1) });
type ProfileEntry = z.infer<typeof profileEntry>;

/** The runtime contract: each part the file states replaces the base's (cited to the file). */
function toRuntime(entry: ProfileEntry['runtime'], base: TrainerRuntime, fromFile: string): TrainerRuntime {
  if (!entry) return base;
  const rf = entry.run_folder;
  const rw = entry.resume_with;
  const ev = entry.eval_script;
  return {
    runFolder: !rf
      ? base.runFolder
      : rf.kind === 'launcher'
        ? { kind: 'launcher' }
        : {
            kind: 'own',
            rootEnv: rf.root_env,
            fallback: rf.fallback,
            marker: rf.marker,
            checkpoints: rf.checkpoints,
            traces: rf.traces,
            cite: fromFile,
          },
    resumeWith: rw
      ? {
          loadPaths: rw.load_paths.map((p) => ({ role: p.role, key: p.key, ifPresent: p.if_present })),
          stepKey: rw.step_key,
          cite: fromFile,
        }
      : base.resumeWith,
    datasetCache: entry.dataset_cache ? { ...entry.dataset_cache, cite: fromFile } : base.datasetCache,
    sharedFolder:
      entry.shared_folder === false
        ? undefined
        : entry.shared_folder
          ? { env: entry.shared_folder.env, cite: fromFile }
          : base.sharedFolder,
    importRoots: entry.import_roots ? { paths: entry.import_roots, cite: fromFile } : base.importRoots,
    networkUses: entry.network
      ? entry.network.map((n) => ({ ...n, cite: n.cite ?? fromFile }))
      : base.networkUses,
    evalScript: ev
      ? {
          script: ev.script,
          command: ev.command,
          ends: ev.ends,
          summaries: ev.summaries,
          resultKey: ev.result_key,
          accepts: ev.accepts,
          pollKey: ev.poll_key,
          pollDefault: ev.poll_default,
          cite: fromFile,
        }
      : base.evalScript,
  };
}

function toProfile(
  entry: ProfileEntry,
  base: TrainerProfile | undefined,
  fromFile: string,
): TrainerProfile | string {
  const script = entry.script ?? base?.script;
  if (!script) return 'states no script and extends no built-in profile';
  return {
    id: entry.id,
    script,
    command: entry.command ?? (entry.script || !base ? `python ${script} {config}` : base.command),
    summary: entry.summary ?? base?.summary ?? `trainer ${entry.id}`,
    requiredSections: entry.required_sections ?? base?.requiredSections ?? [],
    requiredKeys: entry.required_keys ?? base?.requiredKeys ?? {},
    requiredRoles: entry.required_roles ?? base?.requiredRoles ?? [],
    loaders: base?.loaders,
    losses: entry.losses ?? base?.losses,
    samples: entry.samples ?? base?.samples ?? false,
    dataSections:
      entry.data_sections?.map((d) => ({
        section: d.section,
        iterator: d.iterator,
        skipChatTemplateDefault: d.skip_chat_template_default,
        datasets: d.datasets,
      })) ??
      base?.dataSections ??
      [],
    checkpoints: entry.checkpoints
      ? {
          writes: entry.checkpoints.writes,
          intervalKey: entry.checkpoints.interval_key,
          intervalDefault: entry.checkpoints.interval_default,
          final: entry.checkpoints.final,
          titanEnableForced: entry.checkpoints.titan_enable_forced ? fromFile : undefined,
        }
      : (base?.checkpoints ?? { writes: true, final: true }),
    ends: entry.ends
      ? {
          maxSteps: entry.ends.max_steps,
          maxStepsDefault: entry.ends.max_steps_default,
          numEpochs: entry.ends.num_epochs,
        }
      : base?.ends,
    resume: entry.resume ?? base?.resume ?? 'none',
    // A new trainer of the repository: it writes where the launcher says; the eval script is the repository's.
    runtime: toRuntime(
      entry.runtime,
      base?.runtime ?? { ...LAUNCHER_RUNTIME, evalScript: RLVR_EVAL_SCRIPT },
      fromFile,
    ),
    keys: mergeKeyTrees(base?.keys ?? {}, keyTree(entry.keys ?? [])),
    recognisedBy: entry.recognised_by ?? base?.recognisedBy,
    cite: base ? `${base.cite}, changed by ${fromFile}` : fromFile,
    fromFile,
  };
}

/**
 * The profiles of `root/rlvr-trainers.yaml` (none when there is no file). Problems name file:line and
 * exit 2 like a config's.
 */
export function loadTrainerProfiles(root: string, displayRoot = root): TrainerProfile[] {
  const filePath = path.join(root, TRAINER_PROFILE_FILE);
  if (!fs.existsSync(filePath)) return [];
  const display = path.join(displayRoot, TRAINER_PROFILE_FILE);
  const file = YamlFile.read(filePath, display);
  const raw = file.toJS();
  const parsed = profileFile.safeParse(raw);
  if (!parsed.success) {
    throw new ProblemsError(
      `${display} is not a valid trainer profile file`,
      zodIssuesToProblems(parsed.error.issues, file, profileFile, raw),
    );
  }
  const problems = [];
  const out: TrainerProfile[] = [];
  for (const [i, entry] of parsed.data.trainers.entries()) {
    const baseId = entry.extends ?? entry.id;
    const base = BUILT_IN_PROFILES.find((p) => p.id === baseId);
    if (entry.extends && !base) {
      problems.push(
        file.problem(
          ['trainers', i, 'extends'],
          `no built-in profile "${entry.extends}"`,
          `Built-in profiles: ${BUILT_IN_PROFILES.map((p) => p.id).join(', ')}.`,
        ),
      );
      continue;
    }
    const profile = toProfile(entry, base, display);
    if (typeof profile === 'string')
      problems.push(file.problem(['trainers', i], `trainer "${entry.id}" ${profile}`));
    else out.push(profile);
  }
  if (problems.length > 0)
    throw new ProblemsError(`${display} is not a valid trainer profile file`, problems);
  return out;
}

/** Built-ins, with the repository's profiles replacing those of the same id and added after them. */
export function mergeProfiles(
  builtIn: readonly TrainerProfile[],
  fromRepository: readonly TrainerProfile[],
): TrainerProfile[] {
  const byId = new Map(fromRepository.map((p) => [p.id, p]));
  return [
    ...fromRepository.filter((p) => !builtIn.some((b) => b.id === p.id)),
    ...builtIn.map((b) => byId.get(b.id) ?? b),
  ];
}
