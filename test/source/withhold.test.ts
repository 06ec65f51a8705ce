import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { Readable } from 'node:stream';
import { packSource, stageSource } from '../../lib/source';
import { WITHHOLD_FILE, withholdRules } from '../../lib/source/withhold';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';

/** The names in a packed source archive. */
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
  return names.sort();
}

const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  project_id: 'p',
  private_key: '-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n',
});

/** Each credential file, as it may sit in a trainer repository, and the reason the plan gives. */
const CREDENTIALS: [string, string, RegExp][] = [
  ['.env', 'API_KEY=x', /environment file/],
  ['.env.production', 'API_KEY=x', /environment file/],
  ['deploy/.envrc', 'export X=1', /environment file/],
  ['.aws/credentials', '[default]\naws_secret_access_key=x', /cloud credentials/],
  ['.aws/config', '[default]\nregion=us-west-2', /cloud credentials/],
  ['id_rsa', 'key', /SSH/],
  ['keys/id_ed25519', 'key', /SSH/],
  ['id_ecdsa', 'key', /SSH/],
  ['.ssh/known_hosts', 'h', /SSH/],
  ['certs/server.pem', 'pem', /key or certificate/],
  ['tls.key', 'k', /key or certificate/],
  ['client.p12', 'p', /key or certificate/],
  ['client.pfx', 'p', /key or certificate/],
  ['.netrc', 'machine api.wandb.ai password x', /login or token/],
  ['.pypirc', '[pypi]\npassword=x', /login or token/],
  ['.git-credentials', 'https://u:t@github.com', /login or token/],
  ['.npmrc', '//registry.npmjs.org/:_authToken=x', /login or token/],
  ['.docker/config.json', '{"auths":{}}', /login or token/],
  ['.cache/huggingface/token', 'hf_x', /login or token/],
  ['credentials.json', '{"installed":{}}', /service-account or OAuth/],
  ['client_secret_123.json', '{"web":{}}', /service-account or OAuth/],
  // Whatever its name: a JSON file holding a service-account key.
  ['configs/gcp-trainer.json', SERVICE_ACCOUNT, /JSON file holding a private key/],
];

describe('credential files are withheld from the source', () => {
  it.each(CREDENTIALS)('%s, tracked by git, is withheld and not packed', async (rel, body, why) => {
    const { root } = makeTrainerRepo({ files: { [rel]: body } });
    const staged = await stageSource({ root });
    expect(staged.withheld).toEqual([{ path: rel, why: expect.stringMatching(why) }]);
    expect(staged.files.map((f) => f.path)).not.toContain(rel);
    expect(staged.excluded).not.toContain(rel);
    expect(await archiveNames((await packSource(staged)).gzip)).not.toContain(rel);
  });

  it.each(CREDENTIALS)('%s, untracked and named by an include glob, is still withheld', async (rel, body) => {
    const { root } = makeTrainerRepo();
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), body);
    const staged = await stageSource({ root, include: ['**/*', rel] });
    expect(staged.withheld.map((w) => w.path)).toEqual([rel]);
    expect(await archiveNames((await packSource(staged)).gzip)).not.toContain(rel);
  });

  it('withholds them in a folder that is not a git repository too', async () => {
    const root = tempDir('rlvr-plain-');
    fs.writeFileSync(path.join(root, 'train.py'), 'print(1)\n');
    fs.writeFileSync(path.join(root, '.env'), 'X=1');
    fs.mkdirSync(path.join(root, '.ssh'));
    fs.writeFileSync(path.join(root, '.ssh', 'id_rsa'), 'k');
    const staged = await stageSource({ root });
    expect(staged.isGit).toBe(false);
    expect(staged.files.map((f) => f.path)).toEqual(['train.py']);
    expect(staged.withheld.map((w) => w.path)).toEqual(['.env', '.ssh/id_rsa']);
  });

  it('ships look-alikes that are not credentials', async () => {
    const files = {
      'env.py': 'x',
      'keys.py': 'x',
      'envs/train.yaml': 'x',
      'docs/ssh.md': 'x',
      'tokenizer/tokenizer.json': '{"model":{"type":"BPE"}}',
      'configs/key_metrics.json': '{"private": true}',
    };
    const { root } = makeTrainerRepo({ files });
    const staged = await stageSource({ root });
    expect(staged.withheld).toEqual([]);
    for (const rel of Object.keys(files)) expect(staged.files.map((f) => f.path)).toContain(rel);
  });
});

describe(`${WITHHOLD_FILE}: the repository extends the deny-list (gitignore syntax)`, () => {
  const ignoreFile = [
    '# the team’s own secrets',
    'wandb_key.txt',
    '/private/',
    'secrets/**/*.yaml',
    '!secrets/public.yaml',
    '!.env',
    '',
  ].join('\n');
  const files = {
    [WITHHOLD_FILE]: ignoreFile,
    'wandb_key.txt': 'k',
    'nested/wandb_key.txt': 'k',
    'private/token.txt': 't',
    'src/private/ok.py': 'anchored pattern: not this one',
    'secrets/a/b.yaml': 's',
    'secrets/public.yaml': 'p',
    '.env': 'X=1',
  };

  it('withholds what its lines name, re-admits only what its own lines withheld, never a built-in match', async () => {
    const { root } = makeTrainerRepo({ files });
    const staged = await stageSource({ root });
    expect(staged.withheld).toEqual([
      { path: '.env', why: expect.stringMatching(/environment file/) },
      { path: 'nested/wandb_key.txt', why: `listed in ${WITHHOLD_FILE} (line 2)` },
      { path: 'private/token.txt', why: `listed in ${WITHHOLD_FILE} (line 3)` },
      { path: 'secrets/a/b.yaml', why: `listed in ${WITHHOLD_FILE} (line 4)` },
      { path: 'wandb_key.txt', why: `listed in ${WITHHOLD_FILE} (line 2)` },
    ]);
    const shipped = staged.files.map((f) => f.path);
    expect(shipped).toEqual(
      expect.arrayContaining(['src/private/ok.py', 'secrets/public.yaml', WITHHOLD_FILE]),
    );
  });

  it('a folder-only line (trailing /) does not withhold a file of that name', async () => {
    const root = tempDir('rlvr-plain-');
    fs.writeFileSync(path.join(root, WITHHOLD_FILE), 'private/\n');
    fs.writeFileSync(path.join(root, 'private'), 'a file, not a folder');
    const staged = await stageSource({ root });
    expect(staged.withheld).toEqual([]);
    expect(staged.files.map((f) => f.path)).toContain('private');
  });

  it('works on git-tracked files as on untracked ones', async () => {
    const { root } = makeTrainerRepo({ files: { [WITHHOLD_FILE]: 'tokens/\n', 'tokens/a.txt': 'a' } });
    fs.writeFileSync(path.join(root, 'tokens', 'b.txt'), 'b');
    const staged = await stageSource({ root });
    expect(staged.withheld.map((w) => w.path)).toEqual(['tokens/a.txt', 'tokens/b.txt']);
  });
});

describe('the built-in deny-list ignores case and covers bare credential files', () => {
  it.each([
    'KEY.PEM',
    'certs/Server.Key',
    'ID_RSA',
    '.ENV',
    'Credentials.json',
    'credentials',
    'home/.gnupg/pubring.kbx',
  ])('%s is withheld', (rel) => {
    expect(withholdRules(tempDir('rlvr-withhold-'))(rel)).toBeDefined();
  });
});
