import type { Problem } from '../errors';
import { TITAN_DEGREES, type TrainerProfile, type TrainerSelection } from '../trainers';
import type { EvalConfig } from './eval-schema';
import type { TrainingConfig } from './training-schema';
import type { YamlFile } from './yaml-file';
import { EVAL_RULES, TRAINING_RULES } from './rules';
import { acknowledgementProblems, readAllowances } from './rules/launcher';
import {
  RULE_IDS,
  trainingRuleContext,
  type AllowedFinding,
  type Rule,
  type RuleId,
  type RuleProblem,
} from './rules/rule';

export { checkPyyamlFloats } from './rules/pyyaml-float';
export { RULE_IDS, type AllowedFinding, type RuleId };

/**
 * What the config rules (./rules, one file each) found. Errors stop a submit; warnings are shown in the
 * plan and do not. Findings of a rule the config allows (`launcher.allow: {RLVR120: "why"}`) are neither:
 * they are returned in `allowed`, with the reason. Incident rules named in `launcher.acknowledge` (the
 * older form of `launcher.allow`, still accepted with a warning) stay warnings that name them.
 */
export interface CheckResult {
  readonly errors: Problem[];
  readonly warnings: Problem[];
  /** Findings `launcher.allow` silenced (training configs only). */
  readonly allowed?: AllowedFinding[];
}

/** What each rule a config can acknowledge guards against: the doc line of the rule that has that id. */
export const RULE_DOCS: Readonly<Record<RuleId, string>> = Object.fromEntries(
  TRAINING_RULES.flatMap((r) => (r.acknowledge ? [[r.acknowledge, r.doc]] : [])),
) as Record<RuleId, string>;

export interface TrainingCheckOptions {
  readonly selection: TrainerSelection;
  /** Every profile in play: a key any of them reads is never called a typo. */
  readonly profiles: readonly TrainerProfile[];
  /** Likely typos are errors instead of warnings. */
  readonly strict?: boolean;
}

/** GPUs each role takes: titan = product of its degrees; vLLM = tensor × pipeline × data parallel. */
export function roleGpuNeeds(config: TrainingConfig): { role: string; gpus: number | undefined }[] {
  return config.roles.map((role) => {
    if (role.kind === 'vllm') {
      const c = role.config;
      return {
        role: role.name,
        gpus: (c.tensor_parallel_size ?? 1) * (c.pipeline_parallel_size ?? 1) * (c.data_parallel_size ?? 1),
      };
    }
    const p = (role.config?.parallelism ?? {}) as Record<string, number | undefined>;
    let gpus: number | undefined = 1;
    for (const names of Object.values(TITAN_DEGREES)) {
      const d = names.map((n) => p[n]).find((v) => v !== undefined) ?? 1;
      gpus = d === -1 || gpus === undefined ? undefined : gpus * d;
    }
    return { role: role.name, gpus };
  });
}

/** What the config says of the rules (allowed ids with reasons, acknowledged ids) and --strict: how a finding is filed. */
interface Filing {
  readonly allow: ReadonlyMap<string, string>;
  readonly acknowledged: ReadonlySet<string>;
  readonly strict?: boolean;
}

function runRules<C>(
  rules: readonly Rule<C>[],
  context: C,
  filing: Filing,
  into: Required<CheckResult>,
): void {
  for (const rule of rules) {
    for (const { severity: own, ...found } of rule.check(context)) {
      const severity = (filing.strict && rule.strictSeverity) || own || rule.severity;
      const problem: RuleProblem = { ...found, rule: rule.id };
      const reason = filing.allow.get(rule.id);
      if (reason !== undefined) {
        const { where, message, location } = problem;
        into.allowed.push({ rule: rule.id, name: rule.name, reason, where, message, location });
      } else if (severity === 'warning') {
        into.warnings.push(problem);
      } else if (rule.acknowledge && filing.acknowledged.has(rule.acknowledge)) {
        into.warnings.push({ ...problem, message: `${problem.message} (acknowledged: ${rule.acknowledge})` });
      } else if (rule.allowable) {
        const hint = `${problem.hint ?? ''}${problem.hint ? ' ' : ''}If this is deliberate, allow it with a reason: launcher.allow: {${rule.id}: "<why>"}.`;
        into.errors.push({ ...problem, hint });
      } else {
        into.errors.push(problem);
      }
    }
  }
}

/** Runs the training-config rules (TRAINING_RULES) with the config's `launcher.allow` and `acknowledge`. */
export function checkTrainingConfig(
  config: TrainingConfig,
  file: YamlFile,
  options: TrainingCheckOptions,
): CheckResult & { allowed: AllowedFinding[] } {
  const allowances = readAllowances(config, file, TRAINING_RULES);
  const acknowledged = acknowledgementProblems(config, file, TRAINING_RULES);
  const result: Required<CheckResult> = {
    errors: acknowledged.errors,
    warnings: acknowledged.warnings,
    allowed: [],
  };
  const filing = {
    allow: allowances.reasons,
    acknowledged: new Set(config.launcher?.acknowledge ?? []),
    strict: options.strict,
  };
  runRules(TRAINING_RULES, trainingRuleContext(config, file, options), filing, result);
  result.errors.push(...allowances.problems);
  return result;
}

/** Every task an eval config names (top-level, task groups, OLMES). */
export function evalTasks(config: EvalConfig): string[] {
  const groups = (config.watch?.task_groups ?? []).flatMap((g) => g.benchmarks.map((b) => b.task));
  return [...(config.benchmarks ?? []).map((b) => b.task), ...groups, ...(config.olmes?.tasks ?? [])];
}

/** Runs the eval-config rules (EVAL_RULES); an eval config allows and acknowledges nothing. */
export function checkEvalConfig(config: EvalConfig, file: YamlFile): CheckResult {
  const result: Required<CheckResult> = { errors: [], warnings: [], allowed: [] };
  runRules(EVAL_RULES, { config, file }, { allow: new Map(), acknowledged: new Set() }, result);
  return { errors: result.errors, warnings: result.warnings };
}
