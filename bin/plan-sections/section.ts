/**
 * A submit's plan as sections: each planning step's facts, as the dry run prints them and as `--json`
 * carries them, in one place. A new fact of the plan is an edit in its step's section; the plan's text is
 * its sections in order, its JSON their entries together.
 */
import type { SubmitPlan } from '../../lib/training';

export interface PlanSection<J extends object = object> {
  readonly id: string;
  /** The heading printed before its rows (none: its rows go on under the heading above). */
  readonly title?: string | ((plan: SubmitPlan) => string);
  /** Its rows, each ending in a newline; undefined: the section is not shown, heading included. */
  readonly text: (plan: SubmitPlan) => string | undefined;
  /** Its entries of the `--json` plan. */
  readonly json?: (plan: SubmitPlan) => J;
}

/** Keeps a section's JSON type, so the JSON plan is typed by its sections' entries. */
export function planSection<J extends object = object>(section: PlanSection<J>): PlanSection<J> {
  return section;
}

/** `  label           value                          ← source`. */
export function row(label: string, value: string, source?: string): string {
  const left = `  ${label.padEnd(16)}${value}`;
  return source ? `${left.padEnd(64)}  ← ${source}\n` : `${left}\n`;
}

export function isPlaceholder(plan: SubmitPlan, name: string): boolean {
  return plan.placeholders.includes(name as never);
}

/** The sections' text in order: each shown section's heading, then its rows. */
export function renderSections(sections: readonly PlanSection[], plan: SubmitPlan): string {
  let out = '';
  for (const s of sections) {
    const text = s.text(plan);
    if (text === undefined) continue;
    const title = typeof s.title === 'function' ? s.title(plan) : s.title;
    out += (title === undefined ? '' : `\n${title}\n`) + text;
  }
  return out;
}
