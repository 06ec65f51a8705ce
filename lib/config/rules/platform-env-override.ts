import type { TrainingRule } from './rule';

/**
 * A module of the trainer that assigns, when imported, a variable the job's platform owns (the NCCL and
 * Gloo interfaces, the transports on EFA hosts, the GPU split, the rendezvous). Its findings are made by
 * the plan, which reads the trainer's source; the rule is here so `launcher.allow` can name it and
 * `rlvr lint --rules` lists it.
 */
export const platformEnvOverride: TrainingRule = {
  id: 'RLVR125',
  name: 'platform-env-override',
  doc: "a trainer module assigns a variable the platform owns at import (NCCL's interface, …): every process that imports it overrides the job's value, and the first communicator fails",
  severity: 'error',
  allowable: true,
  madeByPlan: true,
  check: () => [],
};
