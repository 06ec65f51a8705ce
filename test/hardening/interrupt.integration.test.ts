import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AwsClients } from '../../lib/aws';
import { openJobContext } from '../../lib/aws/session';
import { planSubmit, submitPlanned } from '../../lib/training';
import { openSubmitSession, type SubmitSession } from '../../lib/submission';
import { uploadPath } from '../../lib/transfers';
import { bareEnv, type CliResult } from '../helpers/cli';
import { allKeys, IMAGE, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo, REPO_ROOT, safetensorsWith, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { filesBelow, openMultipartUploads, snapshot, type Snapshot } from '../helpers/nothing-created';
import { ThrottleProxy } from '../helpers/throttle-proxy';

/*
 * #19, interrupts: Ctrl-C during a submit removes what it wrote under jobs/ (or, once the job exists,
 * stops nothing and says so); Ctrl-C during an upload aborts its multipart uploads. Through the
 * library (the signal aborted at a chosen step: the real call runs, only the moment is the test's)
 * and through the CLI (SIGINT to a child process).
 */

const MiB = 1024 * 1024;

/** Keys written since `before`, less the source archive (content-addressed and shared: it stays). */
async function newKeysButSource(endpoint: string, before: Snapshot): Promise<string[]> {
  return (await allKeys(endpoint)).filter((k) => !before.keys.includes(k) && !k.includes('/source/'));
}

/** Runs the CLI as a child process and sends it SIGINT once `when` holds (polled every 50 ms). */
function interruptCli(
  args: string[],
  options: { env: Record<string, string>; cwd?: string },
  when: () => Promise<boolean>,
): Promise<CliResult & { interrupted: boolean }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env,
  });
  let stdout = '';
  let stderr = '';
  let interrupted = false;
  let closed = false;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const poll = async () => {
    while (!closed && !interrupted) {
      if (await when()) {
        interrupted = child.kill('SIGINT');
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  void poll();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      closed = true;
      resolve({ code: code ?? (signal ? -1 : 0), stdout, stderr, interrupted });
    });
  });
}

interface StepRow {
  readonly step: string;
  /** Wraps the session's clients so that the signal fires at this step (the calls themselves are real). */
  readonly arm: (aws: AwsClients, abort: () => void) => void;
  readonly message: RegExp;
  readonly jobCreated: boolean;
}

const STEP_ROWS: StepRow[] = [
  {
    step: 'before the submit starts',
    arm: (_aws, abort) => abort(),
    message: /^Interrupted: no job was created and nothing was written\.$/,
    jobCreated: false,
  },
  {
    step: 'while the source archive uploads',
    arm: (aws, abort) => {
      const upload = aws.s3.uploadObject.bind(aws.s3);
      aws.s3.uploadObject = (...args) => (abort(), upload(...args));
    },
    message:
      /^Interrupted: no job was created; the source archive s3:\/\/.*\/source\/[0-9a-f]{64}\.tar\.gz stays/,
    jobCreated: false,
  },
  {
    step: 'while the name is claimed',
    arm: (aws, abort) => {
      const claim = aws.s3.putObjectIfAbsent.bind(aws.s3);
      aws.s3.putObjectIfAbsent = (...args) => (abort(), claim(...args));
    },
    message:
      /^Interrupted: no job was created; removed what this submit wrote: 1 name reservation\(s\) and 0 job file\(s\) under s3:\/\/.*\/jobs\//,
    jobCreated: false,
  },
  {
    step: "between the job's files (after the second)",
    arm: (aws, abort) => {
      const put = aws.s3.putObject.bind(aws.s3);
      let n = 0;
      aws.s3.putObject = async (...args) => {
        await put(...args);
        if (++n === 2) abort();
      };
    },
    message: /removed what this submit wrote: 1 name reservation\(s\) and 2 job file\(s\)/,
    jobCreated: false,
  },
  {
    step: 'while CreateTrainingJob is in flight',
    arm: (aws, abort) => {
      const create = aws.sagemaker.createTrainingJob.bind(aws.sagemaker);
      aws.sagemaker.createTrainingJob = (...args) => (abort(), create(...args));
    },
    message:
      /^Interrupted after job \S+ was created: it runs on \(nothing was stopped\), its files under s3:\/\/.*\/jobs\/\S+\/ are kept and it is logged in .*rlvr stop /,
    jobCreated: true,
  },
];

describeWithPeer('moto_server', motoAvailable())('#19 interrupts (moto)', () => {
  const emulator = useEmulator();
  const endpoint = () => emulator.moto.endpoint;

  describe('submitPlanned(plan, session, listener, signal): Ctrl-C at each step', () => {
    it.each(STEP_ROWS)('$step', async ({ arm, message, jobCreated }) => {
      const repo = makeTrainerRepo();
      const input = emulator.submitInput(repo.configPath);
      const session: SubmitSession = openSubmitSession(input);
      try {
        const plan = await planSubmit(input, session);
        const { aws } = await session.connect();
        const interrupt = new AbortController();
        arm(aws!, () => interrupt.abort());
        const before = await snapshot(endpoint(), [repo.root]);
        const readLog = () =>
          fs.existsSync(plan.jobLogPath) ? fs.readFileSync(plan.jobLogPath, 'utf8') : '';
        const logBefore = readLog();
        const failure = await submitPlanned(plan, session, undefined, interrupt.signal).catch(
          (err: unknown) => err,
        );
        expect(failure).toMatchObject({ code: 'Interrupted', exitCode: 1 });
        expect((failure as Error).message).toMatch(message);
        expect(await openMultipartUploads(endpoint())).toEqual(before.openUploads);
        const jobs = await jobNames(endpoint());
        const log = readLog();
        if (!jobCreated) {
          expect(jobs).toEqual(before.jobs);
          expect(await newKeysButSource(endpoint(), before)).toEqual([]);
          expect(log).toBe(logBefore);
        } else {
          // The job runs on: nothing stopped, its files kept, its row in the job log.
          expect(jobs).toHaveLength(1);
          const job = jobs[0];
          expect((failure as Error).message).toContain(job);
          expect((await newKeysButSource(endpoint(), before)).every((k) => k.includes(`/jobs/${job}/`))).toBe(
            true,
          );
          expect(await newKeysButSource(endpoint(), before)).toContain(
            `rlvr-experiments/jobs/${job}/reservation.json`,
          );
          expect(log).toContain(job);
        }
      } finally {
        session.close();
      }
    });
  });

  it('uploadPath with a signal: Ctrl-C after the first part aborts the multipart upload; complete files are kept', async () => {
    const model = path.join(tempDir('rlvr-int-'), 'interrupted-model');
    fs.mkdirSync(model);
    fs.writeFileSync(path.join(model, 'config.json'), '{}');
    fs.writeFileSync(path.join(model, 'model.safetensors'), safetensorsWith(randomBytes(20 * MiB)));
    const context = await openJobContext({ settings: {} });
    const interrupt = new AbortController();
    const uploadPart = context.aws.s3.uploadPart.bind(context.aws.s3);
    let parts = 0;
    context.aws.s3.uploadPart = async (part) => {
      const etag = await uploadPart(part);
      if (++parts === 1) interrupt.abort();
      return etag;
    };
    try {
      const failure = await uploadPath(context, {
        kind: 'model',
        localPath: model,
        concurrency: 1,
        signal: interrupt.signal,
      }).catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: 'Interrupted', exitCode: 1 });
      expect((failure as Error).message).toMatch(
        /^Interrupted: the unfinished uploads were aborted \(no partial upload is left in S3\)\. [01] of 2 files are complete in S3 and kept/,
      );
    } finally {
      context.close();
    }
    expect(parts).toBe(1); // no part started after Ctrl-C
    expect(await openMultipartUploads(endpoint())).toEqual([]);
    expect(await allKeys(endpoint())).not.toContain(
      'rlvr-experiments/models/interrupted-model/model.safetensors',
    );
  });

  describe('the CLI: SIGINT to a child process', () => {
    let proxy: ThrottleProxy | undefined;
    /** The CLI's requests go through a slow link: 4 MiB/s, and `latencyMs` per chunk. */
    const slowLink = async (latencyMs: number) => {
      proxy = new ThrottleProxy(Number(new URL(endpoint()).port), 4 * MiB, latencyMs);
      await proxy.start();
      return proxy.endpoint;
    };
    afterEach(() => proxy?.stop());

    it('rlvr upload: SIGINT mid-upload exits 1, says so, and leaves no multipart upload and no object', async () => {
      const model = path.join(tempDir('rlvr-int-'), 'sigint-model');
      fs.mkdirSync(model);
      fs.writeFileSync(path.join(model, 'config.json'), '{}');
      fs.writeFileSync(path.join(model, 'model.safetensors'), safetensorsWith(randomBytes(17 * MiB)));
      const before = await snapshot(endpoint());
      const result = await interruptCli(
        ['upload', 'model', model],
        { env: emulator.cliEnv({ AWS_ENDPOINT_URL: await slowLink(0) }) },
        async () => (await openMultipartUploads(endpoint())).length > 0,
      );
      expect(result.interrupted).toBe(true);
      expect(result.stderr).toMatch(/^error: Interrupted: the unfinished uploads were aborted/m);
      expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(result.code).toBe(1);
      expect(await openMultipartUploads(endpoint())).toEqual([]);
      const added = (await allKeys(endpoint())).filter((k) => !before.keys.includes(k));
      expect(added.filter((k) => k.endsWith('model.safetensors'))).toEqual([]);
    });

    it('rlvr submit: SIGINT once the name is reserved exits 1, removes the reservation and the job files, creates no job', async () => {
      const repo = makeTrainerRepo();
      const before = await snapshot(endpoint(), [repo.root]);
      const reserved = async () => (await allKeys(endpoint())).some((k) => k.endsWith('/reservation.json'));
      const result = await interruptCli(
        ['submit', 'configs/gsm8k.yaml', '--image', IMAGE],
        // Small requests: the latency keeps the job's files uploading for a few seconds.
        { env: bareEnv({ ...emulator.cliEnv(), AWS_ENDPOINT_URL: await slowLink(150) }), cwd: repo.root },
        reserved,
      );
      expect(result.interrupted).toBe(true);
      expect(result.stderr).toMatch(
        /^error: Interrupted: no job was created; removed what this submit wrote: 1 name reservation\(s\)/m,
      );
      expect(result.code).toBe(1);
      expect(await jobNames(endpoint())).toEqual(before.jobs);
      expect(await newKeysButSource(endpoint(), before)).toEqual([]);
      expect(await openMultipartUploads(endpoint())).toEqual(before.openUploads);
      // No job-log row (no new local file in the repository).
      expect(filesBelow(repo.root).filter((f) => !f.startsWith('.git/'))).toEqual(
        before.files.get(repo.root)!.filter((f) => !f.startsWith('.git/')),
      );
    });
  });
});
