/** The size a safetensors file must have, from its first bytes (8-byte length, then the JSON header). */
export function safetensorsSize(head: Buffer): number | undefined {
  if (head.length < 8) return undefined;
  const headerLength = Number(head.readBigUInt64LE(0));
  if (headerLength <= 0 || headerLength > 100_000_000 || head.length < 8 + headerLength) return undefined;
  try {
    const header = JSON.parse(head.subarray(8, 8 + headerLength).toString('utf8')) as Record<
      string,
      { data_offsets?: [number, number] }
    >;
    let end = 0;
    for (const [name, t] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      if (Array.isArray(t?.data_offsets)) end = Math.max(end, t.data_offsets[1]);
    }
    return 8 + headerLength + end;
  } catch {
    return undefined;
  }
}

/** How many leading bytes `safetensorsSize` needs, given the first 8 (undefined: unreadable). */
export function safetensorsHeadLength(first8: Buffer): number | undefined {
  if (first8.length < 8) return undefined;
  const n = Number(first8.readBigUInt64LE(0));
  return n > 0 && n <= 100_000_000 ? 8 + n : undefined;
}
