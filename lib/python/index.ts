/**
 * The trainer repository as a Python project: its pyproject.toml (name, requires-python, layout), the
 * import roots its code is found under, its uv.lock (pins, the dependency graph) and the exact pins of
 * its requirements files. Read by the submit (import roots), the image (versions) and the doctor.
 */
export { readPyproject, type Pyproject } from './pyproject';
export {
  findImportRoots,
  missingRoots,
  shadowedStdlib,
  unreachableImports,
  type ImportRoot,
} from './import-roots';
export {
  constraintLines,
  lockClosure,
  lockedVersions,
  readUvLock,
  type LockedPackage,
  type UvLock,
} from './uv-lock';
export { readRequirementPins, type RequirementPins } from './requirements';
export { evaluateMarker, imageEnvironment, type MarkerEnvironment } from './markers';
export { networkCalls, reachableModules, type NetworkCall } from './reachable';
export { environmentWrites, type EnvironmentWrite } from './environment-writes';
