# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The floors: what any loss scaling must cost, and TF 1.15's step.

Three optimizers that every configuration is measured against, none of
them the package: `BarrierOptimizer` (the inner apply waits for every
gradient), `UnscaleFloorOptimizer` (that wait plus the least unscale) and
`tf115_optimizer`, TF 1.15's whole contrib LossScaleOptimizer as
tests/tf115_reference.py re-expresses it, loaded from this clone by path.
`INIT_SCALE` and `NEVER` are the scale every configuration starts at and
the growth period that keeps it there.
"""

import functools
import importlib.util
import os

import tensorflow as tf

from contrib_mixed_precision import skip_decision

# TF 1.15's contrib loss scaling re-expressed: the exact default's floor.
_TF115_REFERENCE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
    "tf115_reference.py")
# Large enough that float32 gradients never overflow and the scale never
# moves during a run: every configuration does the same work every step.
INIT_SCALE = 2.0**15
NEVER = 10**9


class BarrierOptimizer(tf.compat.v1.train.Optimizer):
  """The inner optimizer, whose apply starts only once every gradient exists.

  The reference for what an exact skip must cost at least: the skip cannot
  write a variable before every gradient is known to be finite, so its apply
  cannot overlap the backward pass. This adds that wait (one NoOp with a
  control input from each gradient, a control input of every op the inner
  apply builds) and nothing else: no scaling, no check, no skip.
  """

  def __init__(self, opt):
    super().__init__(use_locking=False, name=opt.get_name())
    self._opt = opt

  def compute_gradients(self, *args, **kwargs):
    return self._opt.compute_gradients(*args, **kwargs)

  def apply_gradients(self, grads_and_vars, global_step=None, name=None):
    grads_and_vars = tuple(grads_and_vars)
    if tf.executing_eagerly():
      # The tape has already returned every gradient: eager steps wait.
      return self._opt.apply_gradients(grads_and_vars, global_step, name)
    tensors = []
    for g, _ in grads_and_vars:
      if isinstance(g, tf.IndexedSlices):
        tensors.extend([g.values, g.indices])
      elif g is not None:
        tensors.append(g)
    barrier = tf.group(*tensors, name="all_gradients")
    with tf.control_dependencies([barrier]):
      return self._opt.apply_gradients(grads_and_vars, global_step, name)

  def get_slot(self, var, name):
    return self._opt.get_slot(var, name)

  def get_slot_names(self):
    return self._opt.get_slot_names()


class UnscaleFloorOptimizer(BarrierOptimizer):
  """The barrier plus the least unscale: the sparse opt-in's reference.

  `compute_gradients` has to return unscaled gradients, so any loss scaling
  costs at least one multiply of the loss and one of each gradient by the
  scale's reciprocal, besides the barrier's wait. This does exactly that,
  with code of its own: the loss times a constant scale (a non-trainable
  float32 variable, read once per step and shared by both multiplies),
  then each gradient times `reciprocal(scale)` cast once per dtype (an
  `IndexedSlices` gradient has its values multiplied and stays sparse, as
  `keep_sparse_gradients=True` keeps it). No finiteness check, no skip, no
  update: the variable never changes. `apply_gradients` is the barrier's.
  """

  def __init__(self, opt):
    super().__init__(opt)
    self._scale = None

  @property
  def loss_scale_variable(self):
    """The scale variable, created on first use (None until then)."""
    return self._scale

  def _read_scale(self):
    """This step's scale: one float32 read (a ref variable's `Snapshot`)."""
    if self._scale is None:
      # Outside any tf.function being traced, so that the variable is
      # created once (eagerly, or in the outermost graph, where the
      # runners' global_variables_initializer covers it).
      with tf.init_scope():
        self._scale = tf.compat.v1.Variable(
            INIT_SCALE, dtype=tf.float32, trainable=False,
            name="unscale_floor_scale")
    scale = tf.convert_to_tensor(self._scale)
    # A resource variable's read is a copy already; a ref variable's is not.
    if tf.executing_eagerly() or scale.op.type == "ReadVariableOp":
      return scale
    return tf.raw_ops.Snapshot(input=scale)

  def compute_gradients(self, loss, var_list=None, **kwargs):
    """The inner optimizer's gradients of `loss * scale`, times `1 / scale`.

    Args:
      loss: A scalar tensor, or a callable returning one (required in eager
        mode).
      var_list: See `tf.compat.v1.train.Optimizer.compute_gradients`.
      **kwargs: Forwarded to the inner optimizer's `compute_gradients`.

    Returns:
      A list of `(gradient, variable)` pairs; None stays None, and an
      `IndexedSlices` gradient stays sparse.
    """
    scale = self._read_scale()
    if callable(loss):

      def scaled_loss():
        value = loss()
        return value * tf.cast(scale, value.dtype.base_dtype)
    else:
      scaled_loss = loss * tf.cast(scale, loss.dtype.base_dtype)
    grads_and_vars = self._opt.compute_gradients(scaled_loss,
                                                 var_list=var_list, **kwargs)
    grads = [g for g, _ in grads_and_vars if g is not None]
    if (tf.executing_eagerly() and
        len(grads) >= skip_decision.EAGER_COMPILE_MIN_GRADIENTS):
      # The cheapest eager unscale: one call, where the package makes one.
      unscaled = iter(_floor_unscaled_compiled(grads, scale))
    else:
      unscaled = iter(_floor_unscaled(grads, scale))
    return [(None if g is None else next(unscaled), v)
            for g, v in grads_and_vars]


def _floor_unscaled(grads, scale):
  """Each gradient times `1 / scale`, cast once per dtype: one multiply each.

  An `IndexedSlices` gradient has its values multiplied and keeps its
  indices: it stays sparse.
  """
  inverse = tf.math.reciprocal(scale)
  by_dtype = {tf.float32: inverse}
  result = []
  for g in grads:
    dtype = g.dtype.base_dtype
    if dtype not in by_dtype:
      by_dtype[dtype] = tf.cast(inverse, dtype)
    if isinstance(g, tf.IndexedSlices):
      result.append(tf.IndexedSlices(g.values * by_dtype[dtype], g.indices,
                                     g.dense_shape))
    else:
      result.append(g * by_dtype[dtype])
  return result


# The floor's unscale as one call, for eager floors.
_floor_unscaled_compiled = tf.function(_floor_unscaled, reduce_retracing=True,
                                       autograph=False)


@functools.lru_cache(maxsize=None)
def tf115_reference():
  """tests/tf115_reference.py, TF 1.15's contrib loss scaling, by its path.

  The judge of every number (docs/design.md, contract 15), imported from this
  clone rather than copied, so that the floor is the very code the tests
  compare the package with.

  Raises:
    SystemExit: The file is not there (the benchmark runs from a clone).
  """
  if not os.path.exists(_TF115_REFERENCE):
    raise SystemExit(
        "the `tf115` configuration loads TF 1.15's optimizer from {}, which "
        "is missing: run the benchmark from a clone of the repository, or "
        "leave `tf115` out with `--configs`.".format(_TF115_REFERENCE))
  spec = importlib.util.spec_from_file_location("tf115_reference",
                                                _TF115_REFERENCE)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def tf115_optimizer(inner):
  """TF 1.15's whole contrib optimizer and exponential manager: the floor."""
  reference = tf115_reference()
  return reference.LossScaleOptimizer(
      inner, reference.ExponentialUpdateLossScaleManager(INIT_SCALE, NEVER))

