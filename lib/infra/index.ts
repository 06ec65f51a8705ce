export { buildApp, STACK_NAME } from './app';
export { RlvrInfraStack } from './rlvr-stack';
export { TrainingJobTemplate, type TrainingJobTemplateProps } from './job-template';
export { parseInfraProps, CONTEXT_PREFIX, type RlvrInfraProps } from './props';
export { leastPrivilegePolicy, UNSCOPABLE_ACTIONS, NETWORK_INTERFACE_ACTIONS } from './policy';
