/** Reading a trainer config as the plain YAML tree it is (before or beside schema validation). */

export type YamlMap = Record<string, unknown>;

export function isMap(v: unknown): v is YamlMap {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value at a dotted path (`training.alpha_sft`). */
export function valueAtDotted(config: unknown, dotted: string): unknown {
  let node: unknown = config;
  for (const seg of dotted.split('.')) {
    if (!isMap(node)) return undefined;
    node = node[seg];
  }
  return node;
}

/** Whether the key at a dotted path is present (its value may be null). */
export function hasKey(config: unknown, dotted: string): boolean {
  const parts = dotted.split('.');
  const parent = parts.length === 1 ? config : valueAtDotted(config, parts.slice(0, -1).join('.'));
  return isMap(parent) && Object.prototype.hasOwnProperty.call(parent, parts[parts.length - 1]);
}

/** The value at a key path of maps and lists (`['roles', 0, 'config', 'model']`). */
export function valueAtPath(root: unknown, keyPath: readonly (string | number)[]): unknown {
  let node: unknown = root;
  for (const seg of keyPath) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return node;
}
