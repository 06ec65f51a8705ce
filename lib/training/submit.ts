import { RuntimeFailure } from '../errors';
import { openSubmitSession, submitJob, type JobSubmission, type SubmitSession } from '../submission';
import { jobUploads, planSubmit, type SubmitInput, type SubmitListener, type SubmitPlan } from './plan';
import { buildCreateTrainingJobRequest } from './request';

export interface SubmitResult {
  readonly jobName: string;
  readonly jobArn: string;
  readonly checkpointsUri: string;
  readonly consoleUrl: string;
  readonly jobLogPath: string;
  readonly plan: SubmitPlan;
}

/**
 * Plans (validating everything), then: claims a job name, uploads the source once per hash and the
 * job's files, creates the training job, and appends the job-log row. Bad input fails in the plan,
 * before anything is written; a failed create removes the job's uploads.
 */
export async function submit(input: SubmitInput): Promise<SubmitResult> {
  const session = openSubmitSession({ ...input, dryRun: false });
  try {
    const plan = await planSubmit({ ...input, dryRun: false }, session);
    return await submitPlanned(plan, session, input.listener);
  } finally {
    session.close();
  }
}

/**
 * Submits a plan made by `planSubmit` (not a dry-run) with the session it was made in (the caller closes it).
 * `signal` (Ctrl-C, from the CLI's withInterrupt) is checked between steps; a request in flight is let
 * finish (a write that lands after its clean-up would be left behind). Interrupted before the job is
 * created, what this submit wrote under `jobs/<job>/` (the name reservation, the job's files) is
 * removed; after, the job runs on and keeps its files. Either way it rejects with RuntimeFailure
 * `Interrupted` (exit 1) saying which.
 */
export async function submitPlanned(
  plan: SubmitPlan,
  session: SubmitSession,
  listener?: SubmitListener,
  signal?: AbortSignal,
): Promise<SubmitResult> {
  // A plan made for a dry-run holds placeholders; a dry-run session probes, it does not submit.
  if (session.dryRun || plan.placeholders.length > 0)
    throw new RuntimeFailure(
      'A dry-run plan or session cannot submit: plan again with dryRun: false',
      'DryRun',
    );
  // Ctrl-C before the submit began: not even the session connects.
  if (signal?.aborted)
    throw new RuntimeFailure('Interrupted: no job was created and nothing was written.', 'Interrupted');
  const { aws } = await session.connect();
  if (!aws) throw new RuntimeFailure('A submit needs a session with AWS clients', 'NoAwsClients');
  const submitted = await submitJob(trainingSubmission(plan), aws, { listener, signal });
  return { ...submitted, jobLogPath: plan.jobLogPath, plan };
}

/** A training plan as the one submit path takes it. */
function trainingSubmission(plan: SubmitPlan): JobSubmission {
  const { options, git } = plan;
  return {
    kind: 'job',
    layout: plan.layout,
    namePrefix: plan.settings.values.jobNamePrefix!,
    submittedAt: plan.submittedAt,
    submitId: plan.submitId,
    reservation: { config: plan.configDisplayPath },
    shared: [
      {
        key: plan.source.key,
        body: plan.packed.gzip,
        contentType: 'application/gzip',
        what: 'the source archive',
      },
    ],
    files: jobUploads(plan).map((f) => ({
      ...f,
      contentType: f.file.endsWith('.yaml') ? 'application/yaml' : 'text/plain',
    })),
    request: (jobName) => buildCreateTrainingJobRequest({ ...plan.requestInput, jobName }),
    quota: { instanceType: options.instanceType.value, spot: options.spot.value },
    jobLog: {
      path: plan.jobLogPath,
      row: (jobName) => ({
        jobName,
        config: plan.configDisplayPath,
        description: [plan.description, ...plan.missingOrderIds.map(allowedNote)].filter(Boolean).join(' '),
        submitted: plan.submittedAt,
        instance: `${options.instanceCount.value}× ${options.instanceType.value}${options.spot.value ? ' (spot)' : ''}`,
        template: plan.template?.name ?? '',
        commit: git?.commit ? `${git.commit.slice(0, 12)}${git.dirty ? '+dirty' : ''}` : '',
      }),
    },
  };
}

/** What `--allow-missing-order-ids` let through, for the job log row. */
function allowedNote(m: SubmitPlan['missingOrderIds'][number]): string {
  return `[allowed: ${m.missing.toLocaleString('en-US')} of ${m.of.toLocaleString('en-US')} order ids in ${m.order} not in ${m.dataset}]`;
}
