# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Property test: a step is skipped exactly when its update is non-finite.

Random complex and real gradients, dense and `IndexedSlices` with duplicate
indices, with values from zero to each dtype's max, NaN and infinities, are
applied by the real optimizer (SGD through `LossScaleOptimizer`) in graph
mode, eager mode and `tf.function`. The expectation is computed here with
NumPy alone: densify the sparse gradient by summing duplicate rows in its
own dtype, and test every number (both parts of a complex one) for
finiteness. The step must be applied (`global_step` advances, the variables
hold exactly minus the update) exactly when that says finite, and skipped
(nothing moves) otherwise. Examples are derandomized, so CI is reproducible.

Each real-valued step is also taken by TF 1.15's optimizer
(`tf115_harness`), handed the same gradients in the same mode: the same
`global_step`, table and matrix, to the bit. (TF 1.15 crashed on a complex
gradient: its `IsFinite` has no complex kernel.)
"""

from absl.testing import parameterized
import hypothesis
from hypothesis import strategies as st
import numpy as np
import tensorflow as tf

import tf115_harness as harness

MODES = ("graph", "eager", "function")
DTYPES = ("float16", "float32", "float64", "complex64", "complex128")
VOCAB = 4

_SETTINGS = hypothesis.settings(
    max_examples=40, deadline=None, derandomize=True, database=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow,
                           hypothesis.HealthCheck.data_too_large])


def _parts(dtype):
  """Strategy of one real number (one part) for `dtype`, edges weighted."""
  real = np.dtype(dtype).type(0).real.dtype
  big = float(np.finfo(real).max)
  return st.one_of(
      st.sampled_from([0.0, 1.0, -0.5, big, -big, big / 2, -big / 2,
                       big / 3, big * 0.9, float("nan"), float("inf"),
                       -float("inf")]),
      # No subnormals: TF's CPU kernels flush them to zero, NumPy does not,
      # so the replay would disagree with the real update about a value the
      # check never sees anyway (a subnormal is finite).
      st.floats(min_value=-big, max_value=big, width=real.itemsize * 8,
                allow_subnormal=False))


def _number(dtype):
  part = _parts(dtype)
  if np.dtype(dtype).kind == "c":
    return st.builds(complex, part, part)
  return part


@st.composite
def _array(draw, dtype, shape):
  """An array of `shape`: one fill value, then a few values poked in."""
  with np.errstate(all="ignore"):
    values = np.full(shape, draw(_number(dtype)), dtype)
    for _ in range(draw(st.integers(0, 4))):
      flat = draw(st.integers(0, values.size - 1))
      values.reshape(-1)[flat] = draw(_number(dtype))
  return values


@st.composite
def steps(draw):
  """One step: a sparse gradient for a table, a dense one for a matrix."""
  dtype = draw(st.sampled_from(DTYPES))
  # 3000 columns take the large-gradient paths of the check.
  width = draw(st.sampled_from([1, 2, 3000]))
  rows = draw(st.integers(1, 6))
  indices = draw(st.lists(st.integers(0, VOCAB - 1), min_size=rows,
                          max_size=rows))
  return dict(dtype=dtype, indices=indices,
              values=draw(_array(dtype, (rows, width))),
              dense=draw(_array(dtype, (2, width))))


def expected(step):
  """(applied, table update, dense update), from NumPy alone."""
  with np.errstate(all="ignore"):
    table = np.zeros((VOCAB,) + step["values"].shape[1:], step["dtype"])
    # ufunc.at adds the rows one by one, in index order, in the dtype.
    np.add.at(table, np.asarray(step["indices"]), step["values"])
  applied = bool(np.all(np.isfinite(table)) and
                 np.all(np.isfinite(step["dense"])))
  return applied, table, step["dense"]


def run(step, mode, sides=(harness.PACKAGE,)):
  """Applies the step; returns (global_step, table, matrix) afterwards.

  By each of `sides` (`tf115_harness.PACKAGE`, `ORACLE`), one result per
  side: one graph and Session, or one `tf.function`, holds every side, and
  each side's apply runs on its own.
  """
  shape = (VOCAB,) + step["values"].shape[1:]

  def build(which):
    lib = harness.Library(which)
    table = tf.compat.v1.Variable(np.zeros(shape, step["dtype"]), name="t")
    matrix = tf.compat.v1.Variable(np.zeros(step["dense"].shape,
                                            step["dtype"]), name="m")
    global_step = tf.compat.v1.Variable(0, dtype=tf.int64, name="step")
    opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0),
        lib.FixedLossScaleManager(1))

    def apply():
      sparse = tf.IndexedSlices(tf.constant(step["values"]),
                                tf.constant(step["indices"], tf.int64),
                                tf.constant(shape, tf.int64))
      return opt.apply_gradients(
          [(sparse, table), (tf.constant(step["dense"]), matrix)],
          global_step=global_step)

    return global_step, table, matrix, apply

  if mode == "graph":
    with tf.Graph().as_default():
      built = [build(which) for which in sides]
      train_ops = [apply() for _, _, _, apply in built]
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for train_op in train_ops:
          sess.run(train_op)
        return sess.run([state for *state, _ in built])
  built = [build(which) for which in sides]
  if mode == "function":

    @tf.function
    def train_step():
      for *_, apply in built:
        apply()  # The op it returns is run by the function itself.

    train_step()
  else:
    for *_, apply in built:
      apply()
  return [[v.numpy() for v in state] for *state, _ in built]


class SkipIsExactPropertyTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(*MODES)
  def test_applied_exactly_when_the_update_is_finite(self, mode):
    outcomes = set()

    @_SETTINGS
    @hypothesis.given(step=steps())
    def check(step):
      applied, table_update, dense_update = expected(step)
      outcomes.add(applied)
      real = np.dtype(step["dtype"]).kind != "c"
      results = run(step, mode, (harness.PACKAGE, harness.ORACLE) if real
                    else (harness.PACKAGE,))
      global_step, table, matrix = results[0]
      self.assertEqual(int(applied), global_step)
      if applied:
        self.assertAllEqual(-table_update, table)
        self.assertAllEqual(-dense_update, matrix)
      else:
        self.assertAllEqual(np.zeros_like(table), table)
        self.assertAllEqual(np.zeros_like(matrix), matrix)
      if real:
        for got, want in zip(results[0], results[1]):
          self.assertEqual(np.asarray(want).tobytes(),
                           np.asarray(got).tobytes())

    check()
    # Guards the strategies: both outcomes occur.
    self.assertEqual({True, False}, outcomes)

  def test_the_expectation_sees_duplicate_overflow(self):
    # Guards the NumPy model: finite rows whose per-index sum is not.
    step = dict(dtype="float16", indices=[2, 2],
                values=np.array([[40000.0], [40000.0]], np.float16),
                dense=np.zeros((2, 1), np.float16))
    self.assertFalse(expected(step)[0])
    step["indices"] = [1, 2]
    self.assertTrue(expected(step)[0])
    step = dict(dtype="complex64", indices=[0],
                values=np.array([[complex(0, np.inf)]], np.complex64),
                dense=np.zeros((2, 1), np.complex64))
    self.assertFalse(expected(step)[0])


if __name__ == "__main__":
  tf.test.main()
