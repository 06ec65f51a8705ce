import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { buildJobContract } from '../../lib/trainers';
import { profileForCommand } from '../../lib/trainers/select';
import { tempDir } from './fixtures';

export interface MlRootOptions {
  readonly hosts?: readonly string[];
  readonly host?: string;
  /** The resolved config's text (default: a run named `r`). */
  readonly config?: string;
  readonly evalConfig?: string;
  /** The job's contract.json (default: what the launcher ships for `sh train.sh {config}`). */
  readonly contract?: unknown;
  readonly instanceType?: string;
}

/**
 * A folder standing in for /opt/ml, as SageMaker lays it out for the entrypoint: the resource config,
 * and the config channel with the resolved config, the contract and an eval config.
 */
export function fakeMlRoot(options: MlRootOptions = {}): string {
  const root = tempDir('rlvr-ml-');
  const configDir = path.join(root, 'input', 'data', 'config');
  fs.mkdirSync(configDir, { recursive: true });
  fs.mkdirSync(path.join(root, 'input', 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'input', 'config', 'resourceconfig.json'),
    JSON.stringify({
      current_host: options.host ?? 'algo-1',
      hosts: options.hosts ?? ['algo-1'],
      current_instance_type: options.instanceType ?? 'ml.g5.2xlarge',
    }),
  );
  fs.writeFileSync(path.join(configDir, 'resolved-config.yaml'), options.config ?? 'run:\n  name: r\n');
  if (options.evalConfig) fs.writeFileSync(path.join(configDir, 'eval-config.yaml'), options.evalConfig);
  const contract =
    options.contract ??
    buildJobContract({
      profile: profileForCommand('sh train.sh {config}'),
      config: {},
      configName: 'config.yaml',
      expectCheckpoints: true,
      cachedDatasets: [],
      evalConfig: options.evalConfig ? (parse(options.evalConfig) as Record<string, unknown>) : undefined,
    });
  fs.writeFileSync(path.join(configDir, 'contract.json'), JSON.stringify(contract));
  return root;
}

/** The job environment the launcher gives a one-host job on `root`, for the entrypoint in this process. */
export function entrypointEnv(
  root: string,
  trainerCommand = 'sh train.sh {config}',
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    RLVR_CONFIG: path.join(root, 'input', 'data', 'config', 'resolved-config.yaml'),
    RLVR_RUN_NAME: 'r',
    RLVR_TRAIN_GPUS: '0',
    RLVR_EVAL_GPUS: '',
    RLVR_USE_RAY: '0',
    RLVR_TRAINER_COMMAND: trainerCommand,
    ...extra,
  };
}
