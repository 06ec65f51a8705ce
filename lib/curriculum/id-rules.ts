import { LOADERS, type DatasetLoader } from '../trainers';

/*
 * How each of the trainer's dataset loaders names its prompts (`problem.prompt_id`), read from their
 * loaders (halflearned/rlvr-experiments, S/ = src/rlvr_experiments/; DATASET_LOADERS at
 * S/data.py:1150-1163). An order file is checked against these ids: `load_mixed` keeps only the order
 * file's ids the dataset has and drops the rest without a word (S/data.py:1281), and
 * `DataIterator` does the same (S/data.py:1424-1427).
 *
 * A rule is computed from the `save_to_disk` copy the loader reads (`Dataset.load_from_disk` of
 * /tmp/<folder>_cache, synced from `datasets/<folder>/`), from the columns it names only. A loader whose
 * ids cannot be computed from a stored copy is `unknown`, with the reason: its order file is then
 * reported as "could not be checked", never passed.
 */

/** The columns a rule reads, each value as Python's `str()` would print it (null: the value was None). */
export interface CopyColumns {
  readonly rows: number;
  readonly columns: Readonly<Record<string, readonly (string | null)[]>>;
}

/** The loader's keyword parameters from the config (`split`, `level`, `datasets`, …). */
export type LoaderParams = Readonly<Record<string, unknown>>;

/** What a rule makes of a copy: the ids in row order, or why it cannot. */
export type RuleIds = { readonly ids: string[] } | { readonly reason: string };

interface KnownRule {
  readonly loader: string;
  /** The rule as people read it (`gsm8k_<row index>`). */
  readonly rule: string;
  readonly cite: string;
  readonly checkable: true;
  /** The columns it reads for these parameters ([]: the row count is enough). */
  columns(params: LoaderParams): readonly string[] | { readonly reason: string };
  ids(copy: CopyColumns, params: LoaderParams): RuleIds;
}

interface UnknownRule {
  readonly loader: string;
  readonly rule: string;
  readonly cite: string;
  readonly checkable: false;
  /** Why the ids cannot be computed from a stored copy. */
  readonly reason: string;
}

export type IdRule = KnownRule | UnknownRule;

/** `<prefix><row index>`: the loader numbers the rows as it read them (`enumerate(items)`). */
function rowIndex(loader: string, prefix: string, cite: string): KnownRule {
  return {
    loader,
    rule: `${prefix}<row index>`,
    cite,
    checkable: true,
    columns: () => [],
    ids: (copy) => ({ ids: Array.from({ length: copy.rows }, (_, i) => `${prefix}${i}`) }),
  };
}

function column(copy: CopyColumns, name: string): readonly (string | null)[] {
  const values = copy.columns[name];
  if (!values) throw new Error(`column ${name} was not read`);
  return values;
}

/** A list parameter as Python iterates it (a string would iterate its characters: not what anyone means). */
function listParam(params: LoaderParams, key: string): { values?: string[]; reason?: string } {
  const value = params[key];
  if (value === undefined || value === null) return {};
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' && typeof v !== 'number')) {
    return { reason: `\`${key}\` is not a list of values (the loader iterates it)` };
  }
  return { values: value.map(String) };
}

const RULES: readonly IdRule[] = [
  rowIndex('gsm8k', 'gsm8k_', 'S/data.py:96,104'),
  {
    loader: 'math',
    rule: 'math_<type, lower-cased>_<index among the rows of that type> (rows kept by `level` only)',
    cite: 'S/data.py:326-351',
    checkable: true,
    columns: (params) => {
      const level = listParam(params, 'level');
      if (level.reason) return { reason: level.reason };
      return level.values ? ['type', 'level'] : ['type'];
    },
    ids: (copy, params) => {
      const levels = listParam(params, 'level').values;
      // `level_strs = {f"Level {l}" for l in level}`; rows whose `level` is not one of them are dropped
      // before numbering (S/data.py:327-329).
      const keep = levels ? new Set(levels.map((l) => `Level ${l}`)) : undefined;
      const types = column(copy, 'type');
      const rowLevels = keep ? column(copy, 'level') : undefined;
      // One counter per subject, found by the column's value (few distinct values: lower-cased once).
      const bySubject = new Map<string, { n: number }>();
      const byType = new Map<string, { prefix: string; counter: { n: number } }>();
      const ids: string[] = [];
      for (let i = 0; i < copy.rows; i++) {
        if (keep && !keep.has(rowLevels![i] ?? 'None')) continue;
        const type = types[i];
        if (type === null) return { reason: `row ${i} has no \`type\` (the loader calls .lower() on it)` };
        let t = byType.get(type);
        if (!t) {
          const subject = type.toLowerCase();
          let counter = bySubject.get(subject);
          if (!counter) bySubject.set(subject, (counter = { n: 0 }));
          byType.set(type, (t = { prefix: `math_${subject}_`, counter }));
        }
        ids.push(t.prefix + t.counter.n++);
      }
      return { ids };
    },
  },
  rowIndex('deepscaler', 'deepscaler_', 'S/data.py:502,507'),
  {
    loader: 'humaneval',
    rule: '`task_id` (HumanEval/<n>)',
    cite: 'S/data.py:141,155',
    checkable: false,
    reason:
      'it loads openai/openai_humaneval from the Hugging Face Hub only: there is no stored copy to read',
  },
  {
    loader: 'mbpp',
    rule: 'mbpp_<task_id>',
    cite: 'S/data.py:226',
    checkable: true,
    columns: () => ['task_id'],
    ids: (copy) => ({ ids: column(copy, 'task_id').map((v) => `mbpp_${v ?? 'None'}`) }),
  },
  {
    loader: 'apps',
    rule: 'apps_<id>',
    cite: 'S/data.py:549,579',
    checkable: false,
    reason: 'it downloads codeparrot/apps with hf_hub_download only: there is no stored copy to read',
  },
  rowIndex('ifeval', 'ifeval_', 'S/data.py:690,703'),
  rowIndex('if_multi_constraints', 'if_multi_', 'S/data.py:809,821'),
  {
    loader: 'dummy',
    rule: 'dummy_<i> for i < num_samples',
    cite: 'S/data.py:855,863',
    checkable: false,
    reason: 'it makes its data in code: there is no stored copy to read',
  },
  {
    loader: 'allenai_rlvr',
    rule: 'allenai_<dataset, lower-cased>_<row index after the `datasets` filter>',
    cite: 'S/data.py:979-999',
    checkable: true,
    columns: (params) => {
      const datasets = listParam(params, 'datasets');
      return datasets.reason ? { reason: datasets.reason } : ['dataset'];
    },
    ids: (copy, params) => {
      const wanted = listParam(params, 'datasets').values;
      const keep = wanted ? new Set(wanted.map((d) => d.toLowerCase())) : undefined;
      const names = column(copy, 'dataset');
      const ids: string[] = [];
      for (let i = 0; i < copy.rows; i++) {
        const name = names[i];
        if (name === null) return { reason: `row ${i} has no \`dataset\` (the loader calls .lower() on it)` };
        const lower = name.toLowerCase();
        // The index counts the rows kept by the filter, across all source datasets (S/data.py:982-986).
        if (keep && !keep.has(lower)) continue;
        ids.push(`allenai_${lower}_${ids.length}`);
      }
      return { ids };
    },
  },
  {
    loader: 'allenai_gsm8k_mini',
    rule: 'a random.Random(seed).sample(n_samples) of allenai_rlvr’s allenai_gsm8k_<i> ids',
    cite: 'S/data.py:1066-1071',
    checkable: false,
    reason:
      "its ids are a sample drawn with CPython's random.Random(seed): which ones cannot be computed from the copy here",
  },
  {
    loader: 'sft_jsonl',
    rule: 'problem.prompt_id, else the line’s prompt_id, else sft_<index among kept lines>',
    cite: 'S/data.py:1135',
    checkable: false,
    reason: 'it reads a JSONL file, not a save_to_disk copy (its ids are not read by this check yet)',
  },
];

/** Every loader's rule, in DATASET_LOADERS order. */
export const ID_RULES: Readonly<Record<string, IdRule>> = Object.fromEntries(RULES.map((r) => [r.loader, r]));

/** A rule made concrete for one use of a loader: where its copy is and which columns to read. */
export type ResolvedIdRule =
  | {
      readonly checkable: true;
      readonly loader: string;
      readonly rule: string;
      readonly cite: string;
      /** The copy's folder under the datasets prefix (`gsm8k_train`). */
      readonly folder: string;
      readonly columns: readonly string[];
      ids(copy: CopyColumns): RuleIds;
    }
  | {
      readonly checkable: false;
      readonly loader: string;
      readonly rule?: string;
      readonly cite?: string;
      readonly reason: string;
    };

/**
 * The rule for `loader` called with `params`, with the folder of its copy from the trainer profile's
 * loader table (`{split}` replaced by the split, default `train`).
 */
export function resolveIdRule(
  loader: string,
  params: LoaderParams = {},
  loaders: Readonly<Record<string, DatasetLoader>> = LOADERS,
): ResolvedIdRule {
  const rule = ID_RULES[loader];
  if (!rule) return { checkable: false, loader, reason: `no id rule is known for the loader "${loader}"` };
  const { rule: text, cite } = rule;
  if (!rule.checkable) return { checkable: false, loader, rule: text, cite, reason: rule.reason };
  const profile = loaders[loader];
  if (profile?.source !== 's3-cache' || !profile.folder) {
    return {
      checkable: false,
      loader,
      rule: text,
      cite,
      reason: 'the trainer profile names no S3 copy for it',
    };
  }
  const columns = rule.columns(params);
  if (!Array.isArray(columns)) {
    return { checkable: false, loader, rule: text, cite, reason: (columns as { reason: string }).reason };
  }
  const split = params.split ?? 'train';
  return {
    checkable: true,
    loader,
    rule: text,
    cite,
    folder: profile.folder.replace('{split}', String(split)),
    columns,
    ids: (copy) => rule.ids(copy, params),
  };
}
