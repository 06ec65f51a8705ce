/// <reference lib="dom" />
/*
 * How the page gets its data: from the server (JSON, with the token the URL gave), or, in an exported
 * report, from the answers inlined in the page itself. And the probe tests and the benchmark read.
 */
import type { jobViews } from '../jobs';

/** `/api/jobs`: the jobs view's rows and how SageMaker answered. */
export type JobsAnswer = Awaited<ReturnType<typeof jobViews>>;

/** A report's answers by URL (and `__start`, the view it opens on); undefined when served. */
export const inline: Record<string, unknown> | undefined = (() => {
  const el = document.getElementById('rlvr-data');
  return el ? (JSON.parse(el.textContent ?? '{}') as Record<string, unknown>) : undefined;
})();

export const token = new URLSearchParams(location.search).get('token') ?? undefined;

/** What tests and the benchmark read: charts drawn, series per chart, when the view was ready. */
export const probe = {
  view: '',
  charts: [] as { id: string; series: number; points: number }[],
  /** The seconds the timeline shows. */
  timeline: undefined as { from: number; to: number } | undefined,
  readyMs: NaN,
  startedMs: 0,
  updates: 0,
};
(window as unknown as { __rlvr: typeof probe }).__rlvr = probe;

/** The message of an error answer (`{ error }`), if it is one. */
function errorOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && 'error' in body ? body.error : undefined;
}

/** The answer to `url` (the caller names its type: the server's, from ../data). */
export async function api<T>(url: string, init?: RequestInit): Promise<T> {
  if (inline) {
    if (url in inline) return inline[url] as T;
    throw new Error('not in this report (it holds the default views only)');
  }
  const headers: Record<string, string> = { ...(init?.headers as Record<string, string>) };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { ...init, headers });
  const body = (await res.json()) as unknown;
  if (!res.ok) {
    const error = errorOf(body);
    throw new Error(error === undefined || error === null ? `HTTP ${res.status}` : String(error));
  }
  return body as T;
}
