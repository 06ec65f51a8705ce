import { bareEnv, runCli } from '../helpers/cli';
import { THEIR_REPO } from '../helpers/python';

/** `rlvr image build|push --dry-run`: the plan before a long build, on a machine with no engine and no AWS. */
describe('rlvr image build --dry-run', () => {
  const env = bareEnv({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' });

  it("shows the lock's versions for their repository, each argument's source, the checks and the tag, with no engine or AWS", async () => {
    const r = await runCli(['image', 'build', '--dry-run', '--json', '--trainer-src', THEIR_REPO], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    const args = Object.fromEntries(
      plan.args.map((a: { name: string; value: string; where: string }) => [
        a.name,
        `${a.value} ← ${a.where}`,
      ]),
    );
    expect(args).toMatchObject({
      TORCH_VERSION: '2.9.0 ← uv.lock:127',
      VLLM_VERSION: '0.11.2 ← uv.lock:157',
      RAY_VERSION: '2.51.2 ← uv.lock:67',
      PYTHON_VERSION: '3.11 ← Dockerfile default',
      BASE_IMAGE: 'nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04 ← Dockerfile default',
    });
    expect(plan.dependencyFiles).toEqual(['pyproject.toml', 'uv.lock']);
    expect(plan.tag).toMatch(/^deps-[0-9a-f]{24}$/);
    expect(plan.engine.state).toBe('not asked');
    expect(plan.checks).toContainEqual({
      ok: true,
      message:
        'CUDA 12.8: the torch wheel (nvidia-cuda-runtime-cu12 12.8.90 (uv.lock:47)) and the base agree',
    });

    // With a repository configured, the engine is asked (none here) and the registry is not (no AWS).
    const text = await runCli(
      [
        'image',
        'push',
        '--dry-run',
        '--trainer-src',
        THEIR_REPO,
        '--repository-uri',
        '123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr',
      ],
      { env: { ...env, AWS_REGION: 'us-west-2' } },
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ {4}TORCH_VERSION +2\.9\.0 +← uv\.lock:127$/m);
    expect(text.stdout).toMatch(
      /^ {2}engine {9}unreachable \(No Docker engine answers at unix:\/\/\/nonexistent\/docker\.sock/m,
    );
    expect(text.stdout).toMatch(/^ {2}registry {7}not asked \(no AWS credentials found\)$/m);
    expect(text.stdout).toContain(
      `content tag    ${plan.tag} (123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr:${plan.tag})`,
    );
  });

  it('a contradicting --build-arg exits 2 naming both versions and the lock line', async () => {
    const r = await runCli(
      ['image', 'build', '--dry-run', '--trainer-src', THEIR_REPO, '--build-arg', 'TORCH_VERSION=2.8.0'],
      { env },
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      "--build-arg TORCH_VERSION=2.8.0: contradicts the trainer's lock: uv.lock:127 pins torch 2.9.0",
    );
  });

  it('--also-tag: an invalid tag is exit 2 before anything (a registry would refuse it after the build); valid ones are shown', async () => {
    const bad = await runCli(
      ['image', 'build', '--dry-run', '--trainer-src', THEIR_REPO, '--also-tag', 'bad:tag:x'],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--also-tag bad:tag:x: not a tag');
    const ok = await runCli(
      [
        'image',
        'build',
        '--dry-run',
        '--trainer-src',
        THEIR_REPO,
        '--also-tag',
        'git-1a2b3c4',
        '--also-tag',
        'v1.2',
      ],
      { env },
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ {2}also tagged {4}git-1a2b3c4, v1\.2$/m);
  });
});
