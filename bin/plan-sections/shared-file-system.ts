/** The section of the file system a multi-host job's hosts share. */
import {
  LOCAL_VOLUME,
  sharedFileSystemIsolationNote,
  sharedFileSystemPath,
  type SubmitPlan,
} from '../../lib/training';
import { SHARED_FILE_SYSTEM } from '../../lib/layout';
import { isPlaceholder, planSection } from './section';

/** `shared file system: fs-… mounted rw at /opt/ml/input/data/shared on every host (2 hosts); … ← cite`. */
function sharedFileSystemLine(plan: SubmitPlan): string | undefined {
  const s = plan.sharedFileSystem;
  if (!s) return undefined;
  const id = isPlaceholder(plan, 'fileSystemId') ? '<UNRESOLVED fileSystemId>' : s.fileSystemId;
  const cite = plan.trainer.profile.runtime.sharedFolder?.cite ?? s.why;
  // A local run's folder is named after the run (its results folder), not the job name planned.
  const folder = s.fileSystemId === LOCAL_VOLUME ? '<the local run>' : plan.jobName;
  return `shared file system: ${id} mounted rw at ${sharedFileSystemPath(s)} on every host (${plan.cluster.hosts} hosts); $${s.env} and the trainer's run root in ${SHARED_FILE_SYSTEM.jobsFolder}/${folder}/ ← ${cite}`;
}

export const sharedFileSystemSection = planSection({
  id: 'shared-file-system',
  text: (plan) => {
    const line = sharedFileSystemLine(plan);
    return line ? `  ${line}\n` : undefined;
  },
  json: (plan) => ({
    sharedFileSystem: plan.sharedFileSystem
      ? {
          ...plan.sharedFileSystem,
          mountPath: sharedFileSystemPath(plan.sharedFileSystem),
          jobFolder: `${SHARED_FILE_SYSTEM.jobsFolder}/${plan.jobName}/`,
          line: sharedFileSystemLine(plan),
          isolationNote: sharedFileSystemIsolationNote(plan.sharedFileSystem),
        }
      : null,
  }),
});
