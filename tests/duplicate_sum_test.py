# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The duplicate-sum check at the edge of every float dtype's range.

An `IndexedSlices` gradient with rows repeated at one index is applied as
their per-index sum. Each test hands the real optimizer (SGD through
`LossScaleOptimizer`) rows that are each finite and whose sum is exactly
the dtype's largest finite number (it fits: applied) or one unit in the
last place more (it overflows: skipped), in float16, bfloat16, float32,
float64, and complex64 and complex128 through either part, with 2 rows and
with 8 rows of an eighth of the range each (small enough that only the row
count shows the sum can overflow).

The rows are powers of two and the largest number minus its ulp, so every
partial sum, in any order, is exact, and only the final sum can round. The
expectation is computed here with exact rational arithmetic
(`fractions.Fraction`): under round-to-nearest the sum overflows exactly
when it is at least the largest number plus half an ulp.

TF 1.15's optimizer (`tf115_harness`), handed the same slices in the same
mode, judges each real dtype's step to the bit: it checked the slices made
dense (their per-index sums). It crashed on a complex gradient (its
`IsFinite` has no complex kernel), so the complex steps have the exact
expectation alone.
"""

import fractions
import math

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import tf115_harness as harness

MODES = ("graph", "eager", "function")
_ROW = 1  # The index every row goes to.


def _edges(real_dtype):
  """(largest finite number, its ulp, the next power of two), exactly."""
  largest = fractions.Fraction(float(tf.as_dtype(real_dtype).max))
  top = fractions.Fraction(2)**math.ceil(math.log2(largest))
  return largest, top - largest, top


def _rows(real_dtype, count, overflows):
  """`count` finite numbers whose exact sum is max (or max + ulp)."""
  largest, ulp, top = _edges(real_dtype)
  if count == 2:
    rows = [top / 2, top / 2]
  else:
    rows = [top / count] * count
  if not overflows:
    rows[-1] -= ulp
  assert sum(rows) == (largest + ulp if overflows else largest)
  return rows


def _sum_is_finite(rows, real_dtype):
  """Round-to-nearest of the exact sum, as IEEE 754 defines it."""
  largest, ulp, _ = _edges(real_dtype)
  return abs(sum(rows, fractions.Fraction(0))) < largest + ulp / 2


def _cases():
  cases = []
  for dtype in ("float16", "bfloat16", "float32", "float64", "complex64",
                "complex128"):
    parts = ("real", "imag") if dtype.startswith("complex") else ("real",)
    for part in parts:
      for count in (2, 8):
        for overflows in (False, True):
          cases.append(dict(
              testcase_name="{}_{}_{}_rows_{}".format(
                  dtype, part, count, "over" if overflows else "fits"),
              dtype=dtype, part=part, count=count, overflows=overflows))
  return cases


def _apply(mode, dtype, values, indices, shape, lib):
  """One `apply_gradients` of the slices to a zero variable, SGD at lr 1.

  By `lib`'s optimizer (a `tf115_harness.Library`).

  Returns `(variable after the step, global_step after the step)`.
  """

  def build():
    var = tf.compat.v1.Variable(tf.zeros(shape, dtype), name="table")
    step = tf.compat.v1.Variable(0, dtype=tf.int64, name="step")
    opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0),
        lib.FixedLossScaleManager(1))

    def apply():
      grad = tf.IndexedSlices(tf.constant(values, dtype),
                              tf.constant(indices, tf.int64),
                              tf.constant(shape, tf.int64))
      return opt.apply_gradients([(grad, var)], global_step=step)

    return var, step, apply

  if mode == "graph":
    with tf.Graph().as_default():
      var, step, apply = build()
      train_op = apply()
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train_op)
        return sess.run([var, step])
  var, step, apply = build()
  if mode == "function":
    tf.function(lambda: apply() and None)()
  else:
    apply()
  return var.numpy(), step.numpy()


class DuplicateSumEdgeTest(harness.OracleTestCase):

  def _apply(self, mode, dtype, values, indices, shape):
    """The package's step, which TF 1.15's judges for a real dtype."""
    package = _apply(mode, dtype, values, indices, shape,
                     harness.Library(harness.PACKAGE))
    if not tf.as_dtype(dtype).is_complex:
      oracle = _apply(mode, dtype, values, indices, shape,
                      harness.Library(harness.ORACLE))
      self.assertSidesMatch(harness.Trajectories(
          [dict(zip(("table", "global_step"), oracle))],
          [dict(zip(("table", "global_step"), package))], [None]))
    return package

  def test_rows_are_exact_and_the_expectation_sees_the_edge(self):
    # Guards the construction: each row is finite in its dtype, and the
    # float16 rows are those the docstring describes.
    self.assertEqual([2**15, 2**15], _rows("float16", 2, True))
    self.assertEqual([8192] * 7 + [8160], _rows("float16", 8, False))
    for dtype in ("float16", "bfloat16", "float32", "float64"):
      np_dtype = tf.as_dtype(dtype).as_numpy_dtype
      for count in (2, 8):
        for overflows in (False, True):
          rows = _rows(dtype, count, overflows)
          self.assertEqual([float(np_dtype(float(r))) for r in rows],
                           [float(r) for r in rows])
          self.assertEqual(not overflows, _sum_is_finite(rows, dtype))
    # NumPy, summing in the dtype, agrees where it has the dtype.
    with np.errstate(over="ignore"):
      for dtype in (np.float16, np.float32, np.float64):
        for overflows in (False, True):
          rows = np.array([float(r) for r in _rows(dtype, 8, overflows)],
                          dtype)
          total = np.zeros([], dtype)
          for r in rows:
            total = dtype(total + r)
          self.assertEqual(not overflows, bool(np.isfinite(total)))

  @parameterized.named_parameters(_cases())
  def test_applied_exactly_when_the_per_index_sum_fits(
      self, dtype, part, count, overflows):
    real_dtype = tf.as_dtype(dtype).real_dtype.name
    rows = _rows(real_dtype, count, overflows)
    # The other part (or column) fits comfortably: 1 per row.
    values = np.zeros([count, 2], np.complex128)
    for i, r in enumerate(rows):
      values[i, 0] = complex(float(r), 1) if part == "real" else complex(
          1, float(r))
    values[:, 1] = 1 - 1j
    if part == "real" and not dtype.startswith("complex"):
      values = values.real
    shape = [4, 2]
    var, step = self._apply("graph", dtype, values, [_ROW] * count, shape)
    finite = _sum_is_finite(rows, real_dtype)
    self.assertEqual(not overflows, finite)
    expected = np.zeros(shape, var.dtype)
    if finite:
      total = -float(sum(rows, fractions.Fraction(0)))
      expected[_ROW, 0] = (complex(total, -count) if part == "real" else
                           complex(-count, total)) if var.dtype.kind == "c" \
          else total
      expected[_ROW, 1] = -count * (1 - 1j) if var.dtype.kind == "c" else (
          -count)
    self.assertEqual(int(finite), step)
    self.assertAllEqual(expected, var)

  @parameterized.product(mode=MODES, dtype=["float16", "float64"])
  def test_every_mode(self, mode, dtype):
    # The same edge in eager mode and in a tf.function.
    for overflows in (False, True):
      rows = _rows(dtype, 8, overflows)
      var, step = self._apply(mode, dtype, [[float(r)] for r in rows],
                              [_ROW] * 8, [3, 1])
      self.assertEqual(int(not overflows), step, msg=overflows)
      want = np.zeros([3, 1], var.dtype)
      if not overflows:
        want[_ROW, 0] = -float(sum(rows, fractions.Fraction(0)))
      self.assertAllEqual(want, var)


if __name__ == "__main__":
  tf.test.main()
