# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF's own loss-scale consumers driving `ExponentialUpdateLossScale`.

`tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer` (and
`enable_mixed_precision_graph_rewrite`, which builds one) must skip NaN
steps and move the scale by the contrib policy, in every mode; Keras'
converters, which cannot run that policy, must refuse it loudly.
"""

import importlib
import json
import importlib.util

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import policy_reference
import program_util
from contrib_mixed_precision import loss_scale as loss_scale_lib

NAN = float("nan")
# Finite, NaN, then enough of each to grow and to shrink the scale.
XS = [1.0, NAN, 1.0, 1.0, NAN, NAN, 1.0, 2.0]
LR = 0.5
INIT, EVERY_N, DECR_N, INCR, DECR = 8.0, 2, 2, 2.0, 0.5


def _expected():
  """Scales after each step and the variable's values, without TF."""
  flags = [bool(np.isfinite(x)) for x in XS]
  scales = [s for s, _, _ in policy_reference.exponential_policy(
      flags, INIT, EVERY_N, DECR_N, INCR, DECR)]
  values, v = [], 1.0
  for x in XS:
    if np.isfinite(x):
      v -= LR * x  # d(v * x)/dv = x, unscaled.
    values.append(v)
  return scales, values


def _make_optimizer(build):
  scale = loss_scale_lib.ExponentialUpdateLossScale(
      INIT, EVERY_N, decr_every_n_nan_or_inf=DECR_N, incr_ratio=INCR,
      decr_ratio=DECR)
  inner = tf.compat.v1.train.GradientDescentOptimizer(LR)
  if build == "rewrite":
    try:
      opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
          inner, scale)
    finally:
      tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()
  else:
    opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
        inner, scale)
  return opt, scale


class TfOptimizerDrivesPolicyTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(
      mode=["graph", "eager", "function"], build=["optimizer", "rewrite"])
  def test_nan_steps_skipped_and_scale_follows_contrib_policy(self, mode,
                                                              build):
    expected_scales, expected_values = _expected()
    scales, values = [], []
    if mode == "graph":
      with tf.Graph().as_default():
        opt, scale = _make_optimizer(build)
        v = tf.compat.v1.Variable(1.0)
        x = tf.compat.v1.placeholder(tf.float32, [])
        train_op = opt.minimize(v * x, var_list=[v])
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          for value in XS:
            sess.run(train_op, {x: value})
            scale_value, v_value = sess.run([scale(), v])
            scales.append(float(scale_value))
            values.append(float(v_value))
    else:
      opt, scale = _make_optimizer(build)
      v = tf.Variable(1.0)

      def step(x):
        opt.minimize(lambda: v * x, var_list=[v])

      if mode == "function":
        step = tf.function(step)
      for value in XS:
        step(tf.constant(value))
        scales.append(float(scale()))
        values.append(float(v.numpy()))
    self.assertEqual(scales, expected_scales)
    self.assertAllClose(values, expected_values)


class MirroredStrategyTest(tf.test.TestCase):

  def test_one_decision_for_all_replicas_and_contrib_policy(self):
    # Replica 1 alone is NaN on step 1: both replicas skip it, and the scale
    # halves once (decr_every_n_nan_or_inf=1); it doubles after two finite.
    factors = [1.0, NAN, 1.0, 1.0]
    output = program_util.run_program(
        "tf_consumer_mirrored.py", *[str(f) for f in factors], timeout=240)
    result = json.loads(output.strip().splitlines()[-1])
    flags = [bool(np.isfinite(f)) for f in factors]
    expected_scales = [s for s, _, _ in policy_reference.exponential_policy(
        flags, 8.0, 2, 1, 2.0, 0.5)]
    self.assertEqual(expected_scales, [s[0] for s in result["scales"]])
    w, expected_weights = np.array([1.0, -1.0]), []
    for f in factors:
      if np.isfinite(f):
        w = w - 0.5 * (1.0 + f)  # The replicas' gradients, summed.
      expected_weights.append([w.tolist(), w.tolist()])
    self.assertAllClose(expected_weights, result["weights"])


def _keras2():
  """Keras 2: TF 2.15's tf.keras, or tf-keras beside a newer TF."""
  if importlib.util.find_spec("tf_keras") is not None:
    return importlib.import_module("tf_keras")
  return tf.keras


class KerasRefusesPolicyTest(tf.test.TestCase):

  def test_graph_rewrite_of_keras_optimizer_names_the_alternative(self):
    # Keras 2 turns a dynamic LossScale into its own LossScaleOptimizer with
    # one multiplier for both directions, which cannot follow the contrib
    # policy: it must refuse, and say what to use instead.
    scale = loss_scale_lib.ExponentialUpdateLossScale(INIT, EVERY_N)
    keras_opt = _keras2().optimizers.legacy.SGD(LR)
    try:
      with self.assertRaisesRegex(
          AttributeError,
          r"(?s)ExponentialUpdateLossScale.*Keras.*"
          r"contrib_mixed_precision\.LossScaleOptimizer"):
        tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
            keras_opt, scale)
    finally:
      tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()
    self.assertFalse(hasattr(scale, "multiplier"))


if __name__ == "__main__":
  tf.test.main()
