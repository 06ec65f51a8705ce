export {
  mergeSettings,
  validateSettings,
  requireSettings,
  resolveSettings,
  type ParameterState,
  type SettingName,
  type SettingFlags,
  type ResolvedSettings,
} from './settings';
