# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Hostile values for every public constructor, and non-tensor gradients.

Each value either works exactly as documented (the number lands unchanged in
the type it lives in, the flag does what it says) or raises a ValueError or
TypeError whose message names the argument, shows what was received and
says what to do. There is no third outcome, and a rejected value leaves
nothing behind in the graph.

The expected outcome of each value is worked out here, from the documented
ranges, independently of `_validation`: a count is an int in [1, 2**31 - 1]
(int32 counters) or, for the hook's Python counters, any int >= 1; a scale
or ratio is a real number whose float32 value is finite and in range.
"""

import decimal
import fractions
import math
import pathlib
import re
import sys

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

INT32_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # 2**-126.
_INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
               np.uint32, np.uint64)
_FLOAT_DTYPES = (np.float16, np.float32, np.float64, np.longdouble)

# Values that are not tensors; tensors are made inside each test's graph.
HOSTILE = (
    None, "2", "False", "", "dynamic", b"2", True, False, np.bool_(True),
    np.bool_(False), 0, 1, 3, -1, 0.0, -0.0, 1.0, 0.5, 2.5, -1.5,
    FLOAT32_TINY, 1e-40, 1e-45, 1e-50, complex(2), decimal.Decimal(2),
    fractions.Fraction(3, 2),
    *(dtype(3) for dtype in _INT_DTYPES),
    *(dtype(value) for dtype in _FLOAT_DTYPES
      for value in (0.5, 3, "nan", "inf")),
    np.array(3), np.array(0.5), np.array([3]), [3], (3,),
    2**31 - 1, 2**31, 2**32, 2**63, -2**63, sys.maxsize, 2**127, 2**128,
    10**400, float("nan"), float("inf"), float("-inf"), 1e39, FLOAT32_MAX,
    -FLOAT32_MAX,
    # float32 rounding at the edges: to float32 max, or past it to inf; to
    # exactly 1, or just above it.
    float(np.nextafter(FLOAT32_MAX, np.inf)), 3.4028235677973366e38,
    1.00000001, 1.0000001,
    pathlib.PurePosixPath("logs"),
)
TENSORS = (
    ("tf_int", lambda: tf.constant(3)),
    ("tf_float", lambda: tf.constant(3.0)),
    ("tf_variable", lambda: tf.compat.v1.Variable(3.0, name="hostile")),
)


def _value_id(value):
  return "{}_{}".format(type(value).__name__, repr(value)[:20])


# -- The documented outcome of each kind of argument -------------------------


def _is_int(v):
  return (isinstance(v, (int, np.integer)) and
          not isinstance(v, (bool, np.bool_)))


def _is_real(v):
  return _is_int(v) or isinstance(v, (float, np.floating, fractions.Fraction))


def count(v, maximum=INT32_MAX, allow_none=False):
  """A step count: (expected value) or the exception class."""
  if v is None and allow_none:
    return None
  if not _is_int(v):
    return TypeError
  return int(v) if 1 <= v and (maximum is None or v <= maximum) else ValueError


def _float32(v):
  """The float32 value of `v`, or None when float32 cannot hold it."""
  try:
    with np.errstate(over="ignore"):
      x = float(np.float32(float(v)))
  except OverflowError:
    return None
  return x if math.isfinite(x) else None


def scale(v, low, high=FLOAT32_MAX):
  """A float32 scale: its float32 value, or the exception class."""
  if not _is_real(v):
    return TypeError
  x = _float32(v)
  if x is None or not low <= x <= high:
    return ValueError
  return x


def ratio(v, low, high=FLOAT32_MAX):
  """A ratio: kept as the Python float given, once float32 holds it."""
  expected = scale(v, low, high)
  return float(v) if isinstance(expected, float) else expected


def flag(v):
  return bool(v) if isinstance(v, (bool, np.bool_)) else TypeError


def path(v):
  if v is None:
    return None
  if isinstance(v, pathlib.PurePath):
    return str(v)
  if not isinstance(v, str):
    return TypeError
  return v if v else ValueError


# -- How each constructor is called and read back ----------------------------


def _exp_manager(**override):
  kwargs = dict(init_loss_scale=8, incr_every_n_steps=10)
  kwargs.update(override)
  return mp.ExponentialUpdateLossScaleManager(**kwargs)


def _exp_loss_scale(**override):
  kwargs = dict(init_loss_scale=8, incr_every_n_steps=10)
  kwargs.update(override)
  return mp.ExponentialUpdateLossScale(**kwargs)


def _scale_now(sess, manager):
  sess.run(tf.compat.v1.global_variables_initializer())
  return float(sess.run(manager.get_loss_scale()))


def _global_step_after_a_skip(sess, opt):
  """Runs one NaN step; returns whether the skip advanced `global_step`."""
  var = tf.compat.v1.Variable(1.0, name="v")
  global_step = tf.compat.v1.train.get_or_create_global_step()
  train_op = opt.apply_gradients([(tf.constant(float("nan")), var)],
                                 global_step)
  sess.run(tf.compat.v1.global_variables_initializer())
  sess.run(train_op)
  if sess.run(var) != 1.0:
    return "applied"  # Never the documented outcome: a NaN step skips.
  return bool(sess.run(global_step))


def _from_loss_scale_documented(v):
  if isinstance(v, str) and v == "dynamic":
    return 2.0**15  # TF2's DynamicLossScale starts there.
  return scale(v, 1.0)


# (constructor, argument, build(value), documented(value) -> the expected
# value or the exception class, read(session, object) -> the value).
CASES = (
    ("FixedLossScaleManager", "loss_scale", mp.FixedLossScaleManager,
     lambda v: scale(v, 1.0), _scale_now),
    ("from_loss_scale", "loss_scale", mp.LossScaleManager.from_loss_scale,
     _from_loss_scale_documented, _scale_now),
    ("ExponentialUpdateLossScaleManager", "init_loss_scale",
     lambda v: _exp_manager(init_loss_scale=v),
     lambda v: scale(v, FLOAT32_TINY), _scale_now),
    ("ExponentialUpdateLossScaleManager", "incr_every_n_steps",
     lambda v: _exp_manager(incr_every_n_steps=v), count,
     # TF 1.15's attribute names, which legacy code reads.
     lambda _, m: m._incr_every_n_steps),  # pylint: disable=protected-access
    ("ExponentialUpdateLossScaleManager", "decr_every_n_nan_or_inf",
     lambda v: _exp_manager(decr_every_n_nan_or_inf=v), count,
     lambda _, m: m._decr_every_n_nan_or_inf),  # pylint: disable=protected-access
    ("ExponentialUpdateLossScaleManager", "incr_ratio",
     lambda v: _exp_manager(incr_ratio=v), lambda v: ratio(v, 1.0),
     lambda _, m: m._incr_ratio),  # pylint: disable=protected-access
    ("ExponentialUpdateLossScaleManager", "decr_ratio",
     lambda v: _exp_manager(decr_ratio=v),
     lambda v: ratio(v, FLOAT32_TINY, high=1.0),
     lambda _, m: m._decr_ratio),  # pylint: disable=protected-access
    ("ExponentialUpdateLossScale", "init_loss_scale",
     lambda v: _exp_loss_scale(init_loss_scale=v),
     lambda v: scale(v, FLOAT32_TINY),
     lambda sess, ls: (sess.run(tf.compat.v1.global_variables_initializer()),
                       float(sess.run(ls())))[1]),
    ("ExponentialUpdateLossScale", "incr_every_n_steps",
     lambda v: _exp_loss_scale(incr_every_n_steps=v), count,
     lambda _, ls: ls.incr_every_n_steps),
    ("ExponentialUpdateLossScale", "decr_every_n_nan_or_inf",
     lambda v: _exp_loss_scale(decr_every_n_nan_or_inf=v), count,
     lambda _, ls: ls.decr_every_n_nan_or_inf),
    ("ExponentialUpdateLossScale", "incr_ratio",
     lambda v: _exp_loss_scale(incr_ratio=v), lambda v: ratio(v, 1.0),
     lambda _, ls: ls.incr_ratio),
    ("ExponentialUpdateLossScale", "decr_ratio",
     lambda v: _exp_loss_scale(decr_ratio=v),
     lambda v: ratio(v, FLOAT32_TINY, high=1.0),
     lambda _, ls: ls.decr_ratio),
    ("LossScaleOptimizer", "advance_global_step_on_skip",
     lambda v: mp.LossScaleOptimizer(
         tf.compat.v1.train.GradientDescentOptimizer(0.1),
         mp.FixedLossScaleManager(4), advance_global_step_on_skip=v),
     flag, _global_step_after_a_skip),
    # The hook counts in Python: any int >= 1 means what it says.
    ("LossScaleHook", "every_n_steps",
     lambda v: mp.LossScaleHook(every_n_steps=v),
     lambda v: count(v, maximum=None),
     lambda _, hook: hook._every_n_steps),  # pylint: disable=protected-access
    ("LossScaleHook", "max_skips_at_min_scale",
     lambda v: mp.LossScaleHook(max_skips_at_min_scale=v),
     lambda v: count(v, maximum=None, allow_none=True),
     lambda _, hook: hook._max_skips),  # pylint: disable=protected-access
    ("LossScaleHook", "summary_dir",
     lambda v: mp.LossScaleHook(summary_dir=v), path,
     lambda _, hook: hook._summary_dir),  # pylint: disable=protected-access
)

# "`arg` must be <what>, but got <repr> of type <type>. <what to do>"
_MESSAGE = re.compile(r"^`(?P<arg>[^`]+)` must be .+, but got (?P<got>.+) of "
                      r"type (?P<type>\w+)\. \S.*\S$", re.DOTALL)


class HostileConstructorArgumentsTest(tf.test.TestCase,
                                      parameterized.TestCase):

  def _check(self, case, make_value):
    """Builds with one value in a fresh graph; checks the only outcomes."""
    _, arg, build, documented, read = case
    with tf.Graph().as_default() as graph:
      value = make_value()
      expected = TypeError if tf.is_tensor(value) else documented(value)
      if expected in (TypeError, ValueError):
        with self.assertRaises(expected) as cm:
          build(value)
        message = str(cm.exception)
        match = _MESSAGE.match(message)
        self.assertIsNotNone(match, message)
        self.assertEqual(match.group("arg"), arg)
        self.assertEqual(match.group("got"), repr(value))
        self.assertEqual(match.group("type"), type(value).__name__)
        # Nothing half-built: no state variable was created.
        hostile = [v for v in graph.get_collection(
            tf.compat.v1.GraphKeys.GLOBAL_VARIABLES) if v is not value]
        self.assertEqual(hostile, [])
        return
      obj = build(value)
      with tf.compat.v1.Session(graph=graph) as sess:
        got = read(sess, obj)
      self.assertEqual(got, expected)
      self.assertIs(type(got), type(expected))

  @parameterized.named_parameters(
      ("{}_{}".format(c[0], c[1]), c) for c in CASES)
  def test_each_value_works_exactly_or_names_the_argument(self, case):
    for value in HOSTILE:
      with self.subTest(value=_value_id(value)):
        self._check(case, lambda value=value: value)
    for name, make_tensor in TENSORS:
      with self.subTest(value=name):
        self._check(case, make_tensor)

  def test_the_table_has_both_outcomes_for_every_argument(self):
    # Guards the table itself: each argument sees accepted and rejected
    # values, and each kind of rejection where one exists.
    for _, arg, _, documented, _ in CASES:
      outcomes = [documented(v) for v in HOSTILE]
      self.assertIn(TypeError, outcomes, arg)
      if arg != "advance_global_step_on_skip":  # A flag has no range.
        self.assertIn(ValueError, outcomes, arg)
      self.assertTrue(
          [o for o in outcomes if o not in (TypeError, ValueError)], arg)

  # -- The specific bugs of issue 11, each seen from the user's side. -----

  def test_string_false_is_not_true(self):
    # bool("False") is True: the flag used to be silently turned on.
    with self.assertRaisesRegex(
        TypeError, "`advance_global_step_on_skip` must be a bool.*'False' of "
        "type str. Pass True or False"):
      mp.LossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(1.0),
                            mp.FixedLossScaleManager(2),
                            advance_global_step_on_skip="False")

  def test_huge_int_scale_is_a_value_error_not_overflow(self):
    for build in (lambda: mp.ExponentialUpdateLossScaleManager(10**400, 100),
                  lambda: mp.ExponentialUpdateLossScale(10**400, 100),
                  lambda: mp.FixedLossScaleManager(10**400)):
      with self.assertRaisesRegex(ValueError, r"`(init_)?loss_scale` must be "
                                  r"a number .* \(float32 max\), but got 1000"):
        build()

  def test_scale_above_float32_max_is_rejected_not_inf(self):
    # 1e39 used to become an inf scale: every step skipped, forever.
    for build in (lambda: mp.FixedLossScaleManager(1e39),
                  lambda: mp.ExponentialUpdateLossScaleManager(1e39, 100),
                  lambda: mp.LossScaleManager.from_loss_scale(1e39)):
      with self.assertRaisesRegex(
          ValueError, r"<= 3.40282347e\+38 \(float32 max\), but got 1e\+39"):
        build()

  def test_ratio_that_is_zero_in_float32_is_rejected(self):
    with self.assertRaisesRegex(ValueError,
                                r"`decr_ratio` must be a number >= "
                                r"1.17549435e-38 \(the smallest normal "
                                r"float32\) and <= 1.0, but got 1e-50"):
      mp.ExponentialUpdateLossScaleManager(8, 100, decr_ratio=1e-50)

  def test_subnormal_scale_is_rejected_not_flushed_to_zero(self):
    # float32 holds 1e-40, but TF's kernels flush it to zero: the first
    # growth used to make the scale 0, and 0 forever after.
    with self.assertRaisesRegex(
        ValueError, r"`init_loss_scale` must be a number >= 1.17549435e-38 "
        r"\(the smallest normal float32\) .*, but got 1e-40 of type float"):
      mp.ExponentialUpdateLossScaleManager(1e-40, 1)
    # The smallest normal float32 grows exactly.
    manager = mp.ExponentialUpdateLossScaleManager(FLOAT32_TINY, 1)
    manager.update_loss_scale(True)
    self.assertEqual(float(manager.get_loss_scale().numpy()),
                     2 * FLOAT32_TINY)

  def test_step_counts_beyond_int32_are_rejected(self):
    # sys.maxsize, meant as "never", used to wrap in the int32 comparison
    # and double the scale on every good step; TF 1.15 failed at graph
    # construction.
    for arg in ("incr_every_n_steps", "decr_every_n_nan_or_inf"):
      for value in (2**31, sys.maxsize):
        with self.assertRaisesRegex(
            ValueError, r"`{}` must be an int in \[1, 2147483647\], but got "
            "{}".format(arg, value)):
          _exp_manager(**{arg: value})

  def test_numpy_ints_accepted_by_the_hook_like_the_managers(self):
    manager = mp.ExponentialUpdateLossScaleManager(np.int64(8), np.int64(5))
    hook = mp.LossScaleHook(every_n_steps=np.int64(5),
                            max_skips_at_min_scale=np.int32(3))
    self.assertEqual(manager.loss_scale.incr_every_n_steps, 5)
    self.assertEqual(hook._every_n_steps, 5)  # pylint: disable=protected-access
    self.assertEqual(hook._max_skips, 3)  # pylint: disable=protected-access

  def test_hook_limit_of_sys_maxsize_means_never(self):
    hook = mp.LossScaleHook(max_skips_at_min_scale=sys.maxsize)
    limit = hook._max_skips  # pylint: disable=protected-access
    self.assertEqual(limit, sys.maxsize)

  def test_empty_summary_dir_is_rejected(self):
    with self.assertRaisesRegex(ValueError,
                                "`summary_dir` must be a non-empty path or "
                                "None, but got '' of type str. Pass None"):
      mp.LossScaleHook(summary_dir="")


# -- Gradients that are not tensors -------------------------------------------

# (name, gradient from a Python number, the variable's initial value, the
# variable's dtype). GradientDescent(0.5) with a gradient of 2.0 subtracts
# exactly 1.0.
NON_TENSOR_GRADS = (
    ("python_float", float, 1.0, tf.float32),
    ("python_float_half_variable", float, 1.0, tf.float16),
    ("numpy_float32_scalar", np.float32, 1.0, tf.float32),
    ("numpy_float64_scalar", np.float64, 1.0, tf.float32),
    ("numpy_float32_array", lambda x: np.array([x, x], np.float32),
     [1.0, 2.0], tf.float32),
    # NumPy's default dtype: handed to the float32 kernel as it is, it
    # aborted the process (a failed TF CHECK).
    ("numpy_float64_array", lambda x: np.array([x, x]), [1.0, 2.0],
     tf.float32),
    ("python_list", lambda x: [float(x), float(x)], [1.0, 2.0], tf.float32),
)
MODES = ("graph", "eager", "function")


class NonTensorGradientsTest(tf.test.TestCase, parameterized.TestCase):

  def _apply(self, mode, make_grad, initial, dtype, grad_value):
    """Applies one gradient; returns (variable, (scale, good, bad)) after."""
    def build():
      var = tf.compat.v1.Variable(tf.constant(initial, dtype), name="v")
      manager = mp.ExponentialUpdateLossScaleManager(8, 1000)
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.5), manager)
      return var, manager, opt

    if mode == "graph":
      with tf.Graph().as_default():
        var, manager, opt = build()
        train_op = opt.apply_gradients([(make_grad(grad_value), var)])
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          sess.run(train_op)
          return sess.run(var), tuple(sess.run(manager.variables()))
    var, manager, opt = build()
    if mode == "eager":
      opt.apply_gradients([(make_grad(grad_value), var)])
    else:
      @tf.function
      def step():
        opt.apply_gradients([(make_grad(grad_value), var)])

      step()
    return var.numpy(), tuple(v.numpy() for v in manager.variables())

  @parameterized.named_parameters(
      ("{}_{}".format(mode, kind[0]), mode, kind)
      for mode in MODES for kind in NON_TENSOR_GRADS)
  def test_finite_applied_non_finite_skipped(self, mode, kind):
    _, make_grad, initial, dtype = kind
    expected = np.array(initial, dtype.as_numpy_dtype) - 1
    # Finite: v - 0.5 * 2, exactly; one good step counted.
    var, state = self._apply(mode, make_grad, initial, dtype, 2.0)
    self.assertEqual(var.dtype, dtype.as_numpy_dtype)
    self.assertAllEqual(var, expected)
    self.assertEqual(state, (8.0, 1, 0))
    # NaN, and a value float32 (or float16) cannot hold: the step is
    # skipped, the variable untouched, one bad step counted.
    too_big = 1e5 if dtype == tf.float16 else 1e39
    for bad in (float("nan"), too_big):
      var, state = self._apply(mode, make_grad, initial, dtype, bad)
      self.assertAllEqual(var, initial)
      self.assertEqual(state, (8.0, 0, 1))

  @parameterized.parameters(*MODES)
  def test_none_gradients_ignored_and_sparse_kept_sparse(self, mode):
    # A non-tensor gradient beside None and IndexedSlices in one call.
    def build():
      dense = tf.compat.v1.Variable([1.0, 2.0], name="dense")
      sparse = tf.compat.v1.Variable([[1.0], [2.0], [3.0]], name="sparse")
      unused = tf.compat.v1.Variable(5.0, name="unused")
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.5),
          mp.FixedLossScaleManager(4))
      return [dense, sparse, unused], opt

    def grads_and_vars(variables, nan):
      rows = tf.IndexedSlices(tf.constant([[2.0]]), tf.constant([1]),
                              tf.constant([3, 1]))
      return list(zip([[float("nan") if nan else 2.0, 4.0], rows, None],
                      variables))

    expected = {False: [[0.0, 0.0], [[1.0], [1.0], [3.0]], 5.0],
                True: [[1.0, 2.0], [[1.0], [2.0], [3.0]], 5.0]}
    for nan in (False, True):
      if mode == "graph":
        with tf.Graph().as_default():
          variables, opt = build()
          train_op = opt.apply_gradients(grads_and_vars(variables, nan))
          with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train_op)
            got = sess.run(variables)
      else:
        variables, opt = build()
        def step(variables=variables, opt=opt, nan=nan):
          opt.apply_gradients(grads_and_vars(variables, nan))

        if mode == "function":
          step = tf.function(step)
        step()
        got = [v.numpy() for v in variables]
      for g, e in zip(got, expected[nan]):
        self.assertAllEqual(g, e)

  def test_unconvertible_gradient_names_its_place(self):
    var = tf.compat.v1.Variable(1.0)
    opt = mp.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.5),
        mp.FixedLossScaleManager(4))
    for grad in ("abc", object()):
      with self.assertRaisesRegex(
          TypeError, r"^`grads_and_vars\[1\]\[0\]` must be None, a tensor, "
          r"IndexedSlices, or numbers .* convertible to float32, but got "):
        opt.apply_gradients([(None, var), (grad, var)])
      with self.assertRaisesRegex(TypeError, r"^`grads\[0\]` must be None"):
        mp.ExponentialUpdateLossScale(8, 2).update([grad])
    self.assertEqual(var.numpy(), 1.0)

  @parameterized.parameters(*MODES)
  def test_loss_scale_update_takes_python_and_numpy_numbers(self, mode):
    # As TF's own LossScale.update tests do.
    def run(grads):
      def make():
        return mp.ExponentialUpdateLossScale(8, 1, decr_every_n_nan_or_inf=1,
                                             decr_ratio=0.5)
      if mode == "graph":
        with tf.Graph().as_default():
          ls = make()
          update_op, should_apply = ls.update(grads)
          with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            applied = sess.run(should_apply)
            sess.run(update_op)
            return bool(applied), float(sess.run(ls()))
      ls = make()
      if mode == "eager":
        _, should_apply = ls.update(grads)
      else:
        should_apply = tf.function(lambda: ls.update(grads)[1])()
      return bool(should_apply), float(ls().numpy())

    for grads, expected in (
        ([1.0, None], (True, 16.0)),
        (2.5, (True, 16.0)),
        ([np.float64(1e300), np.array([1.0, 2.0])], (True, 16.0)),
        ([[1.0, 2.0]], (True, 16.0)),
        ([float("nan")], (False, 4.0)),
        ([np.float64(np.inf), 3], (False, 4.0)),
        ([1.0, np.array([1.0, np.nan])], (False, 4.0)),
    ):
      with self.subTest(grads=repr(grads)):
        self.assertEqual(run(grads), expected)


# -- TF loss-scale objects handed over directly -------------------------------

INT64_MAX = 2**63 - 1


def _tf_builds(make):
  """`make()`, or None when TensorFlow's own constructor refuses the value."""
  try:
    return make()
  except (TypeError, ValueError, OverflowError):
    return None


# How a LossScale object reaches the package: both public entry points.
ENTRY_POINTS = (
    ("from_loss_scale", mp.LossScaleManager.from_loss_scale),
    ("optimizer", lambda ls: mp.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.1), ls)),
)

# (TF class, its argument, the argument name in our message, the documented
# outcome of the value TF holds, how TF turns what it is given into that).
LOSS_SCALE_OBJECT_CASES = (
    ("FixedLossScale", "loss_scale_value", "loss_scale",
     lambda v: scale(v, 1.0), float),
    ("DynamicLossScale", "initial_loss_scale", "initial_loss_scale",
     lambda v: scale(v, FLOAT32_TINY), float),
    ("DynamicLossScale", "increment_period", "increment_period",
     lambda v: count(v, maximum=INT64_MAX), int),
    ("DynamicLossScale", "multiplier", "multiplier",
     lambda v: ratio(v, 1.0), float),
)


class LossScaleObjectValidationTest(tf.test.TestCase, parameterized.TestCase):
  """A TF LossScale passed in gets the validation of the managers' arguments.

  TensorFlow's own constructors accept NaN, infinities and values float32
  cannot hold (and DynamicLossScale a period or multiplier of 0); whatever
  TF accepted must then pass the same rule as the same number given to a
  manager, with the same message, whichever entry point it arrives by.
  """

  @parameterized.product(
      entry=ENTRY_POINTS,
      case=[dict(zip(("cls", "kwarg", "arg", "documented", "held"), c))
            for c in LOSS_SCALE_OBJECT_CASES])
  def test_each_value_tf_accepts_works_or_names_the_argument(self, entry,
                                                              case):
    cls = getattr(tf.compat.v1.mixed_precision, case["cls"])
    outcomes = set()
    for value in HOSTILE:
      with self.subTest(value=_value_id(value)), tf.Graph().as_default():
        loss_scale = _tf_builds(
            lambda value=value: cls(**{case["kwarg"]: value}))
        if loss_scale is None:
          continue  # TensorFlow refused it itself.
        held = case["held"](value)
        expected = case["documented"](held)
        outcomes.add(expected if expected in (TypeError, ValueError) else
                     "accepted")
        if expected not in (TypeError, ValueError):
          entry[1](loss_scale)
          continue
        with self.assertRaises(expected) as cm:
          entry[1](loss_scale)
        message = str(cm.exception)
        match = _MESSAGE.match(message)
        self.assertIsNotNone(match, message)
        self.assertEqual(match.group("arg"), case["arg"])
        self.assertEqual(match.group("got"), repr(held))
        self.assertIn(case["cls"], message)
    # Guards the table: TF lets through values that must be refused.
    self.assertIn(ValueError, outcomes)
    self.assertIn("accepted", outcomes)

  @parameterized.named_parameters(*ENTRY_POINTS)
  def test_fixed_nan_gets_the_managers_message(self, entry):
    with self.assertRaises(ValueError) as manager_error:
      mp.FixedLossScaleManager(float("nan"))
    with self.assertRaises(ValueError) as cm:
      entry(tf.compat.v1.mixed_precision.FixedLossScale(float("nan")))
    self.assertStartsWith(str(cm.exception), str(manager_error.exception))

  @parameterized.named_parameters(*ENTRY_POINTS)
  def test_accepted_fixed_scale_is_the_scale_used(self, entry):
    with tf.Graph().as_default():
      obj = entry(tf.compat.v1.mixed_precision.FixedLossScale(2**20))
      manager = getattr(obj, "_loss_scale_manager", obj)
      with tf.compat.v1.Session() as sess:
        self.assertEqual(2.0**20, sess.run(manager.get_loss_scale()))


if __name__ == "__main__":
  tf.test.main()
