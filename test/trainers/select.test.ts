import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadTrainerProfiles, loadTrainingConfig, mergeProfiles } from '../../lib/config';
import { ProblemsError, formatProblem } from '../../lib/errors';
import { BUILT_IN_PROFILES, selectTrainer } from '../../lib/trainers';
import { gsm8kWith, lineOf, makeTrainerRepo, planInSession, tempDir, writeConfig } from '../helpers/fixtures';

const profiles = BUILT_IN_PROFILES;

function pick(config: unknown, extra: { trainer?: string; command?: string } = {}) {
  const result = selectTrainer({ config, profiles, ...extra });
  if ('problem' in result) throw new Error(result.problem.message);
  return result.selection;
}

describe('choosing the trainer', () => {
  it('recognises each of the team trainers from the keys only its configs carry', () => {
    const roles = (...names: string[]) =>
      names.map((name) => ({ name, kind: name === 'trainer' ? 'titan' : 'vllm' }));
    expect(pick({ sft_data: {}, roles: roles('trainer') }).profile.id).toBe('sft-only');
    expect(
      pick({ training: { alpha_gkd: 0.1 }, loss: {}, roles: roles('trainer', 'rollout') }).profile.id,
    ).toBe('grpo-gkd');
    expect(
      pick({ training: { batch_size: 8 }, sampling: { n: 8 }, data: { dataset: 'gsm8k' } }).profile.id,
    ).toBe('opsd');
    expect(
      pick({ training: { batch_size: 8 }, sampling: { n: 1 }, data: { dataset: 'gsm8k' } }).profile.id,
    ).toBe('gkd');
    expect(pick({ training: { prompts_per_optim_step: 64 }, loss: { name: 'dapo' } }).profile.id).toBe(
      'grpo-sft',
    );
  });

  it('takes launcher.trainer first, then the trainer command script, and says why', () => {
    expect(pick({ loss: {} }, { trainer: 'grpo-minimal' }).reason).toBe('launcher.trainer: grpo-minimal');
    const byCommand = pick({}, { command: 'python entrypoints/train_opsd.py {config}' });
    expect([byCommand.profile.id, byCommand.how]).toEqual(['opsd', 'trainer-command']);
    const custom = pick({}, { command: 'python my_trainer.py {config}' });
    expect([custom.profile.id, custom.how]).toEqual(['custom', 'no-profile']);
  });

  it('asks for the trainer when nothing identifies it', () => {
    const result = selectTrainer({ config: { run: {} }, profiles });
    expect('problem' in result && result.problem.hint).toMatch(/Set launcher\.trainer/);
  });
});

describe("a trainer repository's own profile file", () => {
  it('changes a built-in profile and adds a new trainer, recognised by its keys', () => {
    const root = tempDir();
    fs.writeFileSync(
      path.join(root, 'rlvr-trainers.yaml'),
      [
        'trainers:',
        '  - id: grpo-sft',
        '    keys: [training.entropy_bonus]',
        '  - id: ppo',
        '    extends: grpo-sft',
        '    script: entrypoints/train_ppo.py',
        '    losses: [ppo]',
        '    recognised_by: [training.value_coef]',
        '',
      ].join('\n'),
    );
    const repo = loadTrainerProfiles(root);
    expect(repo.map((p) => [p.id, p.command])).toEqual([
      ['grpo-sft', 'python entrypoints/train_grpo_sft.py {config}'],
      ['ppo', 'python entrypoints/train_ppo.py {config}'],
    ]);
    const all = mergeProfiles(BUILT_IN_PROFILES, repo);
    const picked = selectTrainer({ config: { training: { value_coef: 0.5 }, loss: {} }, profiles: all });
    expect('selection' in picked && picked.selection.profile.id).toBe('ppo');

    // The new key is known, so its misspelling is now a likely typo: of a key the chosen trainer reads, an error.
    const dir = tempDir();
    const text = gsm8kWith(['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  entropy_bonuss: 0.1\n']);
    expect(() =>
      loadTrainingConfig(writeConfig(dir, 'c.yaml', text), 'c.yaml', { profiles: () => repo }),
    ).toThrow(/did you mean "entropy_bonus"/);
  });

  it("a profile file states the run-time contract: what it names replaces the built-in's, the rest is kept", () => {
    const root = tempDir();
    fs.writeFileSync(
      path.join(root, 'rlvr-trainers.yaml'),
      [
        'trainers:',
        '  - id: grpo-sft',
        '    runtime:',
        '      resume_with:',
        '        load_paths: [{role: trainer, key: model.hf_assets_path}]',
        '        step_key: training.start_step',
        '      dataset_cache: {path: "/scratch/{folder}"}',
        '  - id: plain',
        '    script: train.py',
        '    resume: full',
        '    runtime:',
        '      run_folder: {kind: launcher}',
        '',
      ].join('\n'),
    );
    const [sft, plain] = loadTrainerProfiles(root);
    const builtIn = BUILT_IN_PROFILES.find((p) => p.id === 'grpo-sft')!;
    expect(sft.runtime.resumeWith).toEqual({
      loadPaths: [{ role: 'trainer', key: 'model.hf_assets_path', ifPresent: false }],
      stepKey: 'training.start_step',
      cite: path.join(root, 'rlvr-trainers.yaml'),
    });
    expect(sft.runtime.datasetCache).toMatchObject({
      path: '/scratch/{folder}',
      marker: 'dataset_info.json',
    });
    expect(sft.runtime.runFolder).toEqual(builtIn.runtime.runFolder);
    expect(sft.runtime.evalScript).toBe(builtIn.runtime.evalScript);
    expect(plain.runtime.runFolder).toEqual({ kind: 'launcher' });
    // A new trainer of the repository is evaluated by the repository's eval script.
    expect(plain.runtime.evalScript).toBe(builtIn.runtime.evalScript);
    expect(plain.resume).toBe('full');
  });

  it('refuses a malformed profile file with file:line', () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'rlvr-trainers.yaml'), 'trainers:\n  - id: x\n    extends: nope\n');
    try {
      loadTrainerProfiles(root);
      throw new Error('expected a ProblemsError');
    } catch (err) {
      expect(err).toBeInstanceOf(ProblemsError);
      expect((err as ProblemsError).problems[0].location!.line).toBe(3);
      expect(formatProblem((err as ProblemsError).problems[0])).toMatch(/no built-in profile "nope"/);
    }
  });
});

describe('the trainer script travels with the job', () => {
  it('refuses a trainer command whose script the shipped source lacks, at the line that names it', async () => {
    const text = gsm8kWith([
      '  template:',
      '  trainer_command: python entrypoints/train_grpo.py {config}\n  template:',
    ]).replace(/^ {2}trainer_src: .*\n/m, '');
    const { configPath } = makeTrainerRepo({ config: text });
    const err = await planInSession({
      configPath,
      options: {},
      settings: {},
      dryRun: true,
      env: { PATH: process.env.PATH },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ProblemsError);
    const problem = (err as ProblemsError).problems[0];
    expect(formatProblem(problem)).toMatch(
      /runs entrypoints\/train_grpo\.py, which is not in the shipped source/,
    );
    expect(problem.location!.line).toBe(lineOf(fs.readFileSync(configPath, 'utf8'), 'trainer_command:'));
  });
});
