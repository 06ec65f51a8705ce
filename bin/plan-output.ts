/**
 * The plan of a submit, as text (the dry-run) and as JSON (`--json`): its sections in order
 * (bin/plan-sections/, one file per planning step), each giving its rows and its JSON entries.
 */
import type { SubmitPlan } from '../lib/training';
import { platformEnvSection, sourceSection, uploadsSection } from './plan-sections/artifacts';
import { clusterSection, costSection } from './plan-sections/cluster';
import { forecastSection } from './plan-sections/forecast';
import { imageSection } from './plan-sections/image';
import { inputsSection } from './plan-sections/inputs';
import { allowedSection, preflightSection, warningsSection } from './plan-sections/preflight';
import {
  commandSection,
  evalWaitAndVolumeSection,
  networkSection,
  optionsSection,
  requestSection,
  settingsSection,
} from './plan-sections/request';
import { renderSections, type PlanSection } from './plan-sections/section';
import { sharedFileSystemSection } from './plan-sections/shared-file-system';

/** The plan's sections in the order the dry run prints them. */
const PLAN_SECTIONS = [
  requestSection,
  settingsSection,
  optionsSection,
  clusterSection,
  evalWaitAndVolumeSection,
  networkSection,
  commandSection,
  platformEnvSection,
  sharedFileSystemSection,
  imageSection,
  costSection,
  forecastSection,
  inputsSection,
  sourceSection,
  uploadsSection,
  preflightSection,
  warningsSection,
  allowedSection,
] as const;

/**
 * The JSON plan's keys in the order `--json` has always printed them (scripts and diffs read it so); a
 * section's key not listed here comes after these.
 */
const JSON_ORDER = [
  'createTrainingJobRequest',
  'uploads',
  'preflight',
  'placeholders',
  'settings',
  'template',
  'options',
  'image',
  'estimate',
  'cluster',
  'sharedFileSystem',
  'retries',
  'spotWait',
  'trainer',
  'model',
  'otherModels',
  'datasets',
  'orderFiles',
  'source',
  'warnings',
  'forecast',
  'allowed',
  'platformEnv',
];

type JsonOf<S> = S extends PlanSection<infer J> ? J : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type SectionsJson = Intersection<JsonOf<(typeof PLAN_SECTIONS)[number]>>;

export function planJson(plan: SubmitPlan): { ok: true; dryRun: true; jobName: string } & SectionsJson {
  const entries: Record<string, unknown> = Object.assign({}, ...PLAN_SECTIONS.map((s) => s.json?.(plan)));
  const rank = (key: string) => (JSON_ORDER.includes(key) ? JSON_ORDER.indexOf(key) : JSON_ORDER.length);
  const keys = Object.keys(entries).sort((a, b) => rank(a) - rank(b));
  return {
    ok: true,
    dryRun: true,
    jobName: plan.jobName,
    ...(Object.fromEntries(keys.map((k) => [k, entries[k]])) as SectionsJson),
  };
}

export function renderPlan(plan: SubmitPlan): string {
  return (
    `Plan for ${plan.jobName} (dry run: nothing was created)\n\n` +
    renderSections(PLAN_SECTIONS, plan) +
    `\nRun without --dry-run to submit; --json prints the exact CreateTrainingJob request.\n`
  );
}
