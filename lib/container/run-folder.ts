import * as fs from 'node:fs';
import * as path from 'node:path';
import { RUN_FOLDER } from '../layout';
import type { JobContract } from '../trainers';

/** The run folder a trainer made for itself (their `Runtime.from_plan`), as recorded in our run.json. */
export interface TrainerRunFolder {
  /** Relative to our run folder (`/opt/ml/checkpoints`), e.g. `gsm8k_20261123-142233`. */
  readonly folder: string;
  /** The run name it recorded in its own marker file, when it did. */
  readonly runName?: string;
  readonly checkpoints: string;
  readonly traces: string;
}

/** Sub-folders of the run folder that hold the trainer's marker file (its run folders, one per attempt). */
export function trainerRunFolders(runDir: string, marker: string): string[] {
  if (!fs.existsSync(runDir)) return [];
  return fs
    .readdirSync(runDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(runDir, e.name, marker)))
    .map((e) => e.name)
    .sort();
}

/** The trainer's new run folder: one with its marker that was not there before it started. */
export function findNewTrainerRunFolder(
  runDir: string,
  runFolder: Extract<JobContract['runFolder'], { kind: 'own' }>,
  before: ReadonlySet<string>,
): TrainerRunFolder | undefined {
  const fresh = trainerRunFolders(runDir, runFolder.marker).filter((f) => !before.has(f));
  if (fresh.length === 0) return undefined;
  // Two at once cannot happen with one trainer; take the newest name (names end with a timestamp).
  const folder = fresh[fresh.length - 1];
  let runName: string | undefined;
  try {
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, folder, runFolder.marker), 'utf8')) as {
      run_name?: unknown;
    };
    if (typeof meta.run_name === 'string') runName = meta.run_name;
  } catch {
    // written a moment from now: the folder is enough
  }
  return {
    folder,
    ...(runName ? { runName } : {}),
    checkpoints: `${folder}/${runFolder.checkpoints}`,
    traces: `${folder}/${runFolder.traces}`,
  };
}

/** Every folder that holds this job's checkpoints: the trainer's run folders of all attempts, or ours. */
export function checkpointDirs(runDir: string, contract: Pick<JobContract, 'runFolder'>): string[] {
  if (contract.runFolder.kind === 'launcher') return [path.join(runDir, RUN_FOLDER.checkpoints)];
  const rf = contract.runFolder;
  return trainerRunFolders(runDir, rf.marker).map((f) => path.join(runDir, f, rf.checkpoints));
}
