/** The section of the image the job runs in: its reference, what our build recorded it has, its CUDA. */
import { cudaDriverPlanLine } from '../../lib/image';
import { isPlaceholder, planSection, row } from './section';

/** What our build recorded the image has: `torch 2.9.0 · vLLM 0.11.2 · Ray 2.51.2 · Python 3.11 · CUDA 12.8 · EFA …`. */
function imageHas(labels: Readonly<Record<string, string>> | undefined): string | undefined {
  if (!labels) return undefined;
  const parts = [
    ['rlvr.torch', 'torch'],
    ['rlvr.vllm', 'vLLM'],
    ['rlvr.ray', 'Ray'],
    ['rlvr.python', 'Python'],
    ['rlvr.cuda', 'CUDA'],
    ['rlvr.efa', 'EFA'],
  ]
    .filter(([k]) => labels[k] !== undefined)
    .map(([k, name]) => `${name} ${labels[k]}`);
  return parts.length ? parts.join(' · ') : undefined;
}

export const imageSection = planSection({
  id: 'image',
  text: (plan) => {
    let out = row(
      'image',
      isPlaceholder(plan, 'image') ? '<UNRESOLVED image>' : plan.image.uri,
      plan.image.source,
    );
    const has = imageHas(plan.image.labels);
    if (has) out += row('', has);
    const driver = cudaDriverPlanLine(plan.image.labels);
    return driver ? out + row('', driver) : out;
  },
  json: (plan) => ({ image: plan.image }),
});
