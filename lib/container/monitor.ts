import * as path from 'node:path';
import { CheckpointTracker } from '../checkpoints';
import type { JobContract } from '../trainers';
import { exposeCheckpoint, scriptAccepts, type EvalWatcherPlan } from './eval-watcher';
import {
  checkpointDirs,
  findNewTrainerRunFolder,
  trainerRunFolders,
  type TrainerRunFolder,
} from './run-folder';

type Checkpoint = { name: string; path: string };

/**
 * The run folder while the trainer runs: finds the run folder the trainer makes for itself (its marker
 * file, one that was not there before it started), and shows the eval watcher each checkpoint once it is
 * complete (lib/checkpoints: weights whole, writer finished).
 */
export class RunMonitor {
  trainerRun: TrainerRunFolder | undefined;
  private readonly tracker: CheckpointTracker;
  private readonly before: ReadonlySet<string>;
  private readonly shown: Checkpoint[] = [];
  private plan: EvalWatcherPlan | undefined;

  /** Made before the trainer starts: the folders already there are an earlier attempt's. */
  constructor(
    private readonly o: {
      readonly runDir: string;
      readonly contract: Pick<JobContract, 'runFolder'>;
      readonly stableMs: number;
      readonly say: (line: string) => void;
      readonly onTrainerRun: (run: TrainerRunFolder) => void;
    },
  ) {
    const rf = o.contract.runFolder;
    this.before = new Set(rf.kind === 'own' ? trainerRunFolders(o.runDir, rf.marker) : []);
    this.tracker = new CheckpointTracker(() => checkpointDirs(o.runDir, o.contract), o.stableMs);
  }

  /** From now on, complete checkpoints are shown to this watcher. */
  showTo(plan: EvalWatcherPlan): void {
    this.plan = plan;
  }

  /** One look: the trainer's run folder, and the checkpoints that became complete. */
  look(ended = false): void {
    this.findRunFolder();
    for (const c of this.tracker.scan(ended)) this.expose(c);
  }

  /** The trainer has exited: a last look; this attempt's complete checkpoints. */
  trainingEnded(): Checkpoint[] {
    this.look(true);
    const rf = this.o.contract.runFolder;
    if (rf.kind === 'own' && !this.trainerRun)
      this.o.say(`the trainer made no run folder with ${rf.marker} under ${this.o.runDir}`);
    return this.tracker.complete().filter((c) => this.thisAttempt(c));
  }

  /**
   * The checkpoints of this attempt shown to the watcher: an earlier attempt's watcher may have marked
   * one seen and been stopped before its results, and their script never takes a seen checkpoint again.
   */
  shownThisAttempt(): string[] {
    return this.shown.filter((c) => this.thisAttempt(c)).map((c) => c.name);
  }

  private thisAttempt(c: Checkpoint): boolean {
    if (this.o.contract.runFolder.kind === 'launcher') return true;
    return (
      this.trainerRun !== undefined &&
      c.path.startsWith(path.join(this.o.runDir, this.trainerRun.folder) + path.sep)
    );
  }

  private findRunFolder(): void {
    const rf = this.o.contract.runFolder;
    if (rf.kind !== 'own' || this.trainerRun) return;
    this.trainerRun = findNewTrainerRunFolder(this.o.runDir, rf, this.before);
    if (!this.trainerRun) return;
    this.o.onTrainerRun(this.trainerRun);
    this.o.say(
      `the trainer's run folder: ${this.trainerRun.folder} (checkpoints in ${this.trainerRun.checkpoints})`,
    );
  }

  private expose(c: Checkpoint): void {
    this.o.say(`checkpoint ${c.name} is complete`);
    const plan = this.plan;
    if (!plan) return;
    if (!scriptAccepts(plan.contract, c.path)) {
      this.o.say(
        `checkpoint ${c.name} is not shown to the eval watcher: it takes only folders with ${plan.contract.accepts!.join(' or ')}`,
      );
      return;
    }
    exposeCheckpoint(plan.viewDir, c.path, c.name);
    this.shown.push(c);
  }
}
