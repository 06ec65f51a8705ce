import type { Problem } from '../../errors';
import { RULE_IDS, type TrainingRule } from './rule';

export const baseModelChatTemplate: TrainingRule = {
  id: 'RLVR119',
  name: 'base-model-chat-template',
  doc: "a Base model with the chat template (skip_chat_template false, by the trainer's own default): it never learned the template",
  severity: 'error',
  allowable: true,
  acknowledge: RULE_IDS.baseChatTemplate,
  check: ({ config, profile, file, trainerName, trainerIndex }) => {
    const trainer = trainerIndex >= 0 ? config.roles[trainerIndex] : undefined;
    const policyModels = [
      config.model.path,
      ...(trainer?.kind === 'titan' && trainer.config?.model?.hf_assets_path
        ? [trainer.config.model.hf_assets_path]
        : []),
    ];
    const baseModel = policyModels.find((m) => /-base$/i.test(m.replace(/\/+$/, '')));
    if (!baseModel) return [];
    const problems: Problem[] = [];
    for (const ds of profile.dataSections) {
      if (!config[ds.section as 'data' | 'sft_data']) continue;
      const iterator = config[ds.iterator as 'data_iter' | 'sft_data_iter'];
      const skip = iterator?.skip_chat_template ?? ds.skipChatTemplateDefault;
      if (skip === true) continue;
      problems.push(
        file.problem(
          iterator && 'skip_chat_template' in iterator
            ? [ds.iterator, 'skip_chat_template']
            : iterator
              ? [ds.iterator]
              : ['model', 'path'],
          `"${baseModel}" is a Base model but ${ds.iterator}.skip_chat_template is not true${iterator?.skip_chat_template === undefined ? ` (${trainerName} defaults it to false)` : ''}`,
          `Base models must not be fed a chat template: set ${ds.iterator}.skip_chat_template: true.`,
        ),
      );
    }
    return problems;
  },
};
