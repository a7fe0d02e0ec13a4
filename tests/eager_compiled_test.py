# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Eager steps on both sides of the compile threshold: the same exact skip.

From `skip_decision.EAGER_COMPILE_MIN_GRADIENTS` gradients on, an eager
step unscales and checks its gradients in compiled functions; below it, op
by op. Every test here runs a real eager step (`compute_gradients`, then
`apply_gradients`, through SGD or Adam) with one gradient fewer than the
threshold, exactly the threshold, one more, and twice as many, on one model
that mixes every kind of gradient the check handles: float32 scalars,
float16, bfloat16, float64 and complex64 tensors, a float32 and a float16
embedding (`IndexedSlices`, with duplicate ids), and a variable the loss
does not use (a None gradient).

The loss is linear in every variable, `sum_i c_i * p_i * sum(w_i)`, so each
gradient is the constant `c_i * p_i` (an imaginary one for the complex
variable's imaginary part): the expectations are computed here in NumPy,
and any gradient that lands on the wrong variable, is dropped from the
check, or is unscaled wrongly shows as a wrong number. Poisoning one `p_i`
with NaN or Inf makes exactly that gradient non-finite.

TF 1.15's optimizer (`tf115_harness`) trains the same model beside each
one, eagerly, and every variable, slot, `global_step` and scale it has must
be its value, to the bit. TF 1.15 crashed on a complex gradient (its
`IsFinite` has no complex kernel) and on a None one (tensorflow#31956), so
its model has neither the complex variable nor the unused one, and a step
that only the complex gradient skips is not compared.
"""

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

from contrib_mixed_precision import skip_decision

import tf115_harness as harness

_T = skip_decision.EAGER_COMPILE_MIN_GRADIENTS
# Gradient counts (None excluded) on both sides of the threshold.
COUNTS = (_T - 1, _T, _T + 1, 2 * _T)
SCALE = 2.0**10
# The seven kinds every model has: (name, dtype, shape or table ids, c).
_BASE = (
    ("f32_scalar", "float32", (), 0.5),
    ("f16", "float16", (3,), 0.75),
    ("bf16", "bfloat16", (2, 2), 1.25),
    ("f64", "float64", (3,), 1.5),
    ("c64", "complex64", (2,), 1.75),
    ("f32_table", "float32", [1, 3, 1, 4], 2.0),
    ("f16_table", "float16", [0] * 8 + [2], 1.0),
)
_TABLE_ROWS = 5


def _kinds(n):
  """`n` gradient kinds: the seven above, then float32 scalars and vectors."""
  assert n >= len(_BASE), n
  kinds = list(_BASE)[:n]
  for j in range(n - len(_BASE)):
    shape = () if j % 2 == 0 else (2,)
    kinds.append(("extra_{}".format(j), "float32", shape, 2.25 + 0.25 * j))
  return kinds


def _is_table(kind):
  return isinstance(kind[2], list)


def _initial(kind):
  name, dtype, shape, _ = kind
  if _is_table(kind):
    shape = (_TABLE_ROWS, 2)
  if name == "f16_table":
    return np.zeros(shape, dtype)
  if dtype.startswith("complex"):
    return np.full(shape, 1 + 2j, dtype)
  return np.full(shape, 1.0, tf.as_dtype(dtype).as_numpy_dtype)


def _update(kind, p):
  """The gradient `kind` gets with poison `p`, densified, in float64/128."""
  _, dtype, shape, c = kind
  if _is_table(kind):
    dense = np.zeros((_TABLE_ROWS, 2))
    np.add.at(dense, np.asarray(shape), c * p)
    return dense
  if dtype.startswith("complex"):
    # d/dw of c * real(sum w) + c * p * imag(sum w) is c + i * c * p.
    return np.full(shape, complex(c, c * p))
  return np.full(shape, c * p)


class _Model(object):
  """A model of `n` gradients plus an unused variable at `unused_at`.

  `make_inner()` and `make_manager(lib)` make its inner optimizer and its
  manager. Beside it, `oracle` is the same model trained by TF 1.15's
  optimizer, without the complex variable and the unused one; it reads the
  same poison variables, and each step steps both.
  """

  def __init__(self, n, unused_at, make_inner, make_manager, lib=None,
               poison=None):
    lib = lib or harness.Library(harness.PACKAGE)
    self.kinds = _kinds(n)
    if lib.is_oracle:
      self.kinds = [k for k in self.kinds if not k[1].startswith("complex")]
    self.vars = [tf.Variable(_initial(k), name=k[0]) for k in self.kinds]
    poison = poison or {k[0]: tf.Variable(1.0, trainable=False,
                                          name="p_" + k[0])
                        for k in self.kinds}
    self.poison = [poison[k[0]] for k in self.kinds]
    self.var_list = list(self.vars)
    self.manager = make_manager(lib)
    self.inner = make_inner()
    self.opt = lib.LossScaleOptimizer(self.inner, self.manager)
    self.global_step = tf.Variable(0, dtype=tf.int64, name="global_step")
    self.oracle = None
    if not lib.is_oracle:
      self.unused = tf.Variable([3.0, 4.0], name="unused")
      self.var_list.insert(unused_at, self.unused)
      self.unused_at = unused_at
      self.oracle = _Model(n, None, make_inner, make_manager,
                           harness.Library(harness.ORACLE), poison)

  def loss(self):
    total = tf.constant(0.0)
    for kind, var, p in zip(self.kinds, self.vars, self.poison):
      _, dtype, shape, c = kind
      if _is_table(kind):
        value = tf.gather(var, tf.constant(shape))
      else:
        value = var
      if dtype.startswith("complex"):
        total += c * tf.math.real(tf.reduce_sum(value)) + c * p * tf.math.imag(
            tf.reduce_sum(value))
      else:
        total += c * p * tf.reduce_sum(tf.cast(value, tf.float32))
    return total

  def step(self):
    """One eager step; returns the pairs compute_gradients gave."""
    if self.oracle is not None:
      self.oracle.step()
    grads_and_vars = self.opt.compute_gradients(self.loss,
                                                var_list=self.var_list)
    self.opt.apply_gradients(grads_and_vars, global_step=self.global_step)
    return grads_and_vars

  def apply(self, grads):
    """`apply_gradients` of `grads`, one per variable of `vars`."""
    grads = list(grads)
    if self.oracle is not None:
      names = {k[0] for k in self.oracle.kinds}
      self.oracle.apply([g for g, k in zip(grads, self.kinds)
                         if k[0] in names])
    self.opt.apply_gradients(zip(grads, self.vars),
                             global_step=self.global_step)

  def values(self):
    return [v.numpy() for v in self.vars]

  def state(self):
    """Every variable, slot and inner non-slot variable, and the scale."""
    state = {"global_step": self.global_step.numpy(),
             "scale": self.manager.get_loss_scale().numpy()}
    slots = set()
    for kind, var in zip(self.kinds, self.vars):
      state[kind[0]] = var.numpy()
      for name in self.opt.get_slot_names():
        slot = self.opt.get_slot(var, name)
        slots.add(id(slot))
        state["{}/{}".format(kind[0], name)] = slot.numpy()
    for var in self.inner.variables():
      if id(var) not in slots:
        # By role: the package names Adam's powers under `cond/`, as TF
        # 1.15's graphs did; eagerly TF 1.15's had no scope.
        role = var.name.split(":")[0].split("/")[-1]
        state["non_slot/" + role] = var.numpy()
    if self.oracle is not None:
      state["unused"] = self.unused.numpy()
    return state


def _expected_after(kinds, before, poison):
  """SGD with learning rate 1: each variable minus its own update."""
  out = []
  for kind, value, p in zip(kinds, before, poison):
    with np.errstate(all="ignore"):
      out.append((value.astype(np.complex128 if value.dtype.kind == "c" else
                               np.float64) - _update(kind, p)).astype(
                                   value.dtype))
  return out


def _exponential(lib):
  return lib.ExponentialUpdateLossScaleManager(
      SCALE, incr_every_n_steps=1000, decr_every_n_nan_or_inf=1,
      decr_ratio=0.5)


def _adam():
  return tf.compat.v1.train.AdamOptimizer(0.01)


def _sgd():
  return tf.compat.v1.train.GradientDescentOptimizer(1.0)


def _cases(**extra):
  return [dict(testcase_name="{}_grads".format(n), n=n, **extra)
          for n in COUNTS]


class EagerThresholdTest(harness.OracleTestCase):

  def setUp(self):
    super().setUp()
    self.assertTrue(tf.executing_eagerly())

  def assertMatchesTF115(self, model, where=""):
    """`model`'s state is its `oracle`'s, to the bit, where it has one."""
    package = model.state()
    self.assertSidesMatch(
        harness.Trajectories([model.oracle.state()], [package], [None]),
        package_only=[k for k in package
                      if k.split("/")[0] in ("c64", "unused")],
        msg=where)

  def test_counts_straddle_the_threshold(self):
    # Guards the parameterization if the threshold moves.
    self.assertLess(COUNTS[0], _T)
    self.assertGreaterEqual(COUNTS[1], _T)
    self.assertGreaterEqual(COUNTS[0], len(_BASE))

  @parameterized.named_parameters(_cases())
  def test_finite_steps_apply_each_gradient_to_its_own_variable(self, n):
    for unused_at in (0, n // 2, n):
      model = _Model(n, unused_at, _sgd, _exponential)
      for step in range(1, 3):
        before = model.values()
        pairs = model.step()
        where = "unused at {}, step {}".format(unused_at, step)
        # What compute_gradients returned: each variable's own gradient,
        # unscaled, and None for the unused one, in var_list order.
        self.assertEqual([v.name for _, v in pairs],
                         [v.name for v in model.var_list], msg=where)
        grads = [g for g, _ in pairs]
        self.assertIsNone(grads.pop(unused_at), msg=where)
        for kind, grad in zip(model.kinds, grads):
          if _is_table(kind):
            # Made dense, duplicate rows summed, as TF 1.15 made it.
            self.assertNotIsInstance(grad, tf.IndexedSlices, msg=where)
            self.assertAllEqual(_update(kind, 1.0), grad.numpy(), msg=where)
          else:
            self.assertAllEqual(_update(kind, 1.0), grad.numpy(), msg=where)
        for kind, want, got in zip(model.kinds,
                                   _expected_after(model.kinds, before,
                                                   [1.0] * n),
                                   model.values()):
          self.assertAllEqual(want, got, msg="{} {}".format(where, kind[0]))
        self.assertAllEqual([3.0, 4.0], model.unused.numpy(), msg=where)
        self.assertEqual(step, int(model.global_step.numpy()), msg=where)
      self.assertMatchesTF115(model, where)
      self.assertEqual(SCALE, float(model.manager.get_loss_scale().numpy()))

  @parameterized.named_parameters(_cases())
  def test_one_non_finite_gradient_skips_the_whole_step(self, n):
    # Each gradient in turn (the embeddings' values and the complex
    # variable's imaginary part included), NaN then Inf, with the unused
    # variable's None among them.
    for i, kind in enumerate(_kinds(n)):
      # A fresh model each: the scale halves from SCALE on each skip.
      model = _Model(n, n // 2, _sgd, _exponential)
      before = model.values()
      scale = SCALE
      for poison in (np.nan, np.inf):
        where = "{} = {}".format(kind[0], poison)
        model.poison[i].assign(poison)
        model.step()
        model.poison[i].assign(1.0)
        scale /= 2
        for want, got in zip(before, model.values()):
          self.assertAllEqual(want, got, msg=where)
        self.assertEqual(0, int(model.global_step.numpy()), msg=where)
        self.assertEqual(scale,
                         float(model.manager.get_loss_scale().numpy()),
                         msg=where)
      if kind[0] != "c64":  # TF 1.15's model has no complex variable.
        self.assertMatchesTF115(model, kind[0])
    # And the next finite step applies, exactly.
    model.step()
    for want, got in zip(_expected_after(model.kinds, before, [1.0] * n),
                         model.values()):
      self.assertAllEqual(want, got)
    self.assertEqual(1, int(model.global_step.numpy()))
    self.assertMatchesTF115(model)

  @parameterized.named_parameters(_cases())
  def test_handed_gradients_with_one_non_finite_part_skip(self, n):
    # Gradients the caller computed and hands to apply_gradients: no
    # unscaling mixes a complex gradient's parts, so an Inf in the
    # imaginary part alone, or a NaN in one embedding row, must be seen.
    for poisoned in ("c64", "f32_table", "f16"):
      model = _Model(n, 0, _sgd, _exponential)
      before = model.values()
      for p in (np.inf, np.nan, 1.0):
        grads = []
        for kind, var in zip(model.kinds, model.vars):
          p_kind = p if kind[0] == poisoned else 1.0
          value = _update(kind, p_kind)
          if _is_table(kind):
            ids = np.asarray(kind[2])
            grads.append(tf.IndexedSlices(
                tf.constant(np.full([len(ids), 2], kind[3] * p_kind),
                            var.dtype),
                tf.constant(ids), tf.constant([_TABLE_ROWS, 2])))
          else:
            grads.append(tf.constant(value, var.dtype))
        model.apply(grads)
        where = "{} = {}".format(poisoned, p)
        want = (before if p != 1.0 else
                _expected_after(model.kinds, before, [1.0] * n))
        for w, got in zip(want, model.values()):
          self.assertAllEqual(w, got, msg=where)
        self.assertEqual(int(p == 1.0), int(model.global_step.numpy()),
                         msg=where)
      if poisoned != "c64":  # TF 1.15's model has no complex variable.
        self.assertMatchesTF115(model, poisoned)

  @parameterized.named_parameters(_cases())
  def test_nan_storm_leaves_state_bit_identical(self, n):
    model = _Model(n, n, _adam, _exponential)
    model.step()  # One real step: the slots hold non-trivial values.
    self.assertMatchesTF115(model, "the real step")

    def tracked():
      # The inner optimizer's slots and beta powers, not the manager's
      # state, which the storm moves.
      state = [id(v) for v in model.manager.variables()]
      inner = [v for v in model.opt.variables() if id(v) not in state]
      self.assertLen(inner, 2 * n + 2)
      return model.vars + inner + [model.global_step]

    before = [v.numpy().tobytes() for v in tracked()]
    for p in model.poison:
      p.assign(np.nan)
    scales = []
    for _ in range(14):
      model.step()
      scales.append(float(model.manager.get_loss_scale().numpy()))
    self.assertMatchesTF115(model, "after the storm")
    self.assertEqual(before, [v.numpy().tobytes() for v in tracked()])
    # Halved on every bad step, never below 1.
    self.assertEqual([max(1.0, SCALE / 2**k) for k in range(1, 15)], scales)

  @parameterized.named_parameters(_cases())
  def test_duplicate_rows_whose_sum_overflows_skip_the_step(self, n):
    # The float16 table's row 0 gets 8 rows of 1024 * p: 8 * 8192 = 2**16
    # overflows float16 (each row and each partial sum before it does not);
    # 8 * 4096 fits. At scale 1 the scaled rows are the rows.
    model = _Model(n, 0, _sgd, lambda lib: lib.FixedLossScaleManager(1))
    table = [k[0] for k in model.kinds].index("f16_table")
    before = model.values()
    model.poison[table].assign(8192.0)
    model.step()
    for want, got in zip(before, model.values()):
      self.assertAllEqual(want, got)
    self.assertEqual(0, int(model.global_step.numpy()))
    self.assertMatchesTF115(model, "8192")
    model.poison[table].assign(4096.0)
    model.step()
    self.assertMatchesTF115(model, "4096")
    poison = [1.0] * n
    poison[table] = 4096.0
    want = _expected_after(model.kinds, before, poison)
    self.assertEqual(np.float16(-32768.0), want[table][0, 0])
    for w, got in zip(want, model.values()):
      self.assertAllEqual(w, got)
    self.assertEqual(1, int(model.global_step.numpy()))


if __name__ == "__main__":
  tf.test.main()
