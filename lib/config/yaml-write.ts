import { parse, stringify, type Scalar } from 'yaml';

/*
 * The trainer reads YAML with PyYAML (YAML 1.1), where a float needs a "." and a signed exponent:
 * `1e-7` or `5E-5` are strings there. Floats we write always take the safe form (`1.0e-7`).
 */

/** A float literal both YAML 1.1 (PyYAML) and YAML 1.2 read as the same float. */
export function formatTrainerFloat(value: number): string {
  if (Number.isNaN(value)) return '.nan';
  if (!Number.isFinite(value)) return value > 0 ? '.inf' : '-.inf';
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude < 1e-4 || magnitude >= 1e16)) {
    const [mantissa, exponent] = value.toExponential().split('e');
    const sign = exponent.startsWith('-') ? '-' : '+';
    return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}e${sign}${exponent.replace(/^[-+]/, '')}`;
  }
  const text = String(value);
  return text.includes('.') ? text : `${text}.0`;
}

const trainerFloat = {
  identify: (value: unknown) => typeof value === 'number' && !Number.isInteger(value),
  default: true,
  tag: 'tag:yaml.org,2002:float',
  test: /^\b$/, // never used to parse: only to write
  resolve: (source: string) => Number(source),
  stringify: (item: Scalar) => formatTrainerFloat(item.value as number),
};

/** Whether PyYAML (YAML 1.1) would read the string written plain as something else. */
export function pyyamlMisreads(value: string): boolean {
  try {
    return parse(value, { version: '1.1' }) !== value;
  } catch {
    return true;
  }
}

/**
 * Strings YAML 1.2 keeps as strings but PyYAML would not (`yes`, `off`, `1_000`, `1:30`, `2024-01-01`:
 * booleans, numbers, a date there) are written double-quoted; every other string as before.
 */
const trainerString = {
  identify: (value: unknown) => typeof value === 'string' && pyyamlMisreads(value),
  default: true,
  tag: 'tag:yaml.org,2002:str',
  test: /^\b$/, // never used to parse: only to write
  resolve: (source: string) => source,
  stringify: (item: Scalar) => JSON.stringify(item.value),
};

/** YAML the trainer reads back exactly (floats in the PyYAML-safe form, strings PyYAML reads as strings). */
export function stringifyForTrainer(value: unknown): string {
  return stringify(value, { customTags: (tags) => [trainerFloat, trainerString, ...tags] });
}

/** A plain scalar YAML 1.2 reads as a number but PyYAML (YAML 1.1) reads as a string. */
export const PYYAML_FLOAT_TRAP = /^[-+]?(?:\d+|\d+\.\d*|\.\d+)[eE][-+]?\d+$/;

export function isPyyamlFloatTrap(source: string): boolean {
  if (!PYYAML_FLOAT_TRAP.test(source)) return false;
  // Safe only with a "." before the exponent and a signed exponent.
  return !/^[-+]?(?:\d+\.\d*|\.\d+)[eE][-+]\d+$/.test(source);
}
