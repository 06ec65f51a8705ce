/**
 * The dashboard: the data behind its views (runs, jobs, traces indexed beside them, eval tables), the
 * HTTP server with its live updates, the self-contained report and the writeup page (a spec's runs
 * against a base model). The page itself is `web/`, bundled by web-bundle.ts.
 */
export { DashboardData } from './data';
export { jobViews, type JobView } from './jobs';
export { startLive } from './live';
export { buildReport } from './report';
export { listRunIds, runFiles } from './runs';
export { startServer } from './server';
export { indexDirOf, openIndex, updateIndex } from './trace-index';
export { buildWriteup, writeupAnswer, type WriteupAnswer } from './writeup';
export { readWriteupSpec, type WriteupSpec } from './writeup-spec';
