import { UserError } from '../errors';
import { DashboardData } from './data';
import { jobViews } from './jobs';
import { checkOutFile, resultsFolder, writeOutFile } from './paths';
import type { ResolvedPanel } from './panels';
import { listRunIds, runFiles } from './runs';
import { compareSeriesUrl, REPORT_WIDTH, runSeriesUrl, TIMELINE_WINDOWS, urls } from './urls';
import { pageHtml, webAssets } from './web-bundle';

/*
 * `rlvr report <job…> --out report.html`: the dashboard's views of some runs as one file — the page,
 * uPlot and the answers to the requests the page makes for its default views (urls.ts), inlined. No
 * server, no network: it opens from a mail attachment. Samples and notes editing need the dashboard.
 */

async function answer(data: DashboardData, url: string): Promise<unknown> {
  const u = new URL(url, 'http://report');
  const q = u.searchParams;
  switch (u.pathname) {
    case '/api/run':
      return data.run(q.get('id') ?? '');
    case '/api/series':
      return data.series(q);
    case '/api/timeline':
      return data.timeline(q);
    case '/api/breakdown':
      return data.breakdown(q);
    case '/api/compare':
      return data.compare(q);
    default:
      throw new Error(`the report does not answer ${url}`);
  }
}

export async function buildReport(
  data: DashboardData,
  ids: readonly string[],
  jobs: { jobs: { name: string }[]; aws: string },
): Promise<{ html: string; requests: number }> {
  const inline: Record<string, unknown> = {};
  const put = async (url: string): Promise<unknown> => (inline[url] = await answer(data, url));
  inline[urls.jobs()] = {
    ...jobs,
    jobs: jobs.jobs.filter((j) => ids.includes(j.name)),
    aws: 'report: as exported',
  };
  for (const id of ids) {
    const run = (await put(urls.run(id))) as { panels: ResolvedPanel[] };
    for (const axis of ['step', 'time'])
      if (run.panels.length) await put(runSeriesUrl(id, run.panels, axis, REPORT_WIDTH));
    for (const last of TIMELINE_WINDOWS) await put(urls.timeline(id, REPORT_WIDTH, last));
    await put(urls.breakdown(id));
  }
  if (ids.length > 1) {
    for (const axis of ['step', 'time']) {
      const head = (await put(urls.compare(ids, [], axis, REPORT_WIDTH))) as {
        panels: ResolvedPanel[];
        evalTable: { rows: { label: string }[] };
      };
      await put(compareSeriesUrl(ids, head.panels, new Map(), axis, REPORT_WIDTH));
      if (axis === 'step')
        for (const row of head.evalTable.rows)
          await put(urls.compare(ids, [], axis, REPORT_WIDTH, row.label));
    }
  }
  inline.__start =
    ids.length > 1 ? `compare/${ids.map(encodeURIComponent).join(',')}` : `run/${encodeURIComponent(ids[0])}`;
  const html = pageHtml({
    inline: { assets: await webAssets(), data: inline, title: `rlvr report: ${ids.join(', ')}` },
  });
  return { html, requests: Object.keys(inline).length - 1 };
}

export interface RunsReportOptions {
  /** The results folder as the user named it. */
  readonly results: string;
  readonly ids: readonly string[];
  /** The HTML file to write. */
  readonly out: string;
}

/**
 * `rlvr report <job…>`: writes the report of some runs of a results folder. The paths are refused
 * before the views are built; a run without a trace is bad input, named with the runs that have one.
 */
export async function writeRunsReport(o: RunsReportOptions): Promise<{ html: string; requests: number }> {
  const resultsDir = resultsFolder(o.results);
  checkOutFile(o.out);
  const missing = o.ids.filter((id) => !runFiles(resultsDir, id)?.trace);
  if (missing.length) {
    const have = listRunIds(resultsDir).filter((id) => runFiles(resultsDir, id)?.trace);
    throw new UserError(
      `${missing.join(', ')}: no run with a trace in ${o.results}/ (have: ${have.join(', ') || 'none'}). Download it first: rlvr download <job>.`,
      'NoSuchRun',
    );
  }
  const data = new DashboardData({ resultsDir });
  const views = await jobViews({
    resultsDir,
    stallMinutes: 30,
    progress: (id) => data.progress(id).catch(() => undefined),
  });
  const report = await buildReport(data, o.ids, views);
  writeOutFile(o.out, report.html);
  return report;
}
