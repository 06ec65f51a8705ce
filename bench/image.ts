/** The image pipeline's rows of `npm run bench`, against a real Docker engine and registry. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyBusybox, startDockerEngine, startRegistry } from '../test/helpers/docker';
import { FaultProxy } from '../test/helpers/fault-proxy';
import { TEST_ACCOUNT } from '../test/helpers/moto';
import { MIB, run } from './measure';
import { row, type BenchContext, type Row } from './row';

const ROOT = path.resolve(__dirname, '..');

/**
 * The image pipeline on a test image shaped like the real one (a large "torch + vLLM" layer, OLMES,
 * the trainer's dependencies, our entrypoint), against a real engine and registry: a cold build and
 * push, then a one-line change in the last dependency file, a code-only change, and no change.
 */
export async function imageRows(
  { work, log }: BenchContext,
  motoEnv: Record<string, string>,
): Promise<Row[]> {
  const rows: Row[] = [];
  const [engine, registry] = await Promise.all([
    startDockerEngine(),
    startRegistry('AWS', `${TEST_ACCOUNT}-auth-token`),
  ]);
  const proxy = new FaultProxy(registry.port);
  await proxy.start();
  try {
    const dockerDir = path.join(work, 'docker');
    copyBusybox(dockerDir);
    fs.writeFileSync(path.join(dockerDir, 'requirements-olmes.txt'), 'ai2-olmes==0.1.0\n');
    const fill = (dir: string, mib: number) =>
      `RUN ["/bin/busybox", "sh", "-c", "mkdir -p ${dir} && /bin/busybox dd if=/dev/urandom of=${dir}/blob bs=1048576 count=${mib} 2>/dev/null"]`;
    fs.writeFileSync(
      path.join(dockerDir, 'Dockerfile'),
      [
        'FROM scratch',
        'COPY base/ /',
        fill('/opt/venv/torch', 400), // stands in for CUDA libraries, torch and vLLM
        'COPY requirements-olmes.txt /tmp/olmes/',
        fill('/opt/olmes-venv', 60),
        'COPY trainer-deps/ /tmp/trainer-deps/',
        fill('/opt/venv/trainer', 20),
        'COPY rlvr/ /opt/rlvr/',
        '',
      ].join('\n'),
    );
    const trainer = path.join(work, 'trainer');
    fs.mkdirSync(path.join(trainer, 'src'), { recursive: true });
    fs.writeFileSync(path.join(trainer, 'pyproject.toml'), '[project]\nname = "trainer"\n');
    fs.writeFileSync(path.join(trainer, 'requirements.txt'), 'numpy==2.1.0\n');
    fs.writeFileSync(path.join(trainer, 'src', 'train.py'), 'print("train")\n');
    const imageEnv = {
      PATH: process.env.PATH,
      HOME: work,
      ...motoEnv,
      DOCKER_HOST: engine.host,
      RLVR_REPOSITORY_URI: `127.0.0.1:${proxy.port}/rlvr-train`,
    };
    const push = async (extraEnv: Record<string, string> = {}) => {
      const before = { bytes: proxy.bytesUp, uploads: proxy.uploads() };
      const r = await run(
        process.execPath,
        [
          path.join(ROOT, 'bin/rlvr.js'),
          'image',
          'push',
          '--json',
          '--docker-dir',
          dockerDir,
          '--trainer-src',
          trainer,
        ],
        { ...imageEnv, ...extraEnv },
        { cwd: work },
      );
      const out = JSON.parse(r.stdout);
      return { ...r, out, bytes: proxy.bytesUp - before.bytes, uploads: proxy.uploads() - before.uploads };
    };
    const cold = await push();
    // Three one-line changes, each a new dependency set; the median one stands for the row.
    const changes: Awaited<ReturnType<typeof push>>[] = [];
    for (const line of ['scipy==1.14.1', 'pandas==2.2.3', 'rich==13.9.4']) {
      fs.appendFileSync(path.join(trainer, 'requirements.txt'), `${line}\n`);
      changes.push(await push());
    }
    const depChange = [...changes].sort((a, b) => a.seconds - b.seconds)[1];
    log.push(
      `image: the three dependency changes took ${changes.map((c) => c.seconds.toFixed(2)).join(', ')} s`,
    );
    rows.push({
      ...row(
        'image: rebuild + push after a one-line change in the last dependency file, vs cold build + push',
        depChange.seconds,
        cold.seconds,
        0.1,
      ),
      ours: `${depChange.seconds.toFixed(2)} s, ${(depChange.bytes / MIB).toFixed(1)} MiB sent`,
      baseline: `${cold.seconds.toFixed(2)} s, ${(cold.bytes / MIB).toFixed(1)} MiB sent (cold)`,
    });
    fs.appendFileSync(path.join(trainer, 'src', 'train.py'), 'print("changed")\n');
    const codeOnly = await push();
    // No change at all, with no engine reachable: proves the decision needs no engine work.
    const unchanged = await push({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    for (const [name, r] of [
      ['image: code-only change, `rlvr image push`', codeOnly],
      ['image: unchanged `rlvr image push`, no engine reachable', unchanged],
    ] as const) {
      rows.push({
        name,
        ours: `${r.seconds.toFixed(2)} s, built ${r.out.built}, ${r.uploads} uploads`,
        baseline: `${cold.seconds.toFixed(2)} s (cold)`,
        ratio: r.seconds / cold.seconds,
        target: 'no build, no upload',
        pass:
          !r.out.built &&
          !r.out.pushed &&
          r.uploads === 0 &&
          r.out.tag === changes[changes.length - 1].out.tag,
      });
    }
    log.push(
      `image: cold build + push ${cold.seconds.toFixed(1)} s (${(cold.bytes / MIB).toFixed(0)} MiB sent to the registry); ` +
        `after the dependency change ${depChange.out.builtSteps} steps ran and ${depChange.out.cachedSteps} came from the cache, ${depChange.out.pushedLayers} layers pushed`,
    );
  } finally {
    await proxy.stop();
    await Promise.all([engine.stop(), registry.remove()]);
  }
  return rows;
}
