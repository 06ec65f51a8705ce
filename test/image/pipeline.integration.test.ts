import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  assembleContext,
  connectEngine,
  createImagePipeline,
  imageLabels,
  parseRepositoryUri,
} from '../../lib/image';
import { contextTar } from '../../lib/image/context';
import type { ImageEvent } from '../../lib/image/engine-streams';
import { pushImage } from '../../lib/image/registry';
import { bareEnv, runCli } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  startRegistry,
  writeTestDockerDir,
  type DockerEngine,
  type Registry,
} from '../helpers/docker';
import { useEmulator } from '../helpers/emulator-suite';
import { FaultProxy } from '../helpers/fault-proxy';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer, TEST_ACCOUNT } from '../helpers/moto';
import { THEIR_REPO } from '../helpers/python';
import Docker from 'dockerode';

jest.setTimeout(240_000);

interface ImageJson {
  ref: string;
  tag: string;
  digest: string | null;
  pinned: string | null;
  built: boolean;
  builtSteps: number;
  cachedSteps: number;
  pushed: boolean;
  pushedLayers: number;
}

/**
 * The image pipeline against a real Docker engine and a real registry: the registry's
 * password is the token moto's ECR hands out, and a proxy in front of it counts what is uploaded.
 */
describeWithPeer('dockerd and docker-registry', dockerAvailable())(
  'image pipeline (real engine, real registry)',
  () => {
    const emulator = useEmulator();
    let engine: DockerEngine;
    let registry: Registry;
    let proxy: FaultProxy;
    let dockerDir: string;
    let trainer: { root: string; configPath: string };

    beforeAll(async () => {
      [engine, registry] = await Promise.all([
        startDockerEngine(),
        startRegistry('AWS', `${TEST_ACCOUNT}-auth-token`),
      ]);
      proxy = new FaultProxy(registry.port);
      await proxy.start();
      dockerDir = tempDir('rlvr-docker-');
      writeTestDockerDir(dockerDir);
      trainer = makeTrainerRepo({ files: { 'requirements.txt': 'numpy==2.1.0\n' } });
    });
    afterAll(async () => {
      await proxy?.stop();
      await Promise.all([engine?.stop(), registry?.remove()]);
    });

    const repositoryUri = () => `127.0.0.1:${proxy.port}/rlvr-train`;
    const env = (extra: Record<string, string> = {}) =>
      emulator.cliEnv({ RLVR_REPOSITORY_URI: repositoryUri(), DOCKER_HOST: engine.host, ...extra });
    const imageCli = async (verb: 'build' | 'push', extraEnv: Record<string, string> = {}) =>
      runCli(['image', verb, '--json', '--docker-dir', dockerDir, '--trainer-src', trainer.root], {
        env: env(extraEnv),
      });
    const image = async (verb: 'build' | 'push'): Promise<ImageJson> => {
      const r = await imageCli(verb);
      if (r.code !== 0) throw new Error(`rlvr image ${verb} exited ${r.code}:\n${r.stderr}`);
      return JSON.parse(r.stdout) as ImageJson;
    };
    const registryDigestOf = async (name: string, tag: string) => {
      const res = await fetch(`http://${registry.host}/v2/${name}/manifests/${tag}`, {
        method: 'HEAD',
        headers: {
          Accept: 'application/vnd.docker.distribution.manifest.v2+json',
          Authorization: `Basic ${Buffer.from(`AWS:${TEST_ACCOUNT}-auth-token`).toString('base64')}`,
        },
      });
      return res.headers.get('docker-content-digest');
    };

    const registryDigest = (tag: string) => registryDigestOf('rlvr-train', tag);

    it('pushes, and submit --dry-run --json pins the pushed digest', async () => {
      const first = await image('push');
      expect(first.built).toBe(true);
      expect(first.pushed).toBe(true);
      expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(await registryDigest(first.tag)).toBe(first.digest);

      const dry = await runCli(
        ['submit', trainer.configPath, '--dry-run', '--json', '--docker-dir', dockerDir],
        {
          env: env(),
          cwd: trainer.root,
        },
      );
      expect(dry.code).toBe(0);
      const plan = JSON.parse(dry.stdout);
      expect(plan.createTrainingJobRequest.AlgorithmSpecification.TrainingImage).toBe(
        `${repositoryUri()}@${first.digest}`,
      );
      expect(plan.createTrainingJobRequest.Environment.RLVR_IMAGE).toBe(`${repositoryUri()}@${first.digest}`);

      // Without AWS, the dry-run finds the digest in the engine's record of the push.
      const offline = await runCli(
        ['submit', trainer.configPath, '--dry-run', '--json', '--docker-dir', dockerDir],
        {
          env: bareEnv({ RLVR_REPOSITORY_URI: repositoryUri(), DOCKER_HOST: engine.host }),
          cwd: trainer.root,
        },
      );
      expect(offline.code).toBe(0);
      const offlinePlan = JSON.parse(offline.stdout);
      expect(offlinePlan.image).toEqual({
        uri: `${repositoryUri()}@${first.digest}`,
        source: `image pipeline, ${first.tag} (engine)`,
        // What the build says the image has (this test Dockerfile installs no EFA stack).
        labels: { 'rlvr.efa': 'none' },
      });
      expect(plan.image.source).toBe(`image pipeline, ${first.tag} (registry)`);
    });

    it('image build --dry-run says whether the engine and the registry have the tag, before and after a push; the image carries its labels', async () => {
      const src = makeTrainerRepo({ files: { 'requirements.txt': 'numpy==2.2.0\n' } });
      const dry = async () => {
        const r = await runCli(
          ['image', 'build', '--dry-run', '--json', '--docker-dir', dockerDir, '--trainer-src', src.root],
          { env: env() },
        );
        expect(r.code).toBe(0);
        return JSON.parse(r.stdout);
      };
      const before = await dry();
      expect(before).toMatchObject({
        engine: { state: 'lacks' },
        registry: { state: 'lacks' },
        wouldDo: 'a build',
      });
      const pushed = await runCli(
        ['image', 'push', '--json', '--docker-dir', dockerDir, '--trainer-src', src.root],
        { env: env() },
      );
      expect(pushed.code).toBe(0);
      const { digest, ref } = JSON.parse(pushed.stdout);
      const after = await dry();
      expect(after.tag).toBe(before.tag);
      expect(after).toMatchObject({
        ref,
        engine: { state: 'has' },
        registry: { state: 'has', digest },
        wouldDo: 'no build (the engine has it)',
      });
      const docker = new Docker({ socketPath: engine.host.replace('unix://', '') });
      const info = await docker.getImage(ref).inspect();
      expect(info.Config.Labels).toMatchObject({ 'rlvr.content-tag': before.tag, 'rlvr.efa': 'none' });
      // An image named by digest: its labels read from the registry when the engine cannot say.
      const credentials = async () => ({ username: 'AWS', password: `${TEST_ACCOUNT}-auth-token` });
      expect(
        await imageLabels(`${repositoryUri()}@${digest}`, {
          credentials,
          registryHost: repositoryUri().split('/')[0],
          dockerHost: 'unix:///nonexistent/docker.sock',
        }),
      ).toMatchObject({ 'rlvr.content-tag': before.tag, 'rlvr.efa': 'none' });
    });

    it("a --build-arg that contradicts the trainer's lock exits 2 before anything is built or asked", async () => {
      const docker = new Docker({ socketPath: engine.host.replace('unix://', '') });
      const imagesBefore = (await docker.listImages()).length;
      const r = await runCli(
        ['image', 'push', '--trainer-src', THEIR_REPO, '--build-arg', 'TORCH_VERSION=2.8.0'],
        { env: env() },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        "--build-arg TORCH_VERSION=2.8.0: contradicts the trainer's lock: uv.lock:127 pins torch 2.9.0",
      );
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect((await docker.listImages()).length).toBe(imagesBefore);
    });

    it('an unchanged second push, and a change to trainer code only, build nothing and upload nothing', async () => {
      const first = await image('push');
      const uploadsBefore = proxy.uploads();
      const again = await image('push');
      expect(again).toMatchObject({ tag: first.tag, digest: first.digest, built: false, pushed: false });
      // The registry having the tag settles it: no engine is even needed.
      const noEngine = await imageCli('push', { DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
      expect(noEngine.code).toBe(0);
      expect(JSON.parse(noEngine.stdout)).toMatchObject({
        digest: first.digest,
        built: false,
        pushed: false,
      });

      fs.appendFileSync(
        path.join(trainer.root, 'entrypoints', 'train_grpo_sft.py'),
        'print("a code change")\n',
      );
      const codeOnly = await image('push');
      expect(codeOnly).toMatchObject({ tag: first.tag, digest: first.digest, built: false, pushed: false });
      expect(proxy.uploads()).toBe(uploadsBefore);
    });

    it('a one-line dependency change rebuilds from that step on and uploads only those layers', async () => {
      const before = await image('push');
      const bytesBefore = proxy.bytesUp;
      fs.appendFileSync(path.join(trainer.root, 'requirements.txt'), 'scipy==1.14.1\n');
      const after = await image('push');
      expect(after.tag).not.toBe(before.tag);
      expect(after.built).toBe(true);
      expect(after.pushed).toBe(true);
      // base, OLMES copy and OLMES install come from the cache; trainer deps copy + install rebuild
      // (the entrypoint copy's layer is byte-identical, so the registry has it).
      expect(after.cachedSteps).toBeGreaterThanOrEqual(3);
      const sent = proxy.bytesUp - bytesBefore;
      // The rebuilt install layer is 1 MiB of random bytes; the 2 MiB OLMES layer must not be re-sent.
      expect(sent).toBeGreaterThan(1024 * 1024);
      expect(sent).toBeLessThan(1024 * 1024 + 256 * 1024);
      expect(await registryDigest(after.tag)).toBe(after.digest);
    });

    it('a build from the same context on an engine that has it does nothing', async () => {
      const built = await image('build');
      expect(built.built).toBe(false);
    });

    it('no engine, wrong credentials and a stopped registry each fail clearly with exit 1', async () => {
      fs.appendFileSync(path.join(trainer.root, 'requirements.txt'), 'pandas==2.2.3\n'); // a tag nobody has
      const noEngine = await imageCli('push', { DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
      expect(noEngine.code).toBe(1);
      expect(noEngine.stderr).toContain('No Docker engine answers at unix:///nonexistent/docker.sock');

      const other = await startRegistry('AWS', 'another-password');
      try {
        const wrong = await runCli(
          ['image', 'push', '--json', '--docker-dir', dockerDir, '--trainer-src', trainer.root],
          { env: env({ RLVR_REPOSITORY_URI: `${other.host}/rlvr-train` }) },
        );
        expect(wrong.code).toBe(1);
        expect(wrong.stderr).toMatch(/refused our credentials/);
      } finally {
        await other.remove();
      }

      await registry.stop();
      try {
        const stopped = await imageCli('push');
        expect(stopped.code).toBe(1);
        expect(stopped.stderr).toMatch(/Cannot reach the registry|registry .* is up/);
        for (const r of [noEngine, stopped]) expect(r.stderr).not.toMatch(/\n\s+at /);
      } finally {
        await registry.start();
      }
    });

    it('adds a commit tag to the pushed manifest without pushing again', async () => {
      const first = await image('push');
      const uploads = proxy.uploads();
      const r = await runCli(
        [
          'image',
          'push',
          '--json',
          '--docker-dir',
          dockerDir,
          '--trainer-src',
          trainer.root,
          '--also-tag',
          'git-0123abcd',
        ],
        { env: env() },
      );
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ digest: first.digest, built: false, pushed: false });
      expect(await registryDigest('git-0123abcd')).toBe(first.digest);
      expect(proxy.uploads()).toBe(uploads + 1); // one manifest PUT, no blob
    });

    it('a push whose token the registry refuses gets a fresh one and goes on', async () => {
      const eng = await connectEngine(engine.host);
      const repo = parseRepositoryUri(`${registry.host}/token-refresh`);
      const ctx = await assembleContext({
        dockerDir,
        trainerSrc: trainer.root,
        generated: [{ path: 'rlvr/entrypoint.js', body: Buffer.from('// t\n') }],
      });
      await eng.build(await contextTar(ctx), { tags: [`${repo.uri}:${ctx.tag}`], buildArgs: {} });
      const asked: boolean[] = [];
      const result = await pushImage(eng, repo, ctx.tag, async (fresh) => {
        asked.push(fresh);
        // The first token has expired (the registry no longer accepts it); a fresh one works.
        return { username: 'AWS', password: fresh ? `${TEST_ACCOUNT}-auth-token` : 'expired-token' };
      });
      expect(asked).toEqual([false, true]);
      expect(result.digest).toMatch(/^sha256:/);
    });

    it('a failed build names the failing step and its last output lines', async () => {
      const broken = tempDir('rlvr-docker-broken-');
      writeTestDockerDir(broken);
      fs.appendFileSync(
        path.join(broken, 'Dockerfile'),
        'RUN ["/bin/busybox", "sh", "-c", "echo resolving torch==9.9; echo ERROR: no matching distribution >&2; exit 7"]\n',
      );
      const r = await runCli(['image', 'build', '--docker-dir', broken, '--trainer-src', trainer.root], {
        env: env(),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/The image build failed at step \[\d+\/\d+\] RUN .*exit code: 7/);
      expect(r.stderr).toContain('ERROR: no matching distribution');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
    it('the engine by task: build with two tags, exists, tag, and a login per registry', async () => {
      const eng = await connectEngine(engine.host);
      expect(await eng.version()).toMatch(/^\d+\.\d+/);
      const ctx = await assembleContext({
        dockerDir,
        trainerSrc: trainer.root,
        generated: [{ path: 'rlvr/entrypoint.js', body: Buffer.from('// tasks\n') }],
      });
      const repo = parseRepositoryUri(`${registry.host}/engine-tasks`);
      const ref = `${repo.uri}:${ctx.tag}`;
      expect(await eng.exists(ref)).toBe(false);
      const events: ImageEvent[] = [];
      const built = await eng.build(await contextTar(ctx), {
        tags: [ref, `${repo.uri}:second`],
        buildArgs: {},
        listener: (e) => events.push(e),
      });
      expect(events.filter((e) => e.type === 'build-step').length).toBeGreaterThan(0);
      expect((await eng.inspect(`${repo.uri}:second`))?.id).toBe(built.imageId);
      await eng.tag(ref, `${repo.uri}:third`);
      expect(await eng.exists(`${repo.uri}:third`)).toBe(true);

      // No login: the registry refuses; after one, every push there goes through.
      await expect(eng.push(repo.uri, 'third')).rejects.toThrow(/no basic auth credentials|unauthorized/i);
      eng.login(repo.registry, { username: 'AWS', password: `${TEST_ACCOUNT}-auth-token` });
      const pushed = await eng.push(repo.uri, 'third');
      expect(pushed.digest).toMatch(/^sha256:/);
      expect((await eng.push(repo.uri, 'second')).digest).toBe(pushed.digest);
      expect(await registryDigestOf('engine-tasks', 'third')).toBe(pushed.digest);
    });

    it('the engine runs a container: output, environment, exit code, and a stop on abort', async () => {
      const eng = await connectEngine(engine.host);
      const ctx = await assembleContext({
        dockerDir,
        trainerSrc: trainer.root,
        generated: [{ path: 'rlvr/entrypoint.js', body: Buffer.from('// run\n') }],
      });
      const image = `rlvr-run-test:${ctx.tag}`;
      await eng.build(await contextTar(ctx), { tags: [image], buildArgs: {} });
      const spec = (script: string) => ({
        image,
        cmd: ['/bin/busybox', 'sh', '-c', script],
        env: { GREETING: 'hello' },
        labels: { 'rlvr.test': 'engine-run' },
        binds: [],
        networkMode: 'none',
        stopGraceSeconds: 5,
      });
      let out = '';
      let err = '';
      const sinks = {
        stdout: (d: Buffer) => (out += d.toString()),
        stderr: (d: Buffer) => (err += d.toString()),
      };
      const done = await eng.run(spec('echo "$GREETING out"; echo oops >&2; exit 3'), sinks);
      expect(done).toEqual({ exitCode: 3, interrupted: false });
      expect(out).toBe('hello out\n');
      expect(err).toBe('oops\n');

      out = '';
      const abort = new AbortController();
      let stops = 0;
      const running = eng.run(
        spec('trap "echo got TERM; exit 143" TERM; echo ready; while true; do /bin/busybox sleep 1; done'),
        {
          stdout: (d) => {
            sinks.stdout(d);
            if (out.includes('ready')) abort.abort();
          },
          stderr: sinks.stderr,
          signal: abort.signal,
          onStop: () => stops++,
        },
      );
      const stopped = await running;
      expect(stopped).toEqual({ exitCode: 143, interrupted: true });
      expect(out).toContain('got TERM');
      expect(stops).toBe(1);
      // Both containers are gone.
      const { default: Docker } = await import('dockerode');
      const docker = new Docker({ socketPath: engine.host.slice('unix://'.length) });
      const left = await docker.listContainers({ all: true, filters: { label: ['rlvr.test=engine-run'] } });
      expect(left).toEqual([]);
    });

    it('createImagePipeline builds, pushes and pins; a dry-run then finds the digest', async () => {
      const repositoryUri = `${registry.host}/pipeline-factory`;
      const ecr = {
        authorizationToken: async () => ({ username: 'AWS', password: `${TEST_ACCOUNT}-auth-token` }),
      };
      const request = { trainerSrc: trainer.root, repositoryUri, ecr };
      const pushing = createImagePipeline({ build: true, push: true, dockerDir, dockerHost: engine.host });
      const pushed = await pushing.resolve({ ...request, dryRun: false });
      expect(pushed.uri).toMatch(new RegExp(`^${repositoryUri}@sha256:[0-9a-f]{64}$`));
      expect(pushed.source).toMatch(/^image pipeline, deps-[0-9a-f]+ \(push\)$/);

      const looking = createImagePipeline({ build: false, push: false, dockerDir, dockerHost: engine.host });
      const found = await looking.resolve({ ...request, dryRun: true });
      const labels = { 'rlvr.efa': 'none' };
      expect(found).toEqual({
        uri: pushed.uri,
        source: pushed.source.replace('(push)', '(registry)'),
        labels,
      });
      const offline = await looking.resolve({ ...request, ecr: undefined, dryRun: true });
      expect(offline).toEqual({
        uri: pushed.uri,
        source: pushed.source.replace('(push)', '(engine)'),
        labels,
      });
    });
  },
);
