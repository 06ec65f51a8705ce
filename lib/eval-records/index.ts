/**
 * What an evaluation leaves behind and how it is read back: the plan an eval job is told
 * (`eval-plan.json`), one record per unit, the harnesses' results files, and the table built from
 * them. Shared by the launcher (lib/eval), the job itself (lib/container) and the dashboard, so it
 * imports nothing heavier than the layout.
 */
export * from './job-plan';
export {
  WATCHER_SUMMARY,
  harnessResultsFile,
  parseUnitRecord,
  rowOfUnreadableUnit,
  checkpointsByLabelFolder,
  rowOfUnit,
  rowsOfWatcherSummary,
  listFilesUnder,
  localUnitRecords,
  readLocalUnit,
  readLocalResults,
} from './results';
export { type ResultRow, type ResultsTable, buildTable, tableMarkdown, tableCsv, tableJson } from './table';
