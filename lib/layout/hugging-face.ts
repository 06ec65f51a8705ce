/** Hugging Face conventions the launcher checks: the sharded-weights index, save_to_disk markers. */
export const MODEL_INDEX_FILE = 'model.safetensors.index.json';
export const DATASET_MARKERS: readonly string[] = ['dataset_info.json', 'dataset_dict.json', 'state.json'];
