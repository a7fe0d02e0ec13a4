# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The unscale that also checks: the same skip, wherever the flag comes from.

`compute_gradients` may decide, in the call that unscales, whether what it
returns is finite (one compiled call in eager mode; one XLA pass with
`xla_unscale=True`, in every mode), and `apply_gradients` then uses that
flag for the tensors it gets back unchanged. TF 1.15 checked what
`apply_gradients` is handed, so every test here trains for real, through
SGD, in graph mode, in a `tf.function` and eagerly, with and without XLA,
and compares the variables and the loss-scale trajectory with expectations
computed here in NumPy (`policy_reference`), and with TF 1.15's optimizer
built beside it on the same model (`tf115_harness`), to the bit:

* steps whose gradients are finite, NaN or Inf in each dtype (float16,
  bfloat16, float32, float64, and an embedding's `IndexedSlices`), or
  overflow only once scaled (complex gradients, which TF's v1 optimizers
  refuse in a graph, are in `eager_compiled_test.py`);
* gradients replaced between the two calls, as clipping or an all-reduce
  replaces them: a NaN the caller zeroed out is applied, and a finite
  gradient the caller poisoned is skipped;
* a subset of the gradients handed back (a NaN one left out);
* and no table of flags that outlives its tensors or its graph.
"""

import gc
import weakref

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
from contrib_mixed_precision import known_flags
from contrib_mixed_precision import skip_decision

import policy_reference
import tf115_harness as harness

MODES = ("graph", "function", "eager")
SCALE = 2.0**8
INCR_EVERY = 3
# (name, dtype, shape, c): each gradient is the constant c * p_name.
_KINDS = (
    ("f16", "float16", (3,), 0.75),
    ("bf16", "bfloat16", (2, 2), 1.25),
    ("f32", "float32", (4, 3), 0.5),
    ("f64", "float64", (3,), 1.5),
    ("table", "float32", None, 2.0),  # An embedding: IndexedSlices.
) + tuple(("extra_{}".format(j), "float32", (2,), 2.25 + 0.25 * j)
          for j in range(4))  # Ten gradients: eager steps compile.
_IDS = [1, 3, 1, 4]
_ROWS = 5


def _initial(dtype, shape):
  if shape is None:
    return np.ones((_ROWS, 2), np.float32)
  if dtype.startswith("complex"):
    return np.full(shape, 1 + 2j, dtype)
  return np.full(shape, 1.0, tf.as_dtype(dtype).as_numpy_dtype)


def _dense_update(name, dtype, shape, c, p):
  """The unscaled gradient of `kind`, densified, in float64 or complex128."""
  if shape is None:
    dense = np.zeros((_ROWS, 2))
    np.add.at(dense, np.asarray(_IDS), c * p)
    return dense
  if dtype.startswith("complex"):
    return np.full(shape, 1j * c * p)  # The loss reads the imaginary part.
  return np.full(shape, c * p)


class _Run(object):
  """One side's model and optimizer (`tf115_harness.sides` steps both).

  `poison` maps each kind's name to the multiplier both sides read.
  """

  def __init__(self, lib, poison, xla, between=None, keep=None):
    self.between = between
    self.keep = keep
    self.variables = {}
    self.poison = poison
    for name, dtype, shape, _ in _KINDS:
      self.variables[name] = tf.Variable(_initial(dtype, shape), name=name)
    self.manager = lib.ExponentialUpdateLossScaleManager(
        SCALE, INCR_EVERY, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    self.opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0), self.manager,
        xla_unscale=xla)

  def _loss(self):
    total = tf.constant(0.0, tf.float32)
    for name, dtype, shape, c in _KINDS:
      var = self.variables[name]
      p = tf.cast(self.poison[name], tf.float32) * c
      if shape is None:
        value = tf.reduce_sum(tf.gather(var, _IDS)) * p
      elif dtype.startswith("complex"):
        value = tf.reduce_sum(tf.math.imag(var)) * p
      else:
        value = tf.cast(tf.reduce_sum(var), tf.float32) * p
      total += value
    return total

  def step(self):
    grads_and_vars = self.opt.compute_gradients(
        self._loss, var_list=list(self.variables.values()))
    if self.between is not None:
      grads_and_vars = [(self.between(g, v), v) for g, v in grads_and_vars]
    if self.keep is not None:
      grads_and_vars = [(g, v) for g, v in grads_and_vars
                        if self.keep(v)]
    return self.opt.apply_gradients(grads_and_vars)

  def state(self):
    return dict(self.variables, scale=self.manager.get_loss_scale())


def _train(test, mode, xla, poisons, **run_kwargs):
  """Steps a fresh model through `poisons`; returns its values per step.

  TF 1.15's optimizer trains the same model beside it (it checked what
  `apply_gradients` was handed, as the package must), and every value
  after every step must be its value, to the bit.
  """

  def build(lib, inputs):
    run = _Run(lib, {name: inputs["p_" + name] for name, _, _, _ in _KINDS},
               xla, **run_kwargs)
    return harness.Built(run.step, run.state)

  states = test.judged(
      build, mode, msg="{} mode, xla_unscale={}".format(mode, xla),
      inputs={"p_" + name: np.float64(1.0) for name, _, _, _ in _KINDS},
      schedule=[{"p_" + k: v for k, v in poison.items()}
                for poison in poisons])
  return states


def _expected(poisons, flags, applied_names=None):
  """NumPy: each variable after each step, and the scale."""
  values = {name: _initial(dtype, shape).astype(
      np.complex128 if dtype.startswith("complex") else np.float64)
            for name, dtype, shape, _ in _KINDS}
  scales = [s for s, _, _ in policy_reference.exponential_policy(
      flags, SCALE, INCR_EVERY, decr_every_n_nan_or_inf=1, decr_ratio=0.5)]
  out = [dict(values, scale=np.float32(SCALE))]
  for poison, finite, scale in zip(poisons, flags, scales):
    if finite:
      for name, dtype, shape, c in _KINDS:
        if applied_names is None or name in applied_names:
          values[name] = values[name] - _dense_update(
              name, dtype, shape, c, poison.get(name, 1.0))
    out.append(dict(values, scale=np.float32(scale)))
  return out


# Each step's poisons: p multiplies that gradient. Every gradient is exact
# in its dtype, so SGD at rate 1 gives exact expectations.
_POISONS = (
    {},
    {"f16": np.nan},
    {"bf16": np.inf},
    {},
    {"f32": -np.inf},
    {"f64": np.nan},
    {"extra_0": np.inf},
    {"table": np.nan},
    # Finite, but 0.75 * 40000 * the scale (4 by then) overflows float16
    # once scaled.
    {"f16": 40000.0},
    {},
    {},
    {},
)


def _flags(poisons):
  """Whether each step's gradients are finite, with the scale of its step."""
  flags = []
  for poison in poisons:
    scale = SCALE
    if flags:
      scale = policy_reference.exponential_policy(
          flags, SCALE, INCR_EVERY, decr_every_n_nan_or_inf=1,
          decr_ratio=0.5)[-1][0]
    finite = all(np.isfinite(list(poison.values())))
    if finite and "f16" in poison:
      # The float16 gradient is cast from c * p * scale.
      finite = 0.75 * poison["f16"] * scale <= 65504
    flags.append(finite)
  return flags


class _ConstantScale(mp.LossScaleManager):
  """A user's manager whose scale may be below 1, as TF 1.15's never is."""

  def __init__(self, scale):
    self._scale = scale

  def get_loss_scale(self):
    return tf.constant(self._scale, tf.float32)

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return None if tf.executing_eagerly() else tf.no_op()


class ScaleBelowOneTest(harness.OracleTestCase):
  """Unscaling multiplies by 2**100 here: a finite scaled gradient overflows.

  In a compiled eager step, the check's sums of squares read the scaled
  gradients (`skip_decision.all_finite_scaled`); that proves the unscaled
  ones finite only for a scale of at least 1.
  """

  @parameterized.product(mode=("function", "eager", "graph"),
                         layers=(2, skip_decision.EAGER_COMPILE_MIN_GRADIENTS),
                         overflow=(False, True))
  def test_what_the_unscale_overflows_is_skipped(self, mode, layers,
                                                 overflow):
    # The table's row 0, column 0 gets d(2**-100 * loss)/dw =
    # (2**-100 * a) * 1e38: 3.2e8 for a = 4, whose square is finite, and
    # unscaled (times 2**100) 4e38, past float32's range. With a = 1 it is
    # 1e38 and finite. The scalars beside it (small gradients, in the same
    # total) get 2**-100, unscaled 1.
    # TF 1.15's optimizer, the judge, multiplied by 2**100 as well and
    # checked what it applied.
    a = np.zeros([2, 4], np.float32)
    a[0, 0] = 4.0 if overflow else 1.0
    scale = 2.0**-100

    def build(lib, inputs):
      del inputs
      table = tf.compat.v1.Variable(tf.ones([10, 4]), name="table")
      ws = [tf.compat.v1.Variable(1.0, name="w{}".format(i))
            for i in range(layers)]
      opt = lib.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1e-30),
          _ConstantScale(scale))

      def loss():
        rows = tf.gather(table, tf.constant([0, 1]))
        return tf.reduce_sum(rows * 1e38 * a) + tf.add_n(ws)

      def step():
        if mode == "graph":
          return opt.minimize(loss())
        return opt.minimize(loss, var_list=[table] + ws)

      return harness.Built(step, lambda: {"table": table, "ws": ws})

    (state,) = self.judged(build, mode)
    values = [state["table"]] + list(state["ws"])
    table = np.ones([10, 4], np.float32)
    if not overflow:
      table[0, 0] = np.float32(1.0) - np.float32(1e-30) * np.float32(1e38)
    self.assertAllEqual(values[0], table)
    self.assertAllEqual(values[1:], np.ones([layers], np.float32))


class WrappedFunctionFeedTest(tf.test.TestCase, parameterized.TestCase):
  """`tf.compat.v1.wrap_function(...).prune` may feed any tensor, as a
  Session may: a flag computed in `compute_gradients` would not see a
  gradient fed in its place, so the apply must check what it gets (TF
  1.15's optimizer, fed the same way, checked what it got)."""

  @parameterized.parameters(False, True)
  def test_a_fed_gradient_is_checked(self, xla):
    values = {}
    for lib in map(harness.Library, harness.SIDES):
      built = {}

      def step(lib=lib, built=built):
        w = tf.compat.v1.get_variable(
            "w", shape=[3], initializer=tf.compat.v1.ones_initializer(),
            use_resource=True)
        # A large gradient beside the small one, so that the check takes
        # its fast path (one total).
        big = tf.compat.v1.get_variable(
            "big", shape=[200, 100],
            initializer=tf.compat.v1.zeros_initializer(), use_resource=True)
        loss = tf.reduce_sum(w * tf.constant([1.0, 2.0, 3.0])) + (
            tf.reduce_sum(big))
        opt = lib.LossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(1.0),
            lib.FixedLossScaleManager(8.0), xla_unscale=xla)
        grads_and_vars = opt.compute_gradients(loss, var_list=[w, big])
        built["train"] = opt.apply_gradients(grads_and_vars)
        built["grad"] = grads_and_vars[0][0]

      wrapped = tf.compat.v1.wrap_function(step, [])
      fed = wrapped.prune(feeds=[built["grad"]], fetches=[built["train"]])
      w = [v for v in wrapped.variables if v.name.startswith("w")][0]
      values[lib.which] = []
      for grad in ([np.nan, 1.0, 1.0], [1.0, 1.0, 1.0]):
        fed(tf.constant(grad))
        values[lib.which].append(w.numpy())
    skipped, applied = values[harness.PACKAGE]
    self.assertAllEqual(skipped, [1.0, 1.0, 1.0])
    self.assertAllEqual(applied, [0.0, 0.0, 0.0])
    for package, oracle in zip(values[harness.PACKAGE],
                               values[harness.ORACLE]):
      self.assertEqual(oracle.tobytes(), package.tobytes())


class FusedUnscaleTest(harness.OracleTestCase):

  def _assert_history(self, history, expected):
    """`history` after each step; `expected` from the initial values on."""
    self.assertLen(history, len(expected) - 1)
    for step, (got, want) in enumerate(zip(history, expected[1:]), 1):
      for name, value in want.items():
        self.assertAllEqual(
            got[name].astype(value.dtype), value,
            msg="step {}, {}".format(step, name))

  @parameterized.product(mode=MODES, xla=(False, True))
  def test_training_matches_numpy(self, mode, xla):
    flags = _flags(_POISONS)
    # The overflow only once scaled is a skip.
    self.assertEqual(flags, [True, False, False, True, False, False, False,
                             False, False, True, True, True])
    history = _train(self, mode, xla, _POISONS)
    self._assert_history(history, _expected(_POISONS, flags))

  @parameterized.product(mode=MODES, xla=(False, True))
  def test_nan_zeroed_by_the_caller_is_applied(self, mode, xla):
    # TF 1.15 checked what apply_gradients gets: a NaN the caller replaced
    # (here with zeros, as `tf.where(is_finite)` guards do) is no NaN.

    def zero_f16(grad, var):
      if var.dtype.base_dtype != tf.float16:
        return grad
      return tf.where(tf.math.is_finite(grad), grad, tf.zeros_like(grad))

    poisons = ({"f16": np.nan}, {"f16": np.inf}, {})
    history = _train(self, mode, xla, poisons, between=zero_f16)
    # Every step is applied; the f16 variable gets zeros for its NaN steps.
    expected = _expected([{}, {}, {}], [True] * 3)
    for step in (1, 2):
      expected[step]["f16"] = expected[0]["f16"]
    expected[3]["f16"] = expected[0]["f16"] - 0.75
    self._assert_history(history, expected)

  @parameterized.product(mode=MODES, xla=(False, True))
  def test_gradient_poisoned_by_the_caller_is_skipped(self, mode, xla):

    def poison_f32(grad, var):
      if var.name.startswith("f32"):
        return grad * tf.constant(np.inf, tf.float32)
      return grad

    poisons = ({}, {})
    history = _train(self, mode, xla, poisons, between=poison_f32)
    self._assert_history(history, _expected(poisons, [False, False]))

  @parameterized.product(mode=MODES, xla=(False, True))
  def test_a_left_out_nan_gradient_does_not_skip(self, mode, xla):
    # The NaN gradient is computed but not handed to apply_gradients.
    keep = lambda var: not var.name.startswith("f32")
    poisons = ({"f32": np.nan}, {}, {"f64": np.inf})
    history = _train(self, mode, xla, poisons, keep=keep)
    names = {k[0] for k in _KINDS} - {"f32"}
    self._assert_history(
        history, _expected(poisons, [True, True, False], applied_names=names))

  def _xla_model(self):
    w = tf.Variable(np.ones((4, 4), np.float32))
    b = tf.Variable(np.ones((4,), np.float16))
    opt = mp.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0),
        mp.FixedLossScaleManager(SCALE), xla_unscale=True)
    loss = lambda: tf.reduce_sum(w) + tf.cast(tf.reduce_sum(b), tf.float32)
    return opt, loss

  def test_a_function_leaves_the_multiplies_to_grappler(self):
    # In a `tf.function` Grappler regroups TF 1.15's multiply with the
    # backprop's chain: an XLA call there kept them apart, one bit off TF
    # 1.15 (tests/unscale_oracle_test.py). So no XLA call is built there,
    # and each gradient is TF 1.15's multiply.
    opt, loss = self._xla_model()
    graphs = []

    @tf.function
    def step():
      grads = opt.compute_gradients(loss)
      graphs.append((tf.compat.v1.get_default_graph(), grads))
      opt.apply_gradients(grads)

    step.get_concrete_function()
    graph, grads = graphs[-1]
    self.assertEmpty(
        [op for op in graph.get_operations()
         if op.type in ("PartitionedCall", "StatefulPartitionedCall")
         and op.get_attr("_XlaMustCompile")])
    for g, v in grads:
      self.assertEqual(g.op.type, "Mul", msg=v.name)

  def test_a_session_graph_checks_what_apply_gets(self):
    # A Session may feed the unscaled gradients a value of its own: there
    # the apply checks what it gets, and no fused check is built for
    # nothing.
    with tf.Graph().as_default() as graph:
      opt, loss = self._xla_model()
      opt.minimize(loss)
      self.assertEmpty(
          [op for op in graph.get_operations()
           if op.type in ("PartitionedCall", "StatefulPartitionedCall")])
      self.assertNotEmpty(
          [op for op in graph.get_operations() if op.type == "IsFinite"])

  def test_xla_unscale_must_be_a_bool(self):
    with self.assertRaisesRegex(TypeError, "xla_unscale.*'False'"):
      mp.LossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(1.0),
                            mp.FixedLossScaleManager(SCALE),
                            xla_unscale="False")

  def test_eager_flags_go_with_their_tensors(self):
    table = known_flags._EAGER_KNOWN_FLAGS  # pylint: disable=protected-access
    before = len(table)
    _train(self, "eager", False, [{}] * 5)
    _train(self, "eager", True, [{}] * 5)
    gc.collect()
    self.assertEqual(len(table), before)

  def test_graph_flags_do_not_keep_the_graph(self):
    graph = tf.Graph()
    with graph.as_default():
      _Run(harness.Library(harness.PACKAGE),
           {name: tf.constant(1.0, tf.float64) for name, _, _, _ in _KINDS},
           True).step()
    ref = weakref.ref(graph)
    del graph
    gc.collect()
    self.assertIsNone(ref())


# Small float32 gradients of one shape (a group), float16 ones of another
# (a group of their own dtype), too few of a third shape to group, and a
# few large ones (16900 elements each): (name, dtype, shape).
_GROUPED = (tuple(("b{}".format(i), "float32", (5,)) for i in range(6)) +
            tuple(("h{}".format(i), "float16", (3,)) for i in range(4)) +
            tuple(("k{}".format(i), "float32", (2, 2)) for i in range(3)) +
            tuple(("big{}".format(i), "float32", (130, 130))
                  for i in range(4)))
# Not a power of two: 1/3 is rounded in float32, so a multiply by it and a
# division by 3 differ in the last bit for many values.
_ODD_SCALE = 3.0


class GroupedUnscaleTest(harness.OracleTestCase):
  """Many small gradients of one dtype and shape: each its own multiply.

  TF 1.15 multiplied each gradient alone, and Grappler folds that multiply
  into the gradient's own chain of constant multiplies; a stack of them
  blocked the fold and changed the numbers (issue 41). What
  `compute_gradients` returns must be each scaled gradient times the
  reciprocal of the scale, cast to its dtype, to the bit, and
  `apply_gradients` must still check what it is given.
  """

  def _model(self):
    rng = np.random.default_rng(7)
    variables = [
        tf.Variable(rng.standard_normal(shape).astype(dtype), name=name)
        for name, dtype, shape in _GROUPED]
    # Variables, not constants: Grappler would fold a constant into the
    # multiplies around it, here and not on the tape's side, or the reverse.
    data = [tf.Variable(rng.standard_normal(shape).astype(dtype),
                        trainable=False)
            for _, dtype, shape in _GROUPED]

    def loss():
      # Products with fixed data: every gradient is inexact, and depends on
      # its own variable.
      return tf.add_n([
          tf.cast(tf.reduce_sum(tf.sin(v) * d), tf.float32)
          for v, d in zip(variables, data)])

    return variables, loss

  def _scaled_and_unscaled(self, mode, lib):
    """Known scaled gradients, and what `_down_scale` makes of them.

    The scaled gradients are variables' values (a constant would be folded
    by Grappler into the multiply), unscaled through the TF 1.15 method
    subclasses override, in `mode`, by `lib`'s optimizer; eagerly, 17
    gradients take the compiled call.
    """
    rng = np.random.default_rng(7)
    values = [rng.standard_normal(shape).astype(dtype)
              for _, dtype, shape in _GROUPED]

    def build():
      sources = [tf.Variable(v, trainable=False) for v in values]
      scale = tf.Variable(_ODD_SCALE, trainable=False)
      opt = lib.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          lib.FixedLossScaleManager(_ODD_SCALE))

      def unscaled():
        grads = [tf.identity(s) for s in sources]
        return [g for g, _ in opt._down_scale(  # pylint: disable=protected-access
            list(zip(grads, sources)), tf.identity(scale))]

      return unscaled

    if mode == "graph":
      with tf.Graph().as_default():
        result = build()()
        with self.session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          return values, sess.run(result)
    unscaled = build()
    if mode == "function":
      unscaled = tf.function(unscaled)
    return values, [t.numpy() for t in unscaled()]

  @parameterized.parameters(*MODES)
  def test_each_gradient_is_its_own_multiply_to_the_bit(self, mode):
    scaled, unscaled = self._scaled_and_unscaled(
        mode, harness.Library(harness.PACKAGE))
    # TF 1.15's `_down_scale`, in the same mode, to the bit.
    _, tf115_unscaled = self._scaled_and_unscaled(
        mode, harness.Library(harness.ORACLE))
    for (name, _, _), want, got in zip(_GROUPED, tf115_unscaled, unscaled):
      self.assertEqual((want.dtype, want.tobytes()), (got.dtype, got.tobytes()),
                       msg=name)
    inverse = np.reciprocal(np.float32(_ODD_SCALE))
    differs_from_division = 0
    for (name, dtype, _), s, u in zip(_GROUPED, scaled, unscaled):
      expected = s * inverse.astype(dtype)
      self.assertEqual(u.dtype, np.dtype(dtype), msg=name)
      # Bit for bit: the same bytes, not merely close.
      self.assertEqual(u.tobytes(), expected.tobytes(), msg=name)
      differs_from_division += int(np.any(
          u != (s / np.array(_ODD_SCALE, dtype)).astype(dtype)))
    # The comparison can tell a multiply by the reciprocal from a division.
    self.assertGreater(differs_from_division, 0)

  def test_a_graph_multiplies_each_gradient_alone(self):
    with tf.Graph().as_default() as graph:
      variables, loss = self._model()
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          _ConstantScale(_ODD_SCALE))
      grads = opt.compute_gradients(loss, variables)
    for g, v in grads:
      self.assertEqual(g.op.type, "Mul", msg=v.name)
    self.assertEmpty([op for op in graph.get_operations()
                      if op.type in ("Pack", "Unpack", "ConcatV2")])

  def test_a_nan_fed_to_one_of_a_group_is_skipped(self):
    # A Session may feed any one gradient a value of its own: the apply
    # checks that value, not what compute_gradients computed. TF 1.15's
    # optimizer, fed the same way, is the judge of both steps.
    states = {}
    for lib in map(harness.Library, harness.SIDES):
      with tf.Graph().as_default(), self.session() as sess:
        variables, loss = self._model()
        manager = lib.ExponentialUpdateLossScaleManager(
            _ODD_SCALE, 1000, decr_every_n_nan_or_inf=1, decr_ratio=0.5)
        opt = lib.LossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)
        grads_and_vars = opt.compute_gradients(loss, variables)
        train_op = opt.apply_gradients(grads_and_vars)
        sess.run(tf.compat.v1.global_variables_initializer())
        before = sess.run(variables)
        poisoned = grads_and_vars[3][0]
        self.assertEqual(poisoned.op.type, "Mul")
        sess.run(train_op, {poisoned: np.array([0, np.nan, 0, 0, 0],
                                               np.float32)})
        states[lib.which] = [sess.run([variables, manager.get_loss_scale()])]
        # The same step unfed is applied.
        sess.run(train_op)
        states[lib.which].append(
            sess.run([variables, manager.get_loss_scale()]))
    (after, scale), (applied, _) = states[harness.PACKAGE]
    for name, b, a in zip(_GROUPED, before, after):
      self.assertAllEqual(a, b, msg=name[0])
    self.assertEqual(scale, _ODD_SCALE / 2)
    self.assertNotAllEqual(applied[3], before[3])
    for step, (oracle, package) in enumerate(zip(states[harness.ORACLE],
                                                 states[harness.PACKAGE])):
      for name, want, got in zip([n for n, _, _ in _GROUPED] + ["scale"],
                                 oracle[0] + [oracle[1]],
                                 package[0] + [package[1]]):
        self.assertEqual(np.asarray(want).tobytes(),
                         np.asarray(got).tobytes(),
                         msg="step {}, {}".format(step, name))



class KeptSparseThroughUserCodeTest(tf.test.TestCase, parameterized.TestCase):
  """A kept-sparse gradient goes through the user's code (issue 52, item 9).

  With `keep_sparse_gradients=True` the unscaled `IndexedSlices` keeps its
  `dense_shape`: user code that clips it by the global norm and makes it
  dense (`tf.convert_to_tensor`) works, and trains as the bare optimizer
  on the unscaled loss with the same code. The scale is a power of two,
  so the unscaled gradients are those of the unscaled loss, to the bit.
  """

  _IDS = ((1, 1, 3), (2, 2), (3,), (1, 1, 1, 4))

  def _build(self, package, ids, graph):
    table = tf.Variable(np.linspace(-1, 1, 40).reshape([10, 4]).astype(
        np.float32), name="table")
    w = tf.Variable([0.5, -1.5, 2.0], name="w")
    inner = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
    opt = (mp.LossScaleOptimizer(inner, mp.FixedLossScaleManager(2**10),
                                 keep_sparse_gradients=True)
           if package else inner)

    def loss():
      rows = tf.nn.embedding_lookup(table, ids)
      return tf.reduce_sum(rows**2) * tf.reduce_sum(w**2)

    def step():
      grads_and_vars = opt.compute_gradients(
          loss() if graph else loss, var_list=[table, w])
      grads, variables = zip(*grads_and_vars)
      if package and not isinstance(grads[0], tf.IndexedSlices):
        raise AssertionError("not kept sparse: {!r}".format(grads[0]))
      clipped, _ = tf.clip_by_global_norm(grads, 0.5)
      # The user's own code makes the clipped table gradient dense.
      dense = [tf.convert_to_tensor(g) for g in clipped]
      return opt.apply_gradients(zip(dense, variables))

    return step, [table, w]

  @parameterized.parameters("graph", "function", "eager")
  def test_clip_by_global_norm_and_make_dense(self, mode):
    if mode == "graph":
      with tf.Graph().as_default():
        ids = tf.compat.v1.placeholder(tf.int32, [None])
        sides = [self._build(package, ids, True)
                 for package in (False, True)]
        ops = [step() for step, _ in sides]
        with tf.compat.v1.Session() as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          for step_ids in self._IDS:
            for op in ops:
              sess.run(op, feed_dict={ids: step_ids})
          values = sess.run([v for _, vs in sides for v in vs])
    else:
      ids = tf.Variable(self._IDS[0], shape=tf.TensorShape([None]),
                        trainable=False)
      sides = [self._build(package, ids, False)
               for package in (False, True)]

      def train():
        for step, _ in sides:
          step()

      if mode == "function":
        train = tf.function(train, autograph=False)
      for step_ids in self._IDS:
        ids.assign(step_ids)
        train()
      values = [v.numpy() for _, vs in sides for v in vs]
    reference, package = values[:2], values[2:]
    for r, p in zip(reference, package):
      self.assertEqual(r.tobytes(), p.tobytes(), "{} != {}".format(p, r))
    self.assertNotAllClose(np.linspace(-1, 1, 40).reshape([10, 4]),
                           package[0])


if __name__ == "__main__":
  tf.test.main()
