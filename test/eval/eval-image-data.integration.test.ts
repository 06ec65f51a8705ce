import { spawnSync } from 'node:child_process';
import { runCli } from '../helpers/cli';
import { pushLabelledImage, startRegistry, type Registry } from '../helpers/docker';
import { useEmulator } from '../helpers/emulator-suite';
import { tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable, TEST_ACCOUNT } from '../helpers/moto';

jest.setTimeout(120_000);

const registryAvailable = () =>
  motoAvailable() &&
  spawnSync('sh', ['-c', 'command -v docker-registry htpasswd'], { stdio: 'ignore' }).status === 0;

/**
 * An eval job has no network: lm_eval finds a task's data only in the image. The image's labels are read
 * from a real registry (moto's ECR token is its password), and the plan refuses a task the image lacks.
 */
describeWithPeer('moto_server and docker-registry', registryAvailable())(
  "rlvr eval and the image's task data",
  () => {
    const emulator = useEmulator();
    let registry: Registry;
    const credentials = { username: 'AWS', password: `${TEST_ACCOUNT}-auth-token` };
    beforeAll(async () => {
      registry = await startRegistry(credentials.username, credentials.password);
    });
    afterAll(async () => {
      await registry?.remove();
    });

    const evalDry = (image: string, benchmarks: string) => {
      const cwd = tempDir('rlvr-eval-data-');
      return runCli(
        [
          'eval',
          '--checkpoints',
          'base=Qwen/Qwen3-1.7B-Base',
          '--benchmarks',
          benchmarks,
          '--image',
          image,
          '--dry-run',
        ],
        {
          cwd,
          env: emulator.cliEnv({
            RLVR_REPOSITORY_URI: `${registry.host}/rlvr-eval`,
            DOCKER_HOST: 'unix:///nonexistent/docker.sock',
            XDG_CACHE_HOME: `${cwd}/.cache`,
          }),
        },
      );
    };

    it('refuses (exit 2) a task whose data the image does not hold, and ifeval without NLTK punkt_tab; takes one that holds them', async () => {
      const digest = await pushLabelledImage(
        registry,
        'rlvr-eval',
        'some',
        { 'rlvr.lm-eval-tasks': 'gsm8k_cot ifeval', 'rlvr.nltk-data': 'punkt' },
        credentials,
      );
      const image = `${registry.host}/rlvr-eval@${digest}`;
      const r = await evalDry(image, 'gsm8k_cot:8,aime24:0,ifeval:0');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `--benchmarks aime24: the image ${image} does not hold its dataset (the image caches lm_eval data for gsm8k_cot, ifeval)`,
      );
      expect(r.stderr).toContain(
        `--benchmarks ifeval: the image ${image} does not hold NLTK punkt_tab (the image holds punkt)`,
      );
      expect(r.stderr).not.toMatch(/\n\s+at /);

      const full = await pushLabelledImage(
        registry,
        'rlvr-eval',
        'full',
        { 'rlvr.lm-eval-tasks': 'gsm8k_cot ifeval aime24', 'rlvr.nltk-data': 'punkt punkt_tab' },
        credentials,
      );
      const ok = await evalDry(`${registry.host}/rlvr-eval@${full}`, 'gsm8k_cot:8,aime24:0,ifeval:0');
      expect(ok.stderr).toBe('');
      expect(ok.code).toBe(0);
      expect(ok.stdout).not.toContain('cannot be told');

      // An image whose labels nothing here can read: said, not assumed.
      const unknown = await evalDry(
        `123456789012.dkr.ecr.us-west-2.amazonaws.com/other@sha256:${'c'.repeat(64)}`,
        'gsm8k_cot:8',
      );
      expect(unknown.code).toBe(0);
      expect(unknown.stdout).toContain('holds the data of gsm8k_cot cannot be told');
    });
  },
);
