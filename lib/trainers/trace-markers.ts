/**
 * The trainer's trace (their tracer.py) carries no step number on most events: its counters have only
 * `ts` (seconds since the tracer started). A step is counted instead: their trainers emit one `metrics`
 * counter per optimizer step (train_grpo_sft.py, train_grpo_gkd.py, train_opsd.py, train_sft_only.py:
 * `tracer.counter("metrics", …)` right after `optim_step`), else `titan.metrics`, `reward_stats` or
 * `grpo.debug` once a step. Where a counter carries its own `step` (batch.padding does, from
 * `stats.trace(tracer, step=trainer.version)`), it says which step a count is.
 */
export const STEP_MARKERS = ['metrics', 'titan.metrics', 'reward_stats', 'grpo_debug', 'grpo.debug'] as const;

/** Counter fields that carry the step itself (batch.padding: `step`). */
export const OWN_STEP_FIELD = 'step';
