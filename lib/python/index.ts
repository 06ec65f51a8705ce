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
  topLevelImports,
  unreachableImports,
  type ImportProblem,
  type ImportRoot,
  type ImportRootsInput,
} from './import-roots';
export {
  constraintLines,
  lockClosure,
  lockedVersions,
  normalizeName,
  readUvLock,
  type LockedDependency,
  type LockedPackage,
  type UvLock,
} from './uv-lock';
export { readRequirementPins, type RequirementPin, type RequirementPins } from './requirements';
export { evaluateMarker, imageEnvironment, type MarkerEnvironment } from './markers';
export { networkCalls, reachableModules, type NetworkCall } from './reachable';
export { STDLIB_MODULES } from './stdlib';
export { environmentWrites, pythonStringLiteral, type EnvironmentWrite } from './environment-writes';
