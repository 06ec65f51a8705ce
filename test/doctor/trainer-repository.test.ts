import * as fs from 'node:fs';
import * as path from 'node:path';
import { trainerRepositoryChecks } from '../../lib/doctor';
import { bareEnv, runCli } from '../helpers/cli';
import { theirRepository } from '../helpers/python';

/** `rlvr doctor --trainer-src`: a trainer repository checked without AWS or an engine. */
describe('rlvr doctor --trainer-src', () => {
  it("their repository: src/ as import root, the lock's versions for the image, each script's imports, every network use handled", async () => {
    const root = theirRepository();
    const r = await runCli(['doctor', '--trainer-src', root, '--json'], {
      env: bareEnv({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }),
    });
    // Their modules pin NCCL to ens32 at import: the doctor fails those lines (exit 1).
    expect(r.code).toBe(1);
    const checks = JSON.parse(r.stdout) as { name: string; level: string; detail: string }[];
    const detail = (name: string) => checks.find((c) => c.name === name)?.detail;
    expect(detail('import roots')).toBe(
      'src/ (rlvr_experiments) ← pyproject.toml: a package in a src layout',
    );
    expect(detail('image')).toContain(
      'TORCH_VERSION=2.9.0 (uv.lock:127), VLLM_VERSION=0.11.2 (uv.lock:157), RAY_VERSION=2.51.2 (uv.lock:67)',
    );
    expect(detail('imports of entrypoints/train_grpo_sft.py')).toBe('rlvr_experiments from src/');
    expect(checks.filter((c) => c.name.startsWith('network (')).map((c) => c.detail)).toContainEqual(
      expect.stringContaining(
        'verifiers/ifbench.py: nltk.download(punkt, punkt_tab, stopwords, averaged_perceptron_tagger_eng) at import',
      ),
    );
    expect(detail('network calls')).toBe(
      "2 in the 15 files the trainers' scripts import, each described above",
    );
    const platform = checks
      .filter((c) => c.name === 'platform env at import')
      .map((c) => `${c.level} ${c.detail.split(':').slice(0, 2).join(':')}`);
    expect(platform).toEqual([
      'ok entrypoints/train_grpo_sft.py:11 NCCL_TIMEOUT="90" (a default)',
      'warn src/rlvr_experiments/syncing.py:14 NCCL_NET="Socket" (assigned)',
      'fail src/rlvr_experiments/syncing.py:15 NCCL_SOCKET_IFNAME="ens32" (assigned)',
      'warn src/rlvr_experiments/syncing.py:16 NCCL_NET_PLUGIN="" (assigned)',
      'warn src/rlvr_experiments/titan_actor.py:4 NCCL_NET="Socket" (assigned)',
      'fail src/rlvr_experiments/titan_actor.py:5 NCCL_SOCKET_IFNAME="ens32" (assigned)',
      'warn src/rlvr_experiments/titan_actor.py:6 NCCL_NET_PLUGIN="" (assigned)',
      'ok src/rlvr_experiments/titan_actor.py:7 NCCL_DEBUG=os.environ.get("NCCL_DEBUG", "WARN") (a default)',
      'warn src/rlvr_experiments/vllm_engine_actor.py:6 NCCL_NET="Socket" (assigned)',
      'fail src/rlvr_experiments/vllm_engine_actor.py:7 NCCL_SOCKET_IFNAME="ens32" (assigned)',
      'warn src/rlvr_experiments/vllm_engine_actor.py:8 NCCL_NET_PLUGIN="" (assigned)',
      'ok src/rlvr_experiments/vllm_engine_actor.py:9 NCCL_DEBUG=os.environ.get("NCCL_DEBUG", "WARN") (a default)',
    ]);
    expect(checks.filter((c) => c.name !== 'platform env at import').every((c) => c.level === 'ok')).toBe(
      true,
    );
  });

  it('names a network call at import that no profile describes, in a module the trainer reaches through its imports', async () => {
    const root = theirRepository({
      'src/rlvr_experiments/verifiers/ifbench.py': 'import nltk\n\nnltk.download("punkt_tab", quiet=True)\n',
      'src/rlvr_experiments/verifiers/__init__.py':
        '"""Verifiers."""\n\nfrom .math import MathVerifier\nfrom . import ifbench\n',
    });
    const checks = await trainerRepositoryChecks(root);
    const calls = checks.find((c) => c.name === 'network calls')!;
    expect(calls.level).toBe('warn');
    expect(calls.detail).toContain(
      'not described by a profile: src/rlvr_experiments/verifiers/ifbench.py:3 nltk.download (at import)',
    );
    expect(calls.fix).toContain('runtime.network');
  });

  it('fails (exit 1) when an entrypoint imports a package that ships on no import root', async () => {
    const root = theirRepository();
    fs.renameSync(path.join(root, 'src'), path.join(root, 'lib'));
    const r = await runCli(['doctor', '--trainer-src', root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'FAIL  imports of entrypoints/train_grpo_sft.py: entrypoints/train_grpo_sft.py:16 imports rlvr_experiments, which ships in lib/ but is on no import root (./)',
    );
  });
});
