# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for the TF2 side: ExponentialUpdateLossScale."""

import os
import warnings

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import policy_reference
import forkserver
import program_util
import contrib_mixed_precision as mp
from contrib_mixed_precision import loss_scale as loss_scale_lib

MODES = ("graph", "eager", "function")


def evaluate(mode, fn):
  """Runs `fn()` (building TF ops) in `mode` and returns numpy results."""
  if mode == "graph":
    with tf.Graph().as_default():
      result = fn()
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        return sess.run(result)
  if mode == "function":
    return tf.nest.map_structure(lambda t: t.numpy(), tf.function(fn)())
  return tf.nest.map_structure(lambda t: t.numpy(), fn())


def _as_list(op):
  return [] if op is None else [op]


class ExponentialUpdateLossScaleTest(tf.test.TestCase,
                                     parameterized.TestCase):

  @parameterized.parameters(*MODES)
  def test_update_from_gradients(self, mode):
    flags = [True, True, False, True, False, False, True]

    def grads_for(finite):
      # None grads are ignored; IndexedSlices are judged by their values.
      value = 1.0 if finite else np.nan
      return [None, tf.constant([2.0]),
              tf.IndexedSlices(tf.constant([[value]]), tf.constant([0]),
                               tf.constant([3, 1]))]

    if mode == "graph":
      with tf.Graph().as_default():
        loss_scale = loss_scale_lib.ExponentialUpdateLossScale(8, 2, 2, 2,
                                                               0.5)
        updates = [loss_scale.update(grads_for(f)) for f in flags]
        for op, _ in updates:
          self.assertIsInstance(op, tf.Operation)
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          out = []
          for op, should_apply in updates:
            _, applied = sess.run([op, should_apply])
            out.append((sess.run(loss_scale()), bool(applied)))
    else:
      loss_scale = loss_scale_lib.ExponentialUpdateLossScale(8, 2, 2, 2, 0.5)
      out = []
      if mode == "function":
        step = tf.function(lambda finite: loss_scale.update(
            grads_for(finite))[1])
      for f in flags:
        if mode == "function":
          applied = step(f)
        else:
          op, applied = loss_scale.update(grads_for(f))
          self.assertIsNone(op)
        out.append((loss_scale().numpy(), bool(applied)))
    expected = policy_reference.exponential_policy(flags, 8, 2, 2, 2, 0.5)
    self.assertEqual(out, [(s, f) for (s, _, _), f in zip(expected, flags)])

  def test_config_round_trip(self):
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(
        2**32, 1000, decr_every_n_nan_or_inf=3, incr_ratio=4, decr_ratio=0.5)
    config = loss_scale.get_config()
    self.assertEqual(
        config, {
            "init_loss_scale": 2.0**32,
            "incr_every_n_steps": 1000,
            "decr_every_n_nan_or_inf": 3,
            "incr_ratio": 4.0,
            "decr_ratio": 0.5
        })
    rebuilt = loss_scale_lib.ExponentialUpdateLossScale.from_config(config)
    self.assertEqual(rebuilt.get_config(), config)
    self.assertEqual(rebuilt().numpy(), 2.0**32)
    self.assertIn("incr_every_n_steps=1000", repr(rebuilt))

  def test_is_a_tf_loss_scale(self):
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(4, 2)
    self.assertIsInstance(loss_scale, tf.compat.v1.mixed_precision.LossScale)
    self.assertEqual(loss_scale().dtype, tf.float32)

  def test_checkpoint_dependencies_are_the_three_variables(self):
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(64, 2, 2, 2, 0.5)
    loss_scale.update([tf.constant(np.nan)])
    loss_scale.update([tf.constant(1.0)])
    checkpoint = tf.train.Checkpoint(ls=loss_scale)
    path = checkpoint.save(os.path.join(self.get_temp_dir(), "ls"))
    keys = {name for name, _ in tf.train.list_variables(path)}
    self.assertContainsSubset(
        {"ls/loss_scale/.ATTRIBUTES/VARIABLE_VALUE",
         "ls/good_steps/.ATTRIBUTES/VARIABLE_VALUE",
         "ls/bad_steps/.ATTRIBUTES/VARIABLE_VALUE"}, keys)
    restored = loss_scale_lib.ExponentialUpdateLossScale(1, 2, 2, 2, 0.5)
    tf.train.Checkpoint(ls=restored).restore(path).assert_consumed()
    self.assertEqual([v.numpy().item() for v in restored.variables()],
                     [64.0, 1, 1])

  def test_state_per_graph(self):
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(4, 1)
    eager_vars = loss_scale.variables()
    with tf.Graph().as_default():
      graph_vars = loss_scale.variables()
      self.assertEqual([v.name for v in graph_vars],
                       ["loss_scale:0", "good_steps:0", "bad_steps:0"])
      self.assertIs(loss_scale.variables()[0], graph_vars[0])
    self.assertIs(loss_scale.variables()[0], eager_vars[0])

  def test_function_uses_the_outer_state(self):
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(4, 1)
    (scale_var,) = loss_scale.variables()[:1]
    step = tf.function(lambda: loss_scale.update([tf.constant(1.0)])[1])
    step()
    step()
    self.assertLen(loss_scale.variables(), 3)
    self.assertIs(loss_scale.variables()[0], scale_var)
    self.assertEqual(scale_var.numpy(), 16.0)


  @parameterized.parameters(*MODES)
  def test_growth_past_float32_max_is_quiet_under_numpy_raise(self, mode):
    # A user who sets np.seterr(over="raise") (or turns warnings into
    # errors) must see the policy hold the scale, not a FloatingPointError
    # or a RuntimeWarning from the eager update's float32 arithmetic.
    start = float(np.finfo(np.float32).max) / 1.5

    made = []

    def fn():
      if not made:  # Once: a tf.function may trace twice.
        made.append(loss_scale_lib.ExponentialUpdateLossScale(start, 1))
      with tf.control_dependencies(_as_list(made[0].update_from_finite(True))):
        return tf.identity(made[0]())

    with np.errstate(over="raise"), warnings.catch_warnings():
      warnings.simplefilter("error")
      self.assertEqual(float(evaluate(mode, fn)), float(np.float32(start)))

  @parameterized.parameters(*MODES)
  def test_update_from_finite_rejects_a_flag_that_is_not_a_scalar_bool(
      self, mode):
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(4, 1)
    for flag, message in (([True], "of shape \\(1,\\)"),
                          ([[True, False]], "of shape \\(1, 2\\)"),
                          (1.0, "float32 tensor"),
                          ("yes", "string tensor"),
                          (object(), "must be a Python bool")):

      def fn(flag=flag):
        loss_scale.update_from_finite(tf.constant(flag) if isinstance(
            flag, list) else flag)
        return tf.constant(0)

      with self.assertRaisesRegex(TypeError,
                                  "`is_finite` passed to ExponentialUpdate"
                                  "LossScale.update_from_finite .*" +
                                  message):
        evaluate(mode, fn)


_GRAPH_AND_FUNCTION_STEPS = """\
import tensorflow as tf
import contrib_mixed_precision as mp

with tf.Graph().as_default():
  v = tf.compat.v1.get_variable("v", initializer=1.0)
  manager = mp.ExponentialUpdateLossScaleManager(2.0, 2)
  opt = mp.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(0.1), manager)
  train_op = opt.minimize(v * v)
  with tf.compat.v1.Session() as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    sess.run(train_op)
w = tf.Variable(1.0)
eager_opt = mp.LossScaleOptimizer(
    tf.compat.v1.train.GradientDescentOptimizer(0.1),
    mp.ExponentialUpdateLossScaleManager(2.0, 2))


@tf.function
def step():
  eager_opt.minimize(lambda: w * w, var_list=[w])


step()
print("steps done")
"""


class NoDeprecationWarningTest(tf.test.TestCase):
  """Issue 43, item 14: the package's own graph ops warn about nothing."""

  def test_a_graph_and_a_function_step_print_no_deprecation(self):
    proc = forkserver.run_python(
        ["-c", _GRAPH_AND_FUNCTION_STEPS],
        env=program_util.child_env(), capture_output=True, text=True,
        timeout=300, check=False)
    self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    self.assertIn("steps done", proc.stdout)
    package = os.path.dirname(os.path.abspath(mp.__file__))
    for line in proc.stderr.splitlines():
      if "is deprecated" in line or "Instructions for updating" in line:
        self.assertNotIn(package, line)
    self.assertNotIn("_colocate_with", proc.stderr)


if __name__ == "__main__":
  tf.test.main()
