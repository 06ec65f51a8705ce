import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { refusedSourceFolder, systemFolderReason } from '../../lib/source';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';

describe('systemFolderReason', () => {
  it.each([
    '/',
    '/etc',
    '/etc/ssh',
    '/usr',
    '/usr/lib/python3',
    '/bin',
    '/sbin',
    '/lib',
    '/lib64',
    '/proc',
    '/proc/self',
    '/sys',
    '/dev',
    '/boot',
    '/var',
    '/var/lib',
    '/root',
    '/home',
    '/tmp',
    os.tmpdir(),
  ])('refuses %s', (folder) => {
    expect(systemFolderReason(folder)).toMatch(/system folder|home folder/);
  });

  it('refuses the home folder itself, not the folders in it', () => {
    expect(systemFolderReason(os.homedir())).toMatch(/home folder/);
    expect(systemFolderReason(path.join(os.homedir(), 'src', 'trainer'))).toBeUndefined();
  });

  it('refuses a symlink to a system folder, and takes folders of the temporary folder and elsewhere', () => {
    const dir = tempDir('rlvr-loc-');
    fs.symlinkSync('/etc', path.join(dir, 'etc-link'));
    expect(systemFolderReason(path.join(dir, 'etc-link'))).toMatch(/system folder/);
    expect(systemFolderReason(dir)).toBeUndefined();
    expect(systemFolderReason('/work/trainer')).toBeUndefined();
    expect(systemFolderReason('/opt/trainer')).toBeUndefined();
  });
});

describe('refusedSourceFolder', () => {
  it('takes the git repository holding the config, and a folder inside it', async () => {
    const repo = makeTrainerRepo();
    const context = { configAbs: repo.configPath, configGitRoot: repo.root };
    expect(await refusedSourceFolder(repo.root, context)).toBeUndefined();
    expect(await refusedSourceFolder(path.join(repo.root, 'entrypoints'), context)).toBeUndefined();
  });

  it("takes a git checkout of its own beside the config's repository", async () => {
    const configs = makeTrainerRepo();
    const trainer = makeTrainerRepo();
    expect(
      await refusedSourceFolder(trainer.root, { configAbs: configs.configPath, configGitRoot: configs.root }),
    ).toBeUndefined();
  });

  it("refuses a folder outside the config's repository that is not a git checkout", async () => {
    const configs = makeTrainerRepo();
    const plain = tempDir('rlvr-plain-');
    expect(
      await refusedSourceFolder(plain, { configAbs: configs.configPath, configGitRoot: configs.root }),
    ).toMatch(/outside the git repository holding the config .* not a git checkout/);
  });

  it("outside git: takes the config's folder, a folder below it or one holding it; refuses an unrelated folder", async () => {
    const top = tempDir('rlvr-plain-');
    fs.mkdirSync(path.join(top, 'configs'));
    fs.mkdirSync(path.join(top, 'configs', 'sub'));
    const configAbs = path.join(top, 'configs', 'a.yaml');
    const context = { configAbs, configGitRoot: undefined };
    expect(await refusedSourceFolder(top, context)).toBeUndefined();
    expect(await refusedSourceFolder(path.join(top, 'configs'), context)).toBeUndefined();
    expect(await refusedSourceFolder(path.join(top, 'configs', 'sub'), context)).toBeUndefined();
    expect(await refusedSourceFolder(tempDir('rlvr-other-'), context)).toMatch(
      /not a git checkout, and neither holds the config nor is inside its folder/,
    );
  });

  it('refuses a system folder even when it is a git checkout or holds the config', async () => {
    expect(await refusedSourceFolder('/etc', { configAbs: '/etc/a.yaml', configGitRoot: '/etc' })).toMatch(
      /system folder/,
    );
    expect(await refusedSourceFolder('/', { configAbs: '/work/a.yaml', configGitRoot: undefined })).toMatch(
      /system folder/,
    );
  });

  it('refuses what is not a folder', async () => {
    const dir = tempDir('rlvr-loc-');
    fs.writeFileSync(path.join(dir, 'file'), '');
    const context = { configAbs: path.join(dir, 'a.yaml'), configGitRoot: undefined };
    expect(await refusedSourceFolder(path.join(dir, 'file'), context)).toBe('is not a folder');
    expect(await refusedSourceFolder(path.join(dir, 'missing'), context)).toBe('is not a folder');
  });
});
