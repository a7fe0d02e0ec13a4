# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What is checked is what is applied, through the real optimizer step.

Each test hands `LossScaleOptimizer` a gradient whose update would be
non-finite in a way a value-by-value check misses (a complex gradient, an
`IndexedSlices` whose duplicate rows sum past the dtype's range), lets the
inner TF optimizer apply it, and compares the variable and `global_step`
with a NumPy expectation: a step is skipped exactly when the update is
non-finite. The unscaling of fp16 gradients at large scales is pinned too.

TF 1.15's optimizer (`tf115_harness`), handed the same gradient in the same
mode, judges every real-valued step to the bit: it checked an
`IndexedSlices` made dense, its duplicate rows summed. It crashed on a
complex gradient (its `IsFinite` has no complex kernel), so the complex
steps have their NumPy expectation alone.
"""

import json
import os
import subprocess

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import forkserver
import program_util
import tf115_harness as harness

MODES = ("graph", "eager", "function")
FP16_MAX = float(np.finfo(np.float16).max)


def _sgd():
  return tf.compat.v1.train.GradientDescentOptimizer(1.0)


def _momentum():
  # Momentum's sparse apply sums duplicate indices first (in the values'
  # dtype); plain SGD scatters each row on its own.
  return tf.compat.v1.train.MomentumOptimizer(1.0, 0.0)


def apply_step(mode, initial, make_grad, make_inner=_sgd, lib=None):
  """One `apply_gradients` of `make_grad()` to a variable holding `initial`.

  By `lib`'s optimizer (a `tf115_harness.Library`; the package's if None),
  at a fixed scale of 1.

  Returns:
    `(variable value after the step, global_step after the step)`.
  """
  lib = lib or harness.Library(harness.PACKAGE)

  def build():
    var = tf.compat.v1.Variable(initial, name="v")
    step = tf.compat.v1.Variable(0, dtype=tf.int64, name="step")
    opt = lib.LossScaleOptimizer(make_inner(), lib.FixedLossScaleManager(1))
    return var, step, opt

  if mode == "graph":
    with tf.Graph().as_default():
      var, step, opt = build()
      train_op = opt.apply_gradients([(make_grad(), var)], global_step=step)
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train_op)
        return sess.run([var, step])
  var, step, opt = build()

  def run():
    opt.apply_gradients([(make_grad(), var)], global_step=step)

  if mode == "function":
    tf.function(run)()
  else:
    run()
  return var.numpy(), step.numpy()


def expected_step(initial, grad_dense):
  """SGD with learning rate 1, or nothing when the update is not finite."""
  if np.all(np.isfinite(grad_dense)):
    return initial - grad_dense, 1
  return initial, 0


class _JudgedTestCase(harness.OracleTestCase):

  def judged_step(self, mode, initial, make_grad, make_inner=_sgd):
    """`apply_step` by the package, equal to TF 1.15's to the bit."""
    result = {}
    for which in harness.SIDES:
      var, step = apply_step(mode, initial, make_grad, make_inner,
                             harness.Library(which))
      result[which] = {"v": var, "global_step": step}
    self.assertSidesMatch(harness.Trajectories(
        [result[harness.ORACLE]], [result[harness.PACKAGE]], [None]))
    return result[harness.PACKAGE]["v"], result[harness.PACKAGE][
        "global_step"]


def densify(shape, indices, values):
  """The per-index sum of `values` in their own dtype, as a dense array."""
  dense = np.zeros(shape, values.dtype)
  np.add.at(dense, np.asarray(indices), values)
  return dense


class ComplexGradientTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(
      mode=MODES, dtype=["complex64", "complex128"],
      poison=[None, "real_nan", "imag_inf"], size=[3, 20000])
  def test_non_finite_part_skips_the_step(self, mode, dtype, poison, size):
    initial = np.full([size], 1 + 2j, dtype)
    grad = np.full([size], 0.5 - 0.25j, dtype)
    if poison:
      part, what = poison.split("_")
      bad = {"nan": np.nan, "inf": np.inf}[what]
      grad[size // 2] = complex(bad, 1) if part == "real" else complex(1, bad)
    var, step = apply_step(mode, initial, lambda: tf.constant(grad))
    want_var, want_step = expected_step(initial, grad)
    self.assertEqual(want_step, step)
    self.assertAllEqual(want_var, var)

  @parameterized.parameters(*MODES)
  def test_complex_sparse_gradient(self, mode):
    initial = np.zeros([4, 2], np.complex64)
    values = np.array([[1 + 1j, 2], [np.nan * 1j, 0]], np.complex64)

    def grad():
      return tf.IndexedSlices(tf.constant(values), tf.constant([0, 2]),
                              tf.constant([4, 2]))

    var, step = apply_step(mode, initial, grad)
    self.assertEqual(0, step)
    self.assertAllEqual(initial, var)


class DuplicateIndicesTest(_JudgedTestCase):

  @parameterized.product(
      mode=MODES,
      inner=[("sgd", _sgd), ("momentum", _momentum)],
      case=[
          # Each row finite; the two rows of index 1 sum past fp16's max.
          dict(indices=[1, 1], rows=[[40000.0, 1.0], [40000.0, 1.0]]),
          dict(indices=[3, 0, 3], rows=[[-FP16_MAX, 0], [1, 1], [-1000, 0]]),
          # Duplicates whose sum stays finite, and no duplicates: applied.
          dict(indices=[1, 1], rows=[[30000.0, 1.0], [30000.0, 1.0]]),
          dict(indices=[0, 1, 2], rows=[[FP16_MAX, 1], [FP16_MAX, 1],
                                        [-FP16_MAX, 1]]),
          # Opposite signs cancel: the sum is what is applied.
          dict(indices=[2, 2], rows=[[FP16_MAX, 0], [-FP16_MAX, 0]]),
      ])
  def test_update_is_the_per_index_sum(self, mode, inner, case):
    initial = np.zeros([4, 2], np.float16)
    values = np.array(case["rows"], np.float16)

    def grad():
      return tf.IndexedSlices(tf.constant(values),
                              tf.constant(case["indices"], tf.int64),
                              tf.constant([4, 2], tf.int64))

    var, step = self.judged_step(mode, initial, grad, make_inner=inner[1])
    want_var, want_step = expected_step(
        initial, densify([4, 2], case["indices"], values))
    self.assertEqual(want_step, step)
    self.assertAllEqual(want_var, var)

  @parameterized.parameters(*MODES)
  def test_large_embedding_gradient(self, mode):
    # More rows than the small-gradient check takes at once, and a float32
    # table: duplicates near float32's max overflow too.
    big = float(np.finfo(np.float32).max) * 0.75
    values = np.full([3000, 8], 0.5, np.float32)
    indices = np.arange(3000) % 1000
    for poisoned in (False, True):
      if poisoned:
        values[[7, 1007], 3] = big
      initial = np.zeros([1000, 8], np.float32)

      def grad():
        return tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                                tf.constant([1000, 8]))

      var, step = self.judged_step(mode, initial, grad)
      want_var, want_step = expected_step(initial,
                                          densify([1000, 8], indices, values))
      self.assertEqual(want_step, step)
      self.assertAllEqual(want_var, var)


class UnscaleTest(harness.OracleTestCase):

  @parameterized.product(mode=MODES, scale=[65520, 2**16, 2**20])
  def test_fp16_gradients_at_scales_past_fp16_max(self, mode, scale):
    # A float32 loss of an fp16 variable (a model computing in fp16 casts
    # its loss back): the scaled gradient `scale * 2**-8` fits fp16 and so
    # does `1 / scale`, while `scale` itself does not (65520 rounds to inf
    # in fp16). The reciprocal must be taken in float32, then cast, as TF
    # 1.15 took it: its optimizer judges the gradient and the step.
    grad, after = self._fp16_step(mode, scale, harness.Library(
        harness.PACKAGE))
    tf115_grad, tf115_after = self._fp16_step(mode, scale, harness.Library(
        harness.ORACLE))
    self.assertEqual(tf115_grad.tobytes(), grad.tobytes())
    self.assertEqual(tf115_after.tobytes(), after.tobytes())
    c = 2.0**-8
    # NumPy's float16 rounds each product as TF's fp16 kernels do.
    scaled = np.float16(np.float32(scale) * np.float32(c))
    want = scaled * np.float16(np.float32(1) / np.float32(scale))
    self.assertEqual(want, grad)
    self.assertAllClose(c, float(grad), rtol=1e-2)
    self.assertEqual(np.float16(1.0) - want, after)

  def _fp16_step(self, mode, scale, lib):
    """`(unscaled gradient, variable after the step)`, by `lib`'s optimizer."""
    c = 2.0**-8

    def build():
      var = tf.compat.v1.Variable(np.float16(1.0), name="w")
      opt = lib.LossScaleOptimizer(_sgd(), lib.FixedLossScaleManager(scale))
      return var, opt, lambda: tf.cast(var, tf.float32) * c

    if mode == "graph":
      with tf.Graph().as_default():
        var, opt, loss = build()
        grads = opt.compute_gradients(loss(), [var])
        train_op = opt.apply_gradients(grads)
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          grad = sess.run(grads[0][0])
          sess.run(train_op)
          after = sess.run(var)
    else:
      var, opt, loss = build()

      def step():
        grads = opt.compute_gradients(loss, [var])
        opt.apply_gradients(grads)
        return grads[0][0]

      grad = (tf.function(step) if mode == "function" else step)().numpy()
      after = var.numpy()
    return np.asarray(grad), np.asarray(after)


class TF1BehaviourTest(tf.test.TestCase):

  def test_complex_and_duplicate_gradients_under_disable_v2_behavior(self):
    # Ref variables and v1 control flow: the skip must hold there too. A
    # subprocess, because the switch is process-global. TF 1.15's optimizer
    # judges the duplicate rows' steps there (it crashed on the complex
    # ones): the same steps, to the bit.
    code = "\n".join([
        "import json, sys",
        "sys.path.insert(0, {!r})".format(
            os.path.dirname(os.path.abspath(__file__))),
        "import numpy as np, tensorflow as tf",
        "tf.compat.v1.disable_v2_behavior()",
        "import tf115_harness as harness",
        "def run(initial, grad, which=harness.PACKAGE):",
        "  lib = harness.Library(which)",
        "  with tf.Graph().as_default():",
        "    v = tf.compat.v1.Variable(initial)",
        "    step = tf.compat.v1.Variable(0, dtype=tf.int64)",
        "    opt = lib.LossScaleOptimizer(",
        "        tf.compat.v1.train.MomentumOptimizer(1.0, 0.0),",
        "        lib.FixedLossScaleManager(1))",
        "    op = opt.apply_gradients([(grad(), v)], global_step=step)",
        "    with tf.compat.v1.Session() as s:",
        "      s.run(tf.compat.v1.global_variables_initializer())",
        "      s.run(op)",
        "      return int(s.run(step)), s.run(v).tobytes().hex()",
        "c = np.array([1 + 1j, 2j], np.complex64)",
        "bad = np.array([1 + 1j, complex(0, np.inf)], np.complex64)",
        "rows = np.array([[40000.0], [40000.0]], np.float16)",
        "ok_rows = np.array([[30000.0], [30000.0]], np.float16)",
        "def sparse(r):",
        "  return lambda: tf.IndexedSlices(",
        "      tf.constant(r), tf.constant([1, 1]), tf.constant([3, 1]))",
        "sparse_runs = [(np.zeros([3, 1], np.float16), sparse(r))",
        "               for r in (ok_rows, rows)]",
        "print(json.dumps({",
        "    'steps': [run(c, lambda: tf.constant(c))[0],",
        "              run(c, lambda: tf.constant(bad))[0]] +",
        "             [run(*r)[0] for r in sparse_runs],",
        "    'package': [run(*r) for r in sparse_runs],",
        "    'oracle': [run(*r, which=harness.ORACLE) for r in sparse_runs]}))",
    ])
    proc = forkserver.run_python(
        ["-c", code], env=program_util.child_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=300, check=False)
    output = proc.stdout.decode("utf-8", "replace")
    self.assertEqual(proc.returncode, 0, output[-3000:])
    result = json.loads(output.strip().splitlines()[-1])
    self.assertEqual(result["steps"], [1, 0, 1, 0])
    # Each sparse step's global_step and variable, as TF 1.15's.
    self.assertEqual(result["package"], result["oracle"])


if __name__ == "__main__":
  tf.test.main()
