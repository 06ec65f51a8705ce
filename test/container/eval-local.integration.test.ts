import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureImage } from '../../lib/image';
import { bareEnv, runCli } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  writeContainerDockerDir,
  type DockerEngine,
} from '../helpers/docker';
import { writeCheckpoint } from '../helpers/eval';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';

jest.setTimeout(300_000);

const TASKS = 'gsm8k_cot:8,minerva_math:4,ifeval:0,mbpp:3';

interface Call {
  argv: string[];
  modelArgs: Record<string, string>;
  genKwargs: Record<string, string>;
  seed: string;
  env: Record<string, string | null>;
}

/** Every unit record of a local eval run folder, with what the fake lm_eval recorded of its call. */
function unitsOf(runDir: string): { folder: string; ok: boolean; gpu: number; call?: Call }[] {
  const out: { folder: string; ok: boolean; gpu: number; call?: Call }[] = [];
  const evals = path.join(runDir, 'evals');
  for (const label of fs.readdirSync(evals))
    for (const unit of fs.readdirSync(path.join(evals, label))) {
      const dir = path.join(evals, label, unit);
      for (const f of fs.readdirSync(dir).filter((x) => /^(unit|failed)-/.test(x))) {
        const record = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { gpu: number };
        const callFile = path.join(dir, 'harness', 'call.json');
        out.push({
          folder: `${label}/${unit}`,
          ok: f.startsWith('unit-'),
          gpu: record.gpu,
          ...(fs.existsSync(callFile) ? { call: JSON.parse(fs.readFileSync(callFile, 'utf8')) as Call } : {}),
        });
      }
    }
  return out.sort((a, b) => a.folder.localeCompare(b.folder));
}

/**
 * `rlvr eval --local` on a real Docker engine: the real entrypoint in eval mode, bundled
 * into the test image with a fake `lm_eval` that records its argv and environment and writes results in
 * the harness's layout. The engine here has no NVIDIA runtime: RLVR_LOCAL_GPU_DEVICES=none numbers the
 * GPUs for the job without asking the engine for devices.
 */
describeWithPeer('dockerd', dockerAvailable())('rlvr eval --local (real engine, real entrypoint)', () => {
  let engine: DockerEngine;
  let image: string;
  let cwd: string;
  let cache: string;

  beforeAll(async () => {
    engine = await startDockerEngine();
    const dockerDir = tempDir('rlvr-docker-');
    writeContainerDockerDir(dockerDir);
    const built = await ensureImage({
      context: { dockerDir, trainerSrc: makeTrainerRepo().root },
      repositoryUri: 'rlvr-local/train',
      build: true,
      push: false,
      dockerHost: engine.host,
    });
    image = built.ref;
    cwd = tempDir('rlvr-eval-work-');
    cache = tempDir('rlvr-eval-cache-');
    writeCheckpoint(path.join(cwd, 'ck', 'a'));
    writeCheckpoint(path.join(cwd, 'ck', 'b'), { failTasks: ['mbpp'], trap: true });
  });
  afterAll(async () => {
    await engine?.stop();
  });

  const evalCli = (...extra: string[]) =>
    runCli(
      [
        'eval',
        '--checkpoints',
        'a=./ck/a',
        '--checkpoints',
        'b=./ck/b',
        '--benchmarks',
        TASKS,
        '--local',
        '--gpus',
        '0-3',
        '--image',
        image,
        ...extra,
      ],
      {
        cwd,
        env: bareEnv({ DOCKER_HOST: engine.host, RLVR_LOCAL_GPU_DEVICES: 'none', XDG_CACHE_HOME: cache }),
      },
    );

  it('runs 8 units over GPUs 0-3 to the standard; the failing unit leaves the others and fails the run; a rerun skips what is done', async () => {
    const r = await evalCli();
    expect(r.stderr).toMatch(/units +8 to run/);
    expect(r.code).toBe(1);
    const runDir = /run folder (\S+)/.exec(r.stdout)![1];
    const units = unitsOf(runDir);
    expect(units).toHaveLength(8);
    expect(units.filter((u) => !u.ok).map((u) => u.folder)).toEqual(['b/mbpp_3shot']);
    expect(new Set(units.map((u) => u.gpu))).toEqual(new Set([0, 1, 2, 3]));
    for (const u of units) {
      expect(u.call!.env.CUDA_VISIBLE_DEVICES).toBe(String(u.gpu));
      expect(u.call!.modelArgs).toMatchObject({
        tensor_parallel_size: '1',
        seed: '42',
        max_model_len: '4096',
      });
      expect(u.call!.seed).toBe('42');
      expect(u.call!.genKwargs.temperature).toBe('0');
      // Jobs cannot reach the Hub, local runs neither.
      expect(u.call!.env.HF_HUB_OFFLINE).toBe('1');
    }
    expect(fs.readFileSync(path.join(runDir, 'failure.txt'), 'utf8')).toMatch(
      /1 of 8 eval unit\(s\) failed: b × mbpp/,
    );
    // The table, with every task's judged metrics and the failed unit.
    expect(r.stdout).toMatch(
      /\| checkpoint +\| gsm8k_cot \(8-shot\) strict +\| gsm8k_cot \(8-shot\) flex +\|/,
    );
    expect(r.stdout).toMatch(/\| b +\| .*FAILED/);

    // The cause fixed, the same command again: only the failed unit runs.
    fs.rmSync(path.join(cwd, 'ck', 'b', 'fake-fail-tasks.txt'));
    const again = await evalCli();
    expect(again.stderr).toMatch(/units +1 to run, 7 skipped: done in \S+ \(--force runs them again\)/);
    expect(again.code).toBe(0);
    const second = /run folder (\S+)/.exec(again.stdout)![1];
    expect(unitsOf(second).map((u) => [u.folder, u.ok])).toEqual([['b/mbpp_3shot', true]]);
    // Its table has every unit: the one it ran and the seven it reused.
    expect(again.stdout).not.toContain('FAILED');
    expect(again.stdout).toMatch(/\| a +\| +\d+\.\d ± 1\.3 \|/);
    expect(again.stdout).toMatch(/\| b +\|( +\d+\.\d( ± 1\.3)? \|){7}/);
    // The table of the rerun has the reused units too.
    const table = await runCli(['eval', 'results', runDir, second, '--format', 'csv'], {
      cwd,
      env: bareEnv(),
    });
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n').slice(1);
    expect(lines.filter((l) => l.startsWith('b,') && l.includes(',mbpp,'))[0]).toMatch(/,pass@1,0\.\d+,/);
  });
});
