import * as fs from 'node:fs';
import * as path from 'node:path';
import { judgeWrite, type SubmitPlan } from '../../lib/training';
import { checkPlatformEnv } from '../../lib/training/platform-env';
import { environmentWrites } from '../../lib/python';
import { planJson, renderPlan } from '../../bin/plan-output';
import { bareEnv, runCli } from '../helpers/cli';
import { GSM8K_EXAMPLE, planInSession } from '../helpers/fixtures';
import { theirRepository } from '../helpers/python';

const P4DE = { instanceType: 'ml.p4de.24xlarge', instanceCount: 1, networkIsolation: true };
const write = (line: string, file = 'src/pkg/syncing.py') =>
  environmentWrites(file, `import os\n${line}\n`)[0];

describe('what a trainer module assigns at import, judged for the job', () => {
  it('a hard-coded interface fails on SageMaker, one host or many; an exclusion list or a default does not', () => {
    const ens32 = judgeWrite(write('os.environ["NCCL_SOCKET_IFNAME"] = "ens32"'), P4DE);
    expect(ens32).toMatchObject({ verdict: 'error', holdable: true });
    expect(ens32.why).toContain('names interface "ens32"');
    expect(ens32.why).toContain('fails with "no socket interface found", on one host as on several');
    expect(judgeWrite(write('os.environ["GLOO_SOCKET_IFNAME"] = "eth7"'), P4DE).verdict).toBe('error');
    expect(judgeWrite(write('os.environ["NCCL_SOCKET_IFNAME"] = "^lo,docker"'), P4DE).verdict).toBe(
      'harmless',
    );
    // NCCL's syntax: a prefix, a list, `=` for whole names; what selects eth0 works on today's hosts.
    for (const works of ['eth0', 'eth', '=eth0', 'ens,eth0'])
      expect(judgeWrite(write(`os.environ["NCCL_SOCKET_IFNAME"] = "${works}"`), P4DE).verdict).toBe(
        'warning',
      );
    // Excluding SageMaker's interface, an exact name it is not, and Gloo (no `^` syntax) fail.
    for (const [variable, fails] of [
      ['NCCL_SOCKET_IFNAME', '^eth'],
      ['NCCL_SOCKET_IFNAME', '^=eth0'],
      ['NCCL_SOCKET_IFNAME', '=eth'],
      ['GLOO_SOCKET_IFNAME', '^lo'],
      ['GLOO_SOCKET_IFNAME', 'eth'],
    ])
      expect(judgeWrite(write(`os.environ["${variable}"] = "${fails}"`), P4DE).verdict).toBe('error');
    expect(judgeWrite(write('os.environ["NCCL_SOCKET_IFNAME"] = ""'), P4DE).verdict).toBe('warning');
    expect(judgeWrite(write('os.environ.setdefault("NCCL_SOCKET_IFNAME", "ens32")'), P4DE).verdict).toBe(
      'harmless',
    );
    expect(
      judgeWrite(write('os.environ["NCCL_DEBUG"] = os.environ.get("NCCL_DEBUG", "WARN")'), P4DE).verdict,
    ).toBe('harmless');
  });

  it('transports matter only where the instance has EFA; the GPU split and a multi-host rendezvous cannot be held', () => {
    const socket = write('os.environ["NCCL_NET"] = "Socket"');
    expect(judgeWrite(socket, { ...P4DE, instanceCount: 2 })).toMatchObject({
      verdict: 'warning',
      holdable: true,
    });
    expect(judgeWrite(socket, { ...P4DE, instanceCount: 2 }).why).toContain(
      'NCCL between the 2 hosts goes over TCP sockets',
    );
    expect(judgeWrite(socket, { ...P4DE, instanceType: 'ml.g5.12xlarge' }).verdict).toBe('harmless');
    expect(judgeWrite(write('os.environ["CUDA_VISIBLE_DEVICES"] = "7"'), P4DE)).toMatchObject({
      verdict: 'error',
      holdable: false,
    });
    const master = write('os.environ["MASTER_ADDR"] = "localhost"');
    expect(judgeWrite(master, P4DE).verdict).toBe('harmless');
    expect(judgeWrite(master, { ...P4DE, instanceCount: 2 })).toMatchObject({
      verdict: 'error',
      holdable: false,
    });
    expect(judgeWrite(write('os.environ["MASTER_ADDR"] = "10.1.2.3"'), P4DE).verdict).toBe('warning');
    const twoHosts = { ...P4DE, instanceCount: 2 };
    expect(judgeWrite(write('os.environ["MASTER_PORT"] = "29500"'), twoHosts).verdict).toBe('harmless');
    for (const off of ['0', 'no', 'off', 'False'])
      expect(judgeWrite(write(`os.environ["HF_HUB_OFFLINE"] = "${off}"`), P4DE).verdict).toBe('warning');
    expect(judgeWrite(write('os.environ["HF_HUB_OFFLINE"] = "yes"'), P4DE).verdict).toBe('harmless');
    const online = { ...P4DE, networkIsolation: false };
    expect(judgeWrite(write('os.environ["HF_HUB_OFFLINE"] = "0"'), online).verdict).toBe('harmless');
  });

  it('an error stops the job unless it is held (what holding covers) or allowed with a reason', () => {
    const writes = [
      write('os.environ["NCCL_SOCKET_IFNAME"] = "ens32"'),
      write('os.environ["NCCL_NET"] = "Socket"', 'src/pkg/titan_actor.py'),
      write('os.environ["CUDA_VISIBLE_DEVICES"] = "7"', 'src/pkg/other.py'),
    ];
    const plain = checkPlatformEnv(writes, { ...P4DE, hold: false });
    expect(plain.errors.map((e) => `${e.location!.file}:${e.location!.line} ${e.rule}`)).toEqual([
      'src/pkg/syncing.py:2 RLVR125',
      'src/pkg/other.py:2 RLVR125',
    ]);
    expect(plain.errors[0].hint).toContain('os.environ.setdefault("NCCL_SOCKET_IFNAME", "ens32")');
    expect(plain.errors[0].hint).toContain('launcher.hold_platform_env: true (--hold-platform-env)');
    expect(plain.warnings).toHaveLength(1);
    const held = checkPlatformEnv(writes, { ...P4DE, hold: true });
    expect(held.held.map((h) => h.write.variable)).toEqual(['NCCL_SOCKET_IFNAME', 'NCCL_NET']);
    expect(held.errors.map((e) => e.message)).toEqual([expect.stringContaining('CUDA_VISIBLE_DEVICES="7"')]);
    const allowed = checkPlatformEnv(writes, { ...P4DE, hold: false, allowReason: 'our own cluster only' });
    expect(allowed.errors).toEqual([]);
    expect(allowed.allowed.map((a) => a.reason)).toEqual(['our own cluster only', 'our own cluster only']);
  });
});

/** The replica of their repository: syncing, titan_actor and vllm_engine_actor assign NCCL's variables at import. */
function theirRepoWith(launcher = ''): string {
  return theirRepository({
    'configs/gsm8k.yaml': fs
      .readFileSync(GSM8K_EXAMPLE, 'utf8')
      .replace(/^ {2}trainer_src: .*\n/m, '')
      .replace(/^ {2}eval_config: .*\n/m, '')
      .replace('launcher:\n', `launcher:\n${launcher}`),
  });
}
const THEIR_NINE = [
  'src/rlvr_experiments/syncing.py:14 NCCL_NET="Socket"',
  'src/rlvr_experiments/syncing.py:15 NCCL_SOCKET_IFNAME="ens32"',
  'src/rlvr_experiments/syncing.py:16 NCCL_NET_PLUGIN=""',
  'src/rlvr_experiments/titan_actor.py:4 NCCL_NET="Socket"',
  'src/rlvr_experiments/titan_actor.py:5 NCCL_SOCKET_IFNAME="ens32"',
  'src/rlvr_experiments/titan_actor.py:6 NCCL_NET_PLUGIN=""',
  'src/rlvr_experiments/vllm_engine_actor.py:6 NCCL_NET="Socket"',
  'src/rlvr_experiments/vllm_engine_actor.py:7 NCCL_SOCKET_IFNAME="ens32"',
  'src/rlvr_experiments/vllm_engine_actor.py:8 NCCL_NET_PLUGIN=""',
];

describe('submit of a trainer whose modules assign the platform variables at import', () => {
  const dryRun = async (root: string, ...args: string[]) => {
    const r = await runCli(['submit', path.join(root, 'configs', 'gsm8k.yaml'), '--dry-run', ...args], {
      env: bareEnv({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }),
    });
    expect(r.stderr).not.toMatch(/\n\s+at /);
    return r;
  };

  it('exits 2 naming file:line, the value, why and the fix; nothing is planned past it', async () => {
    const root = theirRepoWith();
    const r = await dryRun(root);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "The trainer's modules assign variables the platform owns when they are imported",
    );
    for (const file of ['syncing.py:15', 'titan_actor.py:5', 'vllm_engine_actor.py:7'])
      expect(r.stderr).toContain(
        `src/rlvr_experiments/${file}:1: trainer source: NCCL_SOCKET_IFNAME="ens32" at import: names interface "ens32"`,
      );
    // The transport lines of the same modules are named with them (ml.p4de.24xlarge has EFA): all nine.
    expect(r.stderr).toContain(
      'src/rlvr_experiments/syncing.py:14:1: trainer source (a warning): NCCL_NET="Socket"',
    );
    expect(r.stderr.match(/ at import: /g)).toHaveLength(9);
    expect(r.stderr).toContain('launcher.allow: {RLVR125: "<why>"}');
    expect(r.stdout).not.toContain('Plan for');
  });

  it('with hold_platform_env the plan says what is held against which line, and the contract records it', async () => {
    for (const [root, args] of [
      [theirRepoWith('  hold_platform_env: true\n'), []],
      [theirRepoWith(), ['--hold-platform-env']],
    ] as const) {
      const r = await dryRun(root, ...args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        /platform env +held in every Python process: NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME/,
      );
      for (const w of THEIR_NINE) expect(r.stdout).toContain(`kept against ${w} (at import)`);
    }
    const plan: SubmitPlan = await planInSession({
      configPath: path.join(theirRepoWith('  hold_platform_env: true\n'), 'configs', 'gsm8k.yaml'),
      options: {},
      settings: {
        bucket: 'sagemaker-us-west-2-123456789012',
        roleArn: 'arn:aws:iam::123456789012:role/r',
        region: 'us-west-2',
      },
      image: `123456789012.dkr.ecr.us-west-2.amazonaws.com/r@sha256:${'a'.repeat(64)}`,
      dryRun: true,
      env: { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' },
    });
    expect(JSON.parse(plan.contractJson).holdPlatformEnv).toEqual({ against: THEIR_NINE });
    expect(planJson(plan).platformEnv.hold).toBe(true);
    expect(renderPlan(plan)).toMatch(
      /platform env +held in every Python process: .*← config .*gsm8k\.yaml:\d+:\d+/,
    );
  });

  it('allowed with a reason: the plan lists the finding as allowed, and the job does not hold', async () => {
    const r = await dryRun(theirRepoWith('  allow:\n    RLVR125: "their own cluster names ens32"\n'));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('RLVR125 platform-env-override: NCCL_SOCKET_IFNAME="ens32" at import');
    expect(r.stdout).toContain('reason: their own cluster names ens32');
    expect(r.stdout).toMatch(
      /platform env +NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME = the interface SageMaker names.*\(not held\)/,
    );
  });
});
