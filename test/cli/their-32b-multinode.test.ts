import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { tempDir } from '../helpers/fixtures';

/**
 * The team's 32B configs, dry-run on the hosts they need (multinode: trainer 8 + reference 2 + rollout 6
 * = 16 GPUs on 2 hosts; maxmfu: 24 GPUs on 3), with the shared file system their trainer needs there.
 * Their repository is read from a clone (THEIR_RLVR_REPO, else /tmp/their-rlvr) or the machine's mirror
 * of it; with neither these tests are skipped: their files are never part of this repository.
 */
const MIRROR = '/work/.mirror/halflearned+rlvr-experiments/repo';
function theirRepository(): string | undefined {
  const clone = process.env.THEIR_RLVR_REPO ?? '/tmp/their-rlvr';
  if (fs.existsSync(path.join(clone, 'configs'))) return clone;
  if (!fs.existsSync(MIRROR)) return undefined;
  const dir = path.join(tempDir('their-clone-'), 'repo');
  execFileSync('git', ['clone', '-q', MIRROR, dir]);
  return dir;
}
const THEIRS = theirRepository();
const itWithTheirs = THEIRS ? it : it.skip;
const FS = 'fs-0123456789abcdef0';

/** A copy of their repository whose 32B configs carry the keys train_grpo_sft reads (its profile's hint). */
function theirCopy(): string {
  const root = path.join(tempDir('their-32b-'), 'repo');
  fs.cpSync(THEIRS!, root, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  for (const name of ['multinode', 'maxmfu']) {
    const file = path.join(root, 'configs', `qwen3-32B-deepscaler-${name}.yaml`);
    const text = fs.readFileSync(file, 'utf8');
    if (!/^ {2}alpha_grpo:/m.test(text))
      fs.writeFileSync(
        file,
        text.replace(/^training:\n/m, 'training:\n  alpha_grpo: 1.0\n  alpha_sft: 0.0\n'),
      );
  }
  return root;
}

describe('their 32B configs on several hosts, with the shared file system', () => {
  itWithTheirs.each([
    ['multinode', 2, 16],
    ['maxmfu', 3, 24],
  ])(
    'qwen3-32B-deepscaler-%s on %i hosts: exit 0, the cluster and the shared file system in the plan',
    async (name, hosts, gpus) => {
      const root = theirCopy();
      const config = path.join(root, 'configs', `qwen3-32B-deepscaler-${name}.yaml`);
      const { code, stdout, stderr } = await runCli(
        [
          'submit',
          config,
          '--dry-run',
          '--instance-count',
          String(hosts),
          '--file-system-id',
          FS,
          '--subnets',
          'subnet-0a1b2c3d',
          '--security-groups',
          'sg-0a1b2c3d',
          // Their modules pin NCCL to ens32 at import: without holding, the submit refuses them (RLVR125).
          '--hold-platform-env',
        ],
        { env: bareEnv({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }) },
      );
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(code).toBe(0);
      expect(stdout).toMatch(
        new RegExp(`instance +${hosts} × ml\\.p4de\\.24xlarge +← default, count: flag --instance-count\\n`),
      );
      expect(stdout).toMatch(new RegExp(`\\n {18}= ${gpus} GPUs \\(${gpus} train, 0 eval\\)\\n`));
      expect(stdout).toMatch(/train GPUs +0,1,2,3,4,5,6,7 /);
      // The GPU split per host and how the hosts talk (p4de has EFA).
      expect(stdout).toMatch(new RegExp(`\\n  cluster +${hosts} hosts × \\(8 train GPUs on each\\)\\n`));
      expect(stdout).toMatch(/EFA between hosts: FI_PROVIDER=efa, NCCL through aws-ofi-nccl/);
      // Against their nine lines, on every host.
      expect(stdout.match(/kept against src\/rlvr_experiments\/\w+\.py:\d+ NCCL_/g)).toHaveLength(9);
      expect(stdout).toMatch(
        new RegExp(
          `\\n  shared file system: ${FS} mounted rw at /opt/ml/input/data/shared on every host \\(${hosts} hosts\\); \\$RLVR_TITAN_CONFIG_DIR and the trainer's run root in rlvr-jobs/annotations-adhoc-\\d{8}-\\d{6}/ ← S/titan_actor\\.py:613-619\\n`,
        ),
      );
      expect(stdout).toContain(
        'network isolation with a file-system channel is not documented by AWS either way',
      );
    },
  );
});
