# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for `LossScaleOptimizer` (DESIGN.md contracts 4 and 5).

Most tests run in three modes, parameterized: TF1 graph mode (a fresh
`tf.Graph` and a `Session`), eager, and `tf.function`. A test builds one
training step with `_Steps` and runs it repeatedly; the expected numbers are
computed here by hand (or with numpy), never by the code under test.
"""

import contextlib
import json
import os
import subprocess
import sys

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

from contrib_mixed_precision import loss_scale_manager as manager_lib
from contrib_mixed_precision import loss_scale_optimizer as lso_lib

LossScaleOptimizer = lso_lib.LossScaleOptimizer
FixedLossScaleManager = manager_lib.FixedLossScaleManager
ExponentialUpdateLossScaleManager = (
    manager_lib.ExponentialUpdateLossScaleManager)

GRAPH, EAGER, FUNCTION = "graph", "eager", "function"
ALL_MODES = [dict(testcase_name=m, mode=m) for m in (GRAPH, EAGER, FUNCTION)]

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


class _Steps(object):
  """Runs one training step repeatedly in graph, eager or tf.function mode.

  Use inside `_mode(mode)`. `step_fn` builds (graph, tf.function) or runs
  (eager) one step; in graph mode it is built once and every variable of the
  graph is initialised after building.
  """

  def __init__(self, mode, sess, step_fn):
    self._mode = mode
    self._sess = sess
    if mode == GRAPH:
      self.op = step_fn()
      sess.run(tf.compat.v1.global_variables_initializer())
      self._run = lambda: sess.run(self.op)
    elif mode == FUNCTION:
      # A tf.function may not return an Operation; the step is run for its
      # effects only.
      def run():
        step_fn()

      self._run = tf.function(run)
    else:
      self._run = step_fn

  def __call__(self, n=1):
    for _ in range(n):
      self._run()

  def value(self, x):
    if self._mode == GRAPH:
      return self._sess.run(x)
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


@contextlib.contextmanager
def _mode(mode):
  """A fresh graph and session in graph mode; nothing otherwise."""
  if mode == GRAPH:
    with tf.Graph().as_default() as graph:
      with tf.compat.v1.Session(graph=graph) as sess:
        yield sess
  else:
    yield None


def _var(value, name="w", dtype=tf.float32, trainable=True):
  return tf.compat.v1.Variable(
      np.asarray(value, dtype=dtype.as_numpy_dtype), name=name, dtype=dtype,
      trainable=trainable, use_resource=True)


def _poison():
  """A non-trainable multiplier for the loss: 1, NaN or Inf per step."""
  return _var(1.0, "poison", trainable=False)


def _set(mode, sess, variable, value):
  if mode == GRAPH:
    variable.load(value, sess)
  else:
    variable.assign(value)


def _step_var():
  return tf.compat.v1.Variable(0, dtype=tf.int64, trainable=False,
                               name="global_step", use_resource=True)


def _train_step(lso, loss_fn, var_list=None, global_step=None):
  """compute_gradients then apply_gradients, as legacy code writes it."""

  def step():
    grads_and_vars = lso.compute_gradients(loss_fn, var_list=var_list)
    return lso.apply_gradients(grads_and_vars, global_step)

  return step


# ---------------------------------------------------------------------------
# Helper optimizers and managers standing in for real client code.
# ---------------------------------------------------------------------------


class _CountingManager(manager_lib.LossScaleManager):
  """A user manager with only the two abstract methods, as contrib's tests.

  Its update op counts steps and finite steps in variables, so graph mode
  (built once, run many times) shows it was driven on every step.
  """

  def __init__(self, scale=8.0):
    self.scale = scale
    self.python_calls = 0
    self.steps = tf.compat.v1.Variable(0, trainable=False, name="steps",
                                       use_resource=True)
    self.finite_steps = tf.compat.v1.Variable(
        0, trainable=False, name="finite_steps", use_resource=True)

  def get_loss_scale(self):
    return tf.constant(self.scale, tf.float32)

  def update_loss_scale(self, finite_grads):
    self.python_calls += 1
    ops = [self.steps.assign_add(1, read_value=False),
           self.finite_steps.assign_add(tf.cast(finite_grads, tf.int32),
                                        read_value=False)]
    return None if tf.executing_eagerly() else tf.group(*ops)


class _StepRequiredOptimizer(tf.compat.v1.train.GradientDescentOptimizer):
  """`global_step` is required and never incremented, as in BERT's LAMB."""

  def __init__(self, learning_rate):
    super().__init__(learning_rate)
    self.received = []

  def apply_gradients(self, grads_and_vars, global_step, name=None):  # pylint: disable=arguments-differ
    self.received.append((global_step, name))
    return super().apply_gradients(grads_and_vars, None, name)


class _AllReduceOptimizer(tf.compat.v1.train.Optimizer):
  """A Horovod `DistributedOptimizer` stand-in.

  Its `compute_gradients` "all-reduces" by averaging each gradient with an
  identical copy from a pretend second rank, and counts its calls.
  """

  def __init__(self, optimizer):
    super().__init__(use_locking=False, name="Distributed" + type(
        optimizer).__name__)
    self._optimizer = optimizer
    self.compute_calls = 0
    self.seen_grads = []

  def compute_gradients(self, *args, **kwargs):
    self.compute_calls += 1
    result = []
    for g, v in self._optimizer.compute_gradients(*args, **kwargs):
      if g is not None:
        g = tf.add_n([g, tf.identity(g)]) / 2
        self.seen_grads.append(g)
      result.append((g, v))
    return result

  def apply_gradients(self, *args, **kwargs):
    return self._optimizer.apply_gradients(*args, **kwargs)

  def get_slot(self, *args, **kwargs):
    return self._optimizer.get_slot(*args, **kwargs)

  def get_slot_names(self, *args, **kwargs):
    return self._optimizer.get_slot_names(*args, **kwargs)

  def variables(self, *args, **kwargs):
    return self._optimizer.variables(*args, **kwargs)


class _RecordingOptimizer(tf.compat.v1.train.GradientDescentOptimizer):
  """Records what the LSO forwards to `compute_gradients`."""

  def compute_gradients(self, loss, **kwargs):  # pylint: disable=arguments-differ
    self.loss = loss
    self.kwargs = kwargs
    return super().compute_gradients(loss, **kwargs)


# ---------------------------------------------------------------------------
# TF 1.15's own scenarios, in every mode.
# ---------------------------------------------------------------------------


class LossScaleOptimizerTF115ScenariosTest(tf.test.TestCase,
                                          parameterized.TestCase):

  @parameterized.named_parameters(
      [dict(testcase_name=m + "_" + name, mode=m, scale=scale,
            expected=expected)
       for m in (GRAPH, EAGER, FUNCTION)
       for name, scale, expected in (("no_scaling", 1, 0.0),
                                     ("scale_1e4", 1e4, -1e-4))])
  def test_float16_underflow_needs_loss_scale(self, mode, scale, expected):
    # d(loss)/dx = 1e-4, but backprop forms 1e-4 * 1e-4 = 1e-8 first, which
    # is zero in float16 unless the loss was scaled up.
    with _mode(mode) as sess:
      x = _var(0.0, "x", tf.float16)
      loss = lambda: x * tf.constant(1e4, tf.float16) * 1e-4 * 1e-4
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          FixedLossScaleManager(scale))
      steps = _Steps(mode, sess, _train_step(lso, loss))
      steps()
      self.assertAllClose(expected, steps.value(x), atol=2e-6, rtol=1e-2)

  @parameterized.named_parameters(ALL_MODES)
  def test_compute_gradients_returns_unscaled_gradients(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0, 2.0])
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          FixedLossScaleManager(1024))
      loss = lambda: tf.reduce_sum(w * [3.0, -5.0])

      def grads():
        return lso.compute_gradients(loss)[0][0]

      if mode == GRAPH:
        g = sess.run(grads())
      elif mode == FUNCTION:
        g = tf.function(grads)().numpy()
      else:
        g = grads().numpy()
      self.assertAllEqual([3.0, -5.0], g)

  @parameterized.named_parameters(
      [dict(testcase_name=m + "_" + k, mode=m, kind=k)
       for m in (GRAPH, EAGER, FUNCTION) for k in ("fixed", "exponential")])
  def test_nan_and_inf_gradients_are_skipped(self, mode, kind):
    with _mode(mode) as sess:
      w = _var([1.0, 1.0])
      poison = _poison()
      global_step = _step_var()
      manager = (FixedLossScaleManager(4) if kind == "fixed" else
                 ExponentialUpdateLossScaleManager(4, 100, 1, 2, 0.5))
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.5), manager)
      loss = lambda: tf.reduce_sum(w * [2.0, 4.0]) * poison
      steps = _Steps(mode, sess,
                     _train_step(lso, loss, global_step=global_step))
      expected_w = np.array([1.0, 1.0])
      expected_scale, expected_step = 4.0, 0
      for value, finite in ((1.0, True), (np.nan, False), (np.inf, False),
                            (-np.inf, False), (1.0, True)):
        _set(mode, sess, poison, value)
        steps()
        if finite:
          expected_w -= 0.5 * np.array([2.0, 4.0])
          expected_step += 1
        elif kind == "exponential":
          # decr_every_n_nan_or_inf=1: every bad step halves the scale.
          expected_scale = max(1.0, expected_scale * 0.5)
        self.assertAllEqual(expected_w, steps.value(w))
        self.assertEqual(expected_step, steps.value(global_step))
        self.assertEqual(expected_scale,
                         steps.value(manager.get_loss_scale()))

  @parameterized.named_parameters(ALL_MODES)
  def test_user_manager_subclass_is_driven_every_step(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0])
      poison = _poison()
      manager = _CountingManager(scale=8.0)
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)
      steps = _Steps(mode, sess, _train_step(lso, lambda: w * 3.0 * poison))
      for value in (1.0, np.nan, 1.0, 1.0):
        _set(mode, sess, poison, value)
        steps()
      self.assertEqual(4, steps.value(manager.steps))
      self.assertEqual(3, steps.value(manager.finite_steps))
      self.assertAllEqual([1.0 - 3 * 3.0], steps.value(w))
      # Built once in graph mode and traced once by tf.function.
      self.assertEqual(4 if mode == EAGER else 1, manager.python_calls)


# ---------------------------------------------------------------------------
# Gradients that TF 1.15 got wrong, and call shapes legacy code uses.
# ---------------------------------------------------------------------------


class LossScaleOptimizerGradientsTest(tf.test.TestCase,
                                      parameterized.TestCase):

  @parameterized.named_parameters(ALL_MODES)
  def test_none_and_indexed_slices_gradients(self, mode):
    for keep_sparse in (False, True):
      self._none_and_indexed_slices_gradients(mode, keep_sparse)

  def _none_and_indexed_slices_gradients(self, mode, keep_sparse):
    with _mode(mode) as sess:
      table = _var(np.ones([4, 2]), "table")
      dense = _var([1.0, 1.0], "dense")
      unused = _var([7.0], "unused")
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          ExponentialUpdateLossScaleManager(64, 2, 1, 2, 0.5),
          keep_sparse_gradients=keep_sparse)

      def loss():
        rows = tf.gather(table, [1, 3])
        return tf.reduce_sum(rows * [[1.0, 2.0]]) + tf.reduce_sum(dense * 5.0)

      kinds = {}

      def step():
        grads_and_vars = lso.compute_gradients(
            loss, var_list=[table, dense, unused])
        kinds["grads"] = [type(g).__name__ for g, _ in grads_and_vars]
        kinds["vars"] = [v.name for _, v in grads_and_vars]
        return lso.apply_gradients(grads_and_vars)

      steps = _Steps(mode, sess, step)
      steps()
      # Made dense as TF 1.15 made it, unless kept sparse.
      self.assertEqual(keep_sparse, kinds["grads"][0] == "IndexedSlices")
      self.assertEqual("NoneType", kinds["grads"][2])
      self.assertEqual([table.name, dense.name, unused.name], kinds["vars"])
      expected_table = np.ones([4, 2])
      expected_table[[1, 3]] -= [1.0, 2.0]
      self.assertAllEqual(expected_table, steps.value(table))
      self.assertAllEqual([-4.0, -4.0], steps.value(dense))
      self.assertAllEqual([7.0], steps.value(unused))
      # The None gradient did not make the step count as non-finite.
      self.assertEqual(1, steps.value(lso._loss_scale_manager._num_good_steps))

  @parameterized.named_parameters(ALL_MODES)
  def test_indexed_slices_applied_sparsely_when_kept_sparse(self, mode):
    # A sparse apply touches only the gathered rows: with a momentum
    # optimizer a densified gradient would also move the other rows' slots.
    with _mode(mode) as sess:
      table = _var(np.ones([3, 1]), "table")
      lso = LossScaleOptimizer(
          tf.compat.v1.train.AdagradOptimizer(1.0, 1.0),
          FixedLossScaleManager(16), keep_sparse_gradients=True)
      steps = _Steps(mode, sess, _train_step(
          lso, lambda: tf.reduce_sum(tf.gather(table, [0]) * 2.0)))
      steps()
      accumulator = steps.value(lso.get_slot(table, "accumulator"))
      # Adagrad: acc = 1 + g^2 on row 0 only; w -= g / sqrt(acc).
      self.assertAllClose([[5.0], [1.0], [1.0]], accumulator)
      self.assertAllClose([[1.0 - 2.0 / np.sqrt(5.0)], [1.0], [1.0]],
                          steps.value(table))

  @parameterized.named_parameters(ALL_MODES)
  def test_zip_input_is_read_once(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0, 2.0])
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          FixedLossScaleManager(8))

      def step():
        grads, tvars = zip(*lso.compute_gradients(
            lambda: tf.reduce_sum(w * w)))
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        return lso.apply_gradients(zip(grads, tvars))

      steps = _Steps(mode, sess, step)
      steps()
      g = np.array([2.0, 4.0])
      self.assertAllClose([1.0, 2.0] - g / np.linalg.norm(g),
                          steps.value(w))

  @parameterized.named_parameters(ALL_MODES)
  def test_global_step_passed_positionally_and_not_incremented(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0])
      global_step = _step_var()
      inner = _StepRequiredOptimizer(0.5)
      lso = LossScaleOptimizer(inner, FixedLossScaleManager(2))

      def step():
        return lso.apply_gradients(
            lso.compute_gradients(lambda: w * 4.0), global_step,
            "my_apply")

      steps = _Steps(mode, sess, step)
      steps(2)
      self.assertAllEqual([1.0 - 2 * 0.5 * 4.0], steps.value(w))
      self.assertEqual(0, steps.value(global_step))
      self.assertIs(global_step, inner.received[0][0])
      self.assertEqual("my_apply", inner.received[0][1])

  @parameterized.named_parameters(ALL_MODES)
  def test_slots_are_delegated(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0, -1.0])
      inner = tf.compat.v1.train.AdamOptimizer(0.1)
      manager = ExponentialUpdateLossScaleManager(128, 10)
      lso = LossScaleOptimizer(inner, manager)
      steps = _Steps(mode, sess,
                     _train_step(lso, lambda: tf.reduce_sum(w * [1.0, 3.0])))
      steps()
      self.assertEqual("Adam", lso.get_name())
      self.assertEqual(sorted(inner.get_slot_names()),
                       sorted(lso.get_slot_names()))
      self.assertEqual(["m", "v"], sorted(lso.get_slot_names()))
      self.assertIs(inner.get_slot(w, "m"), lso.get_slot(w, "m"))
      # After one Adam step m = (1 - beta1) * g.
      self.assertAllClose([0.1, 0.3], steps.value(lso.get_slot(w, "m")))
      names = set(v.name for v in lso.variables())
      self.assertTrue(set(v.name for v in inner.variables()) <= names)
      self.assertTrue(set(v.name for v in manager.variables()) <= names)
      self.assertLen(names, len(inner.variables()) + 3)

  @parameterized.named_parameters(ALL_MODES)
  def test_wrapper_without_use_locking_or_name(self, mode):

    class BareWrapper(tf.compat.v1.train.Optimizer):
      """A wrapper that never calls Optimizer.__init__ (no _use_locking,
      and the inherited get_name() raises for lack of _name)."""

      def __init__(self, inner):  # pylint: disable=super-init-not-called
        self._inner = inner

      def compute_gradients(self, *args, **kwargs):
        return self._inner.compute_gradients(*args, **kwargs)

      def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._inner.apply_gradients(grads_and_vars, global_step, name)

    with _mode(mode) as sess:
      w = _var([1.0])
      lso = LossScaleOptimizer(
          BareWrapper(tf.compat.v1.train.GradientDescentOptimizer(0.5)),
          FixedLossScaleManager(64))
      self.assertEqual("BareWrapper", lso.get_name())
      steps = _Steps(mode, sess, _train_step(lso, lambda: w * 4.0))
      steps()
      self.assertAllEqual([1.0 - 0.5 * 4.0], steps.value(w))

  @parameterized.named_parameters(ALL_MODES)
  def test_all_reduce_wrapper_inside_and_outside(self, mode):
    with _mode(mode) as sess:
      w_in = _var([1.0], "w_in")
      w_out = _var([1.0], "w_out")
      inside_wrapper = _AllReduceOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0))
      inside = LossScaleOptimizer(inside_wrapper, FixedLossScaleManager(32))
      outside = _AllReduceOptimizer(LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          FixedLossScaleManager(32)))
      self.assertIsInstance(outside._optimizer, tf.compat.v1.train.Optimizer)

      def step():
        return tf.group(
            inside.apply_gradients(inside.compute_gradients(
                lambda: w_in * 3.0)),
            outside.apply_gradients(outside.compute_gradients(
                lambda: w_out * 3.0)))

      steps = _Steps(mode, sess, step)
      steps()
      self.assertAllEqual([-2.0], steps.value(w_in))
      self.assertAllEqual([-2.0], steps.value(w_out))
      self.assertGreaterEqual(inside_wrapper.compute_calls, 1)
      self.assertGreaterEqual(outside.compute_calls, 1)
      if mode == GRAPH:
        # Inside, the wrapper all-reduces the scaled gradient; outside, the
        # unscaled one.
        self.assertAllEqual([96.0], sess.run(inside_wrapper.seen_grads[0]))
        self.assertAllEqual([3.0], sess.run(outside.seen_grads[0]))

  @parameterized.named_parameters(
      dict(testcase_name=GRAPH, mode=GRAPH),
      dict(testcase_name=FUNCTION, mode=FUNCTION))
  def test_apply_inside_outer_cond(self, mode):
    # Gradient accumulation: apply every second step, from a cond's branch.
    with _mode(mode) as sess:
      w = _var([1.0])
      acc = _var([0.0], "acc", trainable=False)
      counter = _step_var()
      manager = ExponentialUpdateLossScaleManager(8, 1, 1, 2, 0.5)
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)

      def step():
        (g, _), = lso.compute_gradients(lambda: w * 2.0)
        with tf.control_dependencies([acc.assign_add(g)]):
          count = counter.assign_add(1)

        def apply():
          with tf.control_dependencies([lso.apply_gradients([(acc + 0.0, w)])]):
            return acc.assign([0.0]).op

        return tf.cond(tf.equal(count % 2, 0), apply, tf.no_op)

      steps = _Steps(mode, sess, step)
      steps(1)
      self.assertAllEqual([1.0], steps.value(w))
      self.assertEqual(8.0, steps.value(manager.get_loss_scale()))
      steps(3)
      self.assertAllEqual([1.0 - 4.0 - 4.0], steps.value(w))
      # Two applies, each finite with incr_every_n_steps=1: 8 -> 16 -> 32.
      self.assertEqual(32.0, steps.value(manager.get_loss_scale()))

  @parameterized.product(use_resource=(False, True),
                         dtype=(tf.float32, tf.float64))
  def test_trainable_scale_variable_of_a_users_manager(self, use_resource,
                                                       dtype):
    # A user's TF1 manager whose scale variable is trainable (the default):
    # `minimize` differentiates the scaled loss with respect to it too, as
    # TF 1.15 did, and trains it. A ref variable's read is copied
    # (`Snapshot`), which must let that gradient through.

    class VariableScale(manager_lib.LossScaleManager):

      def __init__(self):
        self.scale = tf.compat.v1.Variable(
            4.0, dtype=dtype, name="scale", use_resource=use_resource)

      def get_loss_scale(self):
        return self.scale

      def update_loss_scale(self, finite_grads):
        return tf.no_op()

    with tf.Graph().as_default():
      w = tf.compat.v1.Variable([1.0, 2.0], name="w")
      manager = VariableScale()
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)
      train_op = lso.minimize(tf.reduce_sum(w * w))
      with self.session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train_op)
        # loss = 1 + 4 = 5: d(loss * s)/dw = 2 * w * s, d(loss * s)/ds = 5,
        # each times 1/s = 1/4 (exact).
        self.assertAllEqual([1.0 - 2.0, 2.0 - 4.0], sess.run(w))
        self.assertEqual(4.0 - 5.0 / 4.0, sess.run(manager.scale))


# ---------------------------------------------------------------------------
# Construction, subclassing, checkpoints and the opt-in global_step policy.
# ---------------------------------------------------------------------------


class LossScaleOptimizerApiTest(tf.test.TestCase, parameterized.TestCase):

  def test_is_a_v1_optimizer_and_keeps_attribute_names(self):
    inner = tf.compat.v1.train.GradientDescentOptimizer(1.0)
    manager = FixedLossScaleManager(2)
    lso = LossScaleOptimizer(opt=inner, loss_scale_manager=manager)
    self.assertIsInstance(lso, tf.compat.v1.train.Optimizer)
    self.assertIs(inner, lso._opt)
    self.assertIs(manager, lso._loss_scale_manager)

  @parameterized.named_parameters(ALL_MODES)
  def test_tf2_dynamic_loss_scale_in_place_of_manager(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0])
      poison = _poison()
      loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale(
          initial_loss_scale=16, increment_period=2, multiplier=2)
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0), loss_scale)
      self.assertIsInstance(lso._loss_scale_manager,
                            manager_lib.LossScaleManager)
      steps = _Steps(mode, sess, _train_step(lso, lambda: w * poison))
      scales = []
      for value in (np.nan, 1.0, 1.0):
        _set(mode, sess, poison, value)
        steps()
        scales.append(steps.value(lso._loss_scale_manager.get_loss_scale()))
      # TF2's dynamic policy: halve on a bad step, double after 2 good ones.
      self.assertEqual([8.0, 8.0, 16.0], scales)
      self.assertAllEqual([-1.0], steps.value(w))

  def test_checkpoint_round_trips_slots_and_loss_scale_state(self):
    w = _var([1.0, 2.0])
    poison = _poison()
    lso = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(0.1),
                             ExponentialUpdateLossScaleManager(64, 3, 2, 2,
                                                               0.5))
    step = _train_step(lso, lambda: tf.reduce_sum(w * [1.0, -2.0]) * poison)
    manager = lso._loss_scale_manager
    state = lambda: [manager._loss_scale, manager._num_good_steps,
                     manager._num_bad_steps, lso.get_slot(w, "m"),
                     lso.get_slot(w, "v"), w] + list(
                         lso._opt._get_beta_accumulators())
    step()
    poison.assign(np.nan)
    step()
    ckpt = tf.train.Checkpoint(optimizer=lso, w=w)
    path = ckpt.save(os.path.join(self.get_temp_dir(), "ckpt"))
    saved = [np.array(v.numpy()) for v in state()]
    # A finite step then a NaN step: good 1 -> 0, bad 0 -> 1 (policy).
    self.assertEqual([64.0, 0, 1], [float(x) for x in saved[:3]])
    poison.assign(1.0)
    step()
    step()
    self.assertNotAllClose(saved[3], lso.get_slot(w, "m").numpy())
    ckpt.restore(path).assert_existing_objects_matched()
    for expected, variable in zip(saved, state()):
      self.assertAllEqual(expected, variable.numpy())
    keys = [name for name, _ in tf.train.list_variables(path)]
    self.assertTrue(any("loss_scale" in k for k in keys), keys)

  def test_subclass_sets_attributes_before_super_init(self):

    class Subclass(LossScaleOptimizer):

      def __init__(self, opt, loss_scale_manager):
        self.extra = "set first"
        self._loss_scale_calls = 0
        super().__init__(opt=opt, loss_scale_manager=loss_scale_manager)

    w = _var([1.0])
    lso = Subclass(tf.compat.v1.train.GradientDescentOptimizer(1.0),
                   FixedLossScaleManager(4))
    lso.apply_gradients(lso.compute_gradients(lambda: w * 2.0))
    self.assertEqual("set first", lso.extra)
    self.assertAllEqual([-1.0], w.numpy())

  @parameterized.named_parameters(
      dict(testcase_name="fresh_inner", use_inner_first=False),
      dict(testcase_name="used_inner", use_inner_first=True))
  def test_subclass_getattr_forwarding_does_not_recurse(self, use_inner_first):

    class Forwarding(LossScaleOptimizer):

      def __getattr__(self, name):
        return getattr(self._opt, name)

    w = _var([1.0, 1.0])
    inner = tf.compat.v1.train.AdamOptimizer(0.5)
    if use_inner_first:
      inner.minimize(lambda: tf.reduce_sum(w), var_list=[w])
    lso = Forwarding(inner, FixedLossScaleManager(4))
    self.assertEqual(0.5, lso._lr)
    with self.assertRaises(AttributeError):
      lso.no_such_attribute  # pylint: disable=pointless-statement
    before = w.numpy()
    lso.apply_gradients(lso.compute_gradients(lambda: tf.reduce_sum(w)))
    self.assertTrue(np.all(w.numpy() < before))
    # The wrapper tracks the inner optimizer; the inner one does not track
    # itself through the forwarding.
    ckpt = tf.train.Checkpoint(optimizer=lso)
    path = ckpt.save(os.path.join(self.get_temp_dir(), "fwd"))
    keys = [name for name, _ in tf.train.list_variables(path)]
    self.assertTrue(any("base_optimizer" in k for k in keys), keys)

  @parameterized.named_parameters(ALL_MODES)
  def test_minimize_keeps_tf1_argument_order(self, mode):
    with _mode(mode) as sess:
      a = _var([1.0], "a")
      b = _var([1.0], "b")
      global_step = _step_var()
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          FixedLossScaleManager(128))
      loss = lambda: tf.reduce_sum(a * 2.0 + b * 3.0)

      def step():
        positional = lso.minimize(loss, global_step, [a])
        with tf.control_dependencies([positional] if positional else []):
          return lso.minimize(loss, gate_gradients=lso.GATE_NONE,
                              global_step=global_step)

      steps = _Steps(mode, sess, step)
      steps()
      self.assertAllEqual([1.0 - 2.0 - 2.0], steps.value(a))
      self.assertAllEqual([1.0 - 3.0], steps.value(b))
      self.assertEqual(2, steps.value(global_step))

  @parameterized.named_parameters(ALL_MODES)
  def test_advance_global_step_on_skip(self, mode):
    with _mode(mode) as sess:
      w = _var([1.0])
      poison = _poison()
      global_step = _step_var()
      lso = LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          FixedLossScaleManager(4), advance_global_step_on_skip=True)
      steps = _Steps(mode, sess,
                     _train_step(lso, lambda: w * poison, None, global_step))
      results = []
      for value in (np.nan, 1.0, np.inf):
        _set(mode, sess, poison, value)
        steps()
        results.append((steps.value(global_step), float(steps.value(w)[0])))
      # Every step counts once, applied or skipped; only the finite applies.
      self.assertEqual([(1, 1.0), (2, 0.0), (3, 0.0)], results)

  def test_advance_global_step_on_skip_is_keyword_only(self):
    with self.assertRaises(TypeError):
      LossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(1.0),
                         FixedLossScaleManager(4), True)  # pylint: disable=too-many-function-args

  @parameterized.named_parameters(
      dict(testcase_name="string", opt="sgd", got="'sgd'"),
      dict(testcase_name="none", opt=None, got="None"),
      dict(testcase_name="keras", opt="keras", got="Adam"))
  def test_bad_optimizer_raises_type_error(self, opt, got):
    if opt == "keras":
      opt = tf.keras.optimizers.Adam()
    with self.assertRaisesRegex(TypeError, "`opt`") as cm:
      LossScaleOptimizer(opt, FixedLossScaleManager(2))
    self.assertIn(got, str(cm.exception))
    self.assertIn("tf.compat.v1.train.Optimizer", str(cm.exception))

  @parameterized.named_parameters(
      dict(testcase_name="number", manager=128, got="128"),
      dict(testcase_name="string", manager="dynamic", got="'dynamic'"),
      dict(testcase_name="class", manager=FixedLossScaleManager,
           got="FixedLossScaleManager"))
  def test_bad_manager_raises_type_error(self, manager, got):
    with self.assertRaisesRegex(TypeError, "`loss_scale_manager`") as cm:
      LossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(1.0),
                         manager)
    self.assertIn(got, str(cm.exception))

  @parameterized.named_parameters(ALL_MODES)
  def test_float16_loss_is_scaled_in_float16(self, mode):
    with _mode(mode) as sess:
      x = _var([2.0], "x", tf.float16)
      inner = _RecordingOptimizer(1.0)
      lso = LossScaleOptimizer(inner, FixedLossScaleManager(1024))
      loss = lambda: tf.reduce_sum(x * tf.constant(3.0, tf.float16))
      grads = {}

      def step():
        grads_and_vars = lso.compute_gradients(
            loss, gate_gradients=lso.GATE_GRAPH, aggregation_method=None,
            colocate_gradients_with_ops=True)
        grads["dtype"] = grads_and_vars[0][0].dtype
        return lso.apply_gradients(grads_and_vars)

      steps = _Steps(mode, sess, step)
      steps()
      self.assertEqual(tf.float16, grads["dtype"])
      self.assertEqual(lso.GATE_GRAPH, inner.kwargs["gate_gradients"])
      self.assertTrue(inner.kwargs["colocate_gradients_with_ops"])
      self.assertAllEqual([2.0 - 3.0], steps.value(x))
      if mode == EAGER:
        scaled_loss = inner.loss()
      elif mode == GRAPH:
        scaled_loss = inner.loss
      else:
        scaled_loss = None
      if scaled_loss is not None:
        self.assertEqual(tf.float16, scaled_loss.dtype)
        # Evaluated after the step: x is now -1.
        self.assertEqual(-3.0 * 1024, steps.value(scaled_loss))


# ---------------------------------------------------------------------------
# TF 1.15 checkpoints and a NaN storm.
# ---------------------------------------------------------------------------

# What a TF 1.15 `LossScaleOptimizer(AdamOptimizer)` with an
# `ExponentialUpdateLossScaleManager` wrote: names, dtypes, values.
_TF115_CHECKPOINT = {
    "w": (np.float32, [1.0, -2.0]),
    "w/Adam": (np.float32, [0.25, -0.5]),
    "w/Adam_1": (np.float32, [0.0625, 0.125]),
    # TF1 Adam holds beta**(t+1) after t steps: the power for the next step.
    "cond/beta1_power": (np.float32, 0.9**4),
    "cond/beta2_power": (np.float32, 0.999**4),
    "loss_scale": (np.float32, 256.0),
    "good_steps": (np.int32, 2),
    "bad_steps": (np.int32, 1),
    "global_step": (np.int64, 3),
}


def _write_tf115_checkpoint(path):
  """Writes `_TF115_CHECKPOINT` with a plain Saver over plain variables."""
  with tf.Graph().as_default():
    variables = [
        tf.compat.v1.Variable(np.asarray(value, dtype=dtype), name=name)
        for name, (dtype, value) in sorted(_TF115_CHECKPOINT.items())]
    saver = tf.compat.v1.train.Saver(variables)
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      return saver.save(sess, path, write_meta_graph=False)


def tf115_checkpoint_scenario(workdir):
  """Restores a TF 1.15-layout checkpoint and takes one step from it.

  Run both in this process and, under `disable_v2_behavior()`, in a
  subprocess. Returns plain Python values (JSON-serializable).
  """
  path = _write_tf115_checkpoint(os.path.join(workdir, "tf115"))
  result = {}
  with tf.Graph().as_default():
    w = tf.compat.v1.get_variable("w", shape=[2], dtype=tf.float32)
    poison = tf.compat.v1.placeholder(tf.float32, [])
    global_step = tf.compat.v1.train.get_or_create_global_step()
    manager = ExponentialUpdateLossScaleManager(
        init_loss_scale=2**15, incr_every_n_steps=3,
        decr_every_n_nan_or_inf=2, decr_ratio=0.5)
    lso = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(0.1), manager)
    loss = tf.reduce_sum(w * [4.0, 8.0]) * poison
    train_op = lso.minimize(loss, global_step)
    result["global_variables"] = sorted(
        v.op.name for v in tf.compat.v1.global_variables())
    # Legacy hooks fetch 'loss_scale:0' for the value: a ref variable's
    # tensor under disable_v2_behavior(), a resource handle otherwise.
    by_name = tf.compat.v1.get_default_graph().get_tensor_by_name(
        "loss_scale:0")
    result["loss_scale_tensor_dtype"] = by_name.dtype.name
    saver = tf.compat.v1.train.Saver()
    # Variables themselves: a resource variable's "w:0" is its handle.
    fetch = {v.op.name: v for v in tf.compat.v1.global_variables()}
    with tf.compat.v1.Session() as sess:
      for case, value in (("finite", 1.0), ("nan", float("nan"))):
        saver.restore(sess, path)
        result["restored"] = {k: np.asarray(v).tolist()
                              for k, v in sess.run(fetch).items()}
        if by_name.dtype != tf.resource:
          result["loss_scale_by_name"] = float(sess.run(by_name))
        sess.run(train_op, {poison: value})
        result[case] = {k: np.asarray(v).tolist()
                        for k, v in sess.run(fetch).items()}
  return result


def outer_v1_cond_scenario():
  """Gradient accumulation under TF1 control flow (run with v2 disabled).

  `apply_gradients` is built inside a v1 `tf.cond` branch, a control-flow
  context in which the optimizer must build its skip as a nested cond. Step
  4 accumulates a NaN: that apply is skipped and the scale halves.
  Returns [(w, loss_scale)] after each of six steps.
  """
  with tf.Graph().as_default():
    w = tf.compat.v1.Variable([1.0], name="w")
    acc = tf.compat.v1.Variable([0.0], name="acc", trainable=False)
    count = tf.compat.v1.Variable(0, name="count", trainable=False)
    poison = tf.compat.v1.placeholder(tf.float32, [])
    manager = ExponentialUpdateLossScaleManager(8, 1, 1, 2, 0.5)
    lso = LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)
    (g, _), = lso.compute_gradients(w * 2.0 * poison, var_list=[w])
    with tf.control_dependencies([acc.assign_add(g)]):
      new_count = count.assign_add(1)

    def apply():
      with tf.control_dependencies([lso.apply_gradients([(acc + 0.0, w)])]):
        return acc.assign([0.0]).op

    step = tf.compat.v1.cond(tf.equal(new_count % 2, 0), apply, tf.no_op)
    out = []
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      for value in (1.0, 1.0, 1.0, float("nan"), 1.0, 1.0):
        sess.run(step, {poison: value})
        w_value, scale = sess.run([w, manager.get_loss_scale()])
        out.append((float(w_value[0]), float(scale)))
  return out


class LossScaleOptimizerCheckpointTest(tf.test.TestCase,
                                       parameterized.TestCase):

  def _check_tf115_scenario(self, result):
    self.assertEqual(sorted(_TF115_CHECKPOINT), result["global_variables"])
    for name, (dtype, value) in _TF115_CHECKPOINT.items():
      self.assertAllClose(np.asarray(value, dtype), result["restored"][name],
                          rtol=1e-6, msg=name)
    ckpt = {k: np.asarray(v, dtype) for k, (dtype, v) in
            _TF115_CHECKPOINT.items()}
    # A finite step: good_steps 2 + 1 reaches incr_every_n_steps=3, so the
    # scale doubles and both counters reset; Adam takes a normal step.
    finite = {k: np.asarray(v) for k, v in result["finite"].items()}
    g = np.array([4.0, 8.0], np.float32)
    m = 0.9 * ckpt["w/Adam"] + 0.1 * g
    v = 0.999 * ckpt["w/Adam_1"] + 0.001 * g * g
    beta1_power = ckpt["cond/beta1_power"]
    beta2_power = ckpt["cond/beta2_power"]
    lr_t = 0.1 * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    self.assertAllClose(ckpt["w"] - lr_t * m / (np.sqrt(v) + 1e-8),
                        finite["w"], rtol=1e-5)
    self.assertAllClose(m, finite["w/Adam"], rtol=1e-6)
    self.assertAllClose(v, finite["w/Adam_1"], rtol=1e-6)
    self.assertAllClose(beta1_power * 0.9, finite["cond/beta1_power"],
                        rtol=1e-6)
    self.assertAllClose(beta2_power * 0.999, finite["cond/beta2_power"],
                        rtol=1e-6)
    self.assertEqual([512.0, 0, 0, 4], [
        finite["loss_scale"], finite["good_steps"], finite["bad_steps"],
        finite["global_step"]])
    # A NaN step: bad_steps 1 + 1 reaches decr_every_n_nan_or_inf=2, so the
    # scale halves; nothing else moves.
    nan = result["nan"]
    for name in ("w", "w/Adam", "w/Adam_1", "cond/beta1_power",
                 "cond/beta2_power", "global_step"):
      self.assertAllEqual(result["restored"][name], nan[name], msg=name)
    self.assertEqual([128.0, 0, 0],
                     [nan["loss_scale"], nan["good_steps"], nan["bad_steps"]])

  def test_tf115_checkpoint_restores_in_tf2_graph_mode(self):
    result = tf115_checkpoint_scenario(self.get_temp_dir())
    self.assertEqual("resource", result["loss_scale_tensor_dtype"])
    self._check_tf115_scenario(result)

  def test_tf115_checkpoint_restores_with_v2_behavior_disabled(self):
    code = (
        "import json, sys\n"
        "sys.path.insert(0, {tests!r})\n"
        "import tensorflow as tf\n"
        "tf.compat.v1.disable_v2_behavior()\n"
        "import loss_scale_optimizer_test as t\n"
        "r = t.tf115_checkpoint_scenario({workdir!r})\n"
        "print('RESULT=' + json.dumps(r))\n").format(
            tests=_TESTS_DIR, workdir=self.get_temp_dir())
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300, check=False)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT=")]
    self.assertTrue(lines, "subprocess failed:\n" + proc.stderr[-4000:])
    result = json.loads(lines[-1][len("RESULT="):])
    self.assertEqual("float32_ref", result["loss_scale_tensor_dtype"])
    self.assertEqual(256.0, result["loss_scale_by_name"])
    self._check_tf115_scenario(result)

  def test_apply_inside_outer_v1_cond(self):
    code = (
        "import json, sys\n"
        "sys.path.insert(0, {tests!r})\n"
        "import tensorflow as tf\n"
        "tf.compat.v1.disable_v2_behavior()\n"
        "import loss_scale_optimizer_test as t\n"
        "print('RESULT=' + json.dumps(t.outer_v1_cond_scenario()))\n").format(
            tests=_TESTS_DIR)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300, check=False)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT=")]
    self.assertTrue(lines, "subprocess failed:\n" + proc.stderr[-4000:])
    # Applies at steps 2, 4 (NaN: skipped, 16 -> 8) and 6; each finite apply
    # moves w by the accumulated 2 * 2.0 and doubles the scale.
    self.assertEqual(
        [tuple(x) for x in json.loads(lines[-1][len("RESULT="):])],
        [(1.0, 8.0), (-3.0, 16.0), (-3.0, 16.0), (-3.0, 8.0), (-3.0, 8.0),
         (-7.0, 16.0)])

  @parameterized.named_parameters(ALL_MODES)
  def test_nan_storm_leaves_state_bit_identical(self, mode):
    with _mode(mode) as sess:
      w = _var([0.5, -1.5, 2.0])
      poison = _poison()
      global_step = _step_var()
      manager = ExponentialUpdateLossScaleManager(2**15, 1000, 2, 2, 0.5)
      lso = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(0.01),
                               manager)
      steps = _Steps(mode, sess, _train_step(
          lso, lambda: tf.reduce_sum(w * w) * poison, None, global_step))
      steps()  # One real step, so the slots hold non-trivial values.
      tracked = lambda: [w, lso.get_slot(w, "m"), lso.get_slot(w, "v"),
                         global_step] + list(lso._opt._get_beta_accumulators())
      before = [np.array(steps.value(v)) for v in tracked()]
      _set(mode, sess, poison, np.nan)
      scales = []
      for _ in range(200):
        steps()
        scales.append(float(steps.value(manager.get_loss_scale())))
      after = [np.array(steps.value(v)) for v in tracked()]
      for b, a in zip(before, after):
        self.assertEqual(b.dtype, a.dtype)
        self.assertEqual(b.tobytes(), a.tobytes())
      self.assertEqual(1, after[3])
      # Halve every 2nd bad step, never below 1.
      expected, scale = [], 2.0**15
      for i in range(1, 201):
        if i % 2 == 0:
          scale = max(1.0, scale * 0.5)
        expected.append(scale)
      self.assertEqual(expected, scales)
      self.assertEqual(1.0, scales[-1])


class StepLossScaleTest(tf.test.TestCase, parameterized.TestCase):
  """`opt.loss_scale` is the scale the step used, in every mode."""

  @parameterized.named_parameters(*ALL_MODES)
  def test_loss_scale_is_this_steps_scale(self, mode):
    # The scale grows after every finite step: 8, 16, 32. Logged next to
    # the loss, `opt.loss_scale` must show the scale that step used, not
    # the one the update has already set for the next step.
    with _mode(mode) as sess:
      w = _var(1.0)
      manager = manager_lib.ExponentialUpdateLossScaleManager(8, 1)
      lso = lso_lib.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.0), manager)
      step = _train_step(lso, lambda: w * w, var_list=[w])
      seen = []
      if mode == GRAPH:
        train = step()
        sess.run(tf.compat.v1.global_variables_initializer())
        for _ in range(3):
          seen.append(sess.run([train, lso.loss_scale])[1])
      elif mode == FUNCTION:

        @tf.function
        def run():
          step()
          return lso.loss_scale

        seen = [run().numpy() for _ in range(3)]
      else:
        for _ in range(3):
          step()
          seen.append(lso.loss_scale.numpy())
      self.assertEqual([8.0, 16.0, 32.0], [float(x) for x in seen])

  def test_loss_scale_is_this_steps_scale_with_ref_variables(self):
    # Under disable_v2_behavior() the state is a ref variable, whose read
    # aliases the variable's buffer: unless the step's scale is copied, the
    # update's assignment overwrites the fetched value with the next scale.
    # A subprocess, because the switch is process-global.
    code = "\n".join([
        "import tensorflow as tf",
        "tf.compat.v1.disable_v2_behavior()",
        "from contrib_mixed_precision import loss_scale_manager as lsm",
        "from contrib_mixed_precision import loss_scale_optimizer as lso",
        "w = tf.compat.v1.Variable(1.0)",
        "opt = lso.LossScaleOptimizer(",
        "    tf.compat.v1.train.GradientDescentOptimizer(0.0),",
        "    lsm.ExponentialUpdateLossScaleManager(8, 1))",
        "train = opt.minimize(w * w)",
        "with tf.compat.v1.Session() as s:",
        "  s.run(tf.compat.v1.global_variables_initializer())",
        "  print([float(s.run([train, opt.loss_scale])[1]) for _ in range(3)])",
    ])
    proc = subprocess.run([sys.executable, "-c", code],
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              sys.path)),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=300, check=False)
    output = proc.stdout.decode("utf-8", "replace")
    self.assertEqual(proc.returncode, 0, output[-3000:])
    self.assertEqual(output.strip().splitlines()[-1], "[8.0, 16.0, 32.0]")


if __name__ == "__main__":
  tf.test.main()
