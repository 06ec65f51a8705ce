/** Parsers for the small value languages of the launcher section and CLI flags. Pure. */

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `86400`, `"24h"`, `"1h30m"`, `"90m"`, `"3600s"` → seconds; undefined when malformed. */
export function parseDuration(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const re = /(\d+(?:\.\d+)?)([smhd])/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]];
    consumed = re.lastIndex;
  }
  if (consumed === 0 || consumed !== text.length) return undefined;
  return Math.round(total);
}

export function formatDuration(seconds: number): string {
  // Hours up to three days read better for job runtimes ("24h", "72h"); days beyond.
  const d = seconds > 3 * 86400 ? Math.floor(seconds / 86400) : 0;
  const h = Math.floor((seconds - d * 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts = [d && `${d}d`, h && `${h}h`, m && `${m}m`, s && `${s}s`].filter(Boolean);
  return parts.length ? parts.join('') : '0s';
}

/** `"0,1,2"`, `"0-5"`, `"0-3,6"`, `[0, 1]`, `""` → sorted unique GPU indices; undefined when malformed. */
export function parseGpuList(value: string | readonly number[]): number[] | undefined {
  if (Array.isArray(value)) {
    if (!value.every((v) => Number.isInteger(v) && v >= 0)) return undefined;
    return [...new Set(value)].sort((a, b) => a - b);
  }
  const text = (value as string).trim();
  if (text === '') return [];
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    // A range past any machine's GPU count is a typo, not a list to build (0-100000000 would hang).
    if (to < from || to > 1023) return undefined;
    for (let g = from; g <= to; g++) out.add(g);
  }
  return [...out].sort((a, b) => a - b);
}

/** `[0,1,2,3,4,5]` → `"0,1,2,3,4,5"` (the form CUDA_VISIBLE_DEVICES takes). */
export function formatGpuList(gpus: readonly number[]): string {
  return gpus.join(',');
}
