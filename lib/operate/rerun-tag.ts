/** The tag a rerun carries (`rlvr rerun`): the name of the job it reruns. `status` reads it. */
export const RERUN_OF_TAG = 'rlvr:rerun-of';
