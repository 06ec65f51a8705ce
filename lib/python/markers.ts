import { compare, valid } from '@renovatebot/pep440';

/**
 * PEP 508 environment markers (`sys_platform == 'linux' and python_version >= '3.11'`), evaluated for the
 * image's platform: which of a lock's versions, or a requirements file's pins, the image installs.
 * Hand-written: the npm registry has no maintained PEP 508 marker evaluator; the grammar is small.
 */
export interface MarkerEnvironment {
  readonly [name: string]: string;
}

/** The training image: CPython on Linux x86_64, at the given Python (e.g. 3.11). */
export function imageEnvironment(python: string): MarkerEnvironment {
  return {
    os_name: 'posix',
    sys_platform: 'linux',
    platform_system: 'Linux',
    platform_machine: 'x86_64',
    platform_python_implementation: 'CPython',
    implementation_name: 'cpython',
    python_version: python,
    python_full_version: `${python}.0`,
    implementation_version: `${python}.0`,
    extra: '',
  };
}

type Token = { kind: 'str' | 'var' | 'op' | '(' | ')' | 'and' | 'or'; value: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  const re =
    /\s*(?:(\()|(\))|'([^']*)'|"([^"]*)"|(===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)|(and\b|or\b)|([A-Za-z_][\w.]*))/y;
  let i = 0;
  while (i < text.length) {
    if (/^\s*$/.test(text.slice(i))) break;
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) throw new Error(`cannot read the marker at "${text.slice(i)}"`);
    i = re.lastIndex;
    if (m[1]) out.push({ kind: '(', value: '(' });
    else if (m[2]) out.push({ kind: ')', value: ')' });
    else if (m[3] !== undefined || m[4] !== undefined) out.push({ kind: 'str', value: m[3] ?? m[4] });
    else if (m[5]) out.push({ kind: 'op', value: m[5].replace(/\s+/, ' ') });
    else if (m[6]) out.push({ kind: m[6] as 'and' | 'or', value: m[6] });
    else out.push({ kind: 'var', value: m[7] });
  }
  return out;
}

const VERSION_VARS = new Set(['python_version', 'python_full_version', 'implementation_version']);

function compareValues(name: string | undefined, left: string, op: string, right: string): boolean {
  if (op === 'in') return right.includes(left);
  if (op === 'not in') return !right.includes(left);
  if (name && VERSION_VARS.has(name) && valid(left) && valid(right)) {
    const c = compare(left, right);
    switch (op) {
      case '==':
      case '===':
        return c === 0;
      case '!=':
        return c !== 0;
      case '<':
        return c < 0;
      case '<=':
        return c <= 0;
      case '>':
        return c > 0;
      case '>=':
      case '~=':
        return c >= 0;
    }
  }
  if (op === '==' || op === '===') return left === right;
  if (op === '!=') return left !== right;
  return false;
}

/** Whether `marker` holds in `env`; a marker it cannot read throws. */
export function evaluateMarker(marker: string, env: MarkerEnvironment): boolean {
  const tokens = tokenize(marker);
  let pos = 0;
  const value = (): { v: string; name?: string } => {
    const t = tokens[pos++];
    if (!t) throw new Error(`marker "${marker}" ends too early`);
    if (t.kind === 'str') return { v: t.value };
    if (t.kind === 'var') return { v: env[t.value] ?? '', name: t.value };
    throw new Error(`unexpected "${t.value}" in marker "${marker}"`);
  };
  const atom = (): boolean => {
    if (tokens[pos]?.kind === '(') {
      pos++;
      const r = or();
      if (tokens[pos++]?.kind !== ')') throw new Error(`unbalanced parentheses in marker "${marker}"`);
      return r;
    }
    const left = value();
    const op = tokens[pos++];
    if (op?.kind !== 'op') throw new Error(`no comparison in marker "${marker}"`);
    const right = value();
    return compareValues(left.name ?? right.name, left.v, op.value, right.v);
  };
  const and = (): boolean => {
    let r = atom();
    while (tokens[pos]?.kind === 'and') {
      pos++;
      r = atom() && r;
    }
    return r;
  };
  const or = (): boolean => {
    let r = and();
    while (tokens[pos]?.kind === 'or') {
      pos++;
      r = and() || r;
    }
    return r;
  };
  const result = or();
  if (pos !== tokens.length) throw new Error(`cannot read the marker "${marker}"`);
  return result;
}
