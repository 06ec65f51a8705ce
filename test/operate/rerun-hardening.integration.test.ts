import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { parse } from 'yaml';
import { bareEnv, runCli } from '../helpers/cli';
import { ecrRegistryAvailable, useEcrRegistry } from '../helpers/ecr-registry';
import { BUCKET, clients, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { assertNothingCreated, snapshot } from '../helpers/nothing-created';
import { pythonAvailable } from '../helpers/python';

jest.setTimeout(180_000);

const peersAvailable = () => ecrRegistryAvailable() && pythonAvailable();

/** The value the trainer's own reader (PyYAML's safe_load) makes of a YAML text, or its error. */
function pyyamlRead(text: string): { value?: unknown; error?: string } {
  const r = spawnSync(
    'python3',
    [
      '-c',
      'import json, sys, yaml\ntry:\n  print(json.dumps({"value": yaml.safe_load(sys.stdin.buffer.read().decode("utf-8"))}))\nexcept Exception as e:\n  print(json.dumps({"error": type(e).__name__ + ": " + str(e)}))',
    ],
    { input: Buffer.from(text, 'utf8'), encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { value?: unknown; error?: string };
}

/**
 * A rerun's `--set` and `--add` against moto_server and a real registry: an edited config must pass the
 * rules a submit applies, may not change what the launcher mapped to channels and GPUs, and must read
 * back in the trainer's YAML reader as it was meant; each refusal is exit 2 with nothing created.
 */
describeWithPeer('moto_server, docker-registry and python3.11 with PyYAML', peersAvailable())(
  'rlvr rerun --set hardening',
  () => {
    const emulator = useEmulator();
    const ecr = useEcrRegistry();
    const env = () =>
      emulator.cliEnv({
        RLVR_REPOSITORY_URI: ecr.repositoryUri,
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      });

    async function text(key: string): Promise<string> {
      const { s3 } = clients(emulator.moto.endpoint);
      const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return out.Body!.transformToString();
    }
    const resolvedOf = (job: string) => text(`rlvr-experiments/jobs/${job}/resolved-config.yaml`);

    async function submitted(): Promise<{ job: string; repo: string }> {
      const image = await ecr.pushImage();
      const { root } = makeTrainerRepo();
      const r = await runCli(['submit', 'configs/gsm8k.yaml', '--image', image], { env: env(), cwd: root });
      expect(r.stderr).not.toMatch(/^error/m);
      expect(r.code).toBe(0);
      const [job] = await jobNames(emulator.moto.endpoint);
      return { job, repo: root };
    }

    /** The rerun refused: exit 2, `message` said, and no job, object or job-log line made. */
    async function refused(repo: string, args: string[], message: RegExp): Promise<string> {
      const before = await snapshot(emulator.moto.endpoint, [path.join(repo, 'docs')]);
      const r = await runCli(['rerun', ...args], { env: env(), cwd: repo });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/internal error|at .*\.ts:\d+/);
      expect(r.code).toBe(2);
      await assertNothingCreated(emulator.moto.endpoint, before);
      return r.stderr;
    }

    /** The `where: message` of each error `rlvr lint` gives the submitted config with `edit` applied. */
    async function lintErrors(repo: string, edit: (config: string) => string): Promise<string[]> {
      const file = path.join(repo, 'configs', 'linted.yaml');
      fs.writeFileSync(file, edit(fs.readFileSync(path.join(repo, 'configs', 'gsm8k.yaml'), 'utf8')));
      const r = await runCli(['lint', file], { env: bareEnv(), cwd: repo });
      fs.rmSync(file);
      expect(r.code).toBe(2);
      return [...r.stdout.matchAll(/^ {2}error RLVR\d+: \S+:\d+:\d+: (.*)$/gm)].map((m) => m[1]);
    }

    it('an edit the config rules refuse is refused as a submit refuses it (exit 2, the same messages)', async () => {
      const { job, repo } = await submitted();
      const numbers = await lintErrors(repo, (c) =>
        c.replace(/^ {2}n: 8$/m, '  n: 0').replace('max_steps: 200', 'max_steps: -5'),
      );
      expect(numbers).toEqual([
        'training.max_steps: must be ≥ 0, got number -5',
        'sampling.n: must be > 0, got number 0',
      ]);
      const stderr = await refused(
        repo,
        [job, '--set', 'sampling.n=0', '--set', 'training.max_steps=-5'],
        /is not a valid training config \(2 problems\)/,
      );
      for (const m of numbers) expect(stderr).toContain(m);

      const loss = await lintErrors(repo, (c) => c.replace('name: grpo', 'name: bogus'));
      expect(loss).toEqual(['loss.name: train_grpo_sft.py has no loss "bogus"']);
      expect(await refused(repo, [job, '--set', 'loss.name=bogus'], /no loss "bogus"/)).toContain(loss[0]);
    });

    it('an edit of what the launcher mapped to channels or GPUs is refused: submit the config instead', async () => {
      const { job, repo } = await submitted();
      const submitInstead = /npm run submit -- configs\/gsm8k\.yaml/;
      for (const [set, key] of [
        ['data.dataset=math', 'data.dataset'],
        ['data.split=test', 'data.split'],
        ['roles.2.config.data_parallel_size=4', 'roles.2.config.data_parallel_size'],
        [
          'roles.0.config.parallelism.tensor_parallel_degree=2',
          'roles.0.config.parallelism.tensor_parallel_degree',
        ],
      ]) {
        const stderr = await refused(repo, [job, '--set', set], submitInstead);
        expect(stderr).toContain(`--set ${key}`);
      }
      // A key the planner reads added where there was none (the trainer's tokenizer).
      const stderr = await refused(
        repo,
        [job, '--add', 'roles.1.config.tokenizer=Qwen/Qwen3-8B'],
        submitInstead,
      );
      expect(stderr).toContain('roles.1.config.tokenizer');
    });

    it('an edit the trainer would read as something else, or not at all, is refused', async () => {
      const { job, repo } = await submitted();
      for (const args of [
        ['--set', 'run.name="\\u0085"'],
        ['--set', 'run.name="\\u0000"'],
        ['--set', 'run.name=='],
        ['--add', 'run.<<=1'],
      ])
        await refused(repo, [job, ...args], /the trainer's YAML reader \(PyYAML\)/);
    });

    it('a line break in a value reads back as written; a value that changes its key’s type is a warning, text meant as text none', async () => {
      const { job, repo } = await submitted();
      const dryRun = async (...sets: string[]) => {
        const r = await runCli(['rerun', job, '--dry-run', '--json', ...sets], { env: env(), cwd: repo });
        expect(r.stderr).not.toMatch(/internal error|^error/m);
        expect(r.code).toBe(0);
        const plan = JSON.parse(r.stdout) as {
          warnings: string[];
          changes: { key: string; after: unknown }[];
        };
        return {
          after: (key: string) => plan.changes.find((c) => c.key === key)?.after,
          typeWarnings: plan.warnings.filter((w) => /this makes it/.test(w)),
        };
      };
      const edited = await dryRun(
        '--set',
        'run.name="line one\\nline two: x"',
        '--set',
        'training.abort_in_flight=yes',
      );
      expect(edited.after('run.name')).toBe('line one\nline two: x');
      expect(edited.typeWarnings).toEqual([
        expect.stringMatching(
          /^--set training\.abort_in_flight: the config has a boolean there \(false\) and this makes it a string \("yes"\); if true\/false was meant, write it so; if the text is meant, quote it or use --set-string training\.abort_in_flight=…$/,
        ),
      ]);
      // Quoted, or with --set-string, the text is meant: no warning.
      for (const sets of [
        ['--set', 'training.abort_in_flight="yes"'],
        ['--set-string', 'training.abort_in_flight=yes'],
      ]) {
        const meant = await dryRun(...sets);
        expect(meant.after('training.abort_in_flight')).toBe('yes');
        expect(meant.typeWarnings).toEqual([]);
      }
      // A key the config rules check is refused instead, as a submit refuses it.
      await refused(
        repo,
        [job, '--set', 'training.max_steps=2024-01-01'],
        /training\.max_steps: expected a number, got the string "2024-01-01"/,
      );
    });

    it('a valid edit still reruns, and the trainer reads the config back with exactly the edits', async () => {
      const { job, repo } = await submitted();
      const r = await runCli(
        [
          'rerun',
          job,
          '--set',
          'run.seed=7',
          '--set',
          'training.max_steps=300',
          '--set',
          'run.name=yes',
          '--set',
          'sampling.temperature=1e-5',
          '--add',
          'loss.note="a \\u00e9t\\u00e9 \\U0001F600"',
        ],
        { env: env(), cwd: repo },
      );
      expect(r.stderr).not.toMatch(/^error/m);
      expect(r.code).toBe(0);
      const second = (await jobNames(emulator.moto.endpoint)).find((n) => n !== job)!;
      const [a, b] = [await resolvedOf(job), await resolvedOf(second)];
      const original = pyyamlRead(a).value as Record<string, Record<string, unknown>>;
      expect(original).toEqual(parse(a));
      expect(pyyamlRead(b)).toEqual({
        value: {
          ...original,
          run: { ...original.run, seed: 7, name: 'yes' },
          training: { ...original.training, max_steps: 300 },
          sampling: { ...original.sampling, temperature: 1e-5 },
          loss: { ...original.loss, note: 'a été 😀' },
        },
      });
    });
  },
);
