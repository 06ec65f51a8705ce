/** The sections of the checks: the pre-flight in S3, the plan's warnings, and the rules launcher.allow lifts. */
import { formatProblem } from '../../lib/errors';
import type { SubmitPlan } from '../../lib/training';
import { planSection, row } from './section';

export const preflightSection = planSection({
  id: 'preflight',
  title: 'Pre-flight',
  text: (plan) => {
    let out = plan.preflight.ran ? '' : `  not run: ${plan.preflight.reason}\n`;
    for (const c of plan.preflight.checks)
      out += row(c.ok ? 'ok' : 'FAILED', `${c.what}: ${c.target}`, c.detail);
    return out;
  },
  json: (plan) => ({ preflight: plan.preflight }),
});

export const warningsSection = planSection({
  id: 'warnings',
  title: 'Warnings',
  text: (plan) =>
    plan.warnings.length > 0 ? plan.warnings.map((w) => `  ${formatProblem(w)}\n`).join('') : undefined,
  json: (plan) => ({ warnings: plan.warnings.map((w) => ({ ...w, text: formatProblem(w) })) }),
});

function allowed(plan: SubmitPlan) {
  return [...plan.config.allowed, ...plan.forecast.allowed, ...plan.platformEnv.allowed];
}

export const allowedSection = planSection({
  id: 'allowed',
  title: 'Allowed by launcher.allow (not checked for this config)',
  text: (plan) => {
    const all = allowed(plan);
    if (all.length === 0) return undefined;
    return all.map((a) => `  ${a.rule} ${a.name}: ${a.message}\n    reason: ${a.reason}\n`).join('');
  },
  json: (plan) => ({ allowed: allowed(plan) }),
});
