# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Hostile values for every public constructor, and non-tensor gradients.

Each value either works exactly as documented (the number lands unchanged
in the type it lives in) or raises a ValueError or TypeError that names the
argument. There is no third outcome.
"""

import math
import sys

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

INT32_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)

HOSTILE = (
    None, "2", "False", "", True, False, np.bool_(True), 0, 1, 3, -1, 2.5,
    1e-50, np.int8(3), np.int32(3), np.int64(3), np.uint64(3),
    np.float16(3), np.float32(3), np.float64(3.5), np.array(3),
    np.array([3]), 2**31 - 1, 2**31, 2**63, sys.maxsize, 10**400,
    float("nan"), float("inf"), float("-inf"), 1e39, FLOAT32_MAX, [3],
)


def _value_id(value):
  return "{}_{}".format(type(value).__name__, repr(value)[:20])


def _is_int(v):
  return (isinstance(v, (int, np.integer)) and
          not isinstance(v, (bool, np.bool_)))


def _is_real(v):
  return _is_int(v) or isinstance(v, (float, np.floating))


def _fits_float32(v, low, low_inclusive=True, high=FLOAT32_MAX):
  if not _is_real(v):
    return False
  try:
    x = float(np.float32(float(v)))
  except OverflowError:
    return False
  return (math.isfinite(x) and x <= high and
          (x >= low if low_inclusive else x > low))


# (constructor name, argument, build(value) -> object, documented(value) ->
# expected stored value or None when the value must be rejected,
# read(object) -> the stored value).
def _exp_manager(**override):
  kwargs = dict(init_loss_scale=8, incr_every_n_steps=10)
  kwargs.update(override)
  return mp.ExponentialUpdateLossScaleManager(**kwargs)


def _exp_loss_scale(**override):
  kwargs = dict(init_loss_scale=8, incr_every_n_steps=10)
  kwargs.update(override)
  return mp.ExponentialUpdateLossScale(**kwargs)


def _scale32(v):
  return float(np.float32(float(v)))


CASES = [
    ("FixedLossScaleManager", "loss_scale",
     lambda v: mp.FixedLossScaleManager(v),
     lambda v: _scale32(v) if _fits_float32(v, 1.0) else None,
     lambda m: float(m.get_loss_scale().numpy())),
    ("from_loss_scale", "loss_scale",
     mp.LossScaleManager.from_loss_scale,
     lambda v: _scale32(v) if _fits_float32(v, 1.0) else None,
     lambda m: float(m.get_loss_scale().numpy())),
    ("ExponentialUpdateLossScaleManager", "init_loss_scale",
     lambda v: _exp_manager(init_loss_scale=v),
     lambda v: _scale32(v) if _fits_float32(v, 0.0, False) else None,
     lambda m: float(m.get_loss_scale().numpy())),
    ("ExponentialUpdateLossScaleManager", "incr_every_n_steps",
     lambda v: _exp_manager(incr_every_n_steps=v),
     lambda v: int(v) if _is_int(v) and 1 <= v <= INT32_MAX else None,
     lambda m: m.loss_scale.incr_every_n_steps),
    ("ExponentialUpdateLossScaleManager", "decr_every_n_nan_or_inf",
     lambda v: _exp_manager(decr_every_n_nan_or_inf=v),
     lambda v: int(v) if _is_int(v) and 1 <= v <= INT32_MAX else None,
     lambda m: m.loss_scale.decr_every_n_nan_or_inf),
    ("ExponentialUpdateLossScaleManager", "incr_ratio",
     lambda v: _exp_manager(incr_ratio=v),
     lambda v: float(v) if _fits_float32(v, 1.0) else None,
     lambda m: m.loss_scale.incr_ratio),
    ("ExponentialUpdateLossScaleManager", "decr_ratio",
     lambda v: _exp_manager(decr_ratio=v),
     lambda v: float(v) if _fits_float32(v, 0.0, False, 1.0) else None,
     lambda m: m.loss_scale.decr_ratio),
    ("ExponentialUpdateLossScale", "init_loss_scale",
     lambda v: _exp_loss_scale(init_loss_scale=v),
     lambda v: _scale32(v) if _fits_float32(v, 0.0, False) else None,
     lambda ls: float(ls().numpy())),
    ("ExponentialUpdateLossScale", "incr_every_n_steps",
     lambda v: _exp_loss_scale(incr_every_n_steps=v),
     lambda v: int(v) if _is_int(v) and 1 <= v <= INT32_MAX else None,
     lambda ls: ls.incr_every_n_steps),
    ("LossScaleOptimizer", "advance_global_step_on_skip",
     lambda v: mp.LossScaleOptimizer(
         tf.compat.v1.train.GradientDescentOptimizer(0.1),
         mp.FixedLossScaleManager(4), advance_global_step_on_skip=v),
     lambda v: bool(v) if isinstance(v, (bool, np.bool_)) else None,
     lambda opt: opt._advance_global_step_on_skip),  # pylint: disable=protected-access
    ("LossScaleHook", "every_n_steps",
     lambda v: mp.LossScaleHook(every_n_steps=v),
     lambda v: int(v) if _is_int(v) and 1 <= v <= INT32_MAX else None,
     lambda hook: hook._every_n_steps),  # pylint: disable=protected-access
    ("LossScaleHook", "max_skips_at_min_scale",
     lambda v: mp.LossScaleHook(max_skips_at_min_scale=v),
     lambda v: (int(v) if _is_int(v) and 1 <= v <= INT32_MAX else
                "none" if v is None else None),
     lambda hook: (hook._max_skips if hook._max_skips is not None  # pylint: disable=protected-access
                   else "none")),
]


class HostileConstructorArgumentsTest(tf.test.TestCase,
                                      parameterized.TestCase):

  @parameterized.named_parameters(
      ("{}_{}".format(c[0], c[1]), c) for c in CASES)
  def test_each_value_works_exactly_or_names_the_argument(self, case):
    _, arg, build, documented, read = case
    for value in HOSTILE + (tf.constant(3), tf.constant(3.0)):
      with self.subTest(value=_value_id(value)):
        expected = (None if isinstance(value, tf.Tensor) else
                    documented(value))
        if expected is None:
          with self.assertRaises((ValueError, TypeError)) as cm:
            build(value)
          message = str(cm.exception)
          self.assertIn("`{}`".format(arg), message)
          self.assertIn("but got", message)
        else:
          got = read(build(value))
          self.assertEqual(got, expected)
          self.assertIs(type(got), type(expected))

  def test_string_false_is_not_true(self):
    # bool("False") is True: the flag used to be silently turned on.
    with self.assertRaisesRegex(TypeError,
                                "`advance_global_step_on_skip` must be a "
                                "bool.*'False' of type str"):
      mp.LossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(1.0),
                            mp.FixedLossScaleManager(2),
                            advance_global_step_on_skip="False")

  def test_huge_int_scale_is_a_value_error_not_overflow(self):
    with self.assertRaisesRegex(ValueError, "`init_loss_scale`.*float32"):
      mp.ExponentialUpdateLossScaleManager(10**400, 100)

  def test_scale_above_float32_max_is_rejected_not_inf(self):
    with self.assertRaisesRegex(ValueError, "`loss_scale`.*1e\\+39"):
      mp.FixedLossScaleManager(1e39)

  def test_sys_maxsize_step_count_is_rejected(self):
    # It used to wrap in the int32 comparison, doubling the scale on every
    # good step; TF 1.15 failed at graph construction.
    with self.assertRaisesRegex(ValueError,
                                r"`incr_every_n_steps` must be an int in "
                                r"\[1, 2147483647\]"):
      mp.ExponentialUpdateLossScaleManager(8, sys.maxsize)

  def test_numpy_ints_accepted_by_the_hook_like_the_managers(self):
    manager = mp.ExponentialUpdateLossScaleManager(np.int64(8), np.int64(5))
    hook = mp.LossScaleHook(every_n_steps=np.int64(5),
                            max_skips_at_min_scale=np.int32(3))
    self.assertEqual(manager.loss_scale.incr_every_n_steps, 5)
    self.assertEqual(hook._every_n_steps, 5)  # pylint: disable=protected-access
    self.assertEqual(hook._max_skips, 3)  # pylint: disable=protected-access


# Gradients that are not tensors: every v1 optimizer converts them.
# (name, gradient from a number, the variable's initial value).
NON_TENSOR_GRADS = (
    ("python_float", float, 1.0),
    ("numpy_scalar", np.float32, 1.0),
    ("numpy_array", lambda x: np.array([x, x], np.float32), [1.0, 2.0]),
    ("python_list", lambda x: [float(x), float(x)], [1.0, 2.0]),
)


class NonTensorGradientsTest(tf.test.TestCase, parameterized.TestCase):

  def _apply(self, mode, make_grad, initial, grad_value):
    """Applies one gradient of `grad_value`; returns the variable after."""
    def build():
      var = tf.compat.v1.Variable(initial, name="v")
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.5),
          mp.ExponentialUpdateLossScaleManager(8, 1000))
      return var, opt

    if mode == "graph":
      with tf.Graph().as_default():
        var, opt = build()
        train_op = opt.apply_gradients([(make_grad(grad_value), var)])
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          sess.run(train_op)
          return sess.run(var)
    var, opt = build()
    if mode == "eager":
      opt.apply_gradients([(make_grad(grad_value), var)])
    else:
      @tf.function
      def step():
        opt.apply_gradients([(make_grad(grad_value), var)])

      step()
    return var.numpy()

  @parameterized.product(mode=("graph", "eager", "function"),
                         kind=NON_TENSOR_GRADS)
  def test_finite_applied_non_finite_skipped(self, mode, kind):
    _, make_grad, initial = kind
    # Finite: v - 0.5 * 2, applied.
    self.assertAllClose(self._apply(mode, make_grad, initial, 2.0),
                        np.array(initial) - 1.0)
    # NaN: the step is skipped, the variable untouched.
    self.assertAllEqual(
        self._apply(mode, make_grad, initial, float("nan")), initial)

  @parameterized.parameters("graph", "eager", "function")
  def test_loss_scale_update_takes_a_python_float(self, mode):
    # As TF's own LossScale.update tests do.
    def run(ls, grads):
      if mode == "eager":
        _, should_apply = ls.update(grads)
        return bool(should_apply), float(ls().numpy())
      if mode == "function":
        should_apply = tf.function(lambda: ls.update(grads)[1])()
        return bool(should_apply), float(ls().numpy())
      with tf.Graph().as_default():
        ls = mp.ExponentialUpdateLossScale(8, 1, decr_every_n_nan_or_inf=1,
                                           decr_ratio=0.5)
        update_op, should_apply = ls.update(grads)
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          applied = sess.run(should_apply)
          sess.run(update_op)
          return bool(applied), float(sess.run(ls()))

    for grads, expected in (([1.0, None], (True, 16.0)),
                            ([float("nan")], (False, 4.0)),
                            ([np.float64(np.inf), 3], (False, 4.0))):
      ls = mp.ExponentialUpdateLossScale(8, 1, decr_every_n_nan_or_inf=1,
                                         decr_ratio=0.5)
      self.assertEqual(run(ls, grads), expected)


if __name__ == "__main__":
  tf.test.main()
