/*
 * The API requests the page makes, built in one place: the page (web/main.ts) asks them of the server,
 * and the report (report.ts) answers the same URLs in advance, so an exported page finds its data.
 */

export const REPORT_WIDTH = 1000;
/** The timeline's windows: the whole run, or its last so many steps. */
export const TIMELINE_WINDOWS = [undefined, 50, 10, 2] as const;

const enc = encodeURIComponent;

export const urls = {
  jobs: (): string => '/api/jobs',
  run: (id: string): string => `/api/run?id=${enc(id)}`,
  series: (
    id: string,
    keys: readonly string[],
    axis: string,
    width: number,
    sum: readonly string[] = [],
  ): string =>
    `/api/series?id=${enc(id)}&axis=${axis}&width=${width}&keys=${keys.map(enc).join(',')}${sum.length ? `&sum=${sum.map(enc).join(',')}` : ''}`,
  /** The whole run, or its last `lastSteps` steps, or (zoomed) the seconds [from, to]. */
  timeline: (id: string, width: number, lastSteps?: number, range?: { from: number; to: number }): string =>
    `/api/timeline?id=${enc(id)}&width=${width}${
      range ? `&from=${range.from}&to=${range.to}` : lastSteps !== undefined ? `&last=${lastSteps}` : ''
    }`,
  breakdown: (id: string): string => `/api/breakdown?id=${enc(id)}`,
  samples: (id: string, by: { step?: number; prompt?: string }): string =>
    `/api/samples?id=${enc(id)}${by.step !== undefined ? `&step=${by.step}` : `&prompt=${enc(by.prompt ?? '')}`}`,
  compare: (
    ids: readonly string[],
    keys: readonly string[],
    axis: string,
    width: number,
    baseline?: string,
    sum: readonly string[] = [],
  ): string =>
    `/api/compare?ids=${ids.map(enc).join(',')}&axis=${axis}&width=${width}&keys=${keys.map(enc).join(',')}${baseline ? `&baseline=${enc(baseline)}` : ''}${sum.length ? `&sum=${sum.map(enc).join(',')}` : ''}`,
  notes: (id: string): string => `/api/notes?id=${enc(id)}`,
  passk: (): string => '/api/passk',
  /** The writeup's data: answered only by the page `report --spec` inlines it in (no server has a spec). */
  writeup: (): string => '/api/writeup',
};

/** What a run view asks for its charts: every panel's series, bar panels' summed per step. */
export function runSeriesUrl(
  id: string,
  panels: readonly { keys: readonly string[]; bars?: boolean }[],
  axis: string,
  width: number,
): string {
  const keys = [...new Set(panels.flatMap((p) => p.keys))];
  const sum = [...new Set(panels.filter((p) => p.bars).flatMap((p) => p.keys))];
  return urls.series(id, keys, axis, width, sum);
}

/** What a compare view asks for its charts: the chosen series of each panel, bar panels' summed. */
export function compareSeriesUrl(
  ids: readonly string[],
  panels: readonly { id: string; keys: readonly string[]; bars?: boolean }[],
  chosen: ReadonlyMap<string, string>,
  axis: string,
  width: number,
): string {
  const keys = [...new Set(panels.map((p) => chosen.get(p.id) ?? p.keys[0]))];
  const sum = [...new Set(panels.filter((p) => p.bars).map((p) => chosen.get(p.id) ?? p.keys[0]))];
  return urls.compare(ids, keys, axis, width, undefined, sum);
}
