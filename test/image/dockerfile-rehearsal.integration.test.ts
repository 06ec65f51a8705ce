import * as fs from 'node:fs';
import * as path from 'node:path';
import Docker from 'dockerode';
import {
  connectEngine,
  defaultDockerDir,
  ensureImage,
  planImageBuild,
  type ImageResult,
} from '../../lib/image';
import type { ImageEvent } from '../../lib/image/engine-streams';
import { startDockerEngine, type DockerEngine } from '../helpers/docker';
import { tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { THEIR_REPO } from '../helpers/python';
import {
  BASE_LD_LIBRARY_PATH,
  BASE_PATH,
  buildStandIns,
  parseCalls,
  rehearsalAvailable,
  runShell,
  type RecordedCall,
  type StandIns,
} from '../helpers/rehearsal';

jest.setTimeout(300_000);

/**
 * A rehearsal build of the real docker/Dockerfile, as it is on disk, through the launcher's own pipeline
 * (build context, build plan from the team's lock, BuildKit through the Engine API), in a real engine
 * with nothing to pull and no network: each FROM names a local stand-in, each network tool is a recording
 * stand-in (test/helpers/rehearsal.ts). Every COPY, script, flag, path and ENV line runs; the test reads
 * back what each step ran, in order, and what the image holds.
 */
describeWithPeer('dockerd and busybox-static', rehearsalAvailable())(
  'docker/Dockerfile, rehearsed (real engine, stand-in bases and downloads)',
  () => {
    let engine: DockerEngine;
    let standIns: StandIns;
    let built: ImageResult;
    let calls: RecordedCall[];
    const events: ImageEvent[] = [];
    const dockerfile = fs.readFileSync(path.join(defaultDockerDir(), 'Dockerfile'), 'utf8');
    // The plan the launcher makes for the team's lock, with the Dockerfile's own base images.
    const plan = planImageBuild({ dockerfile, trainerSrc: THEIR_REPO, flags: {} });
    const arg = (name: string) => plan.args.find((a) => a.name === name)!.value;

    beforeAll(async () => {
      engine = await startDockerEngine();
      standIns = await buildStandIns(await connectEngine(engine.host), plan, tempDir('rlvr-rehearsal-'));
      built = await ensureImage({
        context: { trainerSrc: THEIR_REPO, buildArgs: standIns.flags },
        repositoryUri: 'localhost/rlvr-rehearsal',
        build: true,
        push: false,
        dockerHost: engine.host,
        listener: (e) => events.push(e),
      });
      const log = await runShell(engine.host, built.ref, 'cat /opt/rehearsal/calls.log');
      if (log.code !== 0) throw new Error(`no call log in the image: ${log.stderr}`);
      calls = parseCalls(log.stdout);
    });
    afterAll(async () => {
      await engine?.stop();
    });

    it('builds with the plan the lock gives; only the three images are stand-ins', () => {
      expect(built.built?.imageId).toMatch(/^sha256:/);
      const expected = Object.fromEntries(plan.args.map((a) => [a.name, a.value]));
      expect(built.context.buildArgs).toEqual({ ...expected, ...standIns.flags });
      expect(expected).toMatchObject({
        TORCH_VERSION: '2.9.0',
        TORCH_INDEX_URL: 'https://pypi.org/simple',
        VLLM_VERSION: '0.11.2',
        RAY_VERSION: '2.51.2',
        PYTHON_VERSION: '3.11',
        BASE_IMAGE: 'nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04',
      });
      // Every instruction of the Dockerfile's final stage ran, in its order (none cached: a fresh engine).
      const logical = dockerfile.replace(/\\\n/g, ' ').split('\n');
      const lastFrom = logical.map((l) => /^FROM /.test(l)).lastIndexOf(true);
      const instructions = logical
        .slice(lastFrom + 1)
        .filter((l) => /^(COPY|RUN|WORKDIR) /.test(l))
        .map((l) => l.split(' ')[0]);
      const ran = built
        .built!.steps.map((s) => /^\[runtime\s+\d+\/\d+\] (COPY|RUN|WORKDIR) /.exec(s.name)?.[1])
        .filter((op) => op !== undefined);
      expect(ran).toEqual(instructions);
      expect(instructions.filter((op) => op === 'RUN')).toHaveLength(6);
      expect(built.built!.steps.every((s) => !s.cached)).toBe(true);
    });

    it("runs every step's tools in the Dockerfile's order, with the plan's arguments", () => {
      const efa = arg('EFA_INSTALLER_VERSION');
      const tarball = `aws-efa-installer-${efa}.tar.gz`;
      const venvPy = '/opt/venv/bin/python';
      const nltk = arg('NLTK_DATA_PACKAGES').split(' ');
      const tasks = arg('LM_EVAL_TASKS').split(' ');
      expect(nltk).toContain('punkt_tab');
      expect(tasks).toContain('ifeval');
      expect(calls.map((c) => [c.tool, ...c.args])).toEqual([
        // 1. CUDA forward compatibility: the base's CUDA (12.8.1) picks the package.
        ['apt-get', 'update'],
        ['apt-get', 'install', '-y', '--no-install-recommends', standIns.compatPackage],
        // 1. The EFA stack: AWS's installer, its signature checked, without the kernel module.
        ['apt-get', 'update'],
        ['apt-get', 'install', '-y', '--no-install-recommends', 'curl', 'ca-certificates', 'gnupg'],
        ['curl', '-fsSLO', `https://efa-installer.amazonaws.com/${tarball}`],
        ['curl', '-fsSLO', `https://efa-installer.amazonaws.com/${tarball}.sig`],
        [
          'curl',
          '-fsSL',
          '-o',
          'aws-efa-installer.key',
          'https://efa-installer.amazonaws.com/aws-efa-installer.key',
        ],
        ['gpg', '--batch', '--import', 'aws-efa-installer.key'],
        ['gpg', '--batch', '--verify', `${tarball}.sig`, tarball],
        ['efa_installer.sh', '-y', '--skip-kmod', '--skip-limit-conf', '--no-verify'],
        // 2. The main environment: the lock's torch from the lock's index, alone; then vLLM and Ray held
        //    to the installed torch and the lock's pins.
        ['uv', 'venv', '--python', '3.11', '/opt/venv'],
        [
          'uv',
          'pip',
          'install',
          '--python',
          venvPy,
          '--index-url',
          'https://pypi.org/simple',
          '--no-deps',
          'torch==2.9.0',
        ],
        ['python', '-c', 'import importlib.metadata as m; print("torch==" + m.version("torch"))'],
        [
          'uv',
          'pip',
          'install',
          '--python',
          venvPy,
          '--constraint',
          '/opt/constraints.txt',
          '--constraint',
          '/opt/rlvr-build/main-constraints.txt',
          'torch==2.9.0',
          'vllm==0.11.2',
          'ray[default]==2.51.2',
        ],
        // 3. OLMES in its own venv.
        ['uv', 'venv', '--python', '3.11', '/opt/olmes-venv'],
        [
          'uv',
          'pip',
          'install',
          '--python',
          '/opt/olmes-venv/bin/python',
          '-r',
          '/opt/rlvr-build/requirements-olmes.txt',
        ],
        // 4. The trainer's dependencies from its lock, torch held.
        ['uv', 'export', '--frozen', '--no-hashes', '--no-emit-project', '--format', 'requirements-txt'],
        [
          'uv',
          'pip',
          'install',
          '--python',
          venvPy,
          '--constraint',
          '/opt/constraints.txt',
          '-r',
          '/tmp/trainer-lock.txt',
        ],
        // 5. Offline data with the trainer's own nltk and lm_eval.
        ['python', '-c', 'import nltk'],
        ['python', '-', ...nltk],
        ['python', '-c', 'import lm_eval'],
        ['python', '-', ...tasks],
      ]);
    });

    it('runs each step where and with what the Dockerfile says (folders, cache mounts, environment)', () => {
      const byTool = (tool: string) => calls.filter((c) => c.tool === tool);
      // uv's package cache is a BuildKit cache mount on every uv step, never a layer.
      for (const c of byTool('uv')) {
        expect(c.cacheMount).toBe(true);
        expect(c.env).toMatchObject({
          UV_LINK_MODE: 'copy',
          UV_COMPILE_BYTECODE: '1',
          UV_PYTHON_INSTALL_DIR: '/opt/python',
          VIRTUAL_ENV: '/opt/venv',
          DEBIAN_FRONTEND: 'noninteractive',
        });
      }
      expect(byTool('apt-get').every((c) => !c.cacheMount)).toBe(true);
      expect(byTool('uv').find((c) => c.args[0] === 'export')!.cwd).toBe('/opt/rlvr-build/trainer-deps');
      // The EFA download, its check and its installer run in one throwaway folder with its own GNUPGHOME.
      const [download] = byTool('curl');
      expect(download.cwd).toMatch(/^\/tmp\/tmp\.\w+$/);
      for (const c of byTool('gpg')) expect(c.env.GNUPGHOME).toBe(`${download.cwd}/gnupg`);
      expect(byTool('efa_installer.sh')[0].cwd).toBe(`${download.cwd}/aws-efa-installer`);
      const [nltk, lmEval] = byTool('python').filter((c) => c.args[0] === '-');
      expect(nltk.env).toMatchObject({ NLTK_DATA: '/opt/nltk_data' });
      expect(lmEval.env).toMatchObject({ HF_HOME: '/opt/hf-home', HF_ALLOW_CODE_EVAL: '1' });
    });

    it('holds the image config the Dockerfile and the plan give: entrypoint, ENV, labels', async () => {
      const docker = new Docker({ socketPath: engine.host.replace(/^unix:\/\//, '') });
      const config = (await docker.getImage(built.ref).inspect()).Config;
      expect(config.Entrypoint).toEqual(['/usr/local/bin/train']);
      expect(config.WorkingDir).toBe('/opt/ml/code');
      const env = Object.fromEntries(
        (config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
      );
      expect(env).toMatchObject({
        NVIDIA_DISABLE_REQUIRE: '1',
        PATH: `/opt/venv/bin:/usr/local/bin:/opt/amazon/efa/bin:${BASE_PATH}`,
        LD_LIBRARY_PATH: `/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/opt/amazon/ofi-nccl/lib:${BASE_LD_LIBRARY_PATH}`,
        VIRTUAL_ENV: '/opt/venv',
        NLTK_DATA: '/opt/nltk_data',
        HF_HOME: '/opt/hf-home',
        PYTHONUNBUFFERED: '1',
        // The base's own, untouched: the entrypoint reads CUDA_VERSION.
        CUDA_VERSION: standIns.cudaVersion,
      });
      expect(config.Labels).toEqual({
        ...built.context.plan.labels,
        'rlvr.content-tag': built.context.tag,
      });
      expect(config.Labels).toMatchObject({
        'rlvr.torch': '2.9.0',
        'rlvr.cuda': '12.8',
        'rlvr.efa': `aws-efa-installer ${arg('EFA_INSTALLER_VERSION')}`,
      });
    });

    it('holds what the steps left: compat libraries, EFA, both venvs at the pins, offline data; no apt lists or download folders', async () => {
      const r = await runShell(
        engine.host,
        built.ref,
        [
          'readlink /usr/local/cuda/compat/libcuda.so.1',
          'test -e /opt/amazon/efa/lib/libfabric.so && echo efa',
          'test -e /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net.so && echo ofi-nccl',
          'cat /opt/constraints.txt',
          'echo "venv: $(sort -u /opt/venv/installed.txt | tr "\\n" " ")"',
          'echo "olmes: $(cat /opt/olmes-venv/installed.txt)"',
          'echo "nltk: $(ls /opt/nltk_data/rehearsal | tr "\\n" " ")"',
          'echo "lm_eval: $(ls /opt/hf-home/datasets/rehearsal | tr "\\n" " ")"',
          'echo "apt lists: $(ls /var/lib/apt/lists | wc -l)"',
          'echo "tmp: $(ls /tmp | tr "\\n" " ")"',
          'ls /opt/rlvr-build/trainer-deps',
          'test -s /opt/rlvr/entrypoint.js && echo bundle',
          // The code verifiers' `docker`: first on PATH, running the sandbox with the image's python.
          'echo "docker: $(command -v docker) $(test -f /opt/rlvr-sandbox/code-sandbox.py && echo sandbox)"',
        ].join('; '),
      );
      expect(r.stderr).toBe('');
      const lines = r.stdout.trim().split('\n');
      expect(lines.slice(0, 4)).toEqual([
        `libcuda.so.${standIns.compatDriver}`,
        'efa',
        'ofi-nccl',
        'torch==2.9.0',
      ]);
      const venv = lines[4];
      for (const pin of ['torch==2.9.0', 'vllm==0.11.2', 'ray==2.51.2', 'nltk==3.9.2', 'lm-eval==0.4.9.2']) {
        expect(venv).toContain(` ${pin} `);
      }
      expect(venv).not.toContain('rlvr-experiments'); // the trainer's own package travels with each job
      expect(lines[5]).toBe('olmes: ai2-olmes==0.1.0');
      expect(lines[6]).toBe(`nltk: ${[...arg('NLTK_DATA_PACKAGES').split(' ')].sort().join(' ')} `);
      expect(lines[7]).toBe(`lm_eval: ${[...arg('LM_EVAL_TASKS').split(' ')].sort().join(' ')} `);
      expect(lines[8]).toBe('apt lists: 0');
      expect(lines[9]).toBe('tmp: trainer-lock.txt ');
      expect(lines.slice(10)).toEqual([
        'pyproject.toml',
        'uv.lock',
        'bundle',
        'docker: /usr/local/bin/docker sandbox',
      ]);
    });

    it('skips the compat step cleanly where the base already has cuda-compat', async () => {
      const r = await runShell(
        engine.host,
        built.ref,
        'sh /opt/rlvr-build/install-cuda-compat.sh && wc -l < /opt/rehearsal/calls.log',
      );
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n')).toEqual([
        `CUDA forward compatibility: the base has it (/usr/local/cuda/compat/libcuda.so.${standIns.compatDriver})`,
        String(calls.length), // no apt-get call
      ]);
    });

    it('fails the compat step on a base that does not say its CUDA', async () => {
      const r = await runShell(
        engine.host,
        built.ref,
        'rm /usr/local/cuda/compat/libcuda.so.1 && unset CUDA_VERSION && sh /opt/rlvr-build/install-cuda-compat.sh',
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("cannot tell the base's CUDA version");
    });

    it('starts our entrypoint as SageMaker does (`<image> train`): node, its libraries and the bundle run', async () => {
      const run = await connectEngine(engine.host);
      let out = '';
      const exit = await run.run(
        { image: built.ref, cmd: ['train'], env: {}, binds: [], networkMode: 'none', stopGraceSeconds: 5 },
        { stdout: (d) => (out += d.toString()), stderr: (d) => (out += d.toString()) },
      );
      // No SageMaker job here: the entrypoint itself says so and fails (exit 1), not the shell (126/127).
      expect({ code: exit.exitCode, out }).toEqual({
        code: 1,
        out: expect.stringMatching(/\[rlvr\].*FAILED/),
      });
    });
  },
);
