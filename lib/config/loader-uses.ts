import { isMap, MIXED, type YamlMap } from '../trainers';
import type { TrainingConfig } from './training-schema';
import type { KeyPath } from './yaml-file';

/** A dataset a loader reads: the loader's name, its parameters, and where the config names it. */
export interface LoaderUse {
  readonly name: string;
  /** The loader's parameters (a mixed entry, or the data section itself). */
  readonly params: YamlMap;
  /** The mapping that holds them: `['data']` or `['data', 'datasets', i]`. */
  readonly at: KeyPath;
  /** The key naming the loader: `data.dataset` or a mixed entry's `name`. */
  readonly nameAt: KeyPath;
}

/** Every loader the data sections use: the section's own, or each entry of a `mixed` list. */
export function loaderUses(
  config: TrainingConfig,
  sections: readonly ('data' | 'sft_data')[] = ['data', 'sft_data'],
): LoaderUse[] {
  const uses: LoaderUse[] = [];
  for (const section of sections) {
    const data = config[section];
    if (!data) continue;
    if (data.dataset === MIXED && Array.isArray(data.datasets)) {
      data.datasets.forEach((entry, i) => {
        const at: KeyPath = [section, 'datasets', i];
        if (isMap(entry)) uses.push({ name: entry.name, params: entry, at, nameAt: [...at, 'name'] });
      });
    } else {
      uses.push({ name: data.dataset, params: data as YamlMap, at: [section], nameAt: [section, 'dataset'] });
    }
  }
  return uses;
}
