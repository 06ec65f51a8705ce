/**
 * Writes to the process environment in Python source, read statically: `os.environ[K] = v`,
 * `os.environ.setdefault(K, v)`, `os.environ.update(...)`, `os.putenv`, `del os.environ[K]`,
 * `os.environ.pop(K)`, `os.unsetenv`. Only keys written as string literals are found (a key computed at
 * run time cannot be told); each write says whether it runs when its module is imported (not inside a
 * function body: a class body runs at import too).
 */
export interface EnvironmentWrite {
  readonly file: string;
  readonly line: number;
  /** Where the write starts on its line (1-based). */
  readonly column: number;
  readonly variable: string;
  /**
   * `assign`: the value is replaced whatever it was; `default`: only when unset (`setdefault`, or
   * `os.environ[K] = os.environ.get(K, …)`); `unset`: removed.
   */
  readonly kind: 'assign' | 'default' | 'unset';
  /** The value, when the source gives it as a string literal. */
  readonly value?: string;
  /** The right-hand side as written (a literal keeps its quotes). */
  readonly expression: string;
  readonly atImport: boolean;
}

const ENVIRON = String.raw`(?:\bos\.environ|(?<![\w.])environ)`;
const STRING = String.raw`(?:[rRbBuU]?"(?:[^"\\]|\\.)*"|[rRbBuU]?'(?:[^'\\]|\\.)*')`;
const FORMS: readonly { readonly pattern: RegExp; readonly kind: EnvironmentWrite['kind'] }[] = [
  { pattern: new RegExp(String.raw`^del\s+${ENVIRON}\[\s*(${STRING})\s*\]`), kind: 'unset' },
  {
    pattern: new RegExp(String.raw`${ENVIRON}\[\s*(${STRING})\s*\]\s*=(?!=)\s*(.*)$`),
    kind: 'assign',
  },
  {
    pattern: new RegExp(String.raw`${ENVIRON}\.setdefault\(\s*(${STRING})\s*,\s*(.*?)\)?\s*$`),
    kind: 'default',
  },
  { pattern: new RegExp(String.raw`\bos\.putenv\(\s*(${STRING})\s*,\s*(.*?)\)?\s*$`), kind: 'assign' },
  { pattern: new RegExp(String.raw`${ENVIRON}\.pop\(\s*(${STRING})`), kind: 'unset' },
  { pattern: new RegExp(String.raw`\bos\.unsetenv\(\s*(${STRING})`), kind: 'unset' },
];
const UPDATE = new RegExp(String.raw`${ENVIRON}\.update\((.*)$`);

/** A Python string literal's text (escapes as Python reads the common ones), or undefined for any other expression. */
export function pythonStringLiteral(expression: string): string | undefined {
  const m = new RegExp(`^${STRING}$`).exec(expression.trim());
  if (!m) return undefined;
  const text = expression.trim();
  const raw = /^[rR]/.test(text);
  const body = text.replace(/^[rRbBuU]?/, '').slice(1, -1);
  if (raw) return body;
  return body.replace(
    /\\(.)/g,
    (_, c: string) => ({ n: '\n', t: '\t', '\\': '\\', "'": "'", '"': '"' })[c] ?? `\\${c}`,
  );
}

/** The line without its comment (a `#` inside a string literal stays). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

/** Opening minus closing brackets outside string literals. */
function bracketBalance(code: string): number {
  let quote: string | undefined;
  let balance = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if ('([{'.includes(c)) balance++;
    else if (')]}'.includes(c)) balance--;
  }
  return balance;
}

/** `os.environ.get("K", …)`, `os.getenv("K", …)` or `os.environ.get("K") or …` of the same key: a default. */
function readsItself(expression: string, variable: string): boolean {
  const m = new RegExp(String.raw`^(?:os\.environ\.get|os\.getenv|environ\.get)\(\s*(${STRING})`).exec(
    expression.trim(),
  );
  return Boolean(m && pythonStringLiteral(m[1]) === variable);
}

/**
 * Every write to the environment in `text` whose key is a string literal. Lines inside triple-quoted
 * strings are passed over; a `def` opens a scope that runs only when called, until a line indented no
 * deeper than the `def` itself.
 */
export function environmentWrites(file: string, text: string): EnvironmentWrite[] {
  const out: EnvironmentWrite[] = [];
  const defs: number[] = [];
  let inString: string | undefined;
  // Open brackets carried from earlier lines: their lines continue a statement (a def's parameters
  // closing at the def's own indentation), never start one.
  let depth = 0;
  text.split('\n').forEach((raw, i) => {
    if (inString) {
      if (raw.includes(inString)) inString = undefined;
      return;
    }
    const code = withoutComment(raw);
    if (!code.trim()) return;
    const continued = depth > 0;
    depth = Math.max(0, depth + bracketBalance(code));
    if (continued) return;
    const indent = /^[ \t]*/.exec(code)![0].replace(/\t/g, '        ').length;
    while (defs.length > 0 && indent <= defs[defs.length - 1]) defs.pop();
    const triple = /("""|''')/.exec(code);
    if (triple && code.split(triple[1]).length % 2 === 0) inString = triple[1];
    if (/^\s*(async\s+)?def\s/.test(code)) {
      defs.push(indent);
      return;
    }
    const line = code.trim();
    const lead = code.length - code.trimStart().length;
    const atImport = defs.length === 0;
    const push = (variable: string, kind: EnvironmentWrite['kind'], expression: string, at: number) => {
      const value = kind === 'unset' ? undefined : pythonStringLiteral(expression);
      const isDefault = kind === 'assign' && readsItself(expression, variable);
      out.push({
        file,
        line: i + 1,
        column: lead + at + 1,
        variable,
        kind: isDefault ? 'default' : kind,
        ...(value !== undefined ? { value } : {}),
        expression: expression.trim(),
        atImport,
      });
    };
    for (const form of FORMS) {
      const m = form.pattern.exec(line);
      if (!m) continue;
      const variable = pythonStringLiteral(m[1]);
      if (variable !== undefined) push(variable, form.kind, m[2] ?? '', m.index);
      return;
    }
    const update = UPDATE.exec(line);
    if (update) {
      const args = update[1];
      for (const m of args.matchAll(new RegExp(String.raw`(${STRING})\s*:\s*(${STRING}|[^,}]+)`, 'g'))) {
        const variable = pythonStringLiteral(m[1]);
        if (variable !== undefined) push(variable, 'assign', m[2], update.index);
      }
      for (const m of args.matchAll(
        new RegExp(String.raw`(?:^|[(,]\s*)([A-Za-z_]\w*)\s*=(?!=)\s*(${STRING}|[^,)]+)`, 'g'),
      ))
        push(m[1], 'assign', m[2], update.index);
    }
  });
  return out;
}
