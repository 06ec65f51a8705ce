import * as fs from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';

/*
 * Secrets never leave the laptop: credential files are withheld from the job's source archive whether
 * git tracks them or not, whatever the include globs say. The built-in list below cannot be switched
 * off; the trainer repository adds its own patterns in `.rlvrignore` at its root (gitignore syntax).
 */

/** The trainer repository's own additions to the deny-list (at the source root, gitignore syntax). */
export const WITHHOLD_FILE = '.rlvrignore';

/** A file left out of the job's source because it is, or may hold, a credential. */
export interface WithheldFile {
  readonly path: string;
  /** Why, for the plan: the rule that matched. */
  readonly why: string;
}

/** Basename or folder patterns, matched at any depth (`**` prepended). */
const DENY_LIST: readonly { readonly why: string; readonly globs: readonly string[] }[] = [
  { why: 'an environment file (.env)', globs: ['.env', '.env.*', '.envrc'] },
  {
    why: 'an SSH key or .ssh folder',
    globs: ['id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', 'id_ecdsa_sk', 'id_ed25519_sk', '.ssh/**'],
  },
  {
    why: 'a key or certificate store',
    globs: ['*.pem', '*.key', '*.p12', '*.pfx', '*.jks', '*.keystore', '*.ppk'],
  },
  {
    why: 'cloud credentials',
    globs: ['.aws/**', 'credentials', '.azure/**', '.config/gcloud/**', '.kube/config', '.s3cfg', '.boto'],
  },
  {
    why: 'a login or token file',
    globs: [
      '.netrc',
      '_netrc',
      '.pypirc',
      '.git-credentials',
      '.npmrc',
      '.pgpass',
      '.docker/config.json',
      'huggingface/token',
      '.huggingface/token',
    ],
  },
  { why: 'a service-account or OAuth client file', globs: ['credentials.json', 'client_secret*.json'] },
  { why: 'a GnuPG keyring', globs: ['.gnupg/**'] },
];

const SNIFF_MAX_BYTES = 1024 * 1024;
/** A Google service-account key, or any JSON carrying a PEM private key, whatever its name. */
const PRIVATE_KEY_JSON = /"type"\s*:\s*"service_account"|"private_key"\s*:\s*"-----BEGIN/;

const GLOB_OPTIONS = { dot: true, nobrace: true } as const;

interface IgnoreRule {
  readonly match: (rel: string) => boolean;
  readonly negate: boolean;
  readonly line: number;
}

/** One gitignore line as globs: anchored when it has a `/` before its end, a folder's contents with it. */
function gitignoreRule(raw: string, line: number): IgnoreRule | undefined {
  let text = raw.replace(/(?<!\\)\s+$/, '');
  if (text === '' || text.startsWith('#')) return undefined;
  const negate = text.startsWith('!');
  if (negate) text = text.slice(1);
  text = text.replace(/^\\([#!])/, '$1');
  const dirOnly = text.endsWith('/');
  if (dirOnly) text = text.replace(/\/+$/, '');
  if (text === '') return undefined;
  const anchored = text.includes('/');
  const base = anchored ? text.replace(/^\/+/, '') : `**/${text}`;
  const globs = dirOnly ? [`${base}/**/*`] : [base, `${base}/**/*`];
  return { match: picomatch(globs, GLOB_OPTIONS), negate, line };
}

/** `.rlvrignore`'s rules, in order (the last that matches decides), or none when there is no file. */
function repositoryRules(root: string): IgnoreRule[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(root, WITHHOLD_FILE), 'utf8');
  } catch {
    return [];
  }
  return text
    .split(/\r?\n/)
    .map((l, i) => gitignoreRule(l, i + 1))
    .filter((r): r is IgnoreRule => r !== undefined);
}

/**
 * The deny-list for the source at `root`: the built-in rules, then `.rlvrignore`'s (whose `!` lines
 * re-admit only what an earlier `.rlvrignore` line withheld, never a built-in match). Gives why a
 * path (relative, `/`-separated) is withheld, or undefined.
 */
export function withholdRules(root: string): (rel: string) => string | undefined {
  const builtIn = DENY_LIST.map((d) => ({
    why: d.why,
    match: picomatch(
      d.globs.map((g) => `**/${g}`),
      // Case-insensitive: on macOS `KEY.PEM` and `key.pem` are the same file, and both are keys.
      { ...GLOB_OPTIONS, nocase: true },
    ),
  }));
  const own = repositoryRules(root);
  return (rel) => {
    const hit = builtIn.find((d) => d.match(rel));
    if (hit) return hit.why;
    let ownHit: IgnoreRule | undefined;
    for (const rule of own) if (rule.match(rel)) ownHit = rule;
    return ownHit && !ownHit.negate ? `listed in ${WITHHOLD_FILE} (line ${ownHit.line})` : undefined;
  };
}

/** A JSON file whose content is a private key (checked for `.json` files up to 1 MiB). */
export function holdsPrivateKey(abs: string, rel: string, size: number): string | undefined {
  if (!rel.toLowerCase().endsWith('.json') || size > SNIFF_MAX_BYTES) return undefined;
  try {
    return PRIVATE_KEY_JSON.test(fs.readFileSync(abs, 'utf8'))
      ? 'a JSON file holding a private key'
      : undefined;
  } catch {
    return undefined;
  }
}
