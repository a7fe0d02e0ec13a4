# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The unscale: gradients of the scaled loss, divided by the loss scale.

`compute_gradients` must return unscaled gradients (TF1 code clips and
all-reduces them before `apply_gradients`), so every exact loss scaler pays
one pass over every gradient here. Where one call can also decide whether
what it returns is finite, it does, and the flag goes with the tensors
(`known_flags.remember_finite`): `apply_gradients`, handed the very same
tensors, uses it instead of checking them again. Any gradient the caller
replaced in between (clipped, all-reduced) is a new tensor and is checked
as before, so the decision is the same in every case.

Every gradient is multiplied alone by the reciprocal of the scale, cast
to its dtype, exactly as TF 1.15's `_down_scale` built it, and an
`IndexedSlices` gradient is made dense first, as that multiply made it in
TF 1.15, unless the optimizer was asked to keep it sparse. Grappler
rewrites a graph by its shape, so TF 1.15's graph shape is the one that
gives TF 1.15's numbers (docs/design.md, contract 15). Each dense gradient made
from an `IndexedSlices` is noted with its touched rows (`sparse_rows`), by
which `apply_gradients` checks it, and applies it where that is exact.
Three ways to run those multiplies, each where it was measured fastest
(docs/performance.md):

* Graph mode and `tf.function`: the multiplies; the check stays in
  `apply_gradients` and reads what it is handed, as TF 1.15's did. Nothing
  else reads the gradients of the scaled loss: Grappler's arithmetic
  optimizer folds TF 1.15's multiply into the backprop's chain of constant
  multiplies only where it is their one consumer, so a check beside the
  multiplies (an earlier version's, in a function) made a float16 or
  near-overflow gradient finite in TF 1.15's graph and Inf in ours. On a CPU,
  TF's own kernels also beat an XLA-fused unscale and check for every
  shape measured.
* Eager mode, from `skip_decision.EAGER_COMPILE_MIN_GRADIENTS` gradients on:
  `_unscale_and_check` as one compiled call (`_unscale_and_check_compiled`),
  where op by op each multiply would be a Python dispatch. Below that, the
  multiplies op by op, and the check in `apply_gradients`.
* With `xla=True` (`LossScaleOptimizer(..., xla_unscale=True)`), eagerly:
  each dense floating gradient is unscaled and checked in one XLA-compiled
  pass (`_XLA_UNSCALE_AND_CHECK`), which reads every element once, where
  the two passes read it twice. Sparse and complex gradients take the multiply
  above (XLA would compile again for every new row count). Not in a
  `tf.function`: Grappler's arithmetic optimizer regroups TF 1.15's
  multiply with the backprop's chain of multiplies there, and an XLA call,
  opaque to it, kept the product in another order, one bit off TF 1.15's.

The flag goes with the tensors in eager mode only. In a graph (a
TF1-style one or a function's), `apply_gradients` checks what it gets, as
TF 1.15 checked: `Session.run` or `prune` may feed any tensor a value a
flag never saw, and Grappler's rewrite of the multiplies must see the graph
TF 1.15 built. `xla_unscale` changes nothing there: XLA's auto-clustering
(`global_jit_level`) fuses the unscale and the check on a GPU, and sees the
feeds.
"""

from typing import Any, List, Sequence

import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import known_flags
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import sparse_rows


def scaled_loss(loss, loss_scale):
  """`loss` times `loss_scale` cast to the loss's dtype, for differentiation.

  A callable loss stays a callable eagerly and inside a `tf.function`: a v1
  optimizer then differentiates it on a tape, and `var_list=None` means the
  watched variables (a function graph has no trainable-variable
  collection). In a TF1 graph it is called here.
  """
  if callable(loss):
    if tf.executing_eagerly() or _tf_compat.is_building_function():
      user_loss = loss

      def scaled():
        value = user_loss()
        return value * tf.cast(loss_scale, value.dtype.base_dtype)

      return scaled
    loss = loss()
  loss = tf.convert_to_tensor(loss)
  return loss * tf.cast(loss_scale, loss.dtype.base_dtype)


def _reciprocals(loss_scale):
  """`inv(dtype)`: `1 / loss_scale` in the scale's dtype, cast to `dtype`.

  As TF 1.15's `_down_scale`: one reciprocal of the scale as it came (a
  float64 scale's in float64), cast once per gradient dtype.
  """
  inv_loss_scale = tf.math.reciprocal(loss_scale)
  inv_by_dtype = {inv_loss_scale.dtype.base_dtype: inv_loss_scale}

  def inv(dtype):
    if dtype not in inv_by_dtype:
      inv_by_dtype[dtype] = tf.cast(inv_loss_scale, dtype)
    return inv_by_dtype[dtype]

  return inv


def unscaled(grads: Sequence[Any], loss_scale) -> List[Any]:
  """`grads` (no None among them) each multiplied by `1 / loss_scale`.

  One reciprocal, cast once per gradient dtype; an `IndexedSlices` gradient
  has its values multiplied and stays sparse (`unscale` makes it dense
  first unless asked to keep it sparse).
  """
  return _times(grads, _reciprocals(loss_scale))


def _times(grads, inv):
  """Each of `grads` times `inv(its dtype)` (IndexedSlices: its values).

  One multiply per gradient, as TF 1.15 built it. Grappler's arithmetic
  optimizer folds that multiply into the chain of constant multiplies
  that produced the gradient, and the folded product can round, or
  overflow in float16, differently from the product taken in another
  order. Any other grouping of the same multiplies (a stack, a concat)
  blocks the fold: TF 1.15's graph is the judge (docs/design.md, contract 15).
  """
  result = []
  for g in grads:
    if isinstance(g, tf.IndexedSlices):
      values = g.values * inv(g.values.dtype.base_dtype)
      result.append(tf.IndexedSlices(values, g.indices, g.dense_shape))
    else:
      result.append(g * inv(g.dtype.base_dtype))
  return result


def densified(grads: Sequence[Any]) -> List[Any]:
  """`grads` with every `IndexedSlices` converted to a dense tensor.

  TF 1.15's `_down_scale` computed `g * cast(1 / scale)`, and a tensor
  multiplying an `IndexedSlices` converts it (duplicate rows summed), so
  the inner optimizer took its dense update, which in every optimizer but
  GradientDescent moves, decays or re-rounds rows a batch did not touch
  (tests/keep_sparse_gradients_test.py). The conversion is TF's own, warning
  as TF 1.15 did when the table is large.
  """
  return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
          for g in grads]


def _unscale_and_check(grads, loss_scale):
  """`unscaled(grads)`, and `skip_decision.all_finite` of them.

  The check's fast path reads `grads` themselves, so that in a graph it
  runs beside the multiplies instead of after them
  (`skip_decision.all_finite_scaled`); its answer is the same.
  """
  inv = _reciprocals(loss_scale)
  result = _times(grads, inv)
  return result, skip_decision.all_finite_scaled(result, grads,
                                                 inv(tf.float32))


# `_unscale_and_check` as one call for eager steps. `reduce_retracing`: a
# gradient whose shape changes between steps (an embedding's row count)
# makes one trace with that dimension unknown, not one trace per shape.
_unscale_and_check_compiled = tf.function(
    _unscale_and_check, reduce_retracing=True, autograph=False)


def _unscale_and_check_dense(grads, inverses):
  """Dense floating `grads` times `inverses` (one each), and their finiteness.

  Returns the unscaled gradients, one flag per gradient, and the flag of
  them all. Compiled by XLA (`_XLA_UNSCALE_AND_CHECK`), the multiply and the
  check of each gradient are one loop over its elements. Each inverse
  comes in already cast to its gradient's dtype, as `unscaled` casts it:
  cast inside, XLA may drop a float32 -> bfloat16 -> float32 round trip
  and multiply by the unrounded float32 value, which changes the bits.
  """
  result = []
  flags = []
  for g, inv in zip(grads, inverses):
    u = g * inv
    result.append(u)
    flags.append(tf.reduce_all(tf.math.is_finite(u)))
  return result, flags, tf.reduce_all(tf.stack(flags))


# `_unscale_and_check_dense`, compiled by XLA: traced once per gradient
# signature, and XLA compiles each new shape. Eager steps only (`unscale`).
_XLA_UNSCALE_AND_CHECK = tf.function(
    _unscale_and_check_dense, jit_compile=True, reduce_retracing=True,
    autograph=False)


def _fusable(grad) -> bool:
  """Whether XLA's fused pass takes `grad`: a dense real floating tensor."""
  return (not isinstance(grad, tf.IndexedSlices) and
          grad.dtype.base_dtype.is_floating)


def unscale(grads: Sequence[Any], loss_scale, xla: bool = False,
            keep_sparse: bool = False) -> List[Any]:
  """`unscaled(grads, loss_scale)`, remembering their finiteness if it is free.

  Args:
    grads: Gradients of the scaled loss: tensors or IndexedSlices, no None.
    loss_scale: The scalar floating tensor the loss was multiplied by (its
      reciprocal is taken in its own dtype, as TF 1.15 took it).
    xla: Unscale and check dense floating gradients in one XLA-compiled
      pass, eagerly (see the module docstring).
    keep_sparse: Keep `IndexedSlices` gradients sparse (their values
      unscaled). By default they are made dense first, as TF 1.15 made them
      (`densified`).

  Returns:
    The unscaled gradients, in order. Their finiteness is remembered
    (`known_flags.remember_finite`) when it was computed with them, and
    each `IndexedSlices` made dense is remembered with its touched rows
    (`sparse_rows.remember`).
  """
  # The embeddings' dense gradients, noted by their touched rows
  # (`sparse_rows`): applied and checked by them where that is exact.
  sparse = [] if keep_sparse else [
      (i, g) for i, g in enumerate(grads) if sparse_rows.wanted(g)]
  # One reciprocal for the multiplies and the rows (eagerly, only where
  # the multiplies below take none of their own).
  inv = (_reciprocals(loss_scale)
         if sparse or not tf.executing_eagerly() else None)
  result = _unscaled_all(grads, loss_scale, inv, xla, keep_sparse)
  for i, slices in sparse:
    sparse_rows.remember(result[i], slices,
                         inv(slices.values.dtype.base_dtype))
  return result


def _unscaled_all(grads, loss_scale, inv, xla, keep_sparse):
  """`unscale`'s gradients; `inv` is `_reciprocals(loss_scale)` or None."""
  grads = list(grads) if keep_sparse else densified(grads)
  if xla and tf.executing_eagerly():
    dense = [g for g in grads if _fusable(g)]
    if dense:
      inv = _reciprocals(loss_scale)
      fused, flags, all_flag = _XLA_UNSCALE_AND_CHECK(
          dense, [inv(g.dtype.base_dtype) for g in dense])
      known_flags.remember_finite(fused, all_flag, flags)
      # Checked in `apply_gradients`, as ever.
      not_fused = unscaled([g for g in grads if not _fusable(g)], loss_scale)
      others = iter(not_fused)
      fused = iter(fused)
      return [next(fused) if _fusable(g) else next(others) for g in grads]
  if (tf.executing_eagerly() and
      len(grads) >= skip_decision.EAGER_COMPILE_MIN_GRADIENTS):
    # A tensor, so that a Python number does not make a trace per value.
    result, flag = _unscale_and_check_compiled(
        grads, tf.convert_to_tensor(loss_scale))
    known_flags.remember_finite(result, flag)
    return result
  return _times(grads, inv or _reciprocals(loss_scale))
