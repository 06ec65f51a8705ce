import * as fs from 'node:fs';
import {
  Document,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Node,
} from 'yaml';
import { ProblemsError, UserError, type Problem, type SourceLocation } from '../errors';

export type KeyPath = readonly (string | number)[];

/** A YAML file parsed with positions, so every problem can name file:line:column. */
export class YamlFile {
  /** Keys written twice with the same value (the trainer's reader keeps the last: harmless). */
  readonly duplicateKeyWarnings: Problem[] = [];

  private constructor(
    readonly path: string,
    readonly text: string,
    readonly document: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  /**
   * Reads and parses a file; YAML syntax errors (all of them) become a ProblemsError. A file over
   * `YAML_LIMITS.maxBytes`, bytes that are not UTF-8 and control characters are bad input too.
   */
  static read(path: string, displayPath = path): YamlFile {
    return YamlFile.parse(decodeUtf8(readLimited(path, displayPath), displayPath), displayPath);
  }

  static parse(text: string, displayPath: string): YamlFile {
    checkText(text, displayPath);
    const lines = new LineCounter();
    const document = parseDocument(text, {
      lineCounter: lines,
      prettyErrors: false,
      // Duplicate keys are checked below: PyYAML, the trainer's reader, keeps the last one.
      uniqueKeys: false,
      keepSourceTokens: true,
    });
    const file = new YamlFile(displayPath, text, document, lines);
    if (document.errors.length > 0) {
      // After the first syntax error the parser's further errors are mostly its consequences:
      // report the first, and say how many follow.
      const [first, ...rest] = document.errors;
      throw new ProblemsError(`${displayPath} is not valid YAML`, [
        {
          location: file.locationOfOffset(first.pos[0]),
          where: 'yaml',
          message: first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''),
          hint: `Fix the YAML syntax (indentation, brackets, quoting, duplicate keys).${
            rest.length > 0 ? ` ${rest.length} more error(s) after it may follow from this one.` : ''
          }`,
        },
      ]);
    }
    file.checkAliases();
    file.checkDuplicateKeys();
    return file;
  }

  /**
   * Aliases may not expand past `YAML_LIMITS.maxAliasNodes` values in all (a "billion laughs" file
   * expands to 10^9 from a few lines): the alias where the total passes the limit is reported.
   */
  private checkAliases(): void {
    const sizes = new Map<unknown, number>();
    const sizeOf = (node: unknown): number => {
      if (isAlias(node)) return sizeOf(node.resolve(this.document));
      if (!isMap(node) && !isSeq(node) && !isPair(node)) return 1;
      const known = sizes.get(node);
      if (known !== undefined) return known;
      sizes.set(node, Infinity); // an alias inside the node it names expands forever
      const items: unknown[] = isPair(node) ? [node.key, node.value] : node.items;
      const size = items.reduce<number>((sum, item) => sum + sizeOf(item), 1);
      sizes.set(node, size);
      return size;
    };
    let total = 0;
    let over: Node | undefined;
    visit(this.document, {
      Alias: (_, alias) => {
        total += sizeOf(alias);
        if (total <= YAML_LIMITS.maxAliasNodes) return undefined;
        over = alias;
        return visit.BREAK;
      },
    });
    if (!over) return;
    throw new ProblemsError(`${this.path}: its YAML aliases expand too far`, [
      {
        location: this.locationOfOffset(rangeStart(over) ?? 0),
        where: 'yaml',
        message: `by this alias, the aliases expand to more than ${YAML_LIMITS.maxAliasNodes} values (a "billion laughs" file?)`,
        hint: 'Write the values out, or nest fewer aliases in aliases.',
      },
    ]);
  }

  /** A key written twice: the same value is a warning, a different one an error (one is ignored). */
  private checkDuplicateKeys(): void {
    const errors: Problem[] = [];
    const walk = (node: unknown, at: KeyPath) => {
      if (isMap(node)) {
        const seen = new Map<string, unknown>();
        for (const pair of node.items) {
          if (!isScalar(pair.key)) continue;
          const key = String(pair.key.value);
          const value = isNode(pair.value) ? (pair.value as Node).toJSON() : pair.value;
          const where = this.locationOfOffset(rangeStart(pair.key) ?? 0);
          if (seen.has(key)) {
            const same = JSON.stringify(seen.get(key)) === JSON.stringify(value);
            const problem: Problem = {
              location: where,
              where: formatKeyPath([...at, key]),
              message: same
                ? `"${key}" is written twice with the same value`
                : `"${key}" is written twice with different values: the trainer's YAML reader keeps this one and ignores the first`,
              hint: 'Keep one of them.',
            };
            (same ? this.duplicateKeyWarnings : errors).push(problem);
          } else {
            seen.set(key, value);
          }
          walk(pair.value, [...at, key]);
        }
      } else if (isSeq(node)) {
        node.items.forEach((item, i) => walk(item, [...at, i]));
      }
    };
    walk(this.document.contents, []);
    if (errors.length > 0) throw new ProblemsError(`${this.path} is not valid YAML`, errors);
  }

  /** The plain JavaScript value of the document. */
  toJS(): unknown {
    // The aliases' expansion is bounded when parsing (checkAliases).
    return this.document.toJS({ maxAliasCount: -1 });
  }

  locationOfOffset(offset: number): SourceLocation {
    const { line, col } = this.lines.linePos(offset);
    return { file: this.path, line, column: col };
  }

  /**
   * The position of the value at `path`; for a missing key, the position of the nearest existing parent.
   * With `key: true`, the position of the key itself (for unknown-key errors).
   */
  locate(path: KeyPath, options: { key?: boolean } = {}): SourceLocation {
    let node: unknown = this.document.contents;
    let best = rangeStart(node) ?? 0;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i];
      let value: unknown;
      let keyNode: unknown;
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
        );
        if (pair) {
          value = pair.value;
          keyNode = pair.key;
        }
      } else if (isSeq(node) && typeof segment === 'number') {
        value = node.items[segment];
      }
      if (value === undefined && keyNode === undefined) break;
      // A block map or list value starts on the next line: point at its key instead.
      const isCollection = isMap(value) || isSeq(value);
      const wantKey =
        i === path.length - 1 && (options.key === true || isCollection) && keyNode !== undefined;
      best = rangeStart(wantKey ? keyNode : (value ?? keyNode)) ?? best;
      node = value;
    }
    return this.locationOfOffset(best);
  }

  /** Every plain scalar whose source text matches `test`, with its key path. */
  scalarsWhere(test: (source: string) => boolean): { path: KeyPath; source: string }[] {
    const out: { path: KeyPath; source: string }[] = [];
    const walk = (node: unknown, at: KeyPath) => {
      if (isMap(node)) {
        for (const pair of node.items)
          if (isScalar(pair.key)) walk(pair.value, [...at, String(pair.key.value)]);
      } else if (isSeq(node)) {
        node.items.forEach((item, i) => walk(item, [...at, i]));
      } else if (isScalar(node) && node.type === 'PLAIN') {
        const source = (node.srcToken as { source?: string } | undefined)?.source;
        if (source !== undefined && test(source)) out.push({ path: at, source });
      }
    };
    walk(this.document.contents, []);
    return out;
  }

  problem(path: KeyPath, message: string, hint?: string, options: { key?: boolean } = {}): Problem {
    return { location: this.locate(path, options), where: formatKeyPath(path), message, hint };
  }
}

/** What the launcher reads as YAML at most: any config, and `rlvr-trainers.yaml`. */
export const YAML_LIMITS = {
  /** A config is a few KiB; one over 1 MiB is a mistake (data belongs in a dataset). */
  maxBytes: 1024 * 1024,
  /** Values all aliases expand to together. */
  maxAliasNodes: 10_000,
} as const;

/** 1-based line and column (in UTF-16 units, as the parser counts) of an offset into `text`. */
function positionOf(file: string, text: string, offset: number): SourceLocation {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { file, line: before.split('\n').length, column: offset - lineStart + 1 };
}

function tooLarge(file: string, head: Uint8Array, size: number): ProblemsError {
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(head.subarray(0, YAML_LIMITS.maxBytes));
  const mib = (size / 1024 / 1024).toFixed(1);
  return new ProblemsError(`${file} is too large for a config`, [
    {
      location: positionOf(file, text, text.length),
      where: 'file',
      message: `the file is ${mib} MiB: it passes the limit of ${YAML_LIMITS.maxBytes / 1024 / 1024} MiB here`,
      hint: 'A config is a few KiB: check that this is the file you meant (data belongs in a dataset).',
    },
  ]);
}

/** The file's bytes, reading at most one byte past the size limit (a 100 MB file is not read whole). */
function readLimited(path: string, displayPath: string): Buffer {
  let fd: number;
  try {
    // Never blocks: a FIFO (or a device) named as a config is refused below, not waited on.
    fd = fs.openSync(path, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw notReadable(err, displayPath);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile())
      throw new UserError(
        `${displayPath}: not a regular file (${st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : 'a device or socket'}): name a YAML file.`,
        'ConfigNotReadable',
      );
    const size = st.size;
    const buffer = Buffer.alloc(YAML_LIMITS.maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === buffer.length) throw tooLarge(displayPath, buffer, Math.max(size, length));
    }
    return buffer.subarray(0, length);
  } catch (err) {
    if (err instanceof ProblemsError || err instanceof UserError) throw err;
    throw notReadable(err, displayPath);
  } finally {
    fs.closeSync(fd);
  }
}

function notReadable(err: unknown, displayPath: string): UserError {
  const code = (err as NodeJS.ErrnoException).code;
  return new UserError(
    code === 'ENOENT'
      ? `${displayPath}: no such file. Check the path (it is relative to the current directory).`
      : `${displayPath}: cannot read: ${(err as Error).message}`,
    'ConfigNotReadable',
  );
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i];
    if (lead < 0x80) {
      i++;
      continue;
    }
    const more =
      lead >= 0xc2 && lead <= 0xdf
        ? 1
        : lead >= 0xe0 && lead <= 0xef
          ? 2
          : lead >= 0xf0 && lead <= 0xf4
            ? 3
            : 0;
    if (more === 0 || i + more >= bytes.length) return i;
    let code = lead & (0x3f >> more);
    for (let k = 1; k <= more; k++) {
      if ((bytes[i + k] & 0xc0) !== 0x80) return i;
      code = (code << 6) | (bytes[i + k] & 0x3f);
    }
    const min = [0, 0x80, 0x800, 0x10000][more];
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return i;
    i += more + 1;
  }
  return -1;
}

/** The bytes as text; bytes that are not UTF-8 are bad input at their line and column (never U+FFFD). */
function decodeUtf8(bytes: Uint8Array, displayPath: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const at = Math.max(0, firstInvalidUtf8(bytes));
    const before = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(0, at));
    const shown = Array.from(bytes.subarray(at, at + 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new ProblemsError(`${displayPath} is not UTF-8 text`, [
      {
        location: positionOf(displayPath, before, before.length),
        where: 'file',
        message: `bytes that are not UTF-8 (${shown}…)`,
        hint: 'Save the file as UTF-8; a config is text.',
      },
    ]);
  }
}

/** The offset of the first C0 control character but tab, line feed and carriage return (or DEL), or -1. */
function firstControl(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f) return i;
  }
  return -1;
}

/** The text's size, and no control characters (a NUL, say) but tab, line feed and carriage return. */
function checkText(text: string, displayPath: string): void {
  if (text.length > YAML_LIMITS.maxBytes / 4 && Buffer.byteLength(text) > YAML_LIMITS.maxBytes) {
    const bytes = Buffer.from(text);
    throw tooLarge(displayPath, bytes, bytes.length);
  }
  const at = firstControl(text);
  if (at < 0) return;
  const code = text.charCodeAt(at);
  const name = code === 0 ? 'a NUL character' : 'a control character';
  throw new ProblemsError(`${displayPath} is not a text file YAML allows`, [
    {
      location: positionOf(displayPath, text, at),
      where: 'file',
      message: `${name} (U+${code.toString(16).toUpperCase().padStart(4, '0')})`,
      hint: 'Remove it: a config is text (was a binary file named, or the file damaged?).',
    },
  ]);
}

function rangeStart(node: unknown): number | undefined {
  if (isNode(node) && (node as Node).range) return (node as Node).range![0];
  return undefined;
}

/** `roles[0].config.optimizer.lr` */
export function formatKeyPath(path: KeyPath): string {
  if (path.length === 0) return '(top level)';
  return path.reduce<string>((acc, seg) => {
    if (typeof seg === 'number') return `${acc}[${seg}]`;
    return acc === '' ? seg : `${acc}.${seg}`;
  }, '');
}
