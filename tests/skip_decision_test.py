# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for skip_decision: the exact finiteness check behind every skip."""

import collections
import subprocess

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import forkserver
import program_util
from contrib_mixed_precision import loss_scale_manager as lsm
from contrib_mixed_precision import loss_scale_optimizer as lso
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import step_inputs

MODES = ("graph", "eager", "function")
BIG = float(np.finfo(np.float32).max) / 2


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


class AllFiniteTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(
      mode=MODES,
      case=[
          dict(values=[[1.0, 2.0], [3.0]], expected=True),
          dict(values=[[1.0, np.nan], [3.0]], expected=False),
          dict(values=[[1.0], [np.inf]], expected=False),
          dict(values=[[-np.inf, np.inf]], expected=False),
          # Finite elements whose sum overflows float32: the fast path's
          # total is inf, and the exact check must still say True.
          dict(values=[[BIG, BIG, BIG], [BIG]], expected=True),
          dict(values=[[BIG, -BIG], [np.nan]], expected=False),
      ])
  def test_float32(self, mode, case):
    result = evaluate(
        mode, lambda: skip_decision.all_finite(
            [tf.constant(v, tf.float32) for v in case["values"]]))
    self.assertEqual(bool(result), case["expected"])

  @parameterized.product(mode=MODES, dtype=["float16", "bfloat16", "float64"],
                         size=[2, 20000])
  def test_other_dtypes(self, mode, dtype, size):
    big = float(tf.as_dtype(dtype).max) / 2

    def fn():
      ok = [tf.fill([size], tf.constant(big, dtype)),
            tf.constant([1.0], tf.float32)]
      bad = [tf.concat([tf.fill([size - 1], tf.constant(big, dtype)),
                        tf.constant([np.inf], dtype)], 0), tf.constant([1.0])]
      return (skip_decision.all_finite(ok), skip_decision.all_finite(bad))

    self.assertEqual([bool(x) for x in evaluate(mode, fn)], [True, False])

  @parameterized.product(
      mode=MODES,
      case=[
          dict(fill=1.0, poison=None, expected=True),
          # 20000 * BIG overflows the float32 sum: the exact fallback runs
          # and must still say True.
          dict(fill=BIG, poison=None, expected=True),
          dict(fill=BIG, poison=np.nan, expected=False),
          dict(fill=-1.0, poison=-np.inf, expected=False),
          dict(fill=0.5, poison=np.inf, expected=False),
      ])
  def test_large_gradients(self, mode, case):
    n = 20000  # Above the small-gradient size: the sum fast path.
    values = np.full([n], case["fill"], np.float32)
    if case["poison"] is not None:
      values[n // 3] = case["poison"]

    def fn():
      return skip_decision.all_finite(
          [tf.constant(values), tf.ones([3]), None,
           tf.constant(np.ones([200, 100], np.float64))])

    self.assertEqual(bool(evaluate(mode, fn)), case["expected"])

  @parameterized.product(mode=MODES, poisoned=[None, 0, 1, 2, 3, 4, 5, 6, 7],
                         poison=[np.nan, np.inf])
  def test_small_gradients_of_every_shape(self, mode, poisoned, poison):
    # Small gradients are checked together, grouped by their trailing
    # dimensions: a non-finite element in any of them, whatever its group,
    # must make the answer False.
    shapes = [(3, 4), (5, 4), (2,), (7,), (), (2, 3, 4), (6, 3, 4), (1, 9)]
    values = [np.ones(shape, np.float32) for shape in shapes]
    if poisoned is not None:
      values[poisoned].reshape(-1)[-1] = poison

    def fn():
      return skip_decision.all_finite([tf.constant(v) for v in values])

    self.assertEqual(bool(evaluate(mode, fn)), poisoned is None)

  @parameterized.product(mode=MODES, poisoned=[None, 0, 1, 2, 3],
                         poison=[np.nan, np.inf])
  def test_several_scalars_and_unknown_shapes(self, mode, poisoned, poison):
    # Scalars and tensors of unknown rank cannot be grouped by trailing
    # dimensions: each must still be checked, not only the first.
    values = [np.array(2.0, np.float32), np.array(-3.0, np.float32),
              np.ones([2], np.float32),
              np.ones([3, 1], np.float32)]
    if poisoned is not None:
      values[poisoned].reshape(-1)[0] = poison

    def fn():
      tensors = [tf.constant(v) for v in values]
      # Unknown rank in a graph (a TF1 placeholder's, or a tf.function's
      # input); eager tensors always know theirs.
      if not tf.executing_eagerly():
        tensors[2:] = [tf.compat.v1.placeholder_with_default(t, shape=None)
                       for t in tensors[2:]]
      return skip_decision.all_finite(tensors)

    self.assertEqual(bool(evaluate(mode, fn)), poisoned is None)

  @parameterized.product(
      mode=MODES,
      case=[
          dict(where=None, value=None, expected=True),
          dict(where="large", value=np.nan, expected=False),
          dict(where=0, value=np.inf, expected=False),
          dict(where=1, value=np.nan, expected=False),
          dict(where=2, value=-np.inf, expected=False),
          dict(where=3, value=np.nan, expected=False),
          dict(where=4, value=np.inf, expected=False),
          dict(where="sparse", value=np.nan, expected=False),
          # Finite values whose squares overflow float32: the total is
          # Inf, and the exact check must still say True.
          dict(where=0, value=1e30, expected=True),
          dict(where=4, value=1e300, expected=True),
          dict(where="sparse", value=BIG, expected=True),
          # Two rows for one index: finite rows, an overflowing sum.
          dict(where="duplicate", value=1.5 * BIG, expected=False),
      ])
  def test_small_gradients_join_the_total(self, mode, case):
    # Beside a large or a sparse gradient, small ones join the one total
    # the step tests; a non-finite element in any of them must still make
    # the answer False, and a finite one whose square overflows must not.
    small = [np.ones([3, 4], np.float32), np.ones([5, 4], np.float32),
             np.array(2.0, np.float32), np.array(-3.0, np.float32),
             np.ones([2], np.float64)]
    large = np.ones([20000], np.float32)
    rows = np.ones([4, 2], np.float32)
    indices = np.array([0, 1, 2, 3], np.int64)
    where, value = case["where"], case["value"]
    if isinstance(where, int):
      small[where].reshape(-1)[-1] = value
    elif where == "large":
      large[123] = value
    elif where == "sparse":
      rows[2, 1] = value
    elif where == "duplicate":
      rows[1:3, 0] = value
      indices[2] = 1

    def fn():
      sparse = tf.IndexedSlices(tf.constant(rows), tf.constant(indices),
                                tf.constant([5, 2], tf.int64))
      return skip_decision.all_finite(
          [tf.constant(large), sparse] + [tf.constant(v) for v in small])

    self.assertEqual(bool(evaluate(mode, fn)), case["expected"])

  def test_one_finiteness_test_per_step(self):
    # A large, a sparse and small gradients: the step tests one total; the
    # exact checks are built behind its Switch, and run only when it fails.
    with tf.Graph().as_default() as g:
      skip_decision.all_finite([
          tf.ones([200, 100]), tf.ones([10]), tf.ones([5, 5]),
          tf.IndexedSlices(tf.ones([4, 3]), tf.constant([0, 1, 1, 2]),
                           tf.constant([9, 3]))])
      outside = [op.type for op in g.get_operations()
                 if not op.name.startswith("all_finite_exact/")]
    self.assertEqual(outside.count("IsFinite"), 1, outside)
    self.assertNotIn("All", outside)
    self.assertEqual(outside.count("Switch"), 0, outside)

  def test_tf1_shapes_under_disable_v2_behavior(self):
    # Under disable_v2_behavior() shapes hold Dimension objects, which are
    # unhashable: grouping gradients by their trailing dimensions must still
    # work there (every TF1 Session program runs this way). A subprocess,
    # because the switch is process-global.
    code = "\n".join([
        "import numpy as np, tensorflow as tf",
        "tf.compat.v1.disable_v2_behavior()",
        "from contrib_mixed_precision import skip_decision",
        "a = np.ones([3, 4], np.float32); b = np.ones([5, 4], np.float32)",
        "b[4, 3] = np.nan",
        # Many small gradients alone: added by shape behind a Switch.
        "k = np.ones([32, 32], np.float32); n = k.copy(); n[3, 5] = np.nan",
        "many = [tf.constant(k) for _ in range(20)] + [tf.constant(a)] * 3",
        "with tf.compat.v1.Session() as s:",
        "  print([bool(x) for x in s.run([",
        "      skip_decision.all_finite([tf.constant(a), tf.constant(a)]),",
        "      skip_decision.all_finite([tf.constant(a), tf.constant(b)]),",
        "      skip_decision.all_finite(many),",
        "      skip_decision.all_finite(many + [tf.constant(n)])])])",
    ])
    proc = forkserver.run_python(
        ["-c", code], env=program_util.child_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=300, check=False)
    output = proc.stdout.decode("utf-8", "replace")
    self.assertEqual(proc.returncode, 0, output[-3000:])
    self.assertEqual(output.strip().splitlines()[-1],
                     "[True, False, True, False]")

  def test_which_path_each_size_takes(self):
    with tf.Graph().as_default() as g:
      skip_decision.all_finite([tf.ones([10]), tf.ones([5, 5])])
      self.assertEmpty([op for op in g.get_operations()
                        if "all_finite_exact" in op.name])
    with tf.Graph().as_default() as g:
      skip_decision.all_finite([tf.ones([10]), tf.ones([200, 100])])
      self.assertNotEmpty([op for op in g.get_operations()
                           if "all_finite_exact" in op.name])

  # Many small gradients alone, as a model of hundreds of biases and small
  # kernels has: 24 of 32x32, 40 of 32 and 3 scalars, 25923 elements.
  _MANY_SMALL = [(32, 32)] * 24 + [(32,)] * 40 + [()] * 3

  @parameterized.product(
      mode=MODES,
      case=[
          dict(where=None, value=None, expected=True),
          dict(where=0, value=np.nan, expected=False),
          dict(where=13, value=np.inf, expected=False),
          dict(where=23, value=-np.inf, expected=False),
          dict(where=24, value=np.nan, expected=False),
          dict(where=50, value=np.inf, expected=False),
          dict(where=63, value=np.nan, expected=False),
          dict(where=64, value=np.inf, expected=False),
          dict(where=66, value=np.nan, expected=False),
          # Finite values whose sum overflows float32 (the same element of
          # two kernels): the fast path's total is Inf, and the exact check
          # must still say True.
          dict(where=(3, 4), value=BIG * 1.5, expected=True),
          dict(where=(65, 66), value=BIG * 1.5, expected=True),
          # +Inf and -Inf in the same element of two kernels add to NaN.
          dict(where=(3, 4), value=(np.inf, -np.inf), expected=False),
      ])
  def test_many_small_gradients_alone(self, mode, case):
    # A non-finite element in any of many small gradients, whichever shape
    # it shares with others, must make the answer False, and finite ones
    # whose sum overflows must not.
    values = [np.ones(shape, np.float32) for shape in self._MANY_SMALL]
    where, value = case["where"], case["value"]
    if isinstance(where, int):
      values[where].reshape(-1)[-1] = value
    elif where is not None:
      first, second = value if isinstance(value, tuple) else (value, value)
      values[where[0]].reshape(-1)[0] = first
      values[where[1]].reshape(-1)[0] = second

    def fn():
      return skip_decision.all_finite([tf.constant(v) for v in values])

    self.assertEqual(bool(evaluate(mode, fn)), case["expected"])

  @parameterized.product(
      mode=MODES,
      case=[
          dict(small=[1.0, 2.0], expected=True),
          # float64 elements whose sum overflows float64: the exact check.
          dict(small=[1.7e308, 1.7e308], expected=True),
          dict(small=[1.7e308, np.nan], expected=False),
          # +Inf and -Inf add up to NaN, which NumPy flags as invalid.
          dict(small=[np.inf, -np.inf], expected=False),
      ])
  def test_small_float64_beside_a_large_gradient(self, mode, case):
    # Eagerly NumPy adds the small gradients up; a user's
    # np.seterr(all="raise") must not turn its overflow or NaN into an
    # error, and an overflowing float64 sum must still read as finite.
    large = np.ones([20000], np.float32)

    def fn():
      return skip_decision.all_finite(
          [tf.constant(large), tf.constant(np.array(case["small"]))])

    with np.errstate(all="raise"):
      result = evaluate(mode, fn)
    self.assertEqual(bool(result), case["expected"])

  def _ops_run(self, grads_fn, poison=None):
    """Types of the ops one Session run of `all_finite` runs, and its answer.

    The gradients are variables' reads times a half (a multiply per
    gradient, as the unscale's): a plain graph, whose ops TF cannot fold
    away.
    """
    with tf.Graph().as_default() as g:
      grads = []
      for i, value in enumerate(grads_fn()):
        if poison is not None and i == poison:
          value = value.copy()
          value.reshape(-1)[-1] = np.nan
        grads.append(tf.Variable(value).read_value() * 0.5)
      flag = skip_decision.all_finite(grads)
      types = {op.name: op.type for op in g.get_operations()}
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        metadata = tf.compat.v1.RunMetadata()
        answer = sess.run(flag, options=tf.compat.v1.RunOptions(
            trace_level=tf.compat.v1.RunOptions.FULL_TRACE),
                          run_metadata=metadata)
    ran = collections.Counter(
        types.get(n.node_name.split(":")[0], "") for d in
        metadata.step_stats.dev_stats for n in d.node_stats)
    return ran, bool(answer)

  def test_many_small_gradients_are_added_not_concatenated(self):
    # A finite step of many small gradients alone, in a plain graph, adds
    # them by shape and tests one total: nothing copies them into one
    # tensor, and no IsFinite or All reads every element. A NaN runs the
    # exact check behind the Switch, which does.
    many = lambda: [np.ones(s, np.float32) for s in self._MANY_SMALL]
    ran, answer = self._ops_run(many)
    self.assertTrue(answer)
    self.assertEqual(ran["ConcatV2"] + ran["Pack"] + ran["All"], 0, ran)
    self.assertEqual(ran["IsFinite"], 1, ran)
    self.assertEqual(ran["Switch"], 1, ran)
    ran, answer = self._ops_run(many, poison=30)
    self.assertFalse(answer)
    self.assertGreater(ran["ConcatV2"], 0, ran)
    # A few small gradients alone are checked exactly, with no Switch.
    ran, answer = self._ops_run(lambda: [np.ones([10], np.float32),
                                         np.ones([5, 5], np.float32)])
    self.assertTrue(answer)
    self.assertEqual(ran["Switch"], 0, ran)

  def test_small_gradients_beside_a_large_one_are_not_concatenated(self):
    # Beside a large gradient, small ones of one shape join the total as
    # one AddN: a finite step copies none of them into one tensor.
    grads = lambda: ([np.ones([200, 100], np.float32)] +
                     [np.ones([64], np.float32)] * 6)
    ran, answer = self._ops_run(grads)
    self.assertTrue(answer)
    self.assertEqual(ran["ConcatV2"] + ran["L2Loss"], 0, ran)
    self.assertEqual(ran["IsFinite"], 1, ran)
    ran, answer = self._ops_run(grads, poison=5)
    self.assertFalse(answer)

  @parameterized.parameters(*MODES)
  def test_none_and_indexed_slices(self, mode):

    def fn():
      sparse_ok = tf.IndexedSlices(
          tf.constant([[1.0, 2.0]]), tf.constant([3]), tf.constant([5, 2]))
      sparse_bad = tf.IndexedSlices(
          tf.constant([[1.0, np.nan]]), tf.constant([0]), tf.constant([5, 2]))
      return (skip_decision.all_finite([None, sparse_ok, tf.ones([2])]),
              skip_decision.all_finite([sparse_bad, None]),
              skip_decision.all_finite([None, None]),
              skip_decision.all_finite([]))

    self.assertEqual([bool(x) for x in evaluate(mode, fn)],
                     [True, False, True, True])


class StringGradientTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.parameters(
      (np.array(["1.5"]),), (np.array([b"0.5", b"2"]),), (np.str_("1.5"),),
      (np.array(["nan"]),), (["1.5"],), ("1.5",), (b"1.5",),
      (np.array(["1.5"], dtype=object),))
  def test_strings_are_not_gradients(self, grad):
    # TensorFlow parses numeric strings when converting to float32: without
    # a check, "1.5" would be applied as 1.5 and "nan" skipped as a NaN.
    var = tf.Variable([1.0])
    opt = lso.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0),
        lsm.FixedLossScaleManager(1))
    with self.assertRaisesRegex(
        TypeError, r"`grads_and_vars\[0\]\[0\]` must be .* but got .* "
        r"Strings are not gradients"):
      opt.apply_gradients([(grad, var)])
    self.assertAllEqual([1.0], var.numpy())
    with self.assertRaisesRegex(TypeError, r"`g` must be .*Strings are not"):
      step_inputs.as_gradient(grad, "g")

  def test_string_tensor_is_refused_by_the_check(self):
    with self.assertRaisesRegex(TypeError, r"`grads\[1\]` must be a numeric"):
      skip_decision.all_finite([tf.ones([2]), tf.constant(["nan"])])


if __name__ == "__main__":
  tf.test.main()
