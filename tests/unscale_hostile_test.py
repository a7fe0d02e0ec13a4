# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Hostile probes of the flag the unscale remembers for `apply_gradients`.

`compute_gradients` may decide whether what it returns is finite (one
compiled eager call from `skip_decision.EAGER_COMPILE_MIN_GRADIENTS`
gradients on; one XLA pass with `xla_unscale=True`, in every mode), and
`apply_gradients` uses that flag for the very tensor objects it gets back.
TF 1.15 checked the values `apply_gradients` was handed. Each probe here
does what a real TF1 or TF2 user does between or around the two calls and
compares the trained variables with NumPy, or with the same program whose
remembered flags are bypassed (`known_flags.split_known` replaced by one
that knows nothing: the old, always-checking behaviour):

* a gradient tensor fed in a session (the TF1 gradient-accumulation
  pattern: `sess.run(train_op, {grad: accumulated})`);
* one tensor handed for several variables; one optimizer's gradients
  applied by another; a fake all-reduce wrapper that keeps or replaces them;
* a non-power-of-two scale and subnormal results, bit for bit in every
  mode, with and without XLA, on both sides of the eager threshold;
* `xla_unscale` on float16, bfloat16, float64, scalars, zero-size and
  unknown-shape gradients, integers, and a float16 loss;
* IndexedSlices whose row count changes between eager steps or retraces,
  with duplicate ids whose sum overflows;
* threads stepping one optimizer concurrently, eagerly and in a session;
* `MirroredStrategy` on one CPU; `GraphKeys.FINITE_GRADS` with XLA;
* TF1 control flow (`disable_v2_behavior()`, in a subprocess): the step
  inside a `tf.while_loop` body and inside a `tf.cond` branch;
* 2,000 eager steps leave the module's table of eager flags as it was, and
  graphs stepped with XLA are collected.

Where TF 1.15 has an answer, its optimizer (`tf115_harness`) takes the same
steps and the probe's numbers must be its numbers, to the bit: fed
gradients, the bit-for-bit steps in every mode, the float16 loss, the
varying sparse rows, the one-replica `MirroredStrategy` (judged without the
strategy: TF 1.15 crashed under one) and the TF1 control flow. Comparisons
of the package with itself (`_OldCheck`, the XLA unscale against the plain
one) are consistency checks; TF 1.15's optimizer judges `xla_unscale`'s
training in unscale_oracle_test.py.
"""

import gc
import json
import os
import subprocess
import textwrap
import threading
import weakref

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
from contrib_mixed_precision import graph_keys
from contrib_mixed_precision import known_flags
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import unscale

import forkserver
import program_util
import tf115_harness as harness

_T = skip_decision.EAGER_COMPILE_MIN_GRADIENTS


def _sgd(scale=8.0, xla=False, manager=None):
  return mp.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(1.0),
      manager or mp.FixedLossScaleManager(scale), xla_unscale=xla)


def _linear_loss(variables, coefficients):
  """`sum_i c_i * sum(w_i)` in float32: each gradient is the constant c_i."""

  def loss():
    return tf.add_n([
        tf.cast(tf.reduce_sum(w), tf.float32) * c
        for w, c in zip(variables, coefficients)
    ])

  return loss


def _bits(array):
  """`array` as unsigned integers of its width: NaN payloads, -0.0 compared."""
  array = np.asarray(array)
  return array.view("u{}".format(array.dtype.itemsize))


class _OldCheck(object):
  """Context: `all_finite` checks every gradient (no remembered flags)."""

  def __enter__(self):
    self._saved = known_flags.split_known
    known_flags.split_known = lambda grads: ([], list(grads))

  def __exit__(self, *unused):
    known_flags.split_known = self._saved


class FedGradientTest(harness.OracleTestCase):
  """TF1 sessions may feed any gradient tensor: the fed value is the step.

  TF 1.15 checked what `apply_gradients` was handed, fed or not: its
  optimizer, fed the same way, judges each step.
  """

  def _fed_step(self, xla, grad_value, x_value=None):
    """`w` after one fed step, by each side: `{side: value}`."""
    result = {}
    for which in harness.SIDES:
      lib = harness.Library(which)
      with tf.Graph().as_default(), self.session() as sess:
        x = tf.compat.v1.placeholder(tf.float32, [4], name="x")
        w = tf.Variable(np.ones(4, np.float32))
        opt = lib.LossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(1.0),
            lib.FixedLossScaleManager(8.0), xla_unscale=xla)
        grads_and_vars = opt.compute_gradients(tf.reduce_sum(w * x))
        train = opt.apply_gradients(grads_and_vars)
        sess.run(tf.compat.v1.global_variables_initializer())
        feed = {grads_and_vars[0][0]: np.asarray(grad_value, np.float32)}
        if x_value is not None:
          feed[x] = np.asarray(x_value, np.float32)
        sess.run(train, feed)
        result[which] = sess.run(w)
    self.assertEqual(result[harness.ORACLE].tobytes(),
                     result[harness.PACKAGE].tobytes())
    return result[harness.PACKAGE]

  @parameterized.parameters(False, True)
  def test_a_fed_nan_gradient_is_skipped(self, xla):
    # The computed gradient (x = 1) is finite; the one fed in is not.
    w = self._fed_step(xla, np.full(4, np.nan), np.ones(4))
    self.assertAllEqual(w, np.ones(4, np.float32))

  @parameterized.parameters(False, True)
  def test_a_fed_finite_gradient_is_applied(self, xla):
    # The computed gradient (x = NaN) is not finite; the one fed in is.
    w = self._fed_step(xla, np.full(4, 0.5), np.full(4, np.nan))
    self.assertAllEqual(w, np.full(4, 0.5, np.float32))

  @parameterized.parameters(False, True)
  def test_fed_gradients_need_no_inputs(self, xla):
    # Gradient accumulation: the apply run feeds only the summed gradients.
    w = self._fed_step(xla, np.full(4, 2.0))
    self.assertAllEqual(w, np.full(4, -1.0, np.float32))


class IdentityTest(tf.test.TestCase, parameterized.TestCase):
  """The same tensor objects, handed around the way users hand them."""

  def _model(self, n, poison=None):
    variables = [tf.Variable(np.ones(3, np.float32)) for _ in range(n)]
    coefficients = [0.5 + 0.25 * i for i in range(n)]
    if poison is not None:
      coefficients[poison] = np.nan
    return variables, coefficients

  @parameterized.product(n=(1, _T), xla=(False, True))
  def test_numpy_of_a_gradient_is_a_copy(self, n, xla):
    # Writing into `.numpy()` must not reach the remembered tensor.
    variables, coefficients = self._model(n)
    opt = _sgd(8.0, xla)
    grads_and_vars = opt.compute_gradients(
        _linear_loss(variables, coefficients), var_list=variables)
    array = grads_and_vars[0][0].numpy()
    array[:] = np.nan
    opt.apply_gradients(grads_and_vars)
    self.assertAllEqual(variables[0], np.full(3, 0.5, np.float32))

  @parameterized.product(n=(2, _T), xla=(False, True), poisoned=(0, 1))
  def test_one_tensor_for_every_variable(self, n, xla, poisoned):
    # grads[0] is handed for every variable; grads[1] (maybe NaN) for none.
    variables, coefficients = self._model(n, poison=1 if poisoned else None)
    if poisoned == 0:
      coefficients[0] = np.nan
    opt = _sgd(8.0, xla)
    grads_and_vars = opt.compute_gradients(
        _linear_loss(variables, coefficients), var_list=variables)
    first = grads_and_vars[0][0]
    opt.apply_gradients([(first, v) for v in variables])
    want = (np.ones(3, np.float32) if poisoned == 0 else
            np.full(3, 0.5, np.float32))
    for v in variables:
      self.assertAllEqual(v, want)

  @parameterized.product(n=(1, _T), xla=(False, True), poisoned=(False, True))
  def test_another_optimizer_applies_them(self, n, xla, poisoned):
    variables, coefficients = self._model(n, poison=n - 1 if poisoned else None)
    computing = _sgd(8.0, xla)
    manager = mp.ExponentialUpdateLossScaleManager(
        4.0, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    applying = _sgd(xla=not xla, manager=manager)
    grads_and_vars = computing.compute_gradients(
        _linear_loss(variables, coefficients), var_list=variables)
    applying.apply_gradients(grads_and_vars)
    self.assertEqual(float(manager.get_loss_scale()), 2.0 if poisoned else 4.0)
    for v, c in zip(variables, coefficients):
      want = np.ones(3, np.float32) if poisoned else np.float32(1.0) - c
      self.assertAllEqual(v, np.broadcast_to(want, (3,)))

  @parameterized.product(mode=("graph", "eager"), xla=(False, True),
                         replace=(False, True))
  def test_fake_all_reduce_wrapper(self, mode, xla, replace):
    # A Horovod-like wrapper around the LossScaleOptimizer: with one worker
    # it hands the same tensors back, with two it averages with a peer's
    # gradient, which is NaN for the last variable.

    class FakeAllReduce(tf.compat.v1.train.Optimizer):

      def __init__(self, opt):
        super().__init__(False, "FakeAllReduce")
        self._inner = opt

      def compute_gradients(self, *args, **kwargs):
        gv = self._inner.compute_gradients(*args, **kwargs)
        if not replace:
          return gv
        peers = [tf.zeros_like(g) for g, _ in gv]
        peers[-1] = peers[-1] + np.nan
        return [((g + p) / 2.0, v) for (g, v), p in zip(gv, peers)]

      def apply_gradients(self, *args, **kwargs):
        return self._inner.apply_gradients(*args, **kwargs)

    def go(sess):
      variables, coefficients = self._model(_T)
      opt = FakeAllReduce(_sgd(8.0, xla))
      step = opt.minimize(_linear_loss(variables, coefficients),
                          var_list=variables)
      if sess is not None:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(step)
        return sess.run(variables), coefficients
      return [v.numpy() for v in variables], coefficients

    if mode == "graph":
      with tf.Graph().as_default(), self.session() as sess:
        values, coefficients = go(sess)
    else:
      values, coefficients = go(None)
    for value, c in zip(values, coefficients):
      want = np.ones(3, np.float32) if replace else np.float32(1.0) - c
      self.assertAllEqual(value, np.broadcast_to(want, (3,)))


def _step_every_dtype(mode, n, xla, scale, minimize=True, lib=None):
  """One SGD step of a model of float16, bfloat16, float32 and float64 vars.

  By `lib`'s optimizer (a `tf115_harness.Library`; the package's if None).
  Returns the variables' values after the step, as NumPy arrays.
  """
  lib = lib or harness.Library(harness.PACKAGE)
  dtypes = (np.float16, tf.bfloat16.as_numpy_dtype, np.float32, np.float64)
  coefficients = (0.1, 0.3, 1e-39 * 2**20, 0.7, 1.0 / 3.0, 5e-30, 1e-3, 2.5,
                  0.9)[:n]

  def build():
    variables = [
        tf.Variable(np.full((2,), 0.25, dtypes[i % len(dtypes)]))
        for i in range(n)
    ]
    opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0),
        lib.FixedLossScaleManager(scale), xla_unscale=xla)
    loss = _linear_loss(variables, coefficients)
    if minimize:
      return variables, lambda: opt.minimize(loss, var_list=variables)
    return variables, lambda: opt.apply_gradients(
        opt.compute_gradients(loss, var_list=variables))

  if mode == "graph":
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
      variables, step = build()
      op = step()
      sess.run(tf.compat.v1.global_variables_initializer())
      sess.run(op)
      return sess.run(variables)
  variables, step = build()
  if mode == "function":
    tf.function(lambda: step() and None)()
  else:
    step()
  return [v.numpy() for v in variables]


class BitForBitTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(3.0, 2.0**20)
  def test_every_path_gives_the_same_bits(self, scale):
    # A scale whose reciprocal is inexact, subnormal unscaled gradients, and
    # every dtype: one answer for every mode, count, XLA and call style (a
    # consistency check), and that answer is TF 1.15's, in each mode.
    reference = _step_every_dtype("graph", _T + 1, False, scale)
    for mode in ("graph", "function", "eager"):
      oracle = _step_every_dtype(mode, _T + 1, False, scale,
                                 lib=harness.Library(harness.ORACLE))
      for i, (a, b) in enumerate(zip(oracle, reference)):
        self.assertAllEqual(_bits(a), _bits(b),
                            msg="TF 1.15's {} step, var {}".format(mode, i))
    with _OldCheck():
      old = _step_every_dtype("eager", _T + 1, False, scale)
    for a, b in zip(reference, old):
      self.assertAllEqual(_bits(a), _bits(b))
    for mode in ("graph", "function", "eager"):
      for n in (_T - 1, _T + 1):
        for xla in (False, True):
          for minimize in (True, False):
            got = _step_every_dtype(mode, n, xla, scale, minimize)
            for i, (a, b) in enumerate(zip(reference, got)):
              self.assertAllEqual(
                  _bits(a), _bits(b),
                  msg="{} n={} xla={} minimize={} var {}".format(
                      mode, n, xla, minimize, i))

  def test_float32_unscale_is_the_numpy_multiply(self):
    # The reference above against NumPy: g * float32(1 / 3); and against
    # TF 1.15's step.
    got = _step_every_dtype("eager", _T + 1, True, 3.0)
    oracle = _step_every_dtype("eager", _T + 1, True, 3.0,
                               lib=harness.Library(harness.ORACLE))
    for a, b in zip(oracle, got):
      self.assertAllEqual(_bits(a), _bits(b))
    inv = np.reciprocal(np.float32(3.0))
    for i in (2, 6):  # The float32 variables.
      c = np.float32((0.1, 0.3, 1e-39 * 2**20, 0.7, 1.0 / 3.0, 5e-30, 1e-3,
                      2.5, 0.9)[i])
      scaled = np.float32(c * np.float32(3.0))
      want = np.float32(0.25) - np.float32(scaled * inv)
      self.assertAllEqual(_bits(got[i]), _bits(np.full(2, want)))


class XlaEdgesTest(tf.test.TestCase, parameterized.TestCase):
  """`unscale.unscale(xla=True)` against the plain multiply and the check.

  A consistency check of two paths of the package: TF 1.15's optimizer
  judges `xla_unscale=True`'s training in unscale_oracle_test.py, and the
  float16 loss's here.
  """

  def _grads(self, bad):
    """Gradients of every awkward kind; `bad` poisons one of them."""
    grads = [
        tf.constant(np.float16(3.0)),  # A scalar.
        tf.constant(np.full((2, 3), 6.0, np.float16)),
        tf.cast(tf.constant([[2.0, -4.0]]), tf.bfloat16),
        tf.constant(np.full((3,), 1.0 / 3.0, np.float64)),
        tf.zeros((0, 4), tf.float32),  # Zero-size.
        tf.constant([5, 7], tf.int32),  # Integers: not checked.
        tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                         tf.constant([0, 0]), tf.constant([3, 2])),
    ]
    if bad is not None:
      index, value = bad
      g = grads[index]
      if isinstance(g, tf.IndexedSlices):
        grads[index] = tf.IndexedSlices(g.values * value, g.indices,
                                        g.dense_shape)
      else:
        grads[index] = g * tf.cast(value, g.dtype)
    return grads

  def _compare(self, grads):
    """(xla results, plain results, remembered flag, checked flag)."""
    # Sparse kept sparse: the fused pass must leave it to the multiply.
    fused = unscale.unscale(grads, tf.constant(4.0), xla=True,
                            keep_sparse=True)
    plain = unscale.unscaled(grads, tf.constant(4.0))
    remembered = skip_decision.all_finite(fused)
    with _OldCheck():
      checked = skip_decision.all_finite(fused)
    return fused, plain, remembered, checked

  def _assert_same(self, fused, plain):
    for a, b in zip(fused, plain):
      if isinstance(a, tf.IndexedSlices):
        a, b = a.values, b.values
      self.assertEqual(a.dtype, b.dtype)
      self.assertAllEqual(_bits(a.numpy()), _bits(b.numpy()))

  @parameterized.parameters(
      {"bad": bad} for bad in (None, (0, np.inf), (1, np.nan), (2, -np.inf),
                               (3, np.nan), (6, np.inf), (1, 1e4)))
  def test_eager(self, bad):
    fused, plain, remembered, checked = self._compare(self._grads(bad))
    self._assert_same(fused, plain)
    self.assertEqual(bool(remembered), bool(checked))
    self.assertEqual(bool(remembered), bad is None or bad == (1, 1e4))

  def test_function_and_unknown_shapes(self):
    results = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32),
                                  tf.TensorSpec(None, tf.float16)])
    def step(a, b):
      fused, plain, remembered, checked = self._compare([a, b])
      return fused, plain, remembered, checked

    for a, b in ((np.ones((2, 2)), np.float16(1.0)),
                 (np.array([1.0, np.nan]), np.ones(3)),
                 (np.zeros((0,)), np.array([[np.inf]])),
                 (np.float32(7.0), np.zeros((1, 0, 2)))):
      fused, plain, remembered, checked = step(
          tf.constant(a, tf.float32), tf.constant(b, tf.float16))
      self._assert_same(fused, plain)
      results.append((bool(remembered), bool(checked)))
    self.assertEqual(results, [(True, True), (False, False), (False, False),
                               (True, True)])

  def test_graph_placeholders_of_unknown_shape(self):
    with tf.Graph().as_default(), self.session() as sess:
      a = tf.compat.v1.placeholder(tf.float32, None)
      b = tf.compat.v1.placeholder(tf.float64, [None, 2])
      fused = unscale.unscale([a, b], tf.constant(4.0), xla=True)
      plain = unscale.unscaled([a, b], tf.constant(4.0))
      remembered = skip_decision.all_finite(fused)
      with _OldCheck():
        checked = skip_decision.all_finite(fused)
      for a_value, b_value, want in (
          (np.ones((3, 1, 2)), np.ones((4, 2)), True),
          (np.float32(np.nan), np.ones((0, 2)), False),
          (np.zeros((0,)), np.full((1, 2), -np.inf), False)):
        got = sess.run([fused, plain, remembered, checked],
                       {a: a_value, b: b_value})
        for x, y in zip(got[0], got[1]):
          self.assertAllEqual(_bits(np.asarray(x)), _bits(np.asarray(y)))
        self.assertEqual(got[2:], [want, want])

  @parameterized.parameters("graph", "function", "eager")
  def test_float16_loss(self, mode):
    # A float16 loss, scaled by 2**10 in float16: 70 * 1024 overflows it.
    # TF 1.15's optimizer takes the same steps: the same values.
    def go(sess, lib):
      w = tf.Variable(np.ones(3, np.float16))
      c = tf.Variable(np.float16(1.0), trainable=False)
      opt = lib.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          lib.FixedLossScaleManager(2.0**10), xla_unscale=True)
      step = lambda: opt.minimize(lambda: tf.reduce_sum(w) * c, var_list=[w])
      values = []
      if mode == "graph":
        op = step()
        sess.run(tf.compat.v1.global_variables_initializer())
        for value in (1.0, 70.0, 0.5):
          sess.run(c.assign(value))
          sess.run(op)
          values.append(sess.run(w))
        return values
      fn = tf.function(lambda: step() and None) if mode == "function" else step
      for value in (1.0, 70.0, 0.5):
        c.assign(value)
        fn()
        values.append(w.numpy())
      return values

    sides = {}
    for which in harness.SIDES:
      if mode == "graph":
        with tf.Graph().as_default(), self.session() as sess:
          sides[which] = go(sess, harness.Library(which))
      else:
        sides[which] = go(None, harness.Library(which))
    values = sides[harness.PACKAGE]
    for got, oracle in zip(values, sides[harness.ORACLE]):
      self.assertAllEqual(_bits(got), _bits(oracle))
    want = [np.zeros(3), np.zeros(3), np.full(3, -0.5)]
    for got, expected in zip(values, want):
      self.assertAllEqual(got, expected.astype(np.float16))

  def test_finite_grads_fetched_with_xla(self):
    with tf.Graph().as_default(), self.session() as sess:
      w = tf.Variable(np.ones((2, 2), np.float32))
      b = tf.Variable(np.ones((2,), np.float16))
      p = tf.compat.v1.placeholder(tf.float32, [])
      opt = _sgd(8.0, True)
      train = opt.minimize(tf.reduce_sum(w) * p +
                           tf.cast(tf.reduce_sum(b), tf.float32))
      finite = tf.compat.v1.get_collection(graph_keys.GraphKeys.FINITE_GRADS)
      self.assertLen(finite, 1)
      sess.run(tf.compat.v1.global_variables_initializer())
      got = [sess.run([train, finite[0]], {p: value})[1]
             for value in (1.0, np.nan, 2.0, np.inf)]
      self.assertEqual(got, [True, False, True, False])
      self.assertAllEqual(sess.run(w), np.full((2, 2), -2.0, np.float32))


class SparseTest(tf.test.TestCase, parameterized.TestCase):
  """IndexedSlices whose row count changes, with overflowing duplicate sums."""

  def _run(self, dtype, n_extra, ids_per_step, rows_value, use_function,
           lib=None):
    lib = lib or harness.Library(harness.PACKAGE)
    table = tf.Variable(np.zeros((4, 2), dtype))
    extras = [tf.Variable(np.ones(2, np.float32)) for _ in range(n_extra)]
    c = tf.Variable(1.0, trainable=False)
    ids_holder = tf.Variable([0], shape=tf.TensorShape([None]),
                             trainable=False)
    opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0),
        lib.FixedLossScaleManager(1.0), xla_unscale=True)

    def loss():
      rows = tf.gather(table, ids_holder)
      total = tf.cast(tf.reduce_sum(rows), tf.float32) * c
      for e in extras:
        total += tf.reduce_sum(e)
      return total

    def step():
      opt.minimize(loss, var_list=[table] + extras)

    fn = tf.function(lambda: step() and None) if use_function else step
    history = []
    for ids, value in zip(ids_per_step, rows_value):
      ids_holder.assign(ids)
      c.assign(value)
      fn()
      history.append(table.numpy().astype(np.float64))
    return history

  @parameterized.product(dtype=(np.float16, np.float32), n_extra=(1, _T),
                         use_function=(False, True))
  def test_row_counts_vary(self, dtype, n_extra, use_function):
    # Two rows of `big` overflow; three of `big / 2` do not (though their
    # float32 squares do: the exact sum decides).
    big = 40000.0 if dtype == np.float16 else 2e38
    steps = ([1], [0, 2, 2], [3, 3], [1, 2, 3, 0, 0], [2, 2, 2])
    values = (1.0, 1.0, big, 1.0, big / 2)
    history = self._run(dtype, n_extra, steps, values, use_function)
    # TF 1.15's optimizer, the same steps: the same table after each.
    oracle = self._run(dtype, n_extra, steps, values, use_function,
                       harness.Library(harness.ORACLE))
    for got, expected in zip(history, oracle):
      self.assertAllEqual(_bits(got), _bits(expected))
    # NumPy: SGD at rate 1; a step whose per-index sums overflow is skipped.
    table = np.zeros((4, 2))
    want = []
    limit = float(np.finfo(dtype).max)
    for ids, value in zip(steps, values):
      update = np.zeros((4, 2))
      np.add.at(update, np.asarray(ids), value)
      if np.all(np.abs(update) <= limit):
        # SGD subtracts in the dtype: the exact difference, rounded.
        table = (table - update).astype(dtype).astype(np.float64)
      want.append(table.copy())
    self.assertEqual([bool(np.array_equal(a, b)) for a, b in
                      zip(want, want[1:])], [False, True, False, False])
    for got, expected in zip(history, want):
      self.assertAllEqual(got, expected)


class ThreadsTest(tf.test.TestCase, parameterized.TestCase):
  """Threads step one optimizer at once; each step decides on its own."""

  @parameterized.product(n=(1, _T), xla=(False, True))
  def test_eager(self, n, xla):
    opt = _sgd(8.0, xla)
    threads = 4
    models = []
    for _ in range(threads):
      variables = [tf.Variable(np.zeros(2, np.float32)) for _ in range(n)]
      c = tf.Variable(1.0, trainable=False)
      models.append((variables, c))
    errors = []

    def work(t):
      variables, c = models[t]
      try:
        for step in range(6):
          bad = (step + t) % 3 == 0
          c.assign(np.nan if bad else float(t + 1))
          grads_and_vars = opt.compute_gradients(
              lambda: tf.add_n([tf.reduce_sum(v) for v in variables]) * c,
              var_list=variables)
          opt.apply_gradients(grads_and_vars)
      except Exception as e:  # pylint: disable=broad-except
        errors.append(e)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
      w.start()
    for w in workers:
      w.join()
    self.assertEqual(errors, [])
    for t, (variables, _) in enumerate(models):
      applied = sum((step + t) % 3 != 0 for step in range(6))
      for v in variables:
        self.assertAllEqual(v, np.full(2, -applied * (t + 1.0), np.float32))

  @parameterized.parameters(False, True)
  def test_session(self, xla):
    with tf.Graph().as_default(), self.session() as sess:
      opt = _sgd(8.0, xla)
      ops = []
      models = []
      for _ in range(4):
        variables = [tf.Variable(np.zeros(2, np.float32)) for _ in range(_T)]
        p = tf.compat.v1.placeholder(tf.float32, [])
        ops.append((opt.minimize(
            tf.add_n([tf.reduce_sum(v) for v in variables]) * p,
            var_list=variables), p))
        models.append(variables)
      sess.run(tf.compat.v1.global_variables_initializer())

      def work(t):
        op, p = ops[t]
        for step in range(20):
          sess.run(op, {p: np.nan if (step + t) % 3 == 0 else t + 1.0})

      workers = [threading.Thread(target=work, args=(t,)) for t in range(4)]
      for w in workers:
        w.start()
      for w in workers:
        w.join()
      for t, variables in enumerate(models):
        applied = sum((step + t) % 3 != 0 for step in range(20))
        for value in sess.run(variables):
          self.assertAllEqual(value, np.full(2, -applied * (t + 1.0),
                                             np.float32))


class MirroredTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(n=(1, _T), xla=(False, True))
  def test_one_cpu(self, n, xla):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
      variables = [tf.Variable(np.zeros(2, np.float32)) for _ in range(n)]
      c = tf.Variable(1.0, trainable=False)
      manager = mp.ExponentialUpdateLossScaleManager(
          8.0, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
      opt = _sgd(xla=xla, manager=manager)

    @tf.function
    def step():
      def replica_fn():
        opt.minimize(lambda: tf.add_n([tf.reduce_sum(v) for v in variables])
                     * c, var_list=variables)
      strategy.run(replica_fn)

    # TF 1.15 crashed under a strategy (tensorflow#25080): its judge is
    # its optimizer on one replica, without the strategy.
    lib = harness.Library(harness.ORACLE)
    twins = [tf.Variable(np.zeros(2, np.float32)) for _ in range(n)]
    tf115_manager = lib.ExponentialUpdateLossScaleManager(
        8.0, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    tf115_opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0), tf115_manager)
    tf115_step = tf.function(lambda: tf115_opt.minimize(
        lambda: tf.add_n([tf.reduce_sum(v) for v in twins]) * c,
        var_list=twins) and None)

    for value in (1.0, np.nan, 2.0):
      c.assign(value)
      step()
      tf115_step()
    for v in variables:
      self.assertAllEqual(v, np.full(2, -3.0, np.float32))
    self.assertEqual(float(tf.convert_to_tensor(manager.get_loss_scale())),
                     4.0)
    for v, twin in zip(variables, twins):
      self.assertAllEqual(_bits(v.numpy()), _bits(twin.numpy()))
    self.assertEqual(float(tf.convert_to_tensor(manager.get_loss_scale())),
                     float(tf115_manager.get_loss_scale()))


# Run with tests/ first on sys.path. Each case is trained by the package's
# optimizer and by TF 1.15's ("tf115", which has no `xla_unscale`).
_V1_PROGRAM = """
import json
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_v2_behavior()
import tf115_harness as harness


def model(n, xla):
  lib = harness.Library(harness.ORACLE if xla == "tf115" else harness.PACKAGE)
  ws = [tf.compat.v1.get_variable("w%d" % i, initializer=np.zeros(
      2, np.float32), use_resource=True) for i in range(n)]
  opt = lib.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(1.0),
      lib.FixedLossScaleManager(8.0), xla_unscale=xla is True)
  return ws, opt, lambda c: tf.add_n([tf.reduce_sum(w) for w in ws]) * c


def in_while_loop(n, xla, sess):
  ws, opt, loss = model(n, xla)
  # The loss's coefficient per iteration: not finite at i = 1 and 3.
  coefficients = tf.constant([1.0, np.nan, 2.0, np.inf, 3.0])

  def body(i):
    train = opt.minimize(loss(coefficients[i]), var_list=ws)
    with tf.control_dependencies([train]):
      return i + 1

  loop = tf.compat.v1.while_loop(lambda i: i < 5, body, [0])
  sess.run(tf.compat.v1.global_variables_initializer())
  sess.run(loop)
  return ws


def in_cond_branch(n, xla, sess):
  ws, opt, loss = model(n, xla)
  p = tf.compat.v1.placeholder(tf.float32, [])
  branch = tf.compat.v1.cond(
      p > 0.0, lambda: tf.group(opt.minimize(loss(p), var_list=ws)),
      tf.no_op)
  sess.run(tf.compat.v1.global_variables_initializer())
  for value in (1.0, 2.0, -1.0, np.inf, 3.0):
    sess.run(branch, {p: value})
  return ws


results = {}
for where in (in_while_loop, in_cond_branch):
  for xla in (False, True, "tf115"):
    for n in (1, 9):
      key = "%s/xla=%s/n=%d" % (where.__name__, xla, n)
      with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        try:
          ws = where(n, xla, sess)
          results[key] = sorted(set(
              tuple(a.tolist()) for a in sess.run(ws)))
        except Exception as e:  # pylint: disable=broad-except
          lines = [l for l in str(e).splitlines() if l.strip()]
          detail = [l for l in lines if "Invalid" in l] or lines
          results[key] = "%s: %s" % (type(e).__name__, detail[0][:300])
print("RESULT " + json.dumps(results))
"""


class V1ControlFlowTest(tf.test.TestCase):

  def test_while_loop_body_and_cond_branch(self):
    code = "import sys\nsys.path.insert(0, {!r})\n{}".format(
        os.path.dirname(os.path.abspath(__file__)),
        textwrap.dedent(_V1_PROGRAM))
    proc = forkserver.run_python(
        ["-c", code],
        env=program_util.child_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=240, check=False)
    output = proc.stdout.decode("utf-8", "replace")
    self.assertEqual(proc.returncode, 0, output[-4000:])
    line = [l for l in output.splitlines() if l.startswith("RESULT ")][-1]
    results = json.loads(line[len("RESULT "):])
    # Every variable gets -(1 + 2 + 3): the loop skips NaN and Inf, the
    # cond's branch is not taken for -1 and skips Inf; so does TF 1.15's
    # optimizer, in TF 1.15's control flow.
    want = {}
    for where in ("in_while_loop", "in_cond_branch"):
      for xla in (False, True, "tf115"):
        for n in (1, 9):
          want["%s/xla=%s/n=%d" % (where, xla, n)] = [[-6.0, -6.0]]
    self.assertDictEqual(results, want)


class LifetimeTest(tf.test.TestCase, parameterized.TestCase):

  def test_eager_table_is_flat_over_2000_steps(self):
    table = known_flags._EAGER_KNOWN_FLAGS  # pylint: disable=protected-access
    gc.collect()
    before = len(table)
    for xla, n in ((False, _T), (True, 1)):
      variables = [tf.Variable(np.zeros(2, np.float32)) for _ in range(n)]
      c = tf.Variable(1.0, trainable=False)
      opt = _sgd(8.0, xla)
      loss = lambda: tf.add_n([tf.reduce_sum(v) for v in variables]) * c  # noqa: B023
      sizes = []
      for step in range(1000):
        c.assign(np.nan if step % 7 == 3 else 1e-6)
        opt.apply_gradients(opt.compute_gradients(loss, var_list=variables))
        if step % 250 == 249:
          sizes.append(len(table))
      self.assertLessEqual(max(sizes), before + n, sizes)
    gc.collect()
    self.assertEqual(len(table), before)

  def test_graphs_stepped_with_xla_are_collected(self):
    refs = []
    for _ in range(5):
      with tf.Graph().as_default() as graph:
        w = tf.Variable(np.ones((3, 3), np.float32))
        b = tf.Variable(np.ones(3, np.float16))
        opt = mp.LossScaleOptimizer(
            tf.compat.v1.train.AdamOptimizer(1e-3),
            mp.ExponentialUpdateLossScaleManager(2**10, 2), xla_unscale=True)
        train = opt.minimize(tf.reduce_sum(tf.matmul(w, w)) +
                             tf.cast(tf.reduce_sum(b), tf.float32))
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          sess.run(train)
      refs.append(weakref.ref(graph))
    del graph, w, b, opt, train, sess
    gc.collect()
    self.assertEqual(sum(r() is not None for r in refs), 0)


if __name__ == "__main__":
  tf.test.main()
