import type { DataSection } from '../../trainers';
import type { TrainingConfig } from '../training-schema';
import type { TrainingRuleContext } from './rule';

type DataConfig = NonNullable<TrainingConfig['data']>;

/** The profile's data sections the config has, with their values (the data rules read them). */
export function presentDataSections(
  context: TrainingRuleContext,
): { readonly ds: DataSection; readonly section: DataConfig }[] {
  return context.profile.dataSections.flatMap((ds) => {
    const section = context.config[ds.section as 'data' | 'sft_data'];
    return section ? [{ ds, section }] : [];
  });
}
