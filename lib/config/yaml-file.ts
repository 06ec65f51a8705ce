import * as fs from 'node:fs';
import {
  Document,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
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

  /** Reads and parses a file; YAML syntax errors (all of them) become a ProblemsError. */
  static read(path: string, displayPath = path): YamlFile {
    let text: string;
    try {
      text = fs.readFileSync(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UserError(
        code === 'ENOENT'
          ? `${displayPath}: no such file. Check the path (it is relative to the current directory).`
          : `${displayPath}: cannot read: ${(err as Error).message}`,
        'ConfigNotReadable',
      );
    }
    return YamlFile.parse(text, displayPath);
  }

  static parse(text: string, displayPath: string): YamlFile {
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
    file.checkDuplicateKeys();
    return file;
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
    return this.document.toJS({ maxAliasCount: 100 });
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
