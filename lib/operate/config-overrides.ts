/**
 * `rlvr rerun --set key=value`: changes to the config the trainer reads (`resolved-config.yaml`), by
 * dotted path, each value a YAML scalar. The file is edited in place (the YAML document's own node
 * ranges), so every other line stays as the launcher wrote it. Pure.
 */
import { isMap, isScalar, isSeq, parse, parseDocument, type Scalar, type YAMLMap } from 'yaml';
import { didYouMean, formatTrainerFloat, pyyamlMisreads } from '../config';
import { UserError } from '../errors';
import { CONTAINER } from '../layout';

export type OverrideValue = string | number | boolean | null;

export interface ConfigOverride {
  /** As given: `run.seed`. */
  readonly key: string;
  readonly path: readonly (string | number)[];
  readonly value: OverrideValue;
  /** `--add`: a key the config does not have yet (no misspelling check; an existing key is refused). */
  readonly adds?: boolean;
}

export interface OverrideChange {
  readonly key: string;
  /** Undefined: the key was absent. */
  readonly before: unknown;
  readonly after: OverrideValue;
}

/** `run.seed=7` → the path and the value parsed as a YAML scalar (so 7 is a number, true a boolean). */
export function parseSetFlag(flag: string, options: { readonly adds?: boolean } = {}): ConfigOverride {
  const name = options.adds ? '--add' : '--set';
  const eq = flag.indexOf('=');
  const key = eq < 0 ? '' : flag.slice(0, eq).trim();
  if (eq < 0 || key === '')
    throw new UserError(`${name} ${flag}: expected key=value, e.g. ${name} run.seed=7`, 'BadSet');
  const segments = key.split('.');
  if (segments.some((s) => s === ''))
    throw new UserError(`--set ${flag}: "${key}" has an empty key between dots`, 'BadSet');
  const text = flag.slice(eq + 1);
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw new UserError(`--set ${flag}: the value is not YAML (${(err as Error).message})`, 'BadSet');
  }
  if (value !== null && typeof value === 'object')
    throw new UserError(
      `--set ${flag}: the value must be one scalar (a number, a string, true/false, null), not a list or mapping`,
      'BadSet',
    );
  if (value === undefined) value = null;
  return {
    key,
    path: segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
    value: value as OverrideValue,
    ...(options.adds ? { adds: true } : {}),
  };
}

/** A YAML literal for a value: floats in the form PyYAML (the trainer's reader) reads as floats too. */
export function overrideLiteral(value: OverrideValue): string {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : formatTrainerFloat(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  // A plain string stays plain when it reads back as the same string, in YAML 1.2 and in the YAML 1.1
  // the trainer's PyYAML reads (where `yes`, `off`, `1_000`, `1:30` and dates are not strings); else quoted.
  const plain = parse(value) === value && !pyyamlMisreads(value) && !/[#:]\s|^\s|\s$|^[-?]/.test(value);
  return plain ? value : JSON.stringify(value);
}

function isJobPath(value: unknown): boolean {
  return typeof value === 'string' && (value === CONTAINER.root || value.startsWith(`${CONTAINER.root}/`));
}

/**
 * The config text with every override applied, and what each changed. Refused (exit 2): a parent that is
 * not there, a last key that is a likely misspelling of a key beside it, a value that names a path in
 * the job (`/opt/ml/…`: the launcher mounted it, so only a submit can change it).
 */
export function applyOverrides(
  text: string,
  overrides: readonly ConfigOverride[],
): { text: string; changes: OverrideChange[] } {
  let current = text;
  const changes: OverrideChange[] = [];
  for (const o of overrides) {
    const doc = parseDocument(current);
    const parentPath = o.path.slice(0, -1);
    const last = o.path[o.path.length - 1];
    const parent = parentPath.length ? doc.getIn(parentPath, true) : doc.contents;
    const where = parentPath.length ? `"${parentPath.join('.')}"` : 'the top level';
    if (!isMap(parent) && !isSeq(parent))
      throw new UserError(
        `--set ${o.key}: the config has no ${where} to set "${last}" in` +
          (parent === undefined ? '' : ` (${where} is a single value)`) +
          '. --set changes keys of the config the job ran with, or adds a key to an existing mapping.',
        'BadSet',
      );
    const existing = doc.getIn(o.path, true) as unknown;
    const before: unknown = doc.getIn(o.path);
    if (isSeq(parent) && (typeof last !== 'number' || existing === undefined))
      throw new UserError(
        `--set ${o.key}: ${where} is a list of ${parent.items.length}; set one of its items by index (0–${parent.items.length - 1})`,
        'BadSet',
      );
    if (o.adds && existing !== undefined)
      throw new UserError(
        `--add ${o.key}: the config already has "${o.key}"; change it with --set ${o.key}=…`,
        'BadSet',
      );
    if (existing === undefined && isMap(parent) && !o.adds) {
      const siblings = parent.items.map((p) => String(isScalar(p.key) ? p.key.value : p.key));
      const guess = didYouMean(String(last), siblings);
      if (guess !== undefined && guess !== String(last))
        throw new UserError(
          `--set ${o.key}: the config has no "${last}" at ${where}; "${last}" is a likely misspelling of "${guess}" ` +
            `(did you mean --set ${[...parentPath, guess].join('.')}=…? If "${last}" is a new key, add it with --add ${o.key}=…)`,
          'BadSet',
        );
    }
    if (isJobPath(before) || isJobPath(o.value))
      throw new UserError(
        `--set ${o.key}: ${isJobPath(before) ? `the value ${JSON.stringify(before)}` : `${JSON.stringify(o.value)}`} names a path inside the job ` +
          `(${CONTAINER.root}/…), which the launcher mounted for the job's inputs; a rerun cannot move it: submit the config instead`,
        'BadSet',
      );
    if (before !== undefined && before !== null && typeof before === 'object')
      throw new UserError(
        `--set ${o.key}: "${o.key}" is a ${Array.isArray(before) ? 'list' : 'mapping'} in the config; --set changes single values (e.g. ${o.key}.<key>=…)`,
        'BadSet',
      );
    current =
      isScalar(existing) && existing.range
        ? splice(current, existing, o.value)
        : added(current, parent as YAMLMap, o);
    changes.push({ key: o.key, before, after: o.value });
  }
  checkEdited(text, current, overrides);
  return { text: current, changes };
}

/**
 * The edited file must read as the original with exactly the overrides set: an edit in place that broke
 * the YAML, or changed anything else, is refused before anything is written (not found by the job).
 */
function checkEdited(original: string, edited: string, overrides: readonly ConfigOverride[]): void {
  const expected = parseDocument(original);
  for (const o of overrides) expected.setIn(o.path, o.value);
  const doc = parseDocument(edited);
  const same = doc.errors.length === 0 && JSON.stringify(doc.toJS()) === JSON.stringify(expected.toJS());
  if (!same)
    throw new UserError(
      `--set ${overrides.map((o) => o.key).join(', ')}: the config cannot be edited in place here` +
        (doc.errors.length ? ` (${doc.errors[0].message.split('\n')[0]})` : '') +
        '; nothing was created. Submit the config with the change instead.',
      'BadSet',
    );
}

/**
 * The scalar's own text replaced, the rest of the file (comments, layout, other floats) as it was. A
 * block scalar (`|-`) ends with its line break, which stays.
 */
function splice(text: string, node: Scalar, value: OverrideValue): string {
  const [start, end] = node.range!;
  const lineBreak = text.slice(start, end).endsWith('\n') ? '\n' : '';
  return `${text.slice(0, start)}${overrideLiteral(value)}${lineBreak}${text.slice(end)}`;
}

/**
 * A new key under an existing block mapping: one line after its last entry, at its entries' indentation
 * (re-printing the whole document would rewrite every float, and PyYAML reads `1e-6` as a string).
 */
function added(text: string, parent: YAMLMap, o: ConfigOverride): string {
  if (parent.flow || !parent.range || parent.items.length === 0)
    throw new UserError(
      `--set ${o.key}: its mapping is written inline ({…}) in the config; a rerun adds keys only to block mappings: submit the config instead`,
      'BadSet',
    );
  const [start, end] = parent.range;
  const column = start - (text.lastIndexOf('\n', start - 1) + 1);
  const key = String(o.path[o.path.length - 1]);
  const keyText = overrideLiteral(key) === key ? key : JSON.stringify(key);
  const line = `${' '.repeat(column)}${keyText}: ${overrideLiteral(o.value)}\n`;
  const before = text.slice(0, end);
  return `${before}${before.endsWith('\n') ? '' : '\n'}${line}${text.slice(end)}`;
}
