export {
  settingsSchema,
  mergeSettings,
  validateSettings,
  requireSettings,
  parseSettingsParameter,
  REQUIRED_SETTINGS,
  type Settings,
  type SettingName,
  type SettingSource,
  type SettingFlags,
  type ResolvedSettings,
} from './settings';
