/* How numbers, durations and series keys are shown. */

export function fmt(v: unknown, digits = 4): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return String(v);
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    return Number(v.toPrecision(digits)).toString();
  }
  return String(v);
}

export function fmtSeconds(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return '–';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
}

/** A series key without its counter's name (`metrics|loss` → `loss`). */
export function shortKey(key: string): string {
  return key.split('|').slice(1).join('|') || key;
}
