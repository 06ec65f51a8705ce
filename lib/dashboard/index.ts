/**
 * The dashboard: the data behind its views (runs, jobs, traces indexed beside them, eval tables), the
 * HTTP server with its live updates, the self-contained report and the writeup page (a spec's runs
 * against a base model). The page itself is `web/`, bundled by web-bundle.ts.
 */
export { openInBrowser } from './browser';
export { DashboardData } from './data';
export { jobViews } from './jobs';
export { resultsFolder } from './paths';
export { writeRunsReport } from './report';
export { startServer } from './server';
export { startDashboard, type DashboardOptions } from './start';
export { updateIndex } from './trace-index';
export { writeWriteupPage } from './writeup';
export { readWriteupSpecFile } from './writeup-spec';
