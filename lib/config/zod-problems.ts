import type { z } from 'zod';
import type { Problem } from '../errors';
import { valueAtPath } from '../trainers';
import { formatKeyPath, type KeyPath, type YamlFile } from './yaml-file';

type AnySchema = z.ZodType;
interface ZodDef {
  type: string;
  shape?: Record<string, AnySchema>;
  innerType?: AnySchema;
  element?: AnySchema;
  options?: AnySchema[];
  in?: AnySchema;
}

function defOf(schema: AnySchema): ZodDef {
  return (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
}

/** The object schemas reachable at `path` (several under a union), unwrapping optional/default/array. */
function objectSchemasAt(schema: AnySchema, path: KeyPath): AnySchema[] {
  const unwrap = (s: AnySchema): AnySchema[] => {
    const def = defOf(s);
    switch (def.type) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
        return unwrap(def.innerType!);
      case 'pipe':
        return unwrap(def.in!);
      case 'union':
        return def.options!.flatMap(unwrap);
      default:
        return [s];
    }
  };
  let current = unwrap(schema);
  for (const segment of path) {
    const next: AnySchema[] = [];
    for (const s of current) {
      const def = defOf(s);
      if (def.type === 'object' && typeof segment === 'string' && def.shape![segment]) {
        next.push(...unwrap(def.shape![segment]));
      } else if (def.type === 'array' && typeof segment === 'number') {
        next.push(...unwrap(def.element!));
      } else if (def.type === 'record' && typeof segment === 'string') {
        next.push(...unwrap((def as unknown as { valueType: AnySchema }).valueType));
      }
    }
    current = next;
  }
  return current.filter((s) => defOf(s).type === 'object');
}

export function knownKeysAt(schema: AnySchema, path: KeyPath): string[] {
  const keys = new Set<string>();
  for (const s of objectSchemasAt(schema, path)) for (const k of Object.keys(defOf(s).shape!)) keys.add(k);
  return [...keys].sort();
}

export function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0];
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j];
      dp[j] = Math.min(dp[j] + 1, dp[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length];
}

/** The closest known key, if it is close enough to be a likely misspelling. */
export function didYouMean(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.max(2, Math.floor(key.length / 3));
  return bestDistance <= limit ? best : undefined;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

const EXPECTED_NAMES: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

/** Turns zod issues into located, human problems: what is wrong, where, and what would be right. */
export function zodIssuesToProblems(
  issues: readonly z.core.$ZodIssue[],
  file: YamlFile,
  schema: AnySchema,
  root: unknown,
  basePath: KeyPath = [],
): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const path: KeyPath = [...basePath, ...(issue.path as (string | number)[])];
    const value = valueAtPath(root, issue.path as (string | number)[]);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = knownKeysAt(schema, issue.path as (string | number)[]);
        for (const key of issue.keys) {
          const suggestion = didYouMean(key, known);
          problems.push(
            file.problem(
              [...path, key],
              `unknown key "${key}"${suggestion ? ` — did you mean "${suggestion}"?` : ''}`,
              suggestion
                ? `Rename it to "${suggestion}".`
                : `Known keys here: ${known.join(', ')}. Remove it or move it where it belongs.`,
              { key: true },
            ),
          );
        }
        break;
      }
      case 'invalid_type': {
        if (value === undefined) {
          problems.push(
            file.problem(
              path,
              `missing required key "${String(path[path.length - 1])}"`,
              `Add ${formatKeyPath(path)} (${EXPECTED_NAMES[issue.expected] ?? issue.expected}).`,
            ),
          );
        } else {
          problems.push(
            file.problem(
              path,
              `expected ${EXPECTED_NAMES[issue.expected] ?? issue.expected}, got ${describeValue(value)}`,
            ),
          );
        }
        break;
      }
      case 'too_small':
      case 'too_big': {
        const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
        const op = issue.code === 'too_small' ? (issue.inclusive ? '≥' : '>') : issue.inclusive ? '≤' : '<';
        const what =
          issue.origin === 'array'
            ? `must have ${op} ${String(bound)} entries`
            : issue.origin === 'string'
              ? `must be ${op} ${String(bound)} characters long`
              : `must be ${op} ${String(bound)}`;
        problems.push(file.problem(path, `${what}, got ${describeValue(value)}`));
        break;
      }
      case 'invalid_value':
        problems.push(
          file.problem(
            path,
            `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(value)}`,
          ),
        );
        break;
      case 'invalid_union': {
        const disc = (issue as unknown as { discriminator?: string; options?: unknown[] }).discriminator;
        const options = (issue as unknown as { options?: unknown[] }).options;
        problems.push(
          file.problem(
            path,
            disc
              ? `${disc} must be one of ${(options ?? []).map((o) => JSON.stringify(o)).join(', ')}, got ${describeValue(value)}`
              : `${describeValue(value)} is not any of the accepted forms`,
          ),
        );
        break;
      }
      case 'invalid_format':
        problems.push(
          file.problem(path, `${describeValue(value)} is not of the expected form: ${issue.message}`),
        );
        break;
      case 'custom': {
        const hint = (issue.params as { hint?: string } | undefined)?.hint;
        problems.push(file.problem(path, issue.message, hint));
        break;
      }
      default:
        problems.push(file.problem(path, issue.message));
    }
  }
  return problems;
}
