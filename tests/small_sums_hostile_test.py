# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Hostile probes of the small gradients' sums (`skip_decision._small_sums`).

Small float32/float64 gradients are added up by shape (one AddN per shape,
then its Sum) and join a total whose finiteness decides the step; a
non-finite total runs the exact check behind one Switch. In a plain graph,
many small gradients alone (more than 16384 elements) take that path too
(`_many_small_alone`), and with `scaled` the sums read the gradients of the
scaled loss. Each probe here runs real training steps (or direct
`all_finite` calls) and compares with NumPy: a step is skipped exactly when
some element of some applied gradient is NaN or +-Inf; a skipped step
changes no variable and no global step, an applied one is exactly plain
SGD. Not repeated from skip_decision_test.py or the other hostile tests.

The training steps of `ManySmallTrainingTest` and `ScaledPathTest` are
also taken by TF 1.15's optimizer (`tf115_harness`) on the same model, in
the same mode: every variable, the global step and the scale must be its,
to the bit.
"""

import json
import subprocess
import textwrap

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
import forkserver
import program_util
import tf115_harness as harness
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import unscale

_LIMIT = 1 << 14  # skip_decision._SMALL_GRAD_ELEMENTS
_LARGE = (130, 130)  # 16900 elements: one large gradient.

# Many small variables of a few shapes: 17092 elements in all (more than
# 16384), so in a plain graph they take the total and the Switch alone.
# (name, shape, dtype, count)
_MANY = (
    ("a", (256,), np.float32, 35),
    ("m", (16, 16), np.float32, 20),
    ("r3", (4, 4, 8), np.float32, 10),
    ("r4", (2, 2, 2, 16), np.float32, 10),
    ("t23", (2, 3), np.float32, 5),
    ("t32", (3, 2), np.float32, 5),
    ("s", (), np.float32, 6),
    ("z", (0,), np.float32, 2),
    ("z30", (3, 0), np.float32, 2),
    ("d", (64,), np.float64, 6),
    ("ds", (), np.float64, 2),
)
_MANY_ELEMENTS = sum(
    int(np.prod(shape)) * n for _, shape, _, n in _MANY)
assert _MANY_ELEMENTS > _LIMIT, _MANY_ELEMENTS


def _specs(with_large=False):
  """[(name, shape, numpy dtype)] of every variable, in order."""
  specs = []
  for name, shape, dtype, count in _MANY:
    specs.extend(("%s%d" % (name, i), shape, dtype) for i in range(count))
  if with_large:
    specs.append(("large", _LARGE, np.float32))
  return specs


def _index(specs, name):
  return [s[0] for s in specs].index(name)


def _initial(specs):
  return [(np.arange(int(np.prod(shape))) % 7 - 3).astype(dtype).reshape(
      shape) for _, shape, dtype in specs]


def _coefficients(specs, case):
  """Each variable's loss coefficient (its true gradient), with `case` in."""
  coeffs = [np.full(shape, 0.25 + (i % 5), dtype)
            for i, (_, shape, dtype) in enumerate(specs)]

  def put(name, value, element=-1):
    c = coeffs[_index(specs, name)]
    if c.ndim == 0:
      coeffs[_index(specs, name)] = np.asarray(value, c.dtype)
    else:
      c.reshape(-1)[element] = value

  for name, value, element in case:
    put(name, value, element)
  return coeffs


# Cases: [(variable, value, flat element)]. None of them overflows the
# scaled gradient when the scale is 1.
_CASES = {
    "finite": [],
    "nan_first_of_group": [("a0", np.nan, 0)],
    "nan_middle_of_group": [("m10", np.nan, 27)],
    "inf_last_of_group": [("a34", np.inf, -1)],
    "neg_inf_rank4": [("r47", -np.inf, 5)],
    "pos_and_neg_inf_same_element": [("a3", np.inf, 10),
                                     ("a4", -np.inf, 10)],
    "pos_and_neg_inf_other_elements": [("m3", np.inf, 10),
                                       ("m4", -np.inf, 11)],
    "nan_in_scalar": [("s5", np.nan, -1)],
    "nan_in_2x3_not_3x2": [("t234", np.nan, 4)],
    "inf_in_3x2_not_2x3": [("t320", np.inf, 0)],
    "nan_in_float64": [("d5", np.nan, 3)],
    "inf_in_float64_scalar": [("ds1", -np.inf, -1)],
    "f32_overflow_same_element": [("a10", 3e38, 5), ("a11", 3e38, 5)],
    "f32_overflow_across_elements": [("m15", 3e38, 0), ("m15", 3e38, 1)],
    "f32_overflow_scalars": [("s0", 3e38, -1), ("s1", 3e38, -1)],
    "f32_cancelling_huge": [("a20", 3e38, 0), ("a21", -3e38, 0),
                            ("a22", 3e38, 0)],
    "f64_sum_past_f32": [("d0", 1e300, 0), ("d1", 1e300, 0)],
    "f64_sum_overflows_f64": [("d0", 1.7e308, 2), ("d1", 1.7e308, 2)],
    "f64_scalars_past_f32": [("ds0", 1e200, -1), ("ds1", 1e200, -1)],
}


def _expected(specs, coeffs, scale, lr, extra=1.0):
  """(skip, new values) of one SGD step, as the optimizer computes it."""
  grads = []
  with np.errstate(all="ignore"):
    for (_, _, dtype), c in zip(specs, coeffs):
      upstream = dtype(np.float32(scale) * np.float32(extra))
      inv = dtype(np.float32(1) / np.float32(scale))
      grads.append((c * upstream) * inv)
    skip = not all(np.all(np.isfinite(g)) for g in grads)
    values = [x - dtype(lr) * g for x, g, (_, _, dtype) in
              zip(_initial(specs), grads, specs)]
  return skip, values


def _loss_fn(variables, coeffs, extra=1.0, signs=None):
  """sum_i sign_i * sum(v_i * c_i) * extra: v_i's gradient is c_i times."""

  def loss():
    constants = {}  # Per call: a function may trace twice.

    def const(c):
      if not isinstance(c, np.ndarray):
        return c  # A placeholder or a variable.
      # One constant per coefficient array: gradients that share it share it.
      if id(c) not in constants:
        constants[id(c)] = tf.constant(c)
      return constants[id(c)]

    terms = []
    for i, (v, c) in enumerate(zip(variables, coeffs)):
      term = tf.cast(tf.reduce_sum(v * const(c)), tf.float32)
      if signs is not None:
        term = term * signs[i]
      terms.append(term)
    return tf.add_n(terms) * extra

  return loss


def _train_step(mode, specs, coeffs, manager_fn, opt_fn, extra=1.0,
                signs=None, lib=None):
  """One minimize() step; returns (values, global step, loss scale after).

  By `lib`'s optimizer (a `tf115_harness.Library`; the package's if None),
  with the manager `manager_fn(lib)`.
  """
  lib = lib or harness.Library(harness.PACKAGE)
  init = _initial(specs)
  if mode == "graph":
    with tf.Graph().as_default():
      variables = [tf.Variable(x, name=n) for x, (n, _, _) in zip(init, specs)]
      step = tf.compat.v1.train.get_or_create_global_step()
      manager = manager_fn(lib)
      opt = lib.LossScaleOptimizer(opt_fn(), manager)
      train = opt.minimize(_loss_fn(variables, coeffs, extra, signs)(),
                           var_list=variables, global_step=step)
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train)
        return sess.run((variables, step, manager.get_loss_scale()))
  variables = [tf.Variable(x, name=n) for x, (n, _, _) in zip(init, specs)]
  step = tf.Variable(0, dtype=tf.int64, name="global_step")
  manager = manager_fn(lib)
  opt = lib.LossScaleOptimizer(opt_fn(), manager)
  loss = _loss_fn(variables, coeffs, extra, signs)

  def run():
    opt.minimize(loss, var_list=variables, global_step=step)

  if mode == "function":
    tf.function(run)()
  else:
    run()
  return ([v.numpy() for v in variables], int(step.numpy()),
          float(manager.get_loss_scale().numpy()))


def _judged_train_step(mode, specs, coeffs, manager_fn, opt_fn, **kwargs):
  """`_train_step` by the package, equal to TF 1.15's step to the bit."""
  got = {which: _train_step(mode, specs, coeffs, manager_fn, opt_fn,
                            lib=harness.Library(which), **kwargs)
         for which in harness.SIDES}
  _assert_bits(got[harness.PACKAGE][0], got[harness.ORACLE][0], specs)
  if got[harness.PACKAGE][1:] != got[harness.ORACLE][1:]:
    raise AssertionError("global step and scale: package {} != TF 1.15's "
                         "{}".format(got[harness.PACKAGE][1:],
                                     got[harness.ORACLE][1:]))
  return got[harness.PACKAGE]


def _assert_bits(values, tf115_values, specs):
  """The package's values are TF 1.15's, to the bit."""
  for (name, _, _), got, want in zip(specs, values, tf115_values):
    if np.asarray(got).tobytes() != np.asarray(want).tobytes():
      raise AssertionError("{}: package {} != TF 1.15's {}".format(
          name, got, want))


def _sgd(lr=0.5):
  return lambda: tf.compat.v1.train.GradientDescentOptimizer(lr)


class _UserScale(mp.LossScaleManager):
  """A user's manager with any scale (TF 1.15's managers keep it >= 1)."""

  def __init__(self, scale):
    self.scale = scale

  def get_loss_scale(self):
    return tf.constant(self.scale, tf.float32)

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return None if tf.executing_eagerly() else tf.no_op()


class ManySmallTrainingTest(tf.test.TestCase, parameterized.TestCase):
  """Hundreds of small variables, trained: skips exactly as NumPy says."""

  def _check(self, mode, specs, coeffs, scale, got, lr=0.5, extra=1.0,
             exponential=True):
    values, step, new_scale = got
    skip, want = _expected(specs, coeffs, scale, lr, extra)
    self.assertEqual(step, 0 if skip else 1, "global step (skip=%s)" % skip)
    if exponential:
      self.assertEqual(new_scale, scale / 2 if skip else scale)
    bad = [n for (n, _, _), g, w in zip(specs, values, want if not skip else
                                        _initial(specs))
           if not np.array_equal(g, w)]
    self.assertEqual(bad, [], "variables off in %s (skip=%s)" % (mode, skip))
    return skip

  @parameterized.product(mode=("graph", "function", "eager"),
                         with_large=(False, True),
                         case=sorted(_CASES))
  def test_sgd_step(self, mode, with_large, case):
    specs = _specs(with_large)
    coeffs = _coefficients(specs, _CASES[case])
    if "overflow" in case or "huge" in case or "past" in case:
      scale = 1.0  # The scaled gradient itself stays finite.
    else:
      scale = 256.0
    got = _judged_train_step(
        mode, specs, coeffs,
        lambda lib: lib.ExponentialUpdateLossScaleManager(scale, 1000, 1, 2,
                                                          0.5), _sgd())
    skip = self._check(mode, specs, coeffs, scale, got)
    self.assertEqual(skip, "finite" not in case and "overflow" not in case
                     and "huge" not in case and "past" not in case)

  @parameterized.product(mode=("graph", "function", "eager"),
                         with_large=(False, True))
  def test_shared_coefficient_with_opposite_signs(self, mode, with_large):
    # Gradients c * (+4) and c * (-4) share the factor c, 3e38 at one
    # element: c * 4 overflows, and a rewrite that hoisted c out of the
    # AddN ((4 - 4) * c = 0) would hide it. Graph optimizations may also
    # reassociate the unscale ((c * 4) * 0.25 = c * 1), so the oracle is the
    # gradients this very step applied (fetched in the same run): the step
    # is skipped exactly when one of them is non-finite, and otherwise
    # moves every variable by exactly -lr * gradient.
    specs = _specs(with_large)
    shared = np.ones((256,), np.float32)
    shared[9] = 3e38
    coeffs = _coefficients(specs, [])
    signs = [1.0] * len(specs)
    for i in range(0, 30):
      coeffs[i] = shared
      signs[i] = 1.0 if i % 2 else -1.0
    init = _initial(specs)

    def run(lib):
      """The step by `lib`'s optimizer: (grads, finite flag, values)."""
      finite_of = lambda opt: getattr(opt, "finite_grads", tf.constant(True))
      manager = lambda: lib.ExponentialUpdateLossScaleManager(4.0, 1000, 1,
                                                              2, 0.5)
      if mode == "graph":
        with tf.Graph().as_default():
          variables = [tf.Variable(x) for x in init]
          opt = lib.LossScaleOptimizer(_sgd()(), manager())
          gv = opt.compute_gradients(
              _loss_fn(variables, coeffs, signs=signs)(), var_list=variables)
          train = opt.apply_gradients(gv)
          with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            _, grads, finite = sess.run((train, [g for g, _ in gv],
                                         finite_of(opt)))
            return grads, finite, sess.run(variables)
      variables = [tf.Variable(x) for x in init]
      opt = lib.LossScaleOptimizer(_sgd()(), manager())
      loss = _loss_fn(variables, coeffs, signs=signs)

      def step():
        gv = opt.compute_gradients(loss, var_list=variables)
        opt.apply_gradients(gv)
        return [g for g, _ in gv], finite_of(opt)

      grads, finite = tf.function(step)() if mode == "function" else step()
      return ([g.numpy() for g in grads], finite,
              [v.numpy() for v in variables])

    grads, finite, values = run(harness.Library(harness.PACKAGE))
    nonfinite = [n for (n, _, _), g in zip(specs, grads)
                 if not np.all(np.isfinite(g))]
    self.assertEqual(bool(finite), not nonfinite, nonfinite)
    if mode == "eager":
      self.assertNotEqual(nonfinite, [])  # No graph rewrite there.
    with np.errstate(all="ignore"):
      want = init if nonfinite else [
          x - dtype(0.5) * g for x, g, (_, _, dtype) in zip(init, grads,
                                                              specs)]
    for (name, _, _), got, w in zip(specs, values, want):
      np.testing.assert_array_equal(got, w, err_msg=name)
    # TF 1.15's optimizer, built and fetched the same way (Grappler
    # rewrites its graph alike), judges the values themselves.
    _assert_bits(values, run(harness.Library(harness.ORACLE))[2], specs)

  @parameterized.product(mode=("graph", "function"),
                         opt=("momentum", "adam"))
  def test_other_optimizers_skip_and_apply(self, mode, opt):
    # A skipped step leaves the slots and Adam's powers alone too: the
    # next, finite step is exactly the first step on fresh state.
    specs = _specs()
    bad = _coefficients(specs, [("m19", np.nan, 63)])
    good = _coefficients(specs, [])
    make = {
        "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.5, 0.9),
        "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.5),
    }[opt]
    init = _initial(specs)

    def two_steps(first, second, lib=harness.Library(harness.PACKAGE)):  # noqa: B008
      if mode == "graph":
        with tf.Graph().as_default():
          variables = [tf.Variable(x) for x in init]
          coeff = [tf.compat.v1.placeholder(c.dtype, c.shape) for c in good]
          o = lib.LossScaleOptimizer(make(), lib.FixedLossScaleManager(64))
          train = o.minimize(_loss_fn(variables, coeff)(), var_list=variables)
          with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for cs in (first, second):
              sess.run(train, dict(zip(coeff, cs)))
            return sess.run(variables)
      variables = [tf.Variable(x) for x in init]
      coeff = [tf.Variable(c) for c in good]
      o = lib.LossScaleOptimizer(make(), lib.FixedLossScaleManager(64))

      @tf.function
      def step():
        o.minimize(_loss_fn(variables, coeff), var_list=variables)

      for cs in (first, second):
        for c, value in zip(coeff, cs):
          c.assign(value)
        step()
      return [v.numpy() for v in variables]

    after_skip = two_steps(bad, good)
    once = self._one_step_values(mode, make, specs, good)
    for name_spec, got, want in zip(specs, after_skip, once):
      np.testing.assert_array_equal(got, want, err_msg=name_spec[0])
    # The package against itself above; TF 1.15's two steps judge both.
    _assert_bits(after_skip,
                 two_steps(bad, good, harness.Library(harness.ORACLE)), specs)

  def _one_step_values(self, mode, make, specs, coeffs):
    got = _judged_train_step(mode, specs, coeffs,
                             lambda lib: lib.FixedLossScaleManager(64), make)
    self.assertEqual(got[1], 1)
    return got[0]


class ThresholdTest(tf.test.TestCase, parameterized.TestCase):
  """Exactly 16384 elements stay exact; 16385 take the total and Switch."""

  @parameterized.product(elements=(_LIMIT, _LIMIT + 1),
                         where=(None, "first", "last", "overflow"))
  def test_graph_step_at_the_threshold(self, elements, where):
    shapes = [(128,)] * (elements // 128) + (
        [(elements % 128,)] if elements % 128 else [])
    values = [np.ones(s, np.float32) for s in shapes]
    if where == "first":
      values[0][0] = np.nan
    elif where == "last":
      values[-1][-1] = -np.inf
    elif where == "overflow":
      values[3][7] = values[4][7] = 2e38
    with tf.Graph().as_default() as g:
      variables = [tf.Variable(np.zeros(s, np.float32)) for s in shapes]
      grads = [tf.compat.v1.placeholder(tf.float32, s) for s in shapes]
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          mp.FixedLossScaleManager(1))
      train = opt.apply_gradients(list(zip(grads, variables)))
      switches = [op for op in g.get_operations()
                  if op.type == "Switch" and "all_finite_exact" in op.name]
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train, dict(zip(grads, values)))
        got = sess.run(variables)
    self.assertLen(switches, 1 if elements > _LIMIT else 0)
    finite = where in (None, "overflow")
    for v, x in zip(got, values):
      np.testing.assert_array_equal(v, -x if finite else np.zeros_like(x))


def _session_configs():
  from tensorflow.core.protobuf import rewriter_config_pb2  # pylint: disable=g-import-not-at-top
  jit = tf.compat.v1.ConfigProto()
  jit.graph_options.optimizer_options.global_jit_level = (
      tf.compat.v1.OptimizerOptions.ON_1)
  plain = tf.compat.v1.ConfigProto()
  plain.graph_options.rewrite_options.disable_meta_optimizer = True
  plain.graph_options.optimizer_options.opt_level = (
      tf.compat.v1.OptimizerOptions.L0)
  aggressive = tf.compat.v1.ConfigProto()
  rewrites = aggressive.graph_options.rewrite_options
  rewrites.constant_folding = rewriter_config_pb2.RewriterConfig.AGGRESSIVE
  rewrites.arithmetic_optimization = (
      rewriter_config_pb2.RewriterConfig.AGGRESSIVE)
  return {"default": None, "jit": jit, "no_rewrites": plain,
          "aggressive": aggressive}


class SessionStepsTest(tf.test.TestCase, parameterized.TestCase):
  """Several steps in one Session, each decided on its own values."""

  _SHAPES = [(256,)] * 50 + [(16, 16)] * 20 + [()] * 4 + [(0,)]

  def _values(self, case):
    vals = [np.full(s, 0.5, np.float32) for s in self._SHAPES]
    if case == "nan":
      vals[30][7] = np.nan
    elif case == "posneg":
      vals[51].reshape(-1)[3] = np.inf
      vals[52].reshape(-1)[3] = -np.inf
    elif case == "overflow":
      vals[1][0] = vals[2][0] = 3e38
    elif case == "scalar":
      vals[71] = np.float32(-np.inf)
    return vals

  @parameterized.product(config=("default", "jit", "no_rewrites",
                                 "aggressive"),
                         grads=("placeholder", "numpy"))
  def test_steps(self, config, grads):
    cases = ("nan", "clean", "overflow", "posneg", "scalar", "clean")
    want = [np.zeros(s, np.float32) for s in self._SHAPES]
    want_step = 0
    with tf.Graph().as_default():
      variables = [tf.Variable(np.zeros(s, np.float32))
                   for s in self._SHAPES]
      step = tf.compat.v1.train.get_or_create_global_step()
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          mp.FixedLossScaleManager(1))
      if grads == "placeholder":
        holders = [tf.compat.v1.placeholder(tf.float32, s)
                   for s in self._SHAPES]
        train = opt.apply_gradients(list(zip(holders, variables)),
                                    global_step=step)
        trains = {case: train for case in cases}
      else:
        # NumPy gradients become constants: a graph TF may fold.
        holders = None
        trains = {case: opt.apply_gradients(
            list(zip(self._values(case), variables)), global_step=step)
                  for case in set(cases)}
      with tf.compat.v1.Session(config=_session_configs()[config]) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for case in cases:
          vals = self._values(case)
          feeds = dict(zip(holders, vals)) if holders else {}
          sess.run(trains[case], feeds)
          if all(np.all(np.isfinite(v)) for v in vals):
            want = [w - v for w, v in zip(want, vals)]
            want_step += 1
          got, got_step = sess.run((variables, step))
          self.assertEqual(got_step, want_step, case)
          for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=case)


class FeedTest(tf.test.TestCase, parameterized.TestCase):
  """A small unscaled gradient fed through Session.run decides the step."""

  @parameterized.product(value=("nan", "inf", "finite", "huge"),
                         with_large=(False, True))
  def test_fed_gradient(self, value, with_large):
    specs = _specs(with_large)
    coeffs = _coefficients(specs, [])
    init = _initial(specs)
    target = _index(specs, "m12")
    with tf.Graph().as_default():
      variables = [tf.Variable(x) for x in init]
      step = tf.compat.v1.train.get_or_create_global_step()
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          mp.ExponentialUpdateLossScaleManager(8.0, 1000, 1, 2, 0.5))
      gv = opt.compute_gradients(_loss_fn(variables, coeffs)(),
                                 var_list=variables)
      train = opt.apply_gradients(gv, global_step=step)
      fed = np.full((16, 16), 2.0, np.float32)
      other = _index(specs, "m13")
      feeds = {gv[target][0]: fed}
      if value == "nan":
        fed[3, 3] = np.nan
      elif value == "inf":
        fed[15, 15] = np.inf
      elif value == "huge":
        # Finite, but the sum of its shape group overflows.
        fed[0, 0] = 3e38
        fed2 = np.full((16, 16), 1.0, np.float32)
        fed2[0, 0] = 3e38
        feeds[gv[other][0]] = fed2
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train, feeds)
        got, got_step, scale = sess.run(
            (variables, step, opt._loss_scale_manager.get_loss_scale()))  # pylint: disable=protected-access
    skip = value in ("nan", "inf")
    self.assertEqual((got_step, scale), (0, 4.0) if skip else (1, 8.0))
    for i, (g, x) in enumerate(zip(got, init)):
      if skip:
        want = x
      elif i == target:
        want = x - fed
      elif value == "huge" and i == other:
        want = x - feeds[gv[other][0]]
      else:
        want = x - coeffs[i]
      np.testing.assert_array_equal(g, want, err_msg=specs[i][0])


def _many_mixed(dtype_case):
  """Small gradients of many dtypes; (values, expected answer)."""
  rng = np.random.RandomState(7)
  values = []
  for _ in range(120):
    values.append(rng.uniform(-2, 2, (32,)).astype(np.float32))
  for _ in range(40):
    values.append(rng.uniform(-2, 2, (5, 3)).astype(np.float64))
  for _ in range(10):
    values.append(rng.uniform(-2, 2, (4,)).astype(np.float16))
  for _ in range(10):
    values.append((rng.uniform(-2, 2, (6,)) +
                   1j * rng.uniform(-2, 2, (6,))).astype(np.complex64))
  for _ in range(10):
    values.append(np.arange(8, dtype=np.int32))
  values.append(np.zeros((0, 4), np.float32))
  values.append(np.float32(1.5))
  values.append(np.float64(-1.5))
  # Enough float32 to pass the threshold alone.
  for _ in range(40):
    values.append(rng.uniform(-2, 2, (400,)).astype(np.float32))
  expected = True
  if dtype_case == "f32_nan":
    values[60][31] = np.nan
    expected = False
  elif dtype_case == "f64_inf":
    values[125][4, 2] = np.inf
    expected = False
  elif dtype_case == "f16_inf":
    values[165][0] = np.inf
    expected = False
  elif dtype_case == "complex_imag_nan":
    values[172][5] = 1 + 1j * np.nan
    expected = False
  elif dtype_case == "complex_real_neginf":
    values[179][0] = complex(-np.inf, 0)
    expected = False
  elif dtype_case == "f64_past_f32":
    values[130][0, 0] = 1e300
    values[131][0, 0] = 1e300
  elif dtype_case == "f32_scalar_inf":
    values[191] = np.float32(np.inf)
    expected = False
  elif dtype_case == "f32_overflow":
    values[200][1] = 3e38
    values[201][1] = 3e38
    values[202][1] = 3e38
  return values, expected


class DirectAllFiniteTest(tf.test.TestCase, parameterized.TestCase):
  """`all_finite` of many small gradients of mixed dtypes."""

  @parameterized.product(
      mode=("graph", "function", "eager"),
      case=("clean", "f32_nan", "f64_inf", "f16_inf", "complex_imag_nan",
            "complex_real_neginf", "f64_past_f32", "f32_scalar_inf",
            "f32_overflow"),
      bfloat16=(False, True))
  def test_mixed_dtypes(self, mode, case, bfloat16):
    values, expected = _many_mixed(case)

    def grads_of(variables):
      # Variables' reads times one: nothing TF can fold away.
      grads = [v.read_value() * tf.ones([], v.dtype)
               if v.dtype != tf.int32 else v.read_value() for v in variables]
      if bfloat16:
        grads.append(tf.cast(grads[0], tf.bfloat16))
      return skip_decision.all_finite(grads)

    if mode == "graph":
      with tf.Graph().as_default():
        flag = grads_of([tf.Variable(v) for v in values])
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          got = sess.run(flag)
    else:
      variables = [tf.Variable(v) for v in values]
      if mode == "function":
        got = tf.function(lambda: grads_of(variables))().numpy()
      else:
        got = grads_of(variables).numpy()
    self.assertEqual(bool(got), expected)


class ScaledPathTest(tf.test.TestCase, parameterized.TestCase):
  """The sums read the scaled gradients: |inverse| > 1 must not fool them."""

  @parameterized.product(mode=("function", "eager"),
                         with_large=(False, True),
                         case=("overflow_when_unscaled", "finite"))
  def test_user_scale_below_one(self, mode, with_large, case):
    # Scale 2**-10 and a loss times 2**10: the scaled gradient is c (finite),
    # the true one c * 2**10, which overflows for c = 3e38.
    specs = _specs(with_large)
    bad = [("a30", 3e38, 7)] if case != "finite" else []
    coeffs = _coefficients(specs, bad)
    scale = 2.0**-10
    got = _judged_train_step(mode, specs, coeffs,
                             lambda lib: _UserScale(scale), _sgd(),
                      extra=2.0**10)
    values, step, _ = got
    skip, want = _expected(specs, coeffs, scale, 0.5, extra=2.0**10)
    self.assertEqual(skip, case != "finite")
    self.assertEqual(step, 0 if skip else 1)
    for (name, _, _), g, w in zip(specs, values,
                                  _initial(specs) if skip else want):
      np.testing.assert_array_equal(g, w, err_msg=name)

  @parameterized.product(inverse=(2.0**10, 1.0, 2.0**-3),
                         where=("small32", "small64", "scalar", "none"))
  def test_unscale_and_check_direct(self, inverse, where):
    # `_unscale_and_check` in a function, beside a large gradient (so the
    # total is built): grads finite, grads * inverse maybe not.
    rng = np.random.RandomState(3)
    scaled = [rng.uniform(-1, 1, (64,)).astype(np.float32) for _ in range(50)]
    scaled += [rng.uniform(-1, 1, (9,)).astype(np.float64) for _ in range(5)]
    scaled += [np.float32(0.5)]
    scaled += [np.ones(_LARGE, np.float32)]
    big = {"small32": (0, 3), "small64": (52, 1), "scalar": (55, None)}
    if where in big:
      i, element = big[where]
      if element is None:
        scaled[i] = np.float32(3e38)
      else:
        scaled[i][element] = 3e38 if scaled[i].dtype == np.float32 else 1e308
    expected = True
    with np.errstate(all="ignore"):
      for s in scaled:
        u = np.asarray(s) * np.asarray(np.float32(inverse), s.dtype)
        expected = expected and bool(np.all(np.isfinite(u)))

    @tf.function
    def f():
      grads = [tf.constant(s) for s in scaled]
      result, flag = unscale._unscale_and_check(  # pylint: disable=protected-access
          grads, tf.constant(1.0 / inverse, tf.float32))
      return flag, skip_decision.all_finite(result)

    flag, again = f()
    self.assertEqual(bool(flag), expected)
    self.assertEqual(bool(again), expected)


class ControlFlowTest(tf.test.TestCase, parameterized.TestCase):
  """Inside a cond or while body (control flow v2) and a strategy."""

  def _grads(self, bad):
    specs = _specs()
    coeffs = _coefficients(specs, [("r49", bad, 3)] if bad is not None
                           else [])
    return coeffs

  @parameterized.product(kind=("cond", "while"),
                         bad=(None, np.nan, np.inf, 3e38))
  def test_all_finite_in_control_flow_graph(self, kind, bad):
    coeffs = self._grads(bad)
    expected = bad is None or bool(np.isfinite(bad))
    with tf.Graph().as_default():
      xs = [tf.Variable(c) for c in coeffs]
      if kind == "cond":
        flag = tf.compat.v1.cond(
            tf.constant(True),
            lambda: skip_decision.all_finite([x.read_value() for x in xs]),
            lambda: tf.constant(False))
      else:
        def body(i, acc):
          f = skip_decision.all_finite(
              [x.read_value() * tf.cast(i + 1, x.dtype) for x in xs])
          return i + 1, tf.logical_and(acc, f)
        _, flag = tf.compat.v1.while_loop(
            lambda i, acc: i < 1, body, (tf.constant(0), tf.constant(True)))
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        self.assertEqual(bool(sess.run(flag)), expected)

  @parameterized.product(mode=("function", "graph"), bad=(None, np.nan))
  def test_mirrored_one_replica(self, mode, bad):
    specs = _specs()
    coeffs = _coefficients(specs, [("a33", bad, 1)] if bad is not None
                           else [])
    init = _initial(specs)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])

    def build():
      with strategy.scope():
        variables = [tf.Variable(x) for x in init]
        opt = mp.LossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(0.5),
            mp.ExponentialUpdateLossScaleManager(16.0, 1000))
      return variables, opt, _loss_fn(variables, coeffs)

    if mode == "graph":
      with tf.Graph().as_default():
        variables, opt, loss = build()
        train = strategy.extended.call_for_each_replica(
            lambda: opt.minimize(loss(), var_list=variables))
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          sess.run(train)
          got = sess.run(variables)
    else:
      variables, opt, loss = build()

      @tf.function
      def step():
        strategy.run(lambda: opt.minimize(loss, var_list=variables))

      step()
      got = [v.numpy() for v in variables]
    skip, want = _expected(specs, coeffs, 16.0, 0.5)
    self.assertEqual(skip, bad is not None)
    for (name, _, _), g, w in zip(specs, got, init if skip else want):
      np.testing.assert_array_equal(g, w, err_msg=name)


_CHILD = textwrap.dedent(r"""
    import json, sys
    import numpy as np
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    import contrib_mixed_precision as mp
    from contrib_mixed_precision import skip_decision

    SHAPES = [(256,)] * 50 + [(16, 16)] * 20 + [(2, 3)] * 5 + [(3, 2)] * 5 \
        + [()] * 5 + [(0,)] * 2
    def coeffs(case):
      cs = [np.full(s, 0.5, np.float32) for s in SHAPES]
      if case == "nan":
        cs[49][-1] = np.nan
      elif case == "posneg":
        cs[52].reshape(-1)[5] = np.inf
        cs[53].reshape(-1)[5] = -np.inf
      elif case == "scalar_inf":
        cs[80] = np.float32(np.inf)
      elif case == "overflow":
        cs[10][0] = cs[11][0] = 3e38
      return cs

    def run(case, where, opt_name):
      cs = coeffs(case)
      init = [np.ones(s, np.float32) for s in SHAPES]
      with tf.Graph().as_default():
        vs = [tf.compat.v1.Variable(x) for x in init]
        step = tf.compat.v1.train.get_or_create_global_step()
        make = {"sgd": lambda: tf.compat.v1.train.GradientDescentOptimizer(
                    0.5),
                "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(
                    0.5, 0.0)}[opt_name]
        opt = mp.LossScaleOptimizer(make(), mp.FixedLossScaleManager(1))
        loss = tf.add_n([tf.reduce_sum(v * c) for v, c in zip(vs, cs)])
        if where == "plain":
          train = opt.minimize(loss, var_list=vs, global_step=step)
        elif where == "cond":
          train = tf.compat.v1.cond(
              tf.constant(True),
              lambda: tf.group(opt.minimize(loss, var_list=vs,
                                            global_step=step)),
              tf.no_op)
        elif where == "while":
          def body(i):
            with tf.control_dependencies(
                [opt.minimize(loss, var_list=vs, global_step=step)]):
              return i + 1
          train = tf.compat.v1.while_loop(lambda i: i < 1, body,
                                          [tf.constant(0)])
        elif where == "feed":
          gv = opt.compute_gradients(loss, var_list=vs)
          train = opt.apply_gradients(gv, global_step=step)
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          feeds = {}
          if where == "feed":
            fed = np.full((16, 16), 0.5, np.float32)
            if case == "clean":
              fed[1, 1] = np.nan
            feeds = {gv[55][0]: fed}
          sess.run(train, feeds)
          vals, st = sess.run((vs, step))
      finite_cs = all(np.all(np.isfinite(c)) for c in cs)
      if where == "feed":
        finite_cs = finite_cs and case != "clean"
      ok = st == (1 if finite_cs else 0)
      for v, x, c in zip(vals, init, cs):
        want = x - np.float32(0.5) * c if finite_cs else x
        ok = ok and np.array_equal(v, want)
      return bool(ok), int(st)

    out = {}
    for case in ("clean", "nan", "posneg", "scalar_inf", "overflow"):
      for where in ("plain", "cond", "while", "feed"):
        for opt_name in ("sgd", "momentum"):
          if where == "feed" and case not in ("clean", "nan"):
            continue
          if where == "while" and opt_name != "sgd":
            continue
          out["%s/%s/%s" % (case, where, opt_name)] = run(case, where,
                                                          opt_name)
    print("RESULT " + json.dumps(out))
""")


class DisableV2BehaviorTest(tf.test.TestCase):
  """Ref variables and control flow v1, in a child process."""

  def test_tf1_graphs(self):
    proc = forkserver.run_python(
        ["-c", _CHILD, "1cpu"], env=program_util.child_env(),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
        check=False)
    output = proc.stdout.decode("utf-8", "replace")
    self.assertEqual(proc.returncode, 0, output[-6000:])
    line = [l for l in output.splitlines() if l.startswith("RESULT ")][-1]
    results = json.loads(line[len("RESULT "):])
    wrong = {k: v for k, v in results.items() if not v[0]}
    self.assertEqual(wrong, {})
    self.assertLen(results, 29)


if __name__ == "__main__":
  tf.test.main()
