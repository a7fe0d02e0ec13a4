# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The judge of every number: TF 1.15's contrib loss scaling, re-expressed.

TF 1.15's `tf.contrib.mixed_precision` (tensorflow/tensorflow, tag v1.15.0,
`tensorflow/contrib/mixed_precision/python/loss_scale_optimizer.py` and
`loss_scale_manager.py`; the same text at commit
d4da8259f903377838fe154999e05bc9332e1c11), written here again with public
ops and nothing of this package (docs/design.md, contract 15). Tests build it
beside `contrib_mixed_precision` on the same model, in the same Session or
`tf.function`, with Grappler at its defaults, and require the two to agree
to the bit. It is built op for op as TF 1.15 built it, because Grappler
rewrites a graph by its shape, not by its meaning: the same product
computed in another order can round, or overflow, differently.

What TF 1.15 did, and this module does:

* `compute_gradients`: the loss times `cast(scale, loss dtype)`, the inner
  optimizer's `compute_gradients` (a tape eagerly, the scaled loss a
  callable), then `_down_scale`.
* `_down_scale`: one `reciprocal(scale)` in the scale's own dtype, and each
  gradient alone times its cast to the gradient's dtype. An
  `IndexedSlices` gradient is made dense by that multiply (its duplicate
  rows summed), so the inner optimizer takes its dense update.
* `apply_gradients`: `reduce_all` of one `reduce_all(is_finite(g))` per
  gradient, the inner apply inside `tf.cond` on it, and the manager's
  update beside it.
* The managers: a float32 constant for a fixed scale; for the exponential
  one, three variables and the nested `tf.cond`s of TF 1.15.

TF 1.15 crashed on a None gradient (tensorflow#31956) and under
`tf.distribute` (tensorflow#25080): this module does too, and a test
compares the package with it on the same model without the cause.
"""

import tensorflow as tf


class FixedLossScaleManager(object):
  """TF 1.15's fixed manager: a float32 constant, and nothing to update."""

  def __init__(self, loss_scale):
    if loss_scale < 1:
      raise ValueError("loss scale must be at least 1.")
    self._loss_scale = tf.convert_to_tensor(loss_scale, dtype=tf.float32)

  def get_loss_scale(self):
    return self._loss_scale

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return tf.no_op()


class ExponentialUpdateLossScaleManager(object):
  """TF 1.15's exponential manager: its variables and its nested conds."""

  def __init__(self, init_loss_scale, incr_every_n_steps,
               decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.8):
    self._incr_every_n_steps = incr_every_n_steps
    self._decr_every_n_nan_or_inf = decr_every_n_nan_or_inf
    self._incr_ratio = incr_ratio
    self._decr_ratio = decr_ratio
    # Named apart from the package's own `loss_scale`, which tests build in
    # the same graph.
    self._loss_scale = tf.compat.v1.Variable(
        tf.convert_to_tensor(init_loss_scale, tf.float32),
        name="tf115_loss_scale", dtype=tf.float32, trainable=False)
    self._num_good_steps = tf.compat.v1.Variable(
        0, name="tf115_good_steps", dtype=tf.int32, trainable=False)
    self._num_bad_steps = tf.compat.v1.Variable(
        0, name="tf115_bad_steps", dtype=tf.int32, trainable=False)

  def variables(self):
    return [self._loss_scale, self._num_good_steps, self._num_bad_steps]

  def get_loss_scale(self):
    return self._loss_scale

  def _reset_stats(self):
    return tf.group(
        tf.compat.v1.assign(self._num_good_steps, 0),
        tf.compat.v1.assign(self._num_bad_steps, 0))

  def update_loss_scale(self, finite_grads):
    """The nested conds of TF 1.15 (eagerly, one branch each runs)."""

    def if_finite():

      def grow():
        new_scale = tf.cond(
            tf.math.is_finite(self._loss_scale * self._incr_ratio),
            lambda: self._loss_scale * self._incr_ratio,
            lambda: tf.identity(self._loss_scale))
        return tf.group(tf.compat.v1.assign(self._loss_scale, new_scale),
                        self._reset_stats())

      return tf.cond(
          self._num_good_steps + 1 >= self._incr_every_n_steps, grow,
          lambda: tf.group(tf.compat.v1.assign_add(self._num_good_steps, 1)))

    def if_not_finite():

      def shrink():
        new_scale = tf.maximum(1., self._loss_scale * self._decr_ratio)
        return tf.group(tf.compat.v1.assign(self._loss_scale, new_scale),
                        self._reset_stats())

      def count():
        return tf.group(
            tf.compat.v1.assign_add(self._num_bad_steps, 1),
            tf.compat.v1.assign(self._num_good_steps, 0))

      return tf.cond(
          self._num_bad_steps + 1 >= self._decr_every_n_nan_or_inf,
          shrink, count)

    return tf.cond(finite_grads, if_finite, if_not_finite)


class LossScaleOptimizer(tf.compat.v1.train.Optimizer):
  """TF 1.15's contrib `LossScaleOptimizer`, op for op."""

  def __init__(self, opt, loss_scale_manager):
    # TF 1.15 never called the base constructor; `_name` lets `minimize`
    # name its scope.
    self._opt = opt
    self._loss_scale_manager = loss_scale_manager
    self._name = "TF115LossScaleOptimizer"

  def compute_gradients(self, loss, var_list=None,
                        gate_gradients=tf.compat.v1.train.Optimizer.GATE_OP,
                        aggregation_method=None,
                        colocate_gradients_with_ops=False, grad_loss=None):
    loss_scale = self._loss_scale_manager.get_loss_scale()
    if tf.executing_eagerly():

      def scaled_loss():
        value = loss()
        return value * tf.cast(loss_scale, value.dtype.base_dtype)
    else:
      value = loss() if callable(loss) else loss
      scaled_loss = value * tf.cast(loss_scale, value.dtype.base_dtype)
    grads_and_vars = self._opt.compute_gradients(
        scaled_loss, var_list=var_list, gate_gradients=gate_gradients,
        aggregation_method=aggregation_method,
        colocate_gradients_with_ops=colocate_gradients_with_ops,
        grad_loss=grad_loss)
    return self._down_scale(grads_and_vars, loss_scale)

  def apply_gradients(self, grads_and_vars, global_step=None, name=None):
    grads_and_vars = list(grads_and_vars)
    flags = [tf.reduce_all(tf.raw_ops.IsFinite(x=tf.convert_to_tensor(g)))
             for g, _ in grads_and_vars]
    is_overall_finite = tf.reduce_all(flags)

    def apply_fn():
      return self._opt.apply_gradients(grads_and_vars, global_step, name)

    update_vars = tf.cond(is_overall_finite, apply_fn, tf.no_op)
    return tf.group(
        update_vars,
        self._loss_scale_manager.update_loss_scale(is_overall_finite))

  def _down_scale(self, grads_vars, loss_scale):
    inv_loss_scale = tf.math.reciprocal(loss_scale)
    result = []
    for g, v in grads_vars:
      if g is None:
        result.append((g, v))
        continue
      # TF 1.15's `g * cast(...)`: a Tensor on the right multiplies an
      # `IndexedSlices` on the left by converting it to a dense tensor.
      dense = tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
      result.append((dense * tf.cast(inv_loss_scale, g.dtype.base_dtype), v))
    return result

  # What TF 1.15's optimizer inherited from `Optimizer` and what the tests
  # read: the slots live on the inner optimizer.
  def get_slot(self, var, name):
    return self._opt.get_slot(var, name)

  def get_slot_names(self):
    return self._opt.get_slot_names()

  def variables(self):
    return self._opt.variables()
