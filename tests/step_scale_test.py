# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for `step_scale`: a user's unusable loss scale is refused whole.

A user's manager may return any value from `get_loss_scale()`. TF 1.15
took it as it came: a scale of 0, NaN, False or a float32 subnormal skipped
every step without a word, and a scale of shape [1, 1] broadcast the
gradients to another shape. Each is refused here, in every mode, before any
variable is touched; every usable scale trains as TF 1.15's optimizer
(`tf115_reference`) trains with it, to the bit.
"""

import contextlib

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp

import tf115_reference

MODES = ("graph", "function", "eager")
_N_VARS = 9  # The model: 8 of 9 were updated before the 9th failed.


class _UserManager(mp.LossScaleManager):
  """A user's manager: returns `make()`'s value, built in the step's graph.

  A variable is made once; anything else anew at each call (a
  `tf.function` traces the step more than once). TF 1.15's optimizer
  takes the same class: it only calls the two methods.
  """

  def __init__(self, make):
    self._make = make
    self._variable = None

  def get_loss_scale(self):
    if self._variable is not None:
      return self._variable
    value = self._make()
    if isinstance(value, tf.Variable):
      self._variable = value
    return value

  def update_loss_scale(self, finite_grads):
    return None if tf.executing_eagerly() else tf.no_op()

  def variables(self):
    return [] if self._variable is None else [self._variable]


def _variables(prefix):
  return [tf.Variable(np.linspace(0.5, 1.5, 3).astype(np.float32) + i,
                      name="{}{}".format(prefix, i)) for i in range(_N_VARS)]


def _loss(variables):
  return tf.add_n([tf.reduce_sum(tf.sin(v) * 1.2345) for v in variables])


def _train(mode, optimizers_and_variables, steps=3):
  """Runs `steps` minimize steps of each (optimizer, variables) pair.

  Returns the variables' values after the steps (or raises what a step
  raised) and the values they had before it, as NumPy arrays.
  """
  graph = tf.Graph() if mode == "graph" else None
  with (graph.as_default() if graph else contextlib.nullcontext()):
    built = [(make_opt(), _variables("v{}_".format(k)))
             for k, make_opt in enumerate(optimizers_and_variables)]

    def step():
      ops = []
      for opt, variables in built:
        if mode == "graph":
          ops.append(opt.minimize(_loss(variables), var_list=variables))
        else:
          ops.append(opt.minimize(lambda v=variables: _loss(v),
                                  var_list=variables))
      return ops

    before = None
    if mode == "graph":
      ops = step()
      with tf.compat.v1.Session(graph=graph) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        before = sess.run([v for _, vs in built for v in vs])
        try:
          for _ in range(steps):
            sess.run(ops)
        finally:
          after = sess.run([v for _, vs in built for v in vs])
    else:
      before = [v.numpy() for _, vs in built for v in vs]
      run = tf.function(lambda: step() and None) if mode == "function" else step
      try:
        for _ in range(steps):
          run()
      finally:
        after = [v.numpy() for _, vs in built for v in vs]
  return before, after


def _package(make):
  return lambda: mp.LossScaleOptimizer(
      tf.compat.v1.train.MomentumOptimizer(0.1, 0.9), _UserManager(make))


def _oracle(make):
  return lambda: tf115_reference.LossScaleOptimizer(
      tf.compat.v1.train.MomentumOptimizer(0.1, 0.9), _UserManager(make))


# (name, make, known when built): known values are refused as the step is
# built (ValueError); a variable's value when the step runs
# (InvalidArgumentError in a graph or function, ValueError eagerly).
_REFUSED = (
    ("python_zero", lambda: 0.0, True),
    ("python_negative", lambda: -4.0, True),
    ("python_nan", lambda: float("nan"), True),
    ("python_inf", lambda: float("inf"), True),
    ("numpy_zero", lambda: np.float32(0.0), True),
    ("numpy_nan", lambda: np.float64("nan"), True),
    ("numpy_subnormal", lambda: np.float64(2.0**-130), True),
    ("constant_zero", lambda: tf.constant(0.0), True),
    ("constant_subnormal", lambda: tf.constant(1e-40), True),
    ("constant_negative", lambda: tf.constant(-2.0), True),
    ("variable_zero", lambda: tf.Variable(0.0, trainable=False), False),
    ("variable_nan", lambda: tf.Variable(float("nan"), trainable=False),
     False),
    ("variable_subnormal", lambda: tf.Variable(1e-40, trainable=False),
     False),
    ("variable_negative", lambda: tf.Variable(-1.0, trainable=False), False),
    ("variable_float64_huge",
     lambda: tf.Variable(2.0**200, dtype=tf.float64, trainable=False), False),
)


class RefusedScaleTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(mode=MODES, case=_REFUSED)
  def test_refused_before_anything_is_applied(self, mode, case):
    name, make, known = case
    del name
    error = (ValueError if known or mode == "eager" else
             tf.errors.InvalidArgumentError)
    before, after = _values_after_failure(
        mode, make, error=error, test=self,
        message=r"(?s)_UserManager\.get_loss_scale")
    for b, a in zip(before, after):
      self.assertAllEqual(b, a)

  @parameterized.product(
      mode=MODES,
      make=(lambda: False, lambda: np.bool_(True), lambda: tf.constant(False),
            lambda: tf.Variable(False, trainable=False)))
  def test_a_bool_is_not_a_scale(self, mode, make):
    with self.assertRaisesRegex(TypeError, "bool"):
      _train(mode, [_package(make)])

  @parameterized.product(
      mode=MODES,
      make=(lambda: tf.constant([[2.0]]), lambda: np.array([[2.0]]),
            lambda: tf.Variable([[2.0]], trainable=False),
            lambda: tf.constant([2.0, 2.0])))
  def test_a_scale_of_another_shape_is_refused_whole(self, mode, make):
    # A [1, 1] scale broadcast a lone gradient to [1, n]: eagerly 8 of 9
    # variables were updated before the 9th apply failed.
    before, after = _values_after_failure(mode, make, error=ValueError,
                                          test=self, message="shape")
    for b, a in zip(before, after):
      self.assertAllEqual(b, a)


def _values_after_failure(mode, make, error=Exception, test=None,
                          message=""):
  """The variables before and after a step with `make`'s scale that failed."""
  graph = tf.Graph() if mode == "graph" else None
  with (graph.as_default() if graph else contextlib.nullcontext()):
    variables = _variables("w")
    opt = _package(make)()
    raised = None
    if mode == "graph":
      with tf.compat.v1.Session(graph=graph) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        before = sess.run(variables)
        try:
          op = opt.minimize(_loss(variables), var_list=variables)
          # The optimizer's slots; the variables keep their values.
          sess.run(tf.compat.v1.variables_initializer(
              opt.variables() + list(opt._loss_scale_manager.variables())))  # pylint: disable=protected-access
          sess.run(op)
        except error as e:  # pylint: disable=broad-except
          raised = e
        after = sess.run(variables)
    else:
      before = [v.numpy() for v in variables]
      step = lambda: opt.minimize(lambda: _loss(variables),
                                  var_list=variables) and None
      try:
        (tf.function(step) if mode == "function" else step)()
      except error as e:  # pylint: disable=broad-except
        raised = e
      after = [v.numpy() for v in variables]
  if raised is None:
    raise AssertionError("the step with an unusable scale was not refused")
  if test is not None:
    test.assertRegex(str(raised), message)
  return before, after


class UsableScaleTest(tf.test.TestCase, parameterized.TestCase):
  """Usable scales train as TF 1.15 trained with them, to the bit."""

  @parameterized.product(
      mode=MODES,
      make=(lambda: 3.0, lambda: np.float32(7.0), lambda: tf.constant(1000.0),
            lambda: tf.constant(2.0**-126),  # The smallest normal float32.
            lambda: tf.Variable(2.0**-126, trainable=False),
            lambda: tf.constant([3.0]),
            lambda: tf.Variable(3.0, dtype=tf.float64, trainable=False),
            lambda: tf.constant(0.1, tf.float64),
            lambda: np.float64(0.1)))
  def test_trains_as_tf115(self, mode, make):
    before, after = _train(mode, [_oracle(make), _package(make)])
    del before
    oracle, package = after[:_N_VARS], after[_N_VARS:]
    for i, (o, p) in enumerate(zip(oracle, package)):
      self.assertEqual(o.tobytes(), p.tobytes(),
                       "variable {}: {} != {} (TF 1.15)".format(i, p, o))



class _ZeroLossScale(tf.compat.v1.mixed_precision.LossScale):
  """A user's own TF2 `LossScale` whose scale is 0 (a variable)."""

  def __init__(self):
    super().__init__()
    self._variable = None

  def __call__(self):
    if self._variable is None:
      self._variable = tf.Variable(0.0, trainable=False, name="user_scale")
    return self._variable

  def update(self, grads):
    del grads
    return (None if tf.executing_eagerly() else tf.no_op()), tf.constant(True)

  def get_config(self):
    return {}


class _ZeroDynamicLossScale(tf.compat.v1.mixed_precision.DynamicLossScale):
  """A user's subclass of TF's `DynamicLossScale` that returns 0."""

  def __call__(self):
    return tf.zeros([]) * super().__call__()


class UserLossScaleTest(tf.test.TestCase, parameterized.TestCase):
  """A user's `LossScale` through `from_loss_scale` is checked (issue 52, 8).

  The built-in scales keep themselves in range and cost no check; a user's
  own `LossScale`, or a subclass of TF's, does not, and a scale of 0 would
  skip every step without a word.
  """

  @parameterized.product(
      mode=MODES, make=(_ZeroLossScale, _ZeroDynamicLossScale),
      wrap=("from_loss_scale", "optimizer"))
  def test_zero_scale_is_refused_before_anything_is_applied(
      self, mode, make, wrap):
    graph = tf.Graph() if mode == "graph" else None
    with (graph.as_default() if graph else contextlib.nullcontext()):
      variables = _variables("w")
      loss_scale = make()
      manager = (mp.LossScaleManager.from_loss_scale(loss_scale)
                 if wrap == "from_loss_scale" else loss_scale)
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.MomentumOptimizer(0.1, 0.9), manager)
      # The scale is a variable in a graph: only known when the step runs.
      error = ValueError if mode == "eager" else (
          tf.errors.InvalidArgumentError, ValueError)
      if mode == "graph":
        with tf.compat.v1.Session(graph=graph) as sess:
          with self.assertRaises(error) as raised:
            op = opt.minimize(_loss(variables), var_list=variables)
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(op)
          after = sess.run(variables)
      else:
        step = lambda: opt.minimize(lambda: _loss(variables),
                                    var_list=variables) and None
        with self.assertRaises(error) as raised:
          (tf.function(step) if mode == "function" else step)()
        after = [v.numpy() for v in variables]
    message = str(raised.exception)
    # What was wrong, what was received, and what to do, naming the user's
    # class, not the package's adapter.
    self.assertIn(make.__name__ + ".__call__()", message)
    self.assertNotIn("_LossScaleAdapter", message)
    self.assertRegex(message, r"returned\]? \[?0")
    self.assertIn("every step is skipped" if mode == "eager" else
                  "not a positive scalar", message)
    self.assertIn("Return a positive scalar scale from __call__()", message)
    for b, a in zip(_initial()[:_N_VARS], after):
      self.assertAllEqual(b, a)


class _Fed(object):
  """A user's manager whose scale is what the step was given: `value`."""

  def __init__(self):
    self.value = None

  def get_loss_scale(self):
    return self.value

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return tf.no_op()


class _FedManager(_Fed, mp.LossScaleManager):
  """The same manager on the package's base, as its users write it."""


class UnknownLengthScaleTest(tf.test.TestCase, parameterized.TestCase):
  """A scale of shape [None] is checked when it runs (issue 52, item 11).

  A placeholder of shape [None], or a `tf.function`'s input of that
  signature, is a scalar ([1]) when it runs: it trains as TF 1.15 trained
  with it, and only a value that is not one number, or not usable, is
  refused, when the step runs, before anything is applied.
  """

  def _sides(self, mode):
    """`(run, read)`: `run(value, package_only)` steps the oracle's side
    and the package's (or the package's alone) with the scale `value`;
    `read()` returns both sides' variables, the oracle's first."""
    sides = []
    for prefix, make_opt, manager in (
        ("oracle", tf115_reference.LossScaleOptimizer, _Fed()),
        ("package", mp.LossScaleOptimizer, _FedManager())):
      opt = make_opt(tf.compat.v1.train.MomentumOptimizer(0.1, 0.9), manager)
      sides.append((_variables(prefix), opt, manager))
    if mode == "graph":
      scale = tf.compat.v1.placeholder(tf.float32, [None], name="scale")
      ops = []
      for variables, opt, manager in sides:
        manager.value = scale
        ops.append(opt.minimize(_loss(variables), var_list=variables))
      sess = tf.compat.v1.Session()
      self.addCleanup(sess.close)
      sess.run(tf.compat.v1.global_variables_initializer())
      read = lambda: sess.run([v for s in sides for v in s[0]])

      def run(value, package_only=False):
        for op in ops[1:] if package_only else ops:  # A run per side.
          sess.run(op, feed_dict={scale: value})
    else:
      def make_step(which):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)],
                     autograph=False)
        def step(scale):
          for variables, opt, manager in which:
            manager.value = scale
            opt.minimize(lambda v=variables: _loss(v), var_list=variables)
        return step

      steps = (make_step(sides), make_step(sides[1:]))
      read = lambda: [v.numpy() for s in sides for v in s[0]]
      run = lambda value, package_only=False: steps[package_only](
          tf.constant(value, tf.float32))
    return run, read

  @parameterized.parameters("graph", "function")
  def test_trains_as_tf115_and_is_checked_when_it_runs(self, mode):
    with (tf.Graph().as_default() if mode == "graph" else
          contextlib.nullcontext()):
      run, read = self._sides(mode)
      for value in ([4.0], [0.5], [2.0**20]):
        run(value)
      after = read()
      oracle, package = after[:_N_VARS], after[_N_VARS:]
      for i, (o, p) in enumerate(zip(oracle, package)):
        self.assertEqual(o.tobytes(), p.tobytes(),
                         "variable {}: {} != {} (TF 1.15)".format(i, p, o))
      self.assertNotAllClose(after, [v.numpy() if hasattr(v, "numpy") else v
                                     for v in _initial()])
      for bad in ([0.0], [float("nan")], [2.0, 2.0], []):
        before = read()
        # In a function, Grappler may run the scale's reshape to a scalar
        # before its check: a wrong length then fails with TF's message.
        message = ("_FedManager.get_loss_scale"
                   if mode == "graph" or len(bad) == 1 else "")
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, message):
          run(bad, package_only=True)
        for b, a in zip(before[_N_VARS:], read()[_N_VARS:]):
          self.assertAllEqual(b, a)


def _initial():
  return [np.linspace(0.5, 1.5, 3).astype(np.float32) + i
          for k in range(2) for i in range(_N_VARS)]


if __name__ == "__main__":
  tf.test.main()
