# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""How `LossScaleOptimizer` meets TF1's `SyncReplicasOptimizer`.

`SyncReplicasOptimizer` aggregates the workers' gradients in conditional
accumulators on the parameter servers. The chief takes each aggregate
(`take_grad`, which moves every accumulator's time step on by one), hands it
to the optimizer it wraps, and then fills the token queue with
`global_step`. A worker's next gradient carries that token as its local
step, and an accumulator drops any gradient whose step is older than its
own. So the accumulators' clock and `global_step` must move together:

* `SyncReplicasOptimizer(LossScaleOptimizer(opt))`: the skip decision is made
  once per aggregate, on the chief. A skipped aggregate applies no update
  but still advances `global_step` by one, exactly as an applied one does,
  so the tokens stay fresh. `aggregated_by_accumulators` is how the
  optimizer knows it is in that position.
* `LossScaleOptimizer(SyncReplicasOptimizer(opt))` would decide on each
  worker's own gradient, before aggregation: a worker that skips never
  delivers its share and the aggregate never completes. It is refused when
  built (`refuse_wrapping_sync_replicas`).
"""

import tensorflow as tf

# The ops that take an aggregate out of a (sparse) conditional accumulator.
# Public op names (`tf.raw_ops`); ref-typed accumulators use the first.
_TAKE_GRADIENT_OPS = frozenset([
    "AccumulatorTakeGradient",
    "ResourceAccumulatorTakeGradient",
    "SparseAccumulatorTakeGradient",
])


def _producer_type(grad):
  """The type of the op that produced `grad` (its values, if sparse)."""
  values = grad.values if isinstance(grad, tf.IndexedSlices) else grad
  op = getattr(values, "op", None)
  return getattr(op, "type", None)


def aggregated_by_accumulators(grads) -> bool:
  """Whether every gradient of `grads` was taken out of an accumulator.

  True exactly when `SyncReplicasOptimizer.apply_gradients` (or a program
  that aggregates the same way) hands the aggregate to the optimizer it
  wraps: each non-None gradient is the output of a `take_grad`. Each such
  take has already moved its accumulator's time step on by one, whether or
  not the aggregate is then applied.

  Args:
    grads: Gradients (tensors, `IndexedSlices` or None). Eager tensors
      never come from an accumulator.

  Returns:
    A Python bool; False when there is no non-None gradient.
  """
  types = [_producer_type(g) for g in grads if g is not None]
  return bool(types) and all(t in _TAKE_GRADIENT_OPS for t in types)


def refuse_wrapping_sync_replicas(opt) -> None:
  """Raises if `opt` is a `SyncReplicasOptimizer` (see the module docstring).

  Args:
    opt: The optimizer a `LossScaleOptimizer` is asked to wrap.

  Raises:
    TypeError: If `opt` is a `tf.compat.v1.train.SyncReplicasOptimizer`.
  """
  if isinstance(opt, tf.compat.v1.train.SyncReplicasOptimizer):
    raise TypeError(
        "LossScaleOptimizer cannot wrap a SyncReplicasOptimizer (got {!r}): "
        "it would decide to skip on each worker's own gradients before they "
        "are aggregated, and a worker that skips never delivers its "
        "gradient, so the aggregate never completes. Wrap the other way "
        "round: `tf.compat.v1.train.SyncReplicasOptimizer("
        "LossScaleOptimizer(opt, loss_scale_manager), "
        "replicas_to_aggregate=...)`, which checks each aggregate once on "
        "the chief and skips it for every worker.".format(opt))
