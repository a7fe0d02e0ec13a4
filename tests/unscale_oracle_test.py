# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 1.15's optimizer judges the unscale where the oracle's zoo does not go.

Issue 41 and docs/design.md, contract 15. `tf115_oracle_test.py` trains its zoo
with the built-in managers and the default unscale. Two paths of
`unscale.py` are judged here, by the same judge (`tf115_reference`, TF
1.15's contrib optimizer re-expressed), built beside the package on the
same model, in the same Session, `tf.function` or eager loop, and compared
to the bit after every step:

* `xla_unscale=True`, whose XLA pass unscales each gradient and computes
  its finiteness flag. A user's manager may return a scale below 1; then
  the unscale multiplies, and a finite gradient of the scaled loss can
  overflow to -inf once unscaled. TF 1.15 checked the unscaled gradients
  and skipped that step: the flag must be read from them, not from the
  gradients of the scaled loss.
* float64 variables. TF 1.15 took the reciprocal of the scale in the
  scale's own dtype and cast it to each gradient's: for a float32 scale of
  3, a float64 gradient is multiplied by float32's 1/3, not float64's; for
  a float64 scale, by float64's.
"""

import contextlib

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

import tf115_reference as tf115

MODES = ("graph", "function", "eager")
_W0 = (0.0, 0.5, -1.0)
# The model's data, one row per step. At a scale of 2**-3, step 1's first
# gradient is 0.5 * -3e38 = -1.5e38 in the scaled loss, and -1.2e39 = -inf
# once unscaled (times 8): TF 1.15 skips that step.
_DATA = ((0.1, 0.7, 1.3), (-3e38, 0.7, 1.3), (0.3, -0.9, 1.7),
         (1.1, 0.2, -0.6))


class _UserScale(mp.LossScaleManager):
  """A user's manager: a fixed scale, below 1 if the user wants.

  `scale` is a Python float (a new constant at every call, in the graph
  being built) or a variable. TF 1.15's optimizer takes the same object:
  it only calls the two methods.
  """

  def __init__(self, scale, dtype):
    self._scale = scale
    self._dtype = dtype

  def get_loss_scale(self):
    if isinstance(self._scale, tf.Variable):
      return self._scale
    return tf.constant(self._scale, self._dtype)

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return None if tf.executing_eagerly() else tf.no_op()


class _Side(object):
  """One side: its variable, `global_step`, manager and optimizer."""

  def __init__(self, which, dtype, scale, data, xla):
    """`scale`: ("fixed" | "constant" | "variable", value, dtype name)."""
    kind, value, scale_dtype = scale
    self._data = data
    with tf.name_scope(which):
      self.w = tf.compat.v1.Variable(np.array(_W0, dtype), name="w")
      self.global_step = tf.compat.v1.Variable(
          0, dtype=tf.int64, trainable=False, name="global_step")
      if kind == "fixed":
        manager = (tf115.FixedLossScaleManager(value) if which == "oracle"
                   else mp.FixedLossScaleManager(value))
      else:
        if kind == "variable":
          value = tf.compat.v1.Variable(value, dtype=scale_dtype,
                                        trainable=False, name="scale")
        manager = _UserScale(value, scale_dtype)
      inner = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
      if which == "oracle":
        self.opt = tf115.LossScaleOptimizer(inner, manager)
      else:
        self.opt = mp.LossScaleOptimizer(inner, manager, xla_unscale=xla)

  def loss(self):
    return tf.reduce_sum(tf.sin(self.w) * self._data) * 4.0

  def step(self, graph):
    loss = self.loss() if graph else self.loss
    return self.opt.minimize(loss, global_step=self.global_step,
                             var_list=[self.w])

  def state(self):
    return {"w": self.w, "global_step": self.global_step,
            "momentum": self.opt.get_slot(self.w, "momentum")}


def _trajectories(mode, dtype, scale, xla=False):
  """Both sides' state after each step of `_DATA`: (oracle, package)."""
  graph = tf.Graph() if mode == "graph" else None
  oracle, package = [], []
  with (graph.as_default() if graph else contextlib.nullcontext()):
    if graph:
      data = tf.compat.v1.placeholder(dtype, [3], name="data")
    else:
      data = tf.Variable(np.zeros(3, dtype), trainable=False, name="data")
    sides = [_Side(which, dtype, scale, data, xla)
             for which in ("oracle", "package")]
    if graph:
      train = [side.step(graph=True) for side in sides]
      fetches = [side.state() for side in sides]
      with tf.compat.v1.Session(graph=graph) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for row in _DATA:
          feed = {data: np.array(row, dtype)}
          for op in train:  # Grappler optimizes each side's run alone.
            sess.run(op, feed)
          o, p = sess.run(fetches)
          oracle.append(o)
          package.append(p)
      return oracle, package

    def train():
      for side in sides:
        side.step(graph=False)

    if mode == "function":
      train = tf.function(train, autograph=False)
    for row in _DATA:
      data.assign(np.array(row, dtype))
      train()
      oracle.append({k: v.numpy() for k, v in sides[0].state().items()})
      package.append({k: v.numpy() for k, v in sides[1].state().items()})
  return oracle, package


class OracleTestCase(tf.test.TestCase):

  def assertMatchesTF115(self, oracle, package, applied_steps):
    """Every state equals the oracle's to the bit, after each step."""
    for step, (o, p) in enumerate(zip(oracle, package)):
      for name in sorted(o):
        want, got = np.asarray(o[name]), np.asarray(p[name])
        self.assertEqual(
            (want.dtype, want.tobytes()), (got.dtype, got.tobytes()),
            msg="after step {}, {}: package {} != TF 1.15's {}".format(
                step, name, got, want))
    # The case trains and skips the steps it means to.
    self.assertEqual(int(oracle[-1]["global_step"]), applied_steps)


class XlaUnscaleTest(OracleTestCase, parameterized.TestCase):
  """`xla_unscale=True` skips and applies what TF 1.15 skipped and applied."""

  @parameterized.product(
      mode=MODES,
      scale=(("constant", 2.0**-3, "float32"),
             ("variable", 2.0**-3, "float32")))
  def test_a_gradient_that_overflows_once_unscaled_is_skipped(self, mode,
                                                              scale):
    oracle, package = _trajectories(mode, np.float32, scale, xla=True)
    self.assertMatchesTF115(oracle, package, applied_steps=3)

  @parameterized.product(
      mode=MODES,
      scale=(("variable", 3.0, "float32"), ("fixed", 1000.0, "float32"),
             ("variable", 3.0, "float64")),
      dtype=(np.float32, np.float64))
  def test_finite_steps_apply_tf115s_numbers(self, mode, scale, dtype):
    # At 3 or 1000, 1/scale is inexact: a division by the scale, or a
    # reciprocal in another dtype, moves the last bit. Step 1 overflows in
    # float32 once scaled, and is skipped. In a `tf.function`, Grappler's
    # arithmetic optimizer reorders TF 1.15's chain of multiplies (the
    # unscale's with the backprop's): an XLA call there, opaque to it,
    # moved the last bit (issue 41), so only eager steps fuse.
    oracle, package = _trajectories(mode, dtype, scale, xla=True)
    self.assertMatchesTF115(oracle, package,
                            applied_steps=3 if dtype == np.float32 else 4)


class Float64VariablesTest(OracleTestCase, parameterized.TestCase):
  """A float64 gradient is multiplied by the reciprocal TF 1.15 took."""

  @parameterized.product(
      mode=MODES,
      scale=(("fixed", 3.0, "float32"), ("constant", 3.0, "float32"),
             ("variable", 3.0, "float64"), ("constant", 1000.0, "float64")))
  def test_trains_as_tf115(self, mode, scale):
    oracle, package = _trajectories(mode, np.float64, scale)
    self.assertMatchesTF115(oracle, package, applied_steps=4)


if __name__ == "__main__":
  tf.test.main()
