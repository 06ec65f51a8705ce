/** What `rlvr image` prints: the plan of a build (text or JSON), and the image built or pushed. */
import { describeArgSource, type ImagePlan, type ImageResult } from '../lib/image';
import { formatBytes } from './output';

export function imageSummary(result: ImageResult) {
  return {
    ref: result.ref,
    tag: result.context.tag,
    digest: result.digest ?? null,
    pinned: result.pinned ?? null,
    built: Boolean(result.built),
    cachedSteps: result.built?.steps.filter((s) => s.cached).length ?? 0,
    builtSteps: result.built?.steps.filter((s) => !s.cached).length ?? 0,
    pushed: Boolean(result.pushed),
    pushedLayers: result.pushed?.pushedLayers ?? 0,
    pushedBytes: result.pushed?.pushedBytes ?? 0,
  };
}

export function renderImage(
  result: ImageResult,
  summary: ReturnType<typeof imageSummary>,
  push: boolean,
): string {
  const built = summary.built
    ? `built (${summary.builtSteps} steps run, ${summary.cachedSteps} from cache)`
    : 'no build needed';
  const pushed = push
    ? summary.pushed
      ? `pushed ${summary.pushedLayers} layers (${formatBytes(summary.pushedBytes)})`
      : 'already in the registry'
    : 'not pushed';
  return `${result.pinned ?? result.ref}\n  ${built}; ${pushed}\n`;
}

function wouldDo(plan: ImagePlan, push: boolean): string {
  if (push && plan.registry.state === 'has') return 'nothing: the registry has this tag';
  const build = plan.engine.state === 'has' ? 'no build (the engine has it)' : 'a build';
  return push ? `${build}, then a push` : build;
}

export function imagePlanJson(plan: ImagePlan, push: boolean) {
  const { context } = plan;
  return {
    dryRun: true,
    tag: context.tag,
    ref: plan.ref ?? null,
    baseImage: context.buildArgs.BASE_IMAGE ?? null,
    args: context.plan.args.map((a) => ({
      name: a.name,
      value: a.value,
      from: a.source.kind,
      where: describeArgSource(a.source),
    })),
    dependencyFiles: context.plan.dependencyFiles,
    mainConstraints: context.plan.mainConstraints,
    checks: context.plan.checks,
    labels: context.plan.labels,
    engine: plan.engine,
    registry: plan.registry,
    wouldDo: wouldDo(plan, push),
  };
}

export function renderImagePlan(
  plan: ImagePlan,
  trainerSrc: string,
  push: boolean,
  alsoTags: readonly string[] = [],
): string {
  const { context } = plan;
  const width = Math.max(...context.plan.args.map((a) => a.name.length));
  const valueWidth = Math.min(48, Math.max(...context.plan.args.map((a) => a.value.length)));
  const lines = [
    `Image plan  (dry run: nothing is built${push ? ' or pushed' : ''})`,
    `  trainer        ${trainerSrc} (${context.plan.dependencyFiles.join(', ') || 'no dependency files'})`,
    `  base image     ${context.buildArgs.BASE_IMAGE ?? '(the Dockerfile names its own)'}`,
    '  build arguments',
    ...context.plan.args.map(
      (a) =>
        `    ${a.name.padEnd(width)}  ${(a.value === '' ? '""' : a.value).padEnd(valueWidth)}  ← ${describeArgSource(a.source)}`,
    ),
    `  content tag    ${context.tag}${plan.ref ? ` (${plan.ref})` : ''}`,
    ...(alsoTags.length ? [`  also tagged    ${alsoTags.join(', ')}`] : []),
    `  engine         ${plan.engine.state === 'has' ? 'has it' : plan.engine.state === 'lacks' ? 'lacks it' : plan.engine.state}${plan.engine.detail ? ` (${plan.engine.detail})` : ''}`,
    `  registry       ${plan.registry.state === 'has' ? `has it (${plan.registry.digest})` : plan.registry.state === 'lacks' ? 'lacks it' : plan.registry.state}${plan.registry.detail ? ` (${plan.registry.detail})` : ''}`,
    `  would do       ${wouldDo(plan, push)}`,
    '  checks',
    ...(context.plan.checks.length
      ? context.plan.checks.map((c) => `    ${c.ok ? 'ok  ' : 'warn'}  ${c.message}`)
      : ['    (no trainer pins to check against)']),
    `  labels         ${Object.entries(context.plan.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  ];
  return `${lines.join('\n')}\n`;
}
