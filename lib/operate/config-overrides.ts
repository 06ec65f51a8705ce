/**
 * `rlvr rerun --set key=value`: changes to the config the trainer reads (`resolved-config.yaml`), by
 * dotted path, each value a YAML scalar. The file is edited in place (the YAML document's own node
 * ranges), so every other line stays as the launcher wrote it. Pure.
 */
import { isMap, isScalar, isSeq, parse, parseDocument, visit, type Scalar, type YAMLMap } from 'yaml';
import { didYouMean, formatTrainerFloat, isPyyamlFloatTrap, pyyamlMisreads } from '../config';
import { UserError } from '../errors';
import { CONTAINER } from '../layout';

/** A bigint: an integer beyond 2^53, kept exact (PyYAML reads integers of any size). */
export type OverrideValue = string | number | bigint | boolean | null;

export interface ConfigOverride {
  /** As given: `run.seed`. */
  readonly key: string;
  readonly path: readonly (string | number)[];
  readonly value: OverrideValue;
  /** `--add`: a key the config does not have yet (no misspelling check; an existing key is refused). */
  readonly adds?: boolean;
  /** The value was meant as text: quoted, or given with `--set-string` (no type-change warning). */
  readonly text?: boolean;
}

export interface OverrideChange {
  readonly key: string;
  /** Undefined: the key was absent. */
  readonly before: unknown;
  readonly after: OverrideValue;
  /** The value changes the key's type (a boolean key given `yes`, which YAML 1.2 reads as text). */
  readonly typeChange?: string;
}

/** `run.seed=7` → the path and the value parsed as a YAML scalar (so 7 is a number, true a boolean). */
export function parseSetFlag(
  flag: string,
  options: { readonly adds?: boolean; readonly asString?: boolean } = {},
): ConfigOverride {
  const name = options.adds ? '--add' : options.asString ? '--set-string' : '--set';
  const eq = flag.indexOf('=');
  const key = eq < 0 ? '' : flag.slice(0, eq).trim();
  if (eq < 0 || key === '')
    throw new UserError(`${name} ${flag}: expected key=value, e.g. ${name} run.seed=7`, 'BadSet');
  const segments = key.split('.');
  if (segments.some((s) => s === ''))
    throw new UserError(`--set ${flag}: "${key}" has an empty key between dots`, 'BadSet');
  const text = flag.slice(eq + 1);
  if (options.asString) return { key, path: pathOf(segments), value: text, text: true };
  let value: unknown;
  try {
    value = safeIntegers(parse(text, { intAsBigInt: true }));
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
    path: pathOf(segments),
    value: value as OverrideValue,
    ...(options.adds ? { adds: true } : {}),
    ...(/^\s*["']/.test(text) ? { text: true } : {}),
  };
}

function pathOf(segments: readonly string[]): (string | number)[] {
  return segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** The kind of a config value as the trainer's Python sees it (ints and floats are both numbers here). */
function kindOf(value: unknown): string | undefined {
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'number' || typeof value === 'bigint') return 'a number';
  if (typeof value === 'string') return 'a string';
  return undefined;
}

/**
 * Why a value changes its key's type, for a warning: the config had a boolean and `--set` gave `yes`
 * (YAML 1.2 text), or a number and a date. Text meant as text (quoted, `--set-string`) says nothing.
 */
function typeChangeOf(o: ConfigOverride, before: unknown): string | undefined {
  const was = kindOf(before);
  const now = kindOf(o.value);
  if (o.text || was === undefined || now === undefined || was === now) return undefined;
  return (
    `--set ${o.key}: the config has ${was} there (${shownValue(before)}) and this makes it ${now} (${shownValue(o.value)}); ` +
    (now === 'a string'
      ? `if ${was === 'a boolean' ? 'true/false' : 'a number'} was meant, write it so; if the text is meant, quote it or use --set-string ${o.key}=…`
      : `quote the value or use --set-string ${o.key}=… for text`)
  );
}

/** A YAML literal for a value: floats in the form PyYAML (the trainer's reader) reads as floats too. */
export function overrideLiteral(value: OverrideValue): string {
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : formatTrainerFloat(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  // A plain string stays plain when it reads back as the same string, in YAML 1.2 and in the YAML 1.1
  // the trainer's PyYAML reads (where `yes`, `off`, `1_000`, `1:30` and dates are not strings); else
  // double-quoted with escapes, which both read back alike (a line break as \n, so one line always).
  return isPlainScalar(value) ? value : JSON.stringify(value);
}

function isPlainScalar(value: string): boolean {
  if (/[\r\n]|[#:]\s|^\s|\s$|^[-?]/.test(value) || pyyamlMisreads(value)) return false;
  try {
    return parse(value) === value;
  } catch {
    return false; // not a YAML scalar on its own (e.g. it starts a flow collection)
  }
}

/** Integers read as bigints (`intAsBigInt`) back to numbers where a number holds them exactly. */
function safeIntegers(value: unknown): unknown {
  if (typeof value === 'bigint')
    return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : value;
  if (Array.isArray(value)) return value.map(safeIntegers);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, safeIntegers(v)]));
  return value;
}

/** A value as text for comparing, an integer beyond 2^53 by all its digits. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? 'undefined';
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
    const typeChange = typeChangeOf(o, before);
    changes.push({ key: o.key, before, after: o.value, ...(typeChange ? { typeChange } : {}) });
  }
  checkEdited(text, current, overrides);
  return { text: current, changes };
}

/**
 * The edited file must read as the original with exactly the overrides set: an edit in place that broke
 * the YAML, or changed anything else, is refused before anything is written (not found by the job).
 */
function checkEdited(original: string, edited: string, overrides: readonly ConfigOverride[]): void {
  const expected = parseDocument(original, { intAsBigInt: true });
  for (const o of overrides) expected.setIn(o.path, o.value);
  const doc = parseDocument(edited, { intAsBigInt: true });
  const same =
    doc.errors.length === 0 &&
    canonical(safeIntegers(doc.toJS())) === canonical(safeIntegers(expected.toJS()));
  if (!same)
    throw new UserError(
      `--set ${overrides.map((o) => o.key).join(', ')}: the config cannot be edited in place here` +
        (doc.errors.length ? ` (${doc.errors[0].message.split('\n')[0]})` : '') +
        '; nothing was created. Submit the config with the change instead.',
      'BadSet',
    );
  checkTrainerReads(original, edited, overrides);
}

/** `--set run.name` or `--add run.x`, as the override was given. */
function flagOf(o: ConfigOverride): string {
  return `${o.adds ? '--add' : '--set'} ${o.key}`;
}

/** A value for a message: every character outside printable ASCII escaped, so an invisible one shows. */
function shownValue(value: unknown): string {
  const text = value === undefined ? 'nothing' : canonical(value);
  return text.replace(/[^\x20-\x7e]/gu, (c) =>
    c.length > 1 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The edited config as the trainer reads it: with PyYAML, which the `yaml` package (YAML 1.2) does
 * not read alike, so an edit that reads back right here can reach the job as another value, or as a
 * file the trainer cannot load. Refused (exit 2): a file PyYAML would not load, or one that it reads as
 * anything but the original with exactly the overrides set. The original is read the same way, so only
 * what the edit wrote is judged.
 */
function checkTrainerReads(original: string, edited: string, overrides: readonly ConfigOverride[]): void {
  const before = readAsTrainer(original);
  // The original as the job read it is the reference; a file this reading cannot follow is left as it was.
  if ('error' in before) return;
  const after = readAsTrainer(edited);
  const keys = overrides.map(flagOf).join(', ');
  if ('error' in after)
    throw new UserError(
      `${keys}: the trainer's YAML reader (PyYAML) could not load the edited config: ${after.error}. ` +
        'Nothing was created; write the value another way, or submit the config with the change instead.',
      'BadSet',
    );
  const expected = structuredClone(before.value);
  for (const o of overrides) setPath(expected, o.path, o.value);
  if (canonical(after.value) === canonical(expected)) return;
  const wrong = overrides.find((o) => canonical(valueAt(after.value, o.path)) !== canonical(o.value));
  throw new UserError(
    wrong
      ? `${flagOf(wrong)}: the trainer's YAML reader (PyYAML) reads it as ${shownValue(valueAt(after.value, wrong.path))}, ` +
          `not ${shownValue(wrong.value)}. Nothing was created; write the value another way, or submit the config with the change instead.`
      : `${keys}: the trainer's YAML reader (PyYAML) reads the edited config differently from the original with these changes. ` +
          'Nothing was created; submit the config with the change instead.',
    'BadSet',
  );
}

function valueAt(root: unknown, keyPath: readonly (string | number)[]): unknown {
  let node = root;
  for (const seg of keyPath) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return node;
}

function setPath(root: unknown, keyPath: readonly (string | number)[], value: OverrideValue): void {
  const parent = valueAt(root, keyPath.slice(0, -1));
  if (parent !== null && typeof parent === 'object')
    (parent as Record<string | number, unknown>)[keyPath[keyPath.length - 1]] = value;
}

/** Characters PyYAML's reader accepts in a stream (its `NON_PRINTABLE` is every other one). */
const PYYAML_PRINTABLE = /^[\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;
/** Line breaks of YAML 1.1 (PyYAML) that YAML 1.2 reads as ordinary characters. */
const PYYAML_ONLY_BREAKS = /[\x85\u2028\u2029]/g;
/** PyYAML's longest implicit (simple) key. */
const PYYAML_SIMPLE_KEY_MAX = 1024;

/**
 * The value PyYAML (YAML 1.1, safe_load) makes of a text, as far as it reads differently from YAML 1.2:
 * the characters its reader refuses, its extra line breaks, YAML 1.1 scalars and merge keys, floats
 * without a "." and y/n (strings there), the `=` value key it has no constructor for, and keys too long to be
 * implicit. The text is taken as stored (UTF-8: a lone surrogate becomes U+FFFD).
 */
export function readAsTrainer(text: string): { value: unknown } | { error: string } {
  const stored = Buffer.from(text, 'utf8').toString('utf8');
  if (!PYYAML_PRINTABLE.test(stored)) {
    const at = [...stored].findIndex((c) => !PYYAML_PRINTABLE.test(c));
    const c = [...stored][at];
    const line = stored.slice(0, stored.indexOf(c)).split('\n').length;
    return {
      error: `it refuses the character U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (line ${line})`,
    };
  }
  const doc = parseDocument(stored.replace(PYYAML_ONLY_BREAKS, '\n'), {
    version: '1.1',
    merge: true,
    uniqueKeys: false,
    keepSourceTokens: true,
    intAsBigInt: true,
  });
  if (doc.errors.length) return { error: doc.errors[0].message.split('\n')[0] };
  let error: string | undefined;
  visit(doc, {
    Pair: (_, pair) => {
      const source = isScalar(pair.key) ? (pair.key.srcToken as { source?: string } | undefined)?.source : '';
      if (source !== undefined && source.length > PYYAML_SIMPLE_KEY_MAX) {
        error = `a key of ${source.length} characters is longer than an implicit key may be (${PYYAML_SIMPLE_KEY_MAX})`;
        return visit.BREAK;
      }
      return undefined;
    },
    Scalar: (_, node) => {
      if (node.type !== 'PLAIN') return undefined;
      const source = (node.srcToken as { source?: string } | undefined)?.source;
      if (source === '=') {
        error = 'a plain "=" is the YAML 1.1 value key, which it has no constructor for';
        return visit.BREAK;
      }
      // YAML 1.1 as the `yaml` package reads it also takes y/n for booleans; PyYAML does not.
      if (source !== undefined && (isPyyamlFloatTrap(source) || /^[yYnN]$/.test(source))) node.value = source;
      return undefined;
    },
  });
  if (error) return { error };
  try {
    return { value: safeIntegers(doc.toJS()) };
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0] };
  }
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
