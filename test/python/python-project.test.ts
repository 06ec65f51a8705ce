import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  constraintLines,
  findImportRoots,
  imageEnvironment,
  lockClosure,
  readPyproject,
  readRequirementPins,
  readUvLock,
  shadowedStdlib,
  unreachableImports,
} from '../../lib/python';
import { topLevelImports } from '../../lib/python/import-roots';
import { UserError } from '../../lib/errors';
import { tempDir } from '../helpers/fixtures';
import { THEIR_REPO } from '../helpers/python';

function project(files: Record<string, string>): string {
  const dir = tempDir('rlvr-py-');
  for (const [rel, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), body);
  }
  return dir;
}

const rootsOf = (files: Record<string, string>) => {
  const dir = project(files);
  return findImportRoots({ files: Object.keys(files), pyproject: readPyproject(dir) });
};

describe('import roots', () => {
  it('their repository: a package in a src layout (pyproject [tool.uv] package = true, src/rlvr_experiments)', () => {
    const files = ['pyproject.toml', 'src/rlvr_experiments/__init__.py', 'src/rlvr_experiments/data.py'];
    const roots = findImportRoots({ files, pyproject: readPyproject(THEIR_REPO) });
    expect(roots).toEqual([
      {
        path: 'src',
        why: 'pyproject.toml: a package in a src layout',
        packages: ['rlvr_experiments'],
      },
    ]);
  });

  it('follows what the build configuration declares: setuptools, hatch, poetry, uv_build', () => {
    expect(
      rootsOf({
        'pyproject.toml': '[tool.setuptools.packages.find]\nwhere = ["lib"]\n',
        'lib/pkg/__init__.py': '',
      }).map((r) => [r.path, r.why]),
    ).toEqual([['lib', 'pyproject.toml [tool.setuptools.packages.find] where']]);
    expect(
      rootsOf({
        'pyproject.toml': '[tool.setuptools]\npackage-dir = {"" = "code"}\n',
        'code/pkg/__init__.py': '',
      })[0].path,
    ).toBe('code');
    expect(
      rootsOf({
        'pyproject.toml': '[tool.hatch.build.targets.wheel]\npackages = ["python/trainer"]\n',
        'python/trainer/__init__.py': '',
      })[0],
    ).toMatchObject({ path: 'python', packages: ['trainer'] });
    expect(
      rootsOf({
        'pyproject.toml': '[tool.poetry]\npackages = [{ include = "t", from = "pkgs" }]\n',
        'pkgs/t/__init__.py': '',
      })[0].path,
    ).toBe('pkgs');
    expect(
      rootsOf({
        'pyproject.toml': '[build-system]\nrequires = ["uv_build"]\nbuild-backend = "uv_build"\n',
        'src/t/__init__.py': '',
      })[0].why,
    ).toBe('pyproject.toml build-backend uv_build (module-root defaults to src)');
  });

  it('a flat repository is imported from its root; a profile may name more roots', () => {
    expect(rootsOf({ 'train.py': '', 'mypkg/__init__.py': '' })).toEqual([
      { path: '.', why: 'the repository root (no src layout)', packages: ['mypkg', 'train'] },
    ]);
    const roots = findImportRoots({
      files: ['src/a/__init__.py', 'vendor/b/__init__.py'],
      pyproject: undefined,
      named: { paths: ['vendor'], by: 'trainer x (rlvr-trainers.yaml)' },
    });
    expect(roots.map((r) => r.path)).toEqual(['vendor', 'src']);
  });

  it("finds a script's imports of a package that ships but is on no root, with its line", () => {
    const text = fs.readFileSync(path.join(THEIR_REPO, 'entrypoints', 'train_grpo_sft.py'), 'utf8');
    expect(topLevelImports(text).find((i) => i.name === 'rlvr_experiments')).toEqual({
      name: 'rlvr_experiments',
      line: 16,
    });
    const files = ['entrypoints/train_grpo_sft.py', 'src/rlvr_experiments/__init__.py'];
    // The repository root instead of src/: what a job without import roots had.
    const [problem] = unreachableImports(
      'entrypoints/train_grpo_sft.py',
      text,
      [{ path: '.', why: 'x', packages: [] }],
      files,
    );
    expect(problem.message).toBe(
      'entrypoints/train_grpo_sft.py:16 imports rlvr_experiments, which ships in src/ but is on no import root (./): the job would fail with ModuleNotFoundError',
    );
    // Found under src/: nothing to say; dependencies (yaml, ray) are the image's business.
    expect(
      unreachableImports(
        'entrypoints/train_grpo_sft.py',
        text,
        [{ path: 'src', why: 'x', packages: [] }],
        files,
      ),
    ).toEqual([]);
    // The standard library, a dependency and a package's own submodule named like them are no one's problem.
    expect(
      unreachableImports(
        'entrypoints/train_grpo_sft.py',
        'import math\nimport datasets\n',
        [{ path: 'src', why: 'x', packages: [] }],
        [
          ...files,
          'src/rlvr_experiments/verifiers/__init__.py',
          'src/rlvr_experiments/verifiers/math.py',
          'tools/datasets/__init__.py',
        ],
        ['datasets'],
      ),
    ).toEqual([]);
    // A module beside the script is found (Python puts the script's folder first).
    expect(
      unreachableImports(
        'scripts/run.py',
        'import helpers\n',
        [{ path: 'src', why: '', packages: [] }],
        ['scripts/run.py', 'scripts/helpers.py'],
      ),
    ).toEqual([]);
  });
});

describe('a root module named like the standard library', () => {
  it('is said: on PYTHONPATH it would shadow the standard library in every process', () => {
    const roots = findImportRoots({ files: ['queue.py', 'train.py'], pyproject: undefined });
    expect(shadowedStdlib(roots).map((p) => p.message)).toEqual([
      "queue on import root ./ shadows the standard library's queue in every process of the job",
    ]);
  });
});

describe('uv.lock', () => {
  it("reads their lock's pins with the line of each version, and the closure of what step 2 installs", () => {
    const lock = readUvLock(THEIR_REPO)!;
    expect(lock.requiresPython).toBe('==3.11.*');
    const torch = lock.packages.find((p) => p.name === 'torch')!;
    expect(torch).toMatchObject({
      version: '2.9.0',
      source: { kind: 'registry', value: 'https://pypi.org/simple' },
    });
    const text = fs.readFileSync(path.join(THEIR_REPO, 'uv.lock'), 'utf8').split('\n');
    expect(text[torch.line - 1]).toBe('version = "2.9.0"');
    expect(text[torch.line - 2]).toBe('name = "torch"');
    const closure = lockClosure(lock, [
      { name: 'torch', extras: [] },
      { name: 'vllm', extras: [] },
      { name: 'ray', extras: ['default'] },
    ]).map((p) => p.name);
    // ray[default] brings aiohttp; transformers comes through vllm; the project itself and pytest do not.
    expect(closure).toEqual(
      expect.arrayContaining(['aiohttp', 'nvidia-cuda-runtime-cu12', 'ray', 'torch', 'transformers', 'vllm']),
    );
    expect(closure).not.toContain('rlvr-experiments');
    expect(closure).not.toContain('pytest');
    expect(closure).not.toContain('lm-eval');
    expect(constraintLines(lockClosure(lock, [{ name: 'torch', extras: [] }]))).toEqual([
      'filelock==3.20.0',
      'nvidia-cuda-runtime-cu12==12.8.90',
      'nvidia-cudnn-cu12==9.10.2.21',
      'torch==2.9.0',
    ]);
  });

  it('a lock holding two versions of a package pins each with its markers; a broken lock exits 2', () => {
    const dir = project({
      'uv.lock': [
        'version = 1',
        '[[package]]',
        'name = "numpy"',
        'version = "1.26.4"',
        'source = { registry = "https://pypi.org/simple" }',
        'resolution-markers = ["python_full_version < \'3.12\'"]',
        '[[package]]',
        'name = "numpy"',
        'version = "2.2.6"',
        'source = { registry = "https://pypi.org/simple" }',
        'resolution-markers = ["python_full_version >= \'3.12\'"]',
        '',
      ].join('\n'),
    });
    const lock = readUvLock(dir)!;
    expect(constraintLines(lock.packages)).toEqual([
      "numpy==1.26.4 ; (python_full_version < '3.12')",
      "numpy==2.2.6 ; (python_full_version >= '3.12')",
    ]);
    expect(lock.packages.map((p) => p.line)).toEqual([4, 9]);
    const broken = project({ 'uv.lock': 'version = [\n' });
    expect(() => readUvLock(broken)).toThrow(UserError);
    expect(() => readUvLock(broken)).toThrow(/uv\.lock is not valid TOML: .*Regenerate it with `uv lock`/);
  });

  it('reads exact pins of requirements files (and the index named before them), not ranges', () => {
    const dir = project({
      'requirements.txt': [
        '--extra-index-url https://download.pytorch.org/whl/cu126',
        'torch==2.7.1+cu126',
        'vllm>=0.9',
        'Ray[default] == 2.48.0  # comment',
        '',
      ].join('\n'),
    });
    const read = readRequirementPins(dir, imageEnvironment('3.11'));
    expect(read.pins.map((p) => [p.name, p.version, p.line])).toEqual([
      ['torch', '2.7.1+cu126', 2],
      ['ray', '2.48.0', 4],
    ]);
    expect(read.indexUrls).toEqual(['https://download.pytorch.org/whl/cu126']);
    expect(read.names).toEqual(['torch', 'vllm', 'ray']);
  });
});
