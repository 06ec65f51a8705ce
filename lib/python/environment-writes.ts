/**
 * Writes to the process environment in Python source, read statically: `os.environ[K] = v` (chained
 * too), `os.environ.setdefault(K, v)`, `os.environ.update(...)` and `|=`, `os.putenv`, `del
 * os.environ[K]`, `os.environ.pop(K)`, `os.unsetenv`, `__setitem__`/`__delitem__`, through `import os
 * as X` and `from os import environ as E` too. Only keys written as string literals are found (a key
 * computed at run time cannot be told). The source is read as Python's tokenizer would split it: strings
 * (triple-quoted ones across lines) and comments are never code, a statement continues across open
 * brackets and backslashes, `;` and a compound statement's `:` start another. Each write says whether it
 * runs when its module is imported (not in a function body; a class body runs at import) and whether it
 * is under `if __name__ == "__main__":` (it runs only when the file is the script run). Linear in the
 * size of the source.
 */
export interface EnvironmentWrite {
  readonly file: string;
  readonly line: number;
  /** Where the statement starts on its line (1-based). */
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
  /** Through `os.putenv`/`os.unsetenv`: the C environment only, not `os.environ`. */
  readonly putenv?: true;
  readonly atImport: boolean;
  /** Under `if __name__ == "__main__":`: runs only when this file is the script Python runs. */
  readonly inMain: boolean;
}

/** One statement as Python would see it: its text with strings kept whole, where it starts. */
interface Statement {
  readonly line: number;
  readonly column: number;
  readonly indent: number;
  readonly text: string;
}

const STRING_SOURCE = String.raw`(?:[rRbBuUfF]{0,2}"(?:[^"\\]|\\.)*"|[rRbBuUfF]{0,2}'(?:[^'\\]|\\.)*')`;
const STRING_ONLY = new RegExp(`^${STRING_SOURCE}$`, 's');
const STRING_ANY = new RegExp(STRING_SOURCE, 'gs');

/** A Python string literal's text (the common escapes as Python reads them), or undefined for any other expression. */
export function pythonStringLiteral(expression: string): string | undefined {
  let text = expression.trim();
  while (text.startsWith('(') && text.endsWith(')') && closingOf(text, 0) === text.length - 1)
    text = text.slice(1, -1).trim();
  if (!STRING_ONLY.test(text)) return undefined;
  const prefix = /^[rRbBuUfF]*/.exec(text)![0].toLowerCase();
  const body = text.slice(prefix.length + 1, -1);
  // An f-string with a replacement field is computed, not a literal.
  if (prefix.includes('f') && /(^|[^{])\{(?!\{)/.test(body)) return undefined;
  if (prefix.includes('r')) return body;
  const escapes: Record<string, string> = { n: '\n', t: '\t', '\\': '\\', "'": "'", '"': '"' };
  return body.replace(/\\(.)/gs, (_, c: string) => escapes[c] ?? `\\${c}`);
}

/** The index of the bracket closing the one at `open`, or -1 (strings skipped). */
function closingOf(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") i = stringEnd(text, i) - 1;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c) && --depth === 0) return i;
  }
  return -1;
}

/** The index after the string literal that starts with the quote at `i` (single-line form). */
function stringEnd(text: string, i: number): number {
  const q = text[i];
  const triple = text.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  for (let j = i + close.length; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text.startsWith(close, j)) return j + close.length;
  }
  return text.length;
}

/** The statements of a file, comments gone, strings whole (a newline inside one written `\n`). */
function statements(text: string): Statement[] {
  const out: Statement[] = [];
  let current = '';
  let line = 1;
  let start: { line: number; column: number; indent: number } | undefined;
  let depth = 0;
  let atLineStart = true;
  let indent = 0;
  const end = () => {
    if (start && current.trim()) out.push({ ...start, text: current.trim() });
    current = '';
    start = undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (atLineStart) {
      if (c === ' ' || c === '\t') {
        indent += c === '\t' ? 8 - (indent % 8) : 1;
        continue;
      }
      atLineStart = false;
    }
    if (c === '\n') {
      line++;
      atLineStart = true;
      if (depth > 0) {
        current += ' ';
        indent = 0;
        continue;
      }
      end();
      indent = 0;
      continue;
    }
    if (!start && c !== '\r' && c !== '\\') start = { line, column: indent + 1, indent };
    if (c === '#') {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
      continue;
    }
    if (c === '\\' && (text[i + 1] === '\n' || (text[i + 1] === '\r' && text[i + 2] === '\n'))) {
      // An explicit continuation: the statement goes on on the next line.
      i += text[i + 1] === '\r' ? 2 : 1;
      line++;
      current += ' ';
      continue;
    }
    if (c === '"' || c === "'") {
      const stop = stringEnd(text, i);
      const literal = text.slice(i, stop);
      line += literal.split('\n').length - 1;
      current += literal.replace(/\r?\n/g, '\\n');
      i = stop - 1;
      continue;
    }
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
    current += c;
  }
  end();
  return out;
}

/** Each index of `text` at the top level: outside brackets and string literals. */
function* topLevel(text: string): Generator<number> {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") i = stringEnd(text, i) - 1;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (depth === 0) yield i;
  }
}

/** `text` cut at the given indices, each cut `width` characters wide. */
function cutAt(text: string, cuts: readonly number[], width: number): string[] {
  const parts: string[] = [];
  let from = 0;
  for (const at of cuts) {
    parts.push(text.slice(from, at));
    from = at + width;
  }
  return [...parts, text.slice(from)];
}

/** Splits at `sep` outside brackets and strings. */
function splitTop(text: string, sep: string): string[] {
  const cuts: number[] = [];
  for (const i of topLevel(text))
    if (text.startsWith(sep, i) && (cuts.length === 0 || i >= cuts[cuts.length - 1] + sep.length))
      cuts.push(i);
  return cutAt(text, cuts, sep.length);
}

/** `a = b = c` → ['a', 'b', 'c']: the plain `=` at the top level (not `==`, `<=`, `+=`, `:=`, keywords). */
function assignmentParts(text: string): string[] {
  const cuts: number[] = [];
  for (const i of topLevel(text))
    if (text[i] === '=' && text[i + 1] !== '=' && !'=!<>+-*/%&|^:@~'.includes(text[i - 1] ?? ''))
      cuts.push(i);
  return cutAt(text, cuts, 1).map((p) => p.trim());
}

/** The arguments of the call whose `(` is at `open`, split at the top level. */
function callArguments(text: string, open: number): string[] | undefined {
  const close = closingOf(text, open);
  if (close < 0) return undefined;
  const inner = text.slice(open + 1, close);
  return inner.trim() ? splitTop(inner, ',').map((a) => a.trim()) : [];
}

const COMPOUND = /^(?:if|elif|else|for|while|with|try|except|finally|async\s+(?:def|for|with)|def|class)\b/;
const MAIN_GUARD = /^if\s+__name__\s*==\s*(['"])__main__\1\s*:/;

/** The names the file gives `os` and `os.environ` by its imports so far. */
interface OsNames {
  readonly os: Set<string>;
  readonly environ: Set<string>;
}

/** Records one write found in a statement; `inLambda`: in a lambda's body, so not run where it stands. */
type RecordWrite = (
  variable: string | undefined,
  kind: EnvironmentWrite['kind'],
  expression: string,
  putenv?: boolean,
  inLambda?: boolean,
) => void;

/** Regular-expression sources for `os` and `os.environ` under the names the file gave them. */
interface OsPatterns {
  readonly os: string;
  readonly environ: string;
}

/**
 * Every write to the environment in `text` whose key is a string literal, with where it runs.
 */
export function environmentWrites(file: string, text: string): EnvironmentWrite[] {
  const out: EnvironmentWrite[] = [];
  const names: OsNames = { os: new Set(['os']), environ: new Set<string>() };
  /** Open blocks whose body does not run at import (a def) or runs only as the script (the main guard). */
  const blocks: { indent: number; kind: 'def' | 'main' }[] = [];

  const analyse = (s: Statement, body: string, inDef: boolean, inMain: boolean): void => {
    const head = COMPOUND.exec(body);
    if (head) {
      const colon = splitTop(body, ':');
      // A compound statement with its body on the same line: `if x: del os.environ["K"]`.
      if (colon.length > 1) {
        const rest = colon.slice(1).join(':').trim();
        const isDef = /^(async\s+)?def\b/.test(head[0]);
        if (rest)
          for (const part of splitTop(rest, ';'))
            analyse(s, part.trim(), inDef || isDef, inMain || MAIN_GUARD.test(body));
      }
      return;
    }
    if (readImport(body, names)) return;
    const patterns = patternsOf(names);
    simpleStatementWrites(body, patterns, writeRecorder(file, s, inDef, inMain, patterns, out));
  };

  for (const s of statements(text)) {
    while (blocks.length > 0 && s.indent <= blocks[blocks.length - 1].indent) blocks.pop();
    const inDef = blocks.some((b) => b.kind === 'def');
    const inMain = blocks.some((b) => b.kind === 'main');
    const colon = splitTop(s.text, ':');
    const opensBlock = COMPOUND.test(s.text) && colon.length > 1 && !colon.slice(1).join(':').trim();
    if (opensBlock && /^(async\s+)?def\b/.test(s.text)) blocks.push({ indent: s.indent, kind: 'def' });
    else if (opensBlock && MAIN_GUARD.test(s.text)) blocks.push({ indent: s.indent, kind: 'main' });
    for (const part of splitTop(s.text, ';')) analyse(s, part.trim(), inDef, inMain);
  }
  return out;
}

/**
 * `import os as X` or `from os import environ as E`: the name is kept in `names`. True when `body` is
 * an import of either form.
 */
function readImport(body: string, names: OsNames): boolean {
  const imported = /^import\s+(.+)$/.exec(body);
  if (imported) {
    for (const part of splitTop(imported[1], ',')) {
      const m = /^os(?:\s+as\s+(\w+))?$/.exec(part.trim());
      if (m) names.os.add(m[1] ?? 'os');
    }
    return true;
  }
  const fromOs = /^from\s+os\s+import\s+\(?(.+?)\)?$/.exec(body);
  if (fromOs) {
    for (const part of splitTop(fromOs[1], ',')) {
      const m = /^(environ|environb)(?:\s+as\s+(\w+))?$/.exec(part.trim());
      if (m) names.environ.add(m[2] ?? m[1]);
    }
    return true;
  }
  return false;
}

function patternsOf(names: OsNames): OsPatterns {
  const os = [...names.os].map((n) => n.replace(/\W/g, '')).join('|');
  const environ = `(?:(?<![\\w.])(?:${os})\\.environb?${names.environ.size ? `|(?<![\\w.])(?:${[...names.environ].join('|')})` : ''})`;
  return { os, environ };
}

/** Records a write of statement `s` into `out`, with where it runs and its value when a literal gives it. */
function writeRecorder(
  file: string,
  s: Statement,
  inDef: boolean,
  inMain: boolean,
  { os, environ }: OsPatterns,
  out: EnvironmentWrite[],
): RecordWrite {
  return (variable, kind, expression, putenv = false, inLambda = false) => {
    if (variable === undefined) return;
    const value = kind === 'unset' ? undefined : pythonStringLiteral(expression);
    const readsItself = new RegExp(`^(?:${environ}\\.get|(?:${os})\\.getenv)\\(\\s*(${STRING_SOURCE})`).exec(
      expression.trim(),
    );
    const isDefault =
      kind === 'assign' && readsItself !== null && pythonStringLiteral(readsItself[1]) === variable;
    out.push({
      file,
      line: s.line,
      column: s.column,
      variable,
      kind: isDefault ? 'default' : kind,
      ...(value !== undefined ? { value } : {}),
      expression: expression.trim(),
      ...(putenv ? { putenv: true as const } : {}),
      atImport: !inDef && !inLambda,
      inMain,
    });
  };
}

const keyOf = (arg: string | undefined) => (arg === undefined ? undefined : pythonStringLiteral(arg));

/** The writes of one simple statement: `del`, `|=`, assignments to a subscript, and calls. */
function simpleStatementWrites(body: string, patterns: OsPatterns, push: RecordWrite): void {
  const { environ } = patterns;
  const subscript = new RegExp(`^${environ}\\s*\\[\\s*(${STRING_SOURCE})\\s*\\]$`, 's');
  const del = /^del\s+(.+)$/s.exec(body);
  if (del) {
    for (const target of splitTop(del[1], ',')) push(keyOf(subscript.exec(target.trim())?.[1]), 'unset', '');
    return;
  }
  const update = new RegExp(`^${environ}\\s*\\|=\\s*(.+)$`, 's').exec(body);
  if (update) pushMapping(update[1], push);
  const parts = assignmentParts(body);
  if (parts.length > 1) {
    const value = parts[parts.length - 1];
    for (const target of parts.slice(0, -1)) push(keyOf(subscript.exec(target)?.[1]), 'assign', value);
  }
  callWrites(body, patterns, push);
}

/** The writes made by calls, anywhere in the statement (a lambda's body, a call's argument). */
function callWrites(body: string, { os, environ }: OsPatterns, push: RecordWrite): void {
  const calls = new RegExp(
    `(${environ})\\s*\\.\\s*(setdefault|pop|update|__setitem__|__delitem__)\\s*\\(|(?<![\\w.])(?:${os})\\s*\\.\\s*(putenv|unsetenv)\\s*\\(`,
    'g',
  );
  for (const m of body.matchAll(calls)) {
    const args = callArguments(body, m.index + m[0].length - 1);
    if (!args) continue;
    // In a lambda's body it runs when the lambda is called, not here.
    const lambda = /\blambda\b/.test(body.slice(0, m.index).replace(STRING_ANY, '""'));
    const at = (
      variable: string | undefined,
      kind: EnvironmentWrite['kind'],
      expression: string,
      putenv = false,
    ) => push(variable, kind, expression, putenv, lambda);
    switch (m[2] ?? m[3]) {
      case 'setdefault':
        at(keyOf(args[0]), 'default', args[1] ?? 'None');
        break;
      case '__setitem__':
        at(keyOf(args[0]), 'assign', args[1] ?? '');
        break;
      case 'putenv':
        at(keyOf(args[0]), 'assign', args[1] ?? '', true);
        break;
      case 'pop':
      case '__delitem__':
        at(keyOf(args[0]), 'unset', '');
        break;
      case 'unsetenv':
        at(keyOf(args[0]), 'unset', '', true);
        break;
      case 'update':
        for (const a of args) pushMapping(a, at);
        break;
    }
  }
}

/** `{"K": v, …}`, `dict(K=v)` or `K=v` keyword arguments: each key a write. */
function pushMapping(
  text: string,
  push: (variable: string | undefined, kind: EnvironmentWrite['kind'], expression: string) => void,
): void {
  const t = text.trim();
  const keyword = /^([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$/s.exec(t);
  if (keyword) return push(keyword[1], 'assign', keyword[2]);
  const dict = /^dict\s*\(/.exec(t);
  if (dict) {
    const args = callArguments(t, dict[0].length - 1) ?? [];
    for (const a of args) pushMapping(a, push);
    return;
  }
  if (!t.startsWith('{') || closingOf(t, 0) !== t.length - 1) return;
  for (const entry of splitTop(t.slice(1, -1), ',')) {
    const [k, ...v] = splitTop(entry, ':');
    if (v.length === 0) continue;
    push(pythonStringLiteral(k), 'assign', v.join(':'));
  }
}
