import { loaderUses } from '../loader-uses';
import { RULE_IDS, type TrainingRule } from './rule';

export const nextQuestionStop: TrainingRule = {
  id: 'RLVR122',
  name: 'next-question-stop',
  doc: "GSM8K prompts without the prompt format's next-question marker in sampling.stop",
  severity: 'error',
  allowable: true,
  acknowledge: RULE_IDS.gsm8kStop,
  check: ({ config, profile, file }) => {
    const sampling = config.sampling;
    if (!profile.samples || !sampling) return [];
    // The next question's marker must stop a completion, or it runs on and corrupts answer extraction.
    const stops = sampling.stop ?? [];
    const markers = new Set<string>();
    for (const ref of loaderUses(config, ['data'])) {
      const loader = profile.loaders?.[ref.name];
      if (loader?.nextQuestionStop) markers.add(loader.nextQuestionStop);
      // A loader the profile does not describe: lm_eval's GSM8K format, "Question: … Answer:".
      else if (!loader && /gsm8k/i.test(ref.name)) markers.add('Question:');
    }
    const missing = [...markers].filter((m) => !stops.includes(m));
    if (missing.length === 0) return [];
    return [
      file.problem(
        sampling.stop ? ['sampling', 'stop'] : ['sampling'],
        `GSM8K data but sampling.stop lacks ${missing.map((s) => JSON.stringify(s)).join(', ')}: completions run on into the next question`,
        'Use stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"] (their GSM8K loader prompts "Q: … A:"; lm_eval\'s format is "Question: … Answer:").',
      ),
    ];
  },
};
