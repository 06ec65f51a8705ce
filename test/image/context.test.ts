import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { assembleContext, cachedCredentials } from '../../lib/image';
import { decodeBuildkitTrace } from '../../lib/image/buildkit-trace';
import { bundleEntrypoint, contentTag, isTrainerDependencyFile } from '../../lib/image/context';
import { UserError } from '../../lib/errors';
import { tempDir } from '../helpers/fixtures';

const ENTRY = [{ path: 'rlvr/entrypoint.js', body: Buffer.from('// bundle\n') }];

function dockerDir(): string {
  const dir = tempDir('rlvr-ctx-');
  fs.writeFileSync(
    path.join(dir, 'Dockerfile'),
    'FROM scratch\nARG VLLM_VERSION=0.11.2\nCOPY trainer-deps/ /deps/\n',
  );
  fs.writeFileSync(path.join(dir, '.dockerignore'), '*.md\nscratch/\n');
  fs.writeFileSync(path.join(dir, 'NOTES.md'), 'notes\n');
  fs.mkdirSync(path.join(dir, 'scratch'));
  fs.writeFileSync(path.join(dir, 'scratch', 'big.bin'), 'x');
  return dir;
}

function trainerSrc(): string {
  const dir = tempDir('rlvr-trainer-');
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "t"\n');
  fs.writeFileSync(path.join(dir, 'requirements-dev.txt'), 'pytest\n');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'train.py'), 'print(1)\n');
  return dir;
}

describe('build context and content tag', () => {
  it('holds the Docker folder as .dockerignore filters it, the dependency files and the bundle — never source', async () => {
    const ctx = await assembleContext({ dockerDir: dockerDir(), trainerSrc: trainerSrc(), generated: ENTRY });
    expect(ctx.files.map((f) => f.path)).toEqual([
      '.dockerignore',
      'Dockerfile',
      'main-constraints.txt',
      'rlvr/entrypoint.js',
      'trainer-deps/pyproject.toml',
      'trainer-deps/requirements-dev.txt',
    ]);
    expect(ctx.tag).toMatch(/^deps-[0-9a-f]{24}$/);
  });

  it.each(['/etc', '/', os.homedir()])('refuses the system folder %s as the trainer source', async (src) => {
    const err = await assembleContext({ dockerDir: dockerDir(), trainerSrc: src, generated: ENTRY }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/is (a system folder|your home folder)/);
  });

  it('changes with a dependency file or a build argument, not with source or ignored files', async () => {
    const docker = dockerDir();
    const src = trainerSrc();
    const tag = async (buildArgs: Record<string, string> = {}) =>
      (await assembleContext({ dockerDir: docker, trainerSrc: src, buildArgs, generated: ENTRY })).tag;
    const first = await tag();
    fs.appendFileSync(path.join(src, 'src', 'train.py'), 'print(2)\n');
    fs.writeFileSync(path.join(docker, 'NOTES.md'), 'other notes\n');
    fs.writeFileSync(path.join(docker, 'scratch', 'big.bin'), 'y');
    expect(await tag()).toBe(first);
    expect(await tag({ VLLM_VERSION: '0.10.2' })).not.toBe(first);
    fs.appendFileSync(path.join(src, 'requirements-dev.txt'), 'ruff\n');
    expect(await tag()).not.toBe(first);
  });

  it('counts file modes and build-argument order-independently', () => {
    const a = contentTag([{ path: 'x.sh', body: Buffer.from('echo') }], { A: '1', B: '2' });
    expect(contentTag([{ path: 'x.sh', body: Buffer.from('echo') }], { B: '2', A: '1' })).toBe(a);
    expect(
      contentTag([{ path: 'x.sh', body: Buffer.from('echo'), executable: true }], { A: '1', B: '2' }),
    ).not.toBe(a);
  });

  it('refuses a trainer folder without dependency files, saying what it looked for', async () => {
    const empty = tempDir('rlvr-empty-');
    await expect(
      assembleContext({ dockerDir: dockerDir(), trainerSrc: empty, generated: ENTRY }),
    ).rejects.toThrow(
      /No dependency files in the trainer source .*pyproject\.toml, uv\.lock, requirements\*\.txt/,
    );
    expect(isTrainerDependencyFile('requirements.txt')).toBe(true);
    expect(isTrainerDependencyFile('src/requirements.txt')).toBe(false);
    expect(isTrainerDependencyFile('setup.py')).toBe(false);
  });

  it('bundles the real entrypoint reproducibly', async () => {
    const a = await assembleContext({ dockerDir: dockerDir() });
    const b = await assembleContext({ dockerDir: dockerDir() });
    const bundle = a.files.find((f) => f.path === 'rlvr/entrypoint.js')!;
    expect(bundle.body!.toString()).toContain('RLVR_CHECKPOINT_DIR');
    expect(a.tag).toBe(b.tag);
  });
});

describe('BuildKit progress', () => {
  it('decodes a StatusResponse the engine sent (vertex name, completion, logs)', () => {
    // Captured from dockerd 20.10 building a FROM scratch image: a vertex, then a log line of a RUN step.
    const vertex = decodeBuildkitTrace(
      'CmsKR3NoYTI1NjplOGM2MTNlMDdiMGI3ZmYzMzg5M2I2OTRmNzc1OWExMGQ0MmUxODBmMmI0ZGMzNDlmYjU3ZGM2YjcxZGNhYjAwGhJleHBvcnRpbmcgdG8gaW1hZ2UqDAj7kIrYBhDS//esAhJ3ChBleHBvcnRpbmcgbGF5ZXJzEkdzaGEyNTY6ZThjNjEzZTA3YjBiN2ZmMzM4OTNiNjk0Zjc3NTlhMTBkNDJlMTgwZjJiNGRjMzQ5ZmI1N2RjNmI3MWRjYWIwMDIMCPuQitgGENKR+KwCOgwI+5CK2AYQw4/4rAI=',
    );
    expect(vertex.vertexes).toEqual([
      expect.objectContaining({ name: 'exporting to image', started: true, completed: false, cached: false }),
    ]);
    expect(vertex.vertexes[0].digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(vertex.statuses[0]).toMatchObject({ id: 'exporting layers' });
    const log = decodeBuildkitTrace(
      'GmUKR3NoYTI1Njo1OWY2YTc4MTgyNGUzMzMzNzQ0OTI2MGMxZTI5OTRkYWM5ZmIyMTc0MjZmYjIxNGZiZTc2NWM0MTc3MTVhYzNkEgwI+5CK2AYQmu2+qgIYASIKaGVsbG8tbG9nCg==',
    );
    expect(log.logs).toEqual([expect.objectContaining({ stream: 1, message: 'hello-log\n' })]);
  });

  it('throws on a truncated message instead of inventing steps', () => {
    expect(() => decodeBuildkitTrace(Buffer.from([0x0a, 0x10, 0x01]).toString('base64'))).toThrow(
      /truncated/,
    );
  });
});

describe('registry credentials', () => {
  it('refreshes a token an hour before it expires, and when asked after a refusal', async () => {
    let clock = 0;
    const issued: boolean[] = [];
    const source = cachedCredentials(
      async (fresh) => {
        issued.push(fresh);
        return { username: 'AWS', password: `t${issued.length}`, expiresAt: new Date(clock + 12 * 3600_000) };
      },
      () => clock,
    );
    expect((await source(false)).password).toBe('t1');
    clock += 10 * 3600_000;
    expect((await source(false)).password).toBe('t1');
    clock += 1.5 * 3600_000; // 30 minutes left: a long push would outlive it
    expect((await source(false)).password).toBe('t2');
    expect((await source(true)).password).toBe('t3');
    expect(issued).toEqual([false, true, true]);
  });
});

describe('the bundled entrypoint', () => {
  it("holds the job's program only: no AWS SDK, zod or Docker client reached through a folder's face", async () => {
    const js = (await bundleEntrypoint()).toString();
    // esbuild names each bundled module's file in a comment (the bundle is not minified).
    const packages = new Set([...js.matchAll(/\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1]));
    expect(packages).toContain('yaml'); // the comments are there to read
    for (const heavy of [
      '@aws-sdk/client-sagemaker',
      '@aws-sdk/client-s3',
      '@smithy/core',
      'zod',
      'dockerode',
      'ssh2',
    ])
      expect(packages).not.toContain(heavy);
    expect(js.length).toBeLessThan(1024 * 1024);
  });

  it('is built once per change of the code: a second call reads it from the cache', async () => {
    const env = { ...process.env, XDG_CACHE_HOME: tempDir('rlvr-cache-') };
    const first = await bundleEntrypoint(env);
    const dir = path.join(env.XDG_CACHE_HOME, 'rlvr', 'entrypoint');
    const files = fs.readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{32}\.js$/);
    expect(fs.readFileSync(path.join(dir, files[0])).equals(first)).toBe(true);
    // What the cache holds is what a second call returns: it did not build again.
    fs.appendFileSync(path.join(dir, files[0]), '// from the cache\n');
    expect((await bundleEntrypoint(env)).toString()).toMatch(/\/\/ from the cache\n$/);
    // Another cache (a fresh machine) builds the same bytes: the cache changes nothing but the time.
    expect((await bundleEntrypoint({ ...env, XDG_CACHE_HOME: tempDir('rlvr-cache-') })).equals(first)).toBe(
      true,
    );
  });
});
