import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { DescribeTrainingJobCommand } from '@aws-sdk/client-sagemaker';
import { openJobContext } from '../../lib/aws';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { kindOfEnvironment, writesResultsOnly } from '../../lib/job-kinds';
import { jobKind } from '../../lib/job-kinds/registry';
import { submitBatch } from '../../lib/submission';
import { planProbe, PROBE_KIND, PROBE_RESULT_FILE, probeSubmission } from '../fixtures/probe-kind/kind';
import { runCli } from '../helpers/cli';
import { ecrRegistryAvailable, useEcrRegistry } from '../helpers/ecr-registry';
import { clients, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { tempDir } from '../helpers/fixtures';
import { fakeMlRoot } from '../helpers/ml-root';
import { describeWithPeer } from '../helpers/moto';

jest.setTimeout(120_000);

/*
 * A job kind the library has never seen, registered from its own folder (test/fixtures/probe-kind):
 * planned with the shared batch parts, submitted through the one submit path to the emulator, rerun by
 * `rlvr rerun` (which knows no kind), and run by the container's entrypoint, which finds its program by
 * the job's environment.
 */
describeWithPeer('moto_server and docker-registry', ecrRegistryAvailable())(
  'a new job kind, registered in its own folder',
  () => {
    const emulator = useEmulator();
    // rerun checks the job's image is still in the registry: a real one
    const ecr = useEcrRegistry();

    it('is planned, submitted, rerun and dispatched in the container', async () => {
      expect(jobKind('probe')).toBe(PROBE_KIND);
      const IMAGE = await ecr.pushImage();
      const cliEnv = emulator.cliEnv({
        RLVR_REPOSITORY_URI: ecr.repositoryUri,
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      });
      const context = await openJobContext({ settings: {} });
      const cwd = tempDir('rlvr-probe-');
      let jobName: string;
      try {
        const plan = planProbe(context, ['a', 'b', 'c'], IMAGE);
        const submitted = await submitBatch(probeSubmission(plan, path.join(cwd, 'jobs.md')), context.aws, {
          jobLogPath: path.join(cwd, 'jobs.md'),
        });
        jobName = submitted.jobName;
      } finally {
        context.close();
      }
      // Its name, mode, tags and job-log row are the kind's.
      expect(jobName).toMatch(/^annotations-adhoc-probe-\d{8}-\d{6}$/);
      const { sagemaker } = clients(emulator.moto.endpoint);
      const job = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: jobName }));
      expect(job.Environment).toMatchObject({ RLVR_MODE: 'probe', RLVR_IMAGE: IMAGE });
      expect(kindOfEnvironment(job.Environment)).toBe(PROBE_KIND);
      expect(writesResultsOnly(job.Environment)).toBe(true);
      expect(job.EnableNetworkIsolation).toBe(true);
      const row = fs.readFileSync(path.join(cwd, 'jobs.md'), 'utf8');
      expect(row).toMatch(new RegExp(`\\| ${jobName} \\| probe \\|.*probe of 3 lines.*\\| probe \\|`));

      // `rlvr rerun` knows no kind: it submits the request again, named as the kind names its jobs.
      const rerun = await runCli(['rerun', jobName, '--json'], { env: cliEnv, cwd });
      expect({ code: rerun.code, err: rerun.code ? rerun.stderr : '' }).toEqual({ code: 0, err: '' });
      const names = await jobNames(emulator.moto.endpoint);
      const again = names.find((n) => n !== jobName)!;
      expect(again).toMatch(/^annotations-adhoc-probe-/);
      const rerunJob = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: again }));
      expect(rerunJob.Environment?.RLVR_MODE).toBe('probe');

      // In the container: the entrypoint runs the kind's program for the job's environment.
      const root = fakeMlRoot();
      fs.writeFileSync(
        path.join(root, 'input', 'data', 'config', 'probe-input.json'),
        JSON.stringify({ lines: ['a', 'b', 'c'] }),
      );
      const out = new PassThrough();
      let text = '';
      out.on('data', (d: Buffer) => (text += d.toString()));
      const code = await runEntrypoint({ root, env: { PATH: process.env.PATH, ...job.Environment }, out });
      expect(code).toBe(0);
      expect(text).toContain('probe: 3 lines');
      expect(JSON.parse(fs.readFileSync(path.join(root, 'checkpoints', PROBE_RESULT_FILE), 'utf8'))).toEqual({
        count: 3,
      });
    });

    it('a job of a kind the image has no program for fails, saying so and what the image runs', async () => {
      const root = fakeMlRoot();
      const out = new PassThrough();
      const code = await runEntrypoint({ root, env: { PATH: process.env.PATH, RLVR_MODE: 'sft' }, out });
      expect(code).toBe(1);
      expect(fs.readFileSync(path.join(root, 'output', 'failure'), 'utf8')).toMatch(
        /^RLVR_MODE=sft: this image runs no such job kind \(it runs [a-z, -]*train[a-z, -]*\); rebuild the image/,
      );
    });
  },
);
