import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { didYouMean, formatKeyPath, formatTrainerFloat, type KeyPath, type YamlFile } from '../config';
import { UserError } from '../errors';

/*
 * `--sweep optimizer.lr=5e-5,1e-5 --sweep loss.beta=0.001,0.0001` → the cartesian product of configs.
 * A key is a dotted path from the top (`loss.beta`), or inside the trainer role's config
 * (`optimizer.lr` means `roles[trainer].config.optimizer.lr`), or names a role (`roles.rollout.config.n`).
 * Values replace the text of the existing value, so the file keeps its comments and layout.
 */

export type SweepValue = number | string | boolean;

/** The most jobs a sweep creates unless told more (`--max-jobs`): a slip must not launch hundreds. */
export const SWEEP_MAX_JOBS = 64;

export interface SweepAxis {
  readonly key: string;
  readonly values: readonly SweepValue[];
}

export interface SweepVariant {
  /** `optimizer.lr=5.0e-5 loss.beta=0.001` */
  readonly label: string;
  readonly overrides: readonly { readonly key: string; readonly path: KeyPath; readonly value: SweepValue }[];
  /** The config text with the overrides applied. */
  readonly text: string;
}

function parseValue(text: string): SweepValue {
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

export function parseSweepFlag(flag: string): SweepAxis {
  const eq = flag.indexOf('=');
  const key = eq > 0 ? flag.slice(0, eq).trim() : '';
  const values =
    eq > 0
      ? flag
          .slice(eq + 1)
          .split(',')
          .map((v) => v.trim())
      : [];
  if (!/^[A-Za-z_][\w]*(\.[\w-]+)*$/.test(key) || values.length === 0 || values.some((v) => v === '')) {
    throw new UserError(
      `--sweep ${flag}: write KEY=V1,V2,… (e.g. --sweep optimizer.lr=5e-5,1e-5,5e-6,1e-6).`,
      'BadSweep',
    );
  }
  const parsed = values.map(parseValue);
  // Values equal once parsed (1 and 1.0, 1e-5 and 0.00001) would submit identical jobs.
  parsed.forEach((value, i) => {
    const first = parsed.indexOf(value);
    if (first < i) {
      const same = values[first] === values[i] ? `"${values[i]}"` : `"${values[first]}" and "${values[i]}"`;
      throw new UserError(
        `--sweep ${flag}: the value ${sweepLiteral(value)} is given twice (${same}): the sweep would submit identical jobs. Give each value once.`,
        'BadSweep',
      );
    }
  });
  return { key, values: parsed };
}

function nodeAt(file: YamlFile, path: KeyPath): Node | undefined {
  const node = file.document.getIn(path, true);
  return node && typeof node === 'object' ? (node as Node) : undefined;
}

/** The config path a sweep key names, or a user error with the closest key. */
export function resolveSweepKey(file: YamlFile, key: string): KeyPath {
  const segments = key.split('.');
  const candidates: KeyPath[] = [segments];
  const roles = file.document.get('roles', true);
  if (isSeq(roles)) {
    const names = roles.items.map((r) => (isMap(r) ? String(r.get('name')) : ''));
    if (segments[0] === 'roles' && segments.length > 2 && names.includes(segments[1])) {
      candidates.unshift(['roles', names.indexOf(segments[1]), ...segments.slice(2)]);
    }
    const trainer = names.indexOf('trainer');
    if (trainer >= 0) candidates.push(['roles', trainer, 'config', ...segments]);
  }
  for (const path of candidates) {
    const node = nodeAt(file, path);
    if (isScalar(node)) return path;
    if (node)
      throw new UserError(`--sweep ${key}: ${formatKeyPath(path)} is a section, not a value.`, 'BadSweep');
  }
  // Not found: suggest a key at the deepest level that exists.
  const parentPath = segments.slice(0, -1);
  const parent = nodeAt(file, parentPath) ?? nodeAt(file, candidates[candidates.length - 1].slice(0, -1));
  const known = isMap(parent) ? parent.items.map((p) => String((p.key as { value?: unknown })?.value)) : [];
  const suggestion = didYouMean(segments[segments.length - 1], known);
  throw new UserError(
    `--sweep ${key}: the config has no such value (looked at ${candidates.map(formatKeyPath).join(', ')}).` +
      (suggestion
        ? ` Did you mean ${[...parentPath, suggestion].join('.')}?`
        : ' Sweep keys must name existing values.'),
    'BadSweep',
  );
}

/** A YAML literal for a value, floats in the form the trainer's PyYAML reads as floats. */
export function sweepLiteral(value: SweepValue): string {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : formatTrainerFloat(value);
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** How many jobs the axes make: the product of their value counts. */
export function sweepSize(axes: readonly SweepAxis[]): number {
  return axes.reduce((n, axis) => n * axis.values.length, 1);
}

/** More combinations than `maxJobs` is bad input, refused before anything is planned. */
export function checkSweepSize(axes: readonly SweepAxis[], maxJobs = SWEEP_MAX_JOBS): void {
  const size = sweepSize(axes);
  if (size <= maxJobs) return;
  const product = axes.map((a) => a.values.length).join(' × ');
  throw new UserError(
    `--sweep: ${axes.length > 1 ? `${product} = ` : ''}${size} combinations would create ${size} jobs, ` +
      `more than the ${maxJobs} a sweep may create. Sweep fewer values, or raise the limit with --max-jobs ${size}.`,
    'SweepTooLarge',
  );
}

/**
 * Every combination of the axes, each as config text (the first axis varies slowest); more than
 * `maxJobs` of them is refused.
 */
export function expandSweep(
  file: YamlFile,
  axes: readonly SweepAxis[],
  maxJobs = SWEEP_MAX_JOBS,
): SweepVariant[] {
  checkSweepSize(axes, maxJobs);
  const resolved = axes.map((axis) => ({ ...axis, path: resolveSweepKey(file, axis.key) }));
  const keys = new Set<string>();
  for (const axis of resolved) {
    const id = formatKeyPath(axis.path);
    if (keys.has(id)) throw new UserError(`--sweep ${axis.key} is given twice.`, 'BadSweep');
    keys.add(id);
  }
  let combos: { key: string; path: KeyPath; value: SweepValue }[][] = [[]];
  for (const axis of resolved) {
    combos = combos.flatMap((combo) =>
      axis.values.map((value) => [...combo, { key: axis.key, path: axis.path, value }]),
    );
  }
  return combos.map((overrides) => {
    const edits = overrides
      .map((o) => ({ range: nodeAt(file, o.path)!.range!, literal: sweepLiteral(o.value) }))
      .sort((a, b) => b.range[0] - a.range[0]);
    let text = file.text;
    for (const edit of edits) text = text.slice(0, edit.range[0]) + edit.literal + text.slice(edit.range[1]);
    return { label: overrides.map((o) => `${o.key}=${sweepLiteral(o.value)}`).join(' '), overrides, text };
  });
}
