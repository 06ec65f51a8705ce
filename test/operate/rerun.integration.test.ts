import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeleteObjectsCommand, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import {
  DescribeTrainingJobCommand,
  ListTagsCommand,
  type CreateTrainingJobRequest,
} from '@aws-sdk/client-sagemaker';
import { parse } from 'yaml';
import { requestFromDescription } from '../../lib/operate/job-record';
import { runCli } from '../helpers/cli';
import { ECR_CREDENTIALS, ecrRegistryAvailable, useEcrRegistry } from '../helpers/ecr-registry';
import { allKeys, BUCKET, clients, jobNames } from '../helpers/emulator-data';
import { putRunOutputs } from '../helpers/past-runs';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { assertNothingCreated, snapshot } from '../helpers/nothing-created';
import { theirRepository } from '../helpers/python';

jest.setTimeout(180_000);

const jobKey = (job: string, file: string) => `rlvr-experiments/jobs/${job}/${file}`;

/**
 * `rlvr rerun` and `rlvr diff` against moto_server and a real registry (moto's ECR token is its
 * password): a submitted job rerun as it ran, its two CreateTrainingJob requests compared field by
 * field, `--set` changing exactly one key, and a rerun whose inputs are gone refused with nothing made.
 */
describeWithPeer('moto_server and docker-registry', ecrRegistryAvailable())(
  'rlvr rerun and rlvr diff',
  () => {
    const emulator = useEmulator();
    const ecr = useEcrRegistry();

    const env = () =>
      emulator.cliEnv({
        RLVR_REPOSITORY_URI: ecr.repositoryUri,
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      });

    async function text(key: string): Promise<string> {
      const { s3 } = clients(emulator.moto.endpoint);
      const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return out.Body!.transformToString();
    }
    const requestOf = async (job: string) =>
      JSON.parse(await text(jobKey(job, 'request.json'))) as CreateTrainingJobRequest;
    async function described(job: string) {
      const { sagemaker } = clients(emulator.moto.endpoint);
      const d = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: job }));
      const t = await sagemaker.send(new ListTagsCommand({ ResourceArn: d.TrainingJobArn }));
      return { d, tags: Object.fromEntries((t.Tags ?? []).map((x) => [x.Key!, x.Value ?? ''])) };
    }

    /** A job submitted from a trainer repository, with an image pushed to the registry by digest. */
    async function submitted(): Promise<{ job: string; repo: string; image: string }> {
      const image = await ecr.pushImage();
      const { root } = makeTrainerRepo();
      const r = await runCli(['submit', 'configs/gsm8k.yaml', '--image', image, '--description', 'base'], {
        env: env(),
        cwd: root,
      });
      expect(r.stderr).not.toMatch(/^error/m);
      expect(r.code).toBe(0);
      const [job] = await jobNames(emulator.moto.endpoint);
      return { job, repo: root, image };
    }

    /** The request with what a rerun changes taken out, to compare the rest. */
    function unchangedPart(request: CreateTrainingJobRequest, job: string) {
      const r = JSON.parse(JSON.stringify(request)) as CreateTrainingJobRequest;
      expect(r.TrainingJobName).toBe(job);
      delete (r as Partial<CreateTrainingJobRequest>).TrainingJobName;
      const config = r.InputDataConfig!.find((c) => c.ChannelName === 'config')!;
      expect(config.DataSource!.S3DataSource!.S3Uri).toBe(`s3://${BUCKET}/rlvr-experiments/jobs/${job}/`);
      config.DataSource!.S3DataSource!.S3Uri = '<config>';
      expect(r.CheckpointConfig!.S3Uri).toBe(`s3://${BUCKET}/rlvr-experiments/checkpoints/${job}/`);
      r.CheckpointConfig!.S3Uri = '<checkpoints>';
      expect(r.Environment!.RLVR_SUBMIT_ID).toMatch(/^[0-9a-f-]{36}$/);
      r.Environment!.RLVR_SUBMIT_ID = '<submit id>';
      r.Tags = r.Tags!.filter((t) => t.Key !== 'rlvr:rerun-of');
      return r;
    }

    it("a pass@k job's rerun resumes by prompt id: its streamed shards are the rerun's resume channel", async () => {
      const image = await ecr.pushImage();
      const repo = theirRepository();
      const r = await runCli(
        ['passk', '--model', 'Qwen/Qwen3-1.7B-Base', '--dataset', 'gsm8k', '--n', '4', '--image', image],
        { env: env(), cwd: repo },
      );
      expect(r.stderr).not.toMatch(/^error/m);
      expect(r.code).toBe(0);
      const job = /^Submitted (\S+):/m.exec(r.stdout)![1];
      const plan = async () => {
        const p = await runCli(['rerun', job, '--dry-run', '--json'], { env: env(), cwd: repo });
        expect(p.stderr).not.toMatch(/^error/m);
        return JSON.parse(p.stdout) as { keeps: unknown; createTrainingJobRequest: CreateTrainingJobRequest };
      };
      const channels = (request: CreateTrainingJobRequest) =>
        request.InputDataConfig!.map((c) => c.ChannelName);
      // Nothing streamed yet: nothing to keep, and no empty channel (SageMaker would fail the job on it).
      const before = await plan();
      expect(before.keeps).toBeNull();
      expect(channels(before.createTrainingJobRequest)).not.toContain('resume');
      const out = `rlvr-experiments/checkpoints/${job}/passk`;
      const { s3 } = clients(emulator.moto.endpoint);
      for (const shard of [0, 3])
        await s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `${out}/shard_${shard}/verification_results.jsonl`,
            Body: '{"prompt_id": "gsm8k_0", "scores": [1.0, 0.0, 0.0, 0.0]}\n',
          }),
        );
      const after = await plan();
      expect((after as unknown as { jobName: string }).jobName).toMatch(
        /^annotations-adhoc-passk-\d{8}-\d{6}$/,
      );
      expect(after.keeps).toEqual({ uri: `s3://${BUCKET}/${out}/`, shards: 2 });
      const resume = after.createTrainingJobRequest.InputDataConfig!.find((c) => c.ChannelName === 'resume');
      expect(resume?.DataSource?.S3DataSource?.S3Uri).toBe(`s3://${BUCKET}/${out}/`);
      // Everything else is the original's: the same campaign plan, model, dataset and source.
      expect(channels(after.createTrainingJobRequest).sort()).toEqual(
        ['code', 'config', 'dataset', 'model', 'resume'].sort(),
      );
      expect(after.createTrainingJobRequest.Environment?.RLVR_MODE).toBe('passk');
    });

    it('reruns a job exactly as it ran, with --set changing one key; status and diff name it', async () => {
      const { job, repo, image } = await submitted();
      const rerun = await runCli(['rerun', job, '--set', 'run.seed=7', '--set', 'training.max_steps=300'], {
        env: env(),
        cwd: repo,
      });
      expect(rerun.stderr).not.toMatch(/^error/m);
      expect(rerun.code).toBe(0);
      const second = (await jobNames(emulator.moto.endpoint)).find((n) => n !== job)!;
      expect(second).toBeDefined();
      expect(rerun.stdout).toContain(`Submitted ${second} (rerun of ${job})`);
      expect(rerun.stdout).toContain('run.seed: (absent) → 7');
      expect(rerun.stdout).toContain('training.max_steps: 200 → 300');

      // The two CreateTrainingJob requests, as each job keeps it: equal but for the name, the URIs holding
      // it, the submit id and the rerun tag.
      const [a, b] = [await requestOf(job), await requestOf(second)];
      expect(b.AlgorithmSpecification!.TrainingImage).toBe(image);
      expect(b.Tags).toContainEqual({ Key: 'rlvr:rerun-of', Value: job });
      expect(unchangedPart(b, second)).toEqual(unchangedPart(a, job));
      expect(b.Environment!.RLVR_SUBMIT_ID).not.toBe(a.Environment!.RLVR_SUBMIT_ID);

      // What SageMaker (moto) holds for each: the request each job keeps is the one it was created with.
      for (const [name, request] of [
        [job, a],
        [second, b],
      ] as const) {
        const { d, tags } = await described(name);
        expect(requestFromDescription(d, tags)).toEqual(request);
      }

      // The rerun's files: the original's, resolved-config.yaml changed in exactly the --set keys.
      const keys = await allKeys(emulator.moto.endpoint);
      const filesOf = (j: string) =>
        keys.filter((k) => k.startsWith(`rlvr-experiments/jobs/${j}/`)).map((k) => k.split(`${j}/`)[1]);
      expect(filesOf(second)).toEqual(filesOf(job));
      expect(keys.filter((k) => k.startsWith('rlvr-experiments/source/'))).toHaveLength(1);
      for (const f of filesOf(job).filter((f) => !['reservation.json', 'request.json'].includes(f)))
        if (f !== 'resolved-config.yaml' && f !== 'contract.json')
          expect(await text(jobKey(second, f))).toBe(await text(jobKey(job, f)));
      // The contract is the original's but for the forecast the rerun was given: its steps as --set left them.
      const [ca, cb] = [
        JSON.parse(await text(jobKey(job, 'contract.json'))),
        JSON.parse(await text(jobKey(second, 'contract.json'))),
      ];
      expect({ ...cb, forecast: undefined }).toEqual({ ...ca, forecast: undefined });
      expect(cb.forecast).toEqual({ ...ca.forecast, maxSteps: 300 });
      const [ya, yb] = [
        await text(jobKey(job, 'resolved-config.yaml')),
        await text(jobKey(second, 'resolved-config.yaml')),
      ];
      const [pa, pb] = [parse(ya), parse(yb)];
      expect(pb).toEqual({
        ...pa,
        run: { ...pa.run, seed: 7 },
        training: { ...pa.training, max_steps: 300 },
      });
      const changedLines = (x: string, y: string) => {
        const lx = x.split('\n');
        const ly = y.split('\n');
        return ly.filter((l) => !lx.includes(l));
      };
      expect(changedLines(ya, yb).map((l) => l.trim())).toEqual(['seed: 7', 'max_steps: 300']);
      expect(yb.split('\n')).toHaveLength(ya.split('\n').length + 1);

      // The job log says which job it reruns, and how.
      const log = fs.readFileSync(path.join(repo, 'docs', 'job_log.md'), 'utf8');
      const row = log.split('\n').find((l) => l.startsWith(`| ${second} `))!;
      expect(row).toContain(
        `| configs/gsm8k.yaml | rerun of ${job} --set run.seed=7 --set training.max_steps=300 |`,
      );

      // status names the original; diff shows exactly the changed keys.
      const status = await runCli(['status', second], { env: env(), cwd: repo });
      expect(status.stdout).toContain(`  rerun of: ${job}\n`);
      const statusJson = await runCli(['status', second, '--json'], { env: env(), cwd: repo });
      expect(JSON.parse(statusJson.stdout).rerunOf).toBe(job);
      expect(
        JSON.parse((await runCli(['status', job, '--json'], { env: env() })).stdout).rerunOf,
      ).toBeUndefined();

      const diff = await runCli(['diff', job, second, '--json'], { env: env() });
      expect(diff.stderr).toBe('');
      expect(diff.code).toBe(0);
      expect(JSON.parse(diff.stdout)).toMatchObject({
        identical: false,
        differences: [
          { section: 'config', key: 'training.max_steps', a: 200, b: 300 },
          { section: 'config', key: 'run.seed', a: null, b: 7 },
        ],
      });
      expect(JSON.parse(diff.stdout).differences).toHaveLength(2);
      const diffText = await runCli(['diff', job, second], { env: env() });
      expect(diffText.stdout).toContain(
        'config:\n  training.max_steps: 200 → 300\n  run.seed: (absent) → 7\n',
      );
      const same = await runCli(['diff', job, job], { env: env() });
      expect(same.code).toBe(0);
      expect(same.stdout).toContain('are identical');
    });

    it('--dry-run --json carries the request and creates nothing; a job without request.json is rebuilt from SageMaker', async () => {
      const { job, repo } = await submitted();
      const fromFile = await runCli(['rerun', job, '--dry-run', '--json'], { env: env(), cwd: repo });
      expect(fromFile.code).toBe(0);
      const planA = JSON.parse(fromFile.stdout);
      expect(planA).toMatchObject({ ok: true, dryRun: true, rerunOf: job, requestSource: 'request.json' });
      expect(planA.forecast).toMatchObject({ verdict: 'unknown', seen: 1, unknownShape: 1 });

      // Once the original has run (its run.json and trace in S3, as its container leaves them), the
      // rerun's plan forecasts from it.
      const contract = JSON.parse(await text(jobKey(job, 'contract.json')));
      await putRunOutputs(emulator.moto.endpoint, job, {
        runInfo: { job, forecast: contract.forecast },
        trace: { steps: 30, stepSeconds: 50, startTs: 200 },
        checkpoints: ['checkpoints/run_step20/model.safetensors'],
      });
      const withRun = await runCli(['rerun', job, '--dry-run'], { env: env(), cwd: repo });
      expect(withRun.code).toBe(0);
      expect(withRun.stdout).toMatch(
        new RegExp(
          `similar runs +1 \\(1 in SageMaker\\)\n +${job} 50\\.0 s/step over 30 of 200 steps, 1 checkpoint, completed\n`,
        ),
      );
      expect(withRun.stdout).toMatch(/to step 200 +2h5\dm/);
      // A job submitted before jobs kept their request.
      const { s3 } = clients(emulator.moto.endpoint);
      await s3.send(
        new DeleteObjectsCommand({
          Bucket: BUCKET,
          Delete: { Objects: [{ Key: jobKey(job, 'request.json') }] },
        }),
      );
      const before = await snapshot(emulator.moto.endpoint, [path.join(repo, 'docs')]);
      const rebuilt = await runCli(['rerun', job, '--dry-run', '--json'], { env: env(), cwd: repo });
      expect(rebuilt.code).toBe(0);
      const planB = JSON.parse(rebuilt.stdout);
      expect(planB.requestSource).toBe('DescribeTrainingJob');
      const name = planA.jobName as string;
      expect(unchangedPart(planB.createTrainingJobRequest, planB.jobName)).toEqual(
        unchangedPart(planA.createTrainingJobRequest, name),
      );
      await assertNothingCreated(emulator.moto.endpoint, before);
    });

    it('refuses (exit 2, nothing created) a job whose source archive or image is gone, an unknown job and a misspelt --set', async () => {
      const { job, repo, image } = await submitted();
      const docs = path.join(repo, 'docs');
      const refused = async (args: string[], message: RegExp) => {
        const before = await snapshot(emulator.moto.endpoint, [docs]);
        const r = await runCli(args, { env: env(), cwd: repo });
        expect(r.stderr).toMatch(message);
        expect(r.code).toBe(2);
        await assertNothingCreated(emulator.moto.endpoint, before);
      };
      await refused(
        ['rerun', 'annotations-adhoc-20000101-000000'],
        /No training job named annotations-adhoc-20000101-000000/,
      );
      await refused(['diff', job, 'annotations-adhoc-20000101-000000'], /No training job named/);
      await refused(
        ['rerun', job, '--set', 'training.max_stpes=1'],
        /"max_stpes" is a likely misspelling of "max_steps"/,
      );

      // The image's manifest deleted from the registry.
      const auth = `Basic ${Buffer.from(`${ECR_CREDENTIALS.username}:${ECR_CREDENTIALS.password}`).toString('base64')}`;
      const digest = image.split('@')[1];
      const del = await fetch(`http://${ecr.registry.host}/v2/rlvr-experiments/manifests/${digest}`, {
        method: 'DELETE',
        headers: { Authorization: auth },
      });
      expect(del.status).toBe(202);
      await refused(
        ['rerun', job],
        new RegExp(`its image ${image.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is gone`),
      );

      // The source archive deleted too: both named.
      const sourceKey = (await allKeys(emulator.moto.endpoint)).find((k) =>
        k.startsWith('rlvr-experiments/source/'),
      )!;
      const { s3 } = clients(emulator.moto.endpoint);
      await s3.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: sourceKey }] } }));
      await refused(['rerun', job], new RegExp(`its source archive s3://${BUCKET}/${sourceKey} is gone`));
    });
  },
);
