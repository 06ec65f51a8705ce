import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { extract } from 'tar-stream';
import { runCli } from '../helpers/cli';
import { allKeys, BUCKET, clients, IMAGE, jobNames, SEEDED_KEYS } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { lineOf, makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { assertNothingCreated, snapshot } from '../helpers/nothing-created';

jest.setTimeout(120_000);

/*
 * Issue 19, "secrets never leave the laptop": credential files never travel in the job's source, a
 * job that needs one is refused at submit, and a system folder or a folder unrelated to the config is
 * never the source. Each bad input: exit 2, what is wrong and where, and nothing created.
 */

const CONFIG = 'configs/gsm8k.yaml';
const TRAIN = 'python entrypoints/train_grpo_sft.py {config}';

/** The trainer repository with `lines` added to the config's launcher section (after `launcher:`). */
function repoWith(options: { launcher?: string[]; files?: Record<string, string> } = {}) {
  const repo = makeTrainerRepo({ files: options.files });
  const text = fs
    .readFileSync(repo.configPath, 'utf8')
    .replace(/^launcher:\n/m, `launcher:\n${(options.launcher ?? []).map((l) => `  ${l}\n`).join('')}`);
  fs.writeFileSync(repo.configPath, text);
  return { ...repo, text };
}

/** The same repository's files without git: a folder that is not a repository. */
function plainCopy(root: string): string {
  const dest = tempDir('rlvr-plain-');
  fs.cpSync(root, dest, { recursive: true, filter: (src) => path.basename(src) !== '.git' });
  return dest;
}

interface Case {
  readonly args: readonly string[];
  readonly cwd: string;
  /** Folders where no file may appear (the job log, a results folder). */
  readonly watch: readonly string[];
  readonly env?: Record<string, string>;
  /** `file:line:` the message names (configs), or the flag it names. */
  readonly at: string;
}

type Row = [label: string, setup: () => Case, code: number, message: RegExp];

function inConfig(launcher: string[], needle: string, files?: Record<string, string>): Case {
  const repo = repoWith({ launcher, files });
  return {
    args: [CONFIG],
    cwd: repo.root,
    watch: [repo.root],
    at: `${CONFIG}:${lineOf(repo.text, needle)}:`,
  };
}

function withFlag(flag: string, value: string, files?: Record<string, string>): Case {
  const repo = repoWith({ files });
  return { args: [CONFIG, flag, value], cwd: repo.root, watch: [repo.root], at: `${flag}: ` };
}

/** Row 1: a config value or the trainer command names a withheld file. */
const WITHHELD_ROWS: Row[] = [
  [
    'launcher.include names .env',
    () => inConfig(['include: [".env"]'], 'include:', { '.env': 'API_KEY=x\n' }),
    2,
    /"\.env" is withheld from the job's source \(an environment file/,
  ],
  [
    'launcher.trainer_command passes .env',
    () =>
      inConfig([`trainer_command: "${TRAIN} --env-file .env"`], 'trainer_command:', {
        '.env': 'API_KEY=x\n',
      }),
    2,
    /the trainer command names \.env, which is withheld from the job's source \(an environment file/,
  ],
  [
    'launcher.trainer_command sets a service-account key',
    () =>
      inConfig(
        [`trainer_command: "GOOGLE_APPLICATION_CREDENTIALS=keys/gcp.json ${TRAIN}"`],
        'trainer_command:',
        {
          'keys/gcp.json': '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n"}',
        },
      ),
    2,
    /names keys\/gcp\.json, which is withheld from the job's source \(a JSON file holding a private key\)/,
  ],
  [
    '--trainer-command passes --key=deploy.pem',
    () => withFlag('--trainer-command', `${TRAIN} --key=deploy.pem`, { 'deploy.pem': 'pem' }),
    2,
    /the trainer command names deploy\.pem, which is withheld .*\(a key or certificate store\)/,
  ],
  [
    'launcher.trainer_command names a file .rlvrignore withholds',
    () =>
      inConfig([`trainer_command: "${TRAIN} --wandb-key-file secrets/wandb.txt"`], 'trainer_command:', {
        '.rlvrignore': 'secrets/\n',
        'secrets/wandb.txt': 'k',
      }),
    2,
    /names secrets\/wandb\.txt, which is withheld from the job's source \(listed in \.rlvrignore \(line 1\)\)/,
  ],
];

/** Row 2: the source is a system folder, the home folder, or a folder unrelated to the config. */
const FOLDER_ROWS: Row[] = [
  [
    'launcher.trainer_src: /etc',
    () => inConfig(['trainer_src: /etc'], 'trainer_src:'),
    2,
    /the trainer source \/etc is a system folder/,
  ],
  [
    '--trainer-src /etc',
    () => withFlag('--trainer-src', '/etc'),
    2,
    /the trainer source \/etc is a system folder/,
  ],
  [
    'launcher.trainer_src: /',
    () => inConfig(['trainer_src: /'], 'trainer_src:'),
    2,
    /the trainer source \/ is a system folder/,
  ],
  [
    'launcher.trainer_src: /proc',
    () => inConfig(['trainer_src: /proc'], 'trainer_src:'),
    2,
    /\/proc is a system folder/,
  ],
  [
    'launcher.trainer_src: /usr/lib',
    () => inConfig(['trainer_src: /usr/lib'], 'trainer_src:'),
    2,
    /\/usr\/lib is a system folder/,
  ],
  [
    '--trainer-src /tmp',
    () => withFlag('--trainer-src', '/tmp'),
    2,
    /the trainer source \/tmp is a system folder/,
  ],
  [
    'launcher.trainer_src: the home folder',
    () => {
      const home = tempDir('rlvr-home-');
      fs.writeFileSync(path.join(home, '.netrc'), 'machine x password y\n');
      const c = inConfig([`trainer_src: ${home}`], 'trainer_src:');
      return { ...c, env: { HOME: home }, watch: [...c.watch, home] };
    },
    2,
    /is your home folder/,
  ],
  [
    'launcher.trainer_src: a symlink in the repository to /etc',
    () => {
      const c = inConfig(['trainer_src: ../etc-link'], 'trainer_src:');
      fs.symlinkSync('/etc', path.join(c.cwd, 'etc-link'));
      return c;
    },
    2,
    /etc-link is a system folder/,
  ],
  [
    "launcher.trainer_src: a folder beside the config's repository, not a git checkout",
    () => {
      const plain = tempDir('rlvr-plain-');
      fs.mkdirSync(path.join(plain, 'entrypoints'));
      const c = inConfig([`trainer_src: ${plain}`], 'trainer_src:');
      return { ...c, watch: [...c.watch, plain] };
    },
    2,
    /is outside the git repository holding the config .* and is not a git checkout/,
  ],
  [
    'config outside git, launcher.trainer_src: an unrelated folder',
    () => {
      const other = plainCopy(makeTrainerRepo().root);
      const repo = repoWith({ launcher: [`trainer_src: ${other}`] });
      const plain = plainCopy(repo.root);
      return {
        args: [CONFIG],
        cwd: plain,
        watch: [plain, other],
        at: `${CONFIG}:${lineOf(repo.text, 'trainer_src:')}:`,
      };
    },
    2,
    /is not a git checkout, and neither holds the config nor is inside its folder/,
  ],
  [
    'launcher.trainer_src: a missing folder',
    () => inConfig(['trainer_src: ../no-such-folder'], 'trainer_src:'),
    2,
    /no-such-folder is not a folder/,
  ],
];

describeWithPeer('moto_server', motoAvailable())('the job source at submit', () => {
  const emulator = useEmulator();

  describe.each([
    ['withheld files', WITHHELD_ROWS],
    ['source folders', FOLDER_ROWS],
  ])('bad input: %s', (_group, rows) => {
    it.each(rows.map(([label, setup, code, message]) => [label, code, message, setup] as const))(
      '%s: exit %i, nothing created',
      async (_label, exitCode, message, setup) => {
        const c = setup();
        const before = await snapshot(emulator.moto.endpoint, c.watch);
        const r = await runCli(['submit', ...c.args, '--image', IMAGE], {
          env: emulator.cliEnv(c.env),
          cwd: c.cwd,
        });
        expect(r.stderr).toMatch(message);
        expect(r.stderr).toContain(c.at);
        expect(r.code).toBe(exitCode);
        expect(r.stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/);
        await assertNothingCreated(emulator.moto.endpoint, before);
      },
    );
  });

  it('a real submit ships no credential file, tracked or not', async () => {
    const secrets = {
      '.env': 'API_KEY=x\n',
      '.aws/credentials': '[default]\naws_secret_access_key=x\n',
      id_rsa: 'key',
      'certs/server.pem': 'pem',
      '.netrc': 'machine api.wandb.ai password x\n',
    };
    const repo = makeTrainerRepo({ files: secrets });
    fs.writeFileSync(path.join(repo.root, '.env.local'), 'UNTRACKED=1\n');
    const result = await runCli(['submit', CONFIG, '--image', IMAGE], {
      env: emulator.cliEnv(),
      cwd: repo.root,
    });
    expect(result.stderr).not.toMatch(/^error/m);
    expect(result.code).toBe(0);
    expect(await jobNames(emulator.moto.endpoint)).toHaveLength(1);
    const sourceKey = (await allKeys(emulator.moto.endpoint)).find(
      (k) => !SEEDED_KEYS.includes(k) && k.includes('/source/'),
    )!;
    const { s3 } = clients(emulator.moto.endpoint);
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: sourceKey }));
    const names = await archiveNames(Buffer.from(await object.Body!.transformToByteArray()));
    expect(names).toContain('entrypoints/train_grpo_sft.py');
    for (const secret of [...Object.keys(secrets), '.env.local']) expect(names).not.toContain(secret);
  });

  it("takes a trainer repository of its own beside the config's (a dry-run plans it)", async () => {
    const trainer = makeTrainerRepo();
    const repo = repoWith({ launcher: [`trainer_src: ${trainer.root}`] });
    const r = await runCli(['submit', CONFIG, '--image', IMAGE, '--dry-run'], {
      env: emulator.cliEnv(),
      cwd: repo.root,
    });
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(trainer.root);
  });
});

async function archiveNames(gz: Buffer): Promise<string[]> {
  const ex = extract();
  const names: string[] = [];
  const done = (async () => {
    for await (const entry of ex) {
      names.push(entry.header.name);
      entry.resume();
    }
  })();
  Readable.from(gunzipSync(gz)).pipe(ex);
  await done;
  return names;
}
