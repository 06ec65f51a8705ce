import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IEcr } from '../../lib/aws';
import { createImagePipeline } from '../../lib/image';
import type { ImageEvent } from '../../lib/image/engine-streams';
import { tempDir } from '../helpers/fixtures';

jest.setTimeout(60_000);

/** The pipeline's answers when it cannot find an image; the real engine and registry are in pipeline.integration. */
describe('createImagePipeline', () => {
  const dockerDir = tempDir('rlvr-pipeline-docker-');
  fs.writeFileSync(path.join(dockerDir, 'Dockerfile'), 'FROM scratch\nCOPY trainer-deps/ /deps/\n');
  const trainerSrc = tempDir('rlvr-pipeline-trainer-');
  fs.writeFileSync(path.join(trainerSrc, 'requirements.txt'), 'numpy==2.1.0\n');
  const NO_ENGINE = 'unix:///nonexistent/docker.sock';
  const REPO = '127.0.0.1:1/rlvr-train';

  it('without a repository, says so, with the labels of what it would build', async () => {
    const pipeline = createImagePipeline({ build: false, push: false, dockerDir });
    await expect(
      pipeline.resolve({ trainerSrc, repositoryUri: undefined, ecr: undefined, dryRun: true }),
    ).resolves.toEqual({
      source: 'unresolved',
      note: 'no image repository is configured, so no image can be looked up',
      // This Dockerfile installs no EFA stack.
      labels: { 'rlvr.efa': 'none' },
    });
  });

  it('a dry-run with neither engine nor registry access tells how to get an image', async () => {
    const events: ImageEvent[] = [];
    const pipeline = createImagePipeline({
      build: false,
      push: false,
      dockerDir,
      dockerHost: NO_ENGINE,
      listener: (e) => events.push(e),
    });
    const r = await pipeline.resolve({ trainerSrc, repositoryUri: REPO, ecr: undefined, dryRun: true });
    expect(r.uri).toBeUndefined();
    expect(r.note).toMatch(
      new RegExp(
        `^No pushed image for the trainer's dependencies \\(${REPO}:deps-[0-9a-f]+\\)\\. Run .*--push; or pass --image\\.$`,
      ),
    );
    expect(events).toEqual([]);
  });

  it('a dry-run reports an unreachable registry as a note; a submit stops on it', async () => {
    const ecr: IEcr = { authorizationToken: async () => ({ username: 'AWS', password: 'token' }) };
    const pipeline = createImagePipeline({ build: true, push: true, dockerDir, dockerHost: NO_ENGINE });
    const request = { trainerSrc, repositoryUri: REPO, ecr };
    const dry = await pipeline.resolve({ ...request, dryRun: true });
    expect(dry).toMatchObject({
      source: 'unresolved',
      note: expect.stringMatching(/Cannot reach the registry 127\.0\.0\.1:1/),
    });
    await expect(pipeline.resolve({ ...request, dryRun: false })).rejects.toMatchObject({
      code: 'RegistryUnreachable',
    });
  });
});
