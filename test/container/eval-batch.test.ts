import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { evalRequestOfFlags } from '../../bin/commands/eval-flags';
import { EVAL_PLAN_FILE, type EvalJobPlan, type UnitRecord } from '../../lib/eval-records/job-plan';
import { planEval } from '../../lib/eval/plan';
import { fakeLmEvalBin, offlineConnection, writeCheckpoint } from '../helpers/eval';
import { tempDir } from '../helpers/fixtures';
import { fakeMlRoot } from '../helpers/ml-root';

jest.setTimeout(60_000);

const TASKS = 'gsm8k_cot:8,minerva_math:4,ifeval:0,mbpp:3';

/** The eval job's plan for local folders `a` and `b` (b fails mbpp), on `gpus` GPUs of `hosts` hosts. */
async function planFor(cwd: string, gpus: number, hosts = 1, extra: string[] = []): Promise<EvalJobPlan> {
  writeCheckpoint(path.join(cwd, 'ck', 'a'));
  writeCheckpoint(path.join(cwd, 'ck', 'b'), { failTasks: ['mbpp'], trap: true });
  const request = evalRequestOfFlags(
    {
      checkpoints: ['a=./ck/a', 'b=./ck/b'],
      benchmarks: [TASKS],
      local: true,
      gpus: `0-${gpus - 1}`,
      instanceCount: String(hosts),
      image: 'rlvr-local/train:test',
      deviate: extra,
    },
    cwd,
  );
  return (await planEval(request, offlineConnection())).jobPlan;
}

/** An /opt/ml stand-in for `host` with the plan in its config channel and the checkpoints bound where the plan says. */
function mlRootFor(plan: EvalJobPlan, cwd: string, host = 'algo-1', hosts = ['algo-1']): string {
  const root = fakeMlRoot({ host, hosts });
  fs.writeFileSync(path.join(root, 'input', 'data', 'config', EVAL_PLAN_FILE), JSON.stringify(plan));
  for (const c of plan.checkpoints) {
    const dest = path.join(root, path.relative('/opt/ml', c.containerPath));
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.cpSync(path.join(cwd, 'ck', c.label), dest, { recursive: true });
  }
  return root;
}

async function run(root: string, tmpRoot: string): Promise<{ code: number; output: string }> {
  let output = '';
  const out = new PassThrough().on('data', (d: Buffer) => (output += d.toString()));
  const bin = fakeLmEvalBin();
  const code = await runEntrypoint({
    root,
    tmpRoot,
    out,
    env: { PATH: `${bin}:${process.env.PATH}`, RLVR_MODE: 'eval', FAKE_LM_EVAL_SLEEP_MS: '150' },
  });
  return { code, output };
}

/** What the fake lm_eval recorded of its call. */
interface Call {
  argv: string[];
  modelArgs: Record<string, string>;
  genKwargs: Record<string, string>;
  seed: string;
  modelFiles: string[];
  env: Record<string, string | null>;
}

function records(runDir: string): { file: string; record: UnitRecord; call: Call }[] {
  const out: { file: string; record: UnitRecord; call: Call }[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^(unit|failed)-[0-9a-f]{16}\.json$/.test(e.name)) {
        const callFile = path.join(dir, 'harness', 'call.json');
        out.push({
          file: path.relative(runDir, p),
          record: JSON.parse(fs.readFileSync(p, 'utf8')),
          call: fs.existsSync(callFile) ? JSON.parse(fs.readFileSync(callFile, 'utf8')) : ({} as Call),
        });
      }
    }
  };
  walk(path.join(runDir, 'evals'));
  return out;
}

describe('the image in eval mode (the real entrypoint in this process, a fake lm_eval)', () => {
  it('runs 8 units on 4 GPUs, one at a time per GPU, each to the standard; a failing unit leaves the others and fails the job at the end', async () => {
    const cwd = tempDir('rlvr-eval-cwd-');
    const plan = await planFor(cwd, 4);
    expect(plan.units).toHaveLength(8);
    const root = mlRootFor(plan, cwd);
    const runDir = path.join(root, 'checkpoints');
    const { code, output } = await run(root, tempDir('rlvr-eval-tmp-'));
    expect(code).toBe(1);
    const failure = fs.readFileSync(path.join(root, 'output', 'failure'), 'utf8');
    expect(failure).toMatch(/^1 of 8 eval unit\(s\) failed: b × mbpp \(exit 3: .*illegal memory access/);

    const all = records(runDir);
    expect(all.filter((r) => r.file.includes('/unit-'))).toHaveLength(7);
    const failed = all.filter((r) => r.file.includes('/failed-'));
    expect(failed.map((r) => r.file)).toEqual([expect.stringMatching(/^evals\/b\/mbpp_3shot\/failed-/)]);
    expect(fs.readFileSync(path.join(runDir, 'evals', 'b', 'mbpp_3shot', 'log.txt'), 'utf8')).toContain(
      'illegal memory access',
    );

    for (const { record, call } of all) {
      // Tensor parallel 1, seed 42 (model args and --seed), temperature 0, the standard's vLLM settings.
      expect(call.modelArgs).toMatchObject({
        tensor_parallel_size: '1',
        seed: '42',
        dtype: 'bfloat16',
        gpu_memory_utilization: '0.8',
        max_model_len: '4096',
      });
      expect(call.seed).toBe('42');
      expect(call.genKwargs.temperature).toBe('0');
      expect(call.genKwargs.max_gen_toks).toBe(
        { gsm8k_cot: '1024', minerva_math: '2048', ifeval: '4096', mbpp: '1024' }[record.task],
      );
      // One GPU each, the one the plan gave the unit.
      expect(call.env.CUDA_VISIBLE_DEVICES).toBe(String(record.gpu));
      const code = record.task === 'mbpp';
      expect(call.env.HF_ALLOW_CODE_EVAL).toBe(code ? '1' : null);
      expect(call.argv.includes('--confirm_run_unsafe_code')).toBe(code);
    }
    // A GPU runs its units in turn: no two of its units overlap.
    const byGpu = new Map<number, [number, number][]>();
    for (const { record } of all) {
      const start = Date.parse(record.startedAt);
      byGpu.set(record.gpu, [...(byGpu.get(record.gpu) ?? []), [start, start + record.wallS * 1000]]);
    }
    expect([...byGpu.keys()].sort()).toEqual([0, 1, 2, 3]);
    for (const spans of byGpu.values()) {
      spans.sort((x, y) => x[0] - y[0]);
      for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1] - 50);
    }
    // The index trap is fixed in the job's view, never in the checkpoint.
    const bCall = all.find((r) => r.record.checkpoint.label === 'b' && r.record.task === 'gsm8k_cot')!.call;
    expect(bCall.modelFiles).toContain('model-00001-of-00001.safetensors');
    expect(fs.readdirSync(path.join(root, 'input', 'data', 'ckpt-local', 'b'))).toContain(
      'model.safetensors',
    );
    expect(output).toContain('linked as model-00001-of-00001.safetensors');
    // RESULTS.md: the table of what ran here.
    const results = fs.readFileSync(path.join(runDir, 'RESULTS.md'), 'utf8');
    expect(results).toMatch(/\| a +\| .*\|/);
    expect(results).toContain('FAILED');
  });

  it('a restart skips the units whose records came back, and runs the rest', async () => {
    const cwd = tempDir('rlvr-eval-cwd-');
    const plan = await planFor(cwd, 2);
    const root = mlRootFor(plan, cwd);
    expect((await run(root, tempDir('rlvr-eval-tmp-'))).code).toBe(1);
    // The failure fixed (the checkpoint's marker gone), the job restarts in the same run folder.
    fs.rmSync(path.join(root, 'input', 'data', 'ckpt-local', 'b', 'fake-fail-tasks.txt'));
    fs.rmSync(path.join(root, 'output', 'failure'));
    const again = await run(root, tempDir('rlvr-eval-tmp-'));
    expect(again.code).toBe(0);
    expect(again.output.match(/done in an earlier attempt, skipped/g)).toHaveLength(7);
    expect(again.output).toMatch(/eval: 1 unit\(s\) ran, 7 skipped/);
    expect(records(path.join(root, 'checkpoints')).filter((r) => r.file.includes('/unit-'))).toHaveLength(8);
  });

  it('a restart runs again a unit whose record came back unreadable (nothing proves it was done)', async () => {
    const cwd = tempDir('rlvr-eval-cwd-');
    const plan = await planFor(cwd, 2);
    const root = mlRootFor(plan, cwd);
    const runDir = path.join(root, 'checkpoints');
    fs.rmSync(path.join(root, 'input', 'data', 'ckpt-local', 'b', 'fake-fail-tasks.txt'));
    expect((await run(root, tempDir('rlvr-eval-tmp-'))).code).toBe(0);
    const first = records(runDir).find(
      (r) => r.record.task === 'gsm8k_cot' && r.record.checkpoint.label === 'a',
    )!;
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- left out on purpose
    const { deviations: _, ...broken } = first.record;
    fs.writeFileSync(path.join(runDir, first.file), JSON.stringify(broken));
    const again = await run(root, tempDir('rlvr-eval-tmp-'));
    expect(again.code).toBe(0);
    expect(again.output).toMatch(
      /a\/gsm8k_cot: its record from an earlier attempt is unreadable \(.*deviations: missing/,
    );
    expect(again.output).toMatch(/eval: 1 unit\(s\) ran, 7 skipped/);
    expect(records(runDir).find((r) => r.file === first.file)!.record.deviations).toEqual([]);
  });

  it('two hosts each run their own share, by their place among the hosts', async () => {
    const cwd = tempDir('rlvr-eval-cwd-');
    const plan = await planFor(cwd, 4, 2);
    const shares = [0, 1].map((h) => plan.units.filter((u) => u.host === h).length);
    expect(shares[0] + shares[1]).toBe(8);
    for (const [i, host] of ['algo-1', 'algo-2'].entries()) {
      const root = mlRootFor(plan, cwd, host, ['algo-2', 'algo-1']);
      await run(root, tempDir('rlvr-eval-tmp-'));
      const ran = records(path.join(root, 'checkpoints'));
      expect(ran).toHaveLength(shares[i]);
      expect(new Set(ran.map((r) => r.record.host))).toEqual(new Set([host]));
      // A worker's own files carry its name: the hosts share one checkpoint prefix.
      expect(
        fs.existsSync(path.join(root, 'checkpoints', i === 0 ? 'RESULTS.md' : 'RESULTS-algo-2.md')),
      ).toBe(true);
    }
  });

  it('a harness that exits 0 without a results file has not evaluated: the unit fails', async () => {
    const cwd = tempDir('rlvr-eval-cwd-');
    const plan = await planFor(cwd, 4);
    const root = mlRootFor(plan, cwd);
    fs.writeFileSync(
      path.join(root, 'input', 'data', 'ckpt-local', 'a', 'fake-silent-tasks.txt'),
      'ifeval\n',
    );
    const { code } = await run(root, tempDir('rlvr-eval-tmp-'));
    expect(code).toBe(1);
    const failure = fs.readFileSync(path.join(root, 'output', 'failure'), 'utf8');
    expect(failure).toMatch(/^2 of 8 eval unit\(s\) failed: /);
    expect(failure).toContain('a × ifeval (exit 0 but no results file in harness/)');
    const files = fs.readdirSync(path.join(root, 'checkpoints', 'evals', 'a', 'ifeval_0shot'));
    expect(files.filter((f) => f.startsWith('unit-'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('failed-'))).toHaveLength(1);
  });
});
