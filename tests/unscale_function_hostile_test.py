# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Hostile probes of the check in a function and in a compiled eager step.

In a compiled eager step (`skip_decision.EAGER_COMPILE_MIN_GRADIENTS`
gradients or more), `compute_gradients` also decides whether what it
returns is finite, its fast path reading the *scaled* gradients
(`all_finite_scaled`), and `apply_gradients` uses that flag for the very
tensors it gets back. Inside a `tf.function` the check is
`apply_gradients`' own, as TF 1.15's was (a check beside the multiplies
there changed what Grappler folds: `unscale`'s docstring). Each
probe here runs real training steps and compares every variable with a
NumPy expectation: a skipped step changes nothing, an applied one is
exactly plain SGD with the unscaled gradients (per-index sums for sparse
ones). Not repeated from unscale_test.py / unscale_hostile_test.py.

Each step `_run_step` takes is also taken by TF 1.15's optimizer
(`tf115_harness`) on a twin of the model, in the same mode and with the
same manager, and every variable must equal its twin's to the bit; so must
the multi-step probes (`ExponentialManagerStepsTest`, `MomentumSlotsTest`).
Not judged: a complex embedding (TF 1.15's `IsFinite` has no complex
kernel: it crashed), `keep_sparse_gradients=True` with repeated ids
(different by design), a scale the package refuses (TF 1.15 skipped every
step without a word), and the probes that change the scale variable or
feed a gradient in the middle of the package's own step.
"""

import ast
import contextlib
import gc
import textwrap

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
from contrib_mixed_precision import known_flags
from contrib_mixed_precision import skip_decision

import forkserver
import tf115_harness as harness

_T = skip_decision.EAGER_COMPILE_MIN_GRADIENTS
_LARGE = (150, 120)  # 18000 elements: past the "small" limit of 16384.


class _Scale(mp.LossScaleManager):
  """A user's manager: any scale, of any dtype, maybe a variable."""

  def __init__(self, scale, dtype=tf.float32):
    self.scale = scale
    self.dtype = dtype

  def get_loss_scale(self):
    if isinstance(self.scale, tf.Variable):
      return self.scale.read_value()
    return tf.constant(self.scale, self.dtype)

  def update_loss_scale(self, finite_grads):
    del finite_grads
    return None if tf.executing_eagerly() else tf.no_op()


class _Model(object):
  """Large dense W, small b, scalars, and an embedding read with dup ids.

  loss = sum(W * cw) + sum(b * cb) + sum_i s_i * cs_i
         + sum(gather(E, ids) * ce)
  so the gradients are exactly cw, cb, cs_i and IndexedSlices(ce, ids).
  """

  def __init__(self, n_scalars=1, dtype=tf.float32, ids=(0, 2, 0, 4),
               emb_dtype=None):
    self.params = dict(n_scalars=n_scalars, dtype=dtype, ids=ids,
                       emb_dtype=emb_dtype)
    emb_dtype = emb_dtype or dtype
    npd = dtype.as_numpy_dtype
    self.ids = np.array(ids, np.int32)
    self.w0 = np.full(_LARGE, 1.0, npd)
    self.b0 = np.arange(10).astype(npd)
    self.s0 = np.ones([n_scalars], npd)
    self.e0 = np.ones([6, 3], emb_dtype.as_numpy_dtype)
    self.cw = np.full(_LARGE, 0.5, npd)
    self.cb = np.full([10], 0.25, npd)
    self.cs = np.full([n_scalars], 2.0, npd)
    self.ce = np.full([len(ids), 3], 0.125, emb_dtype.as_numpy_dtype)
    self.dtype = dtype
    self.emb_dtype = emb_dtype
    self.w = tf.Variable(self.w0, name="w")
    self.b = tf.Variable(self.b0, name="b")
    self.s = [tf.Variable(v, name="s%d" % i) for i, v in enumerate(self.s0)]
    self.e = tf.Variable(self.e0, name="e")
    self.variables = [self.w, self.b] + self.s + [self.e]

  def loss_fn(self, cw, cb, cs, ce):
    def loss():
      rows = tf.gather(self.e, self.ids)
      terms = [tf.reduce_sum(self.w * cw), tf.reduce_sum(self.b * cb),
               tf.cast(tf.reduce_sum(rows * ce), self.dtype)]
      terms += [s * cs[i] for i, s in enumerate(self.s)]
      return tf.add_n(terms)
    return loss

  def values(self):
    return [v.numpy() for v in self.variables]

  def expected(self, cw, cb, cs, ce, lr=1.0):
    """Plain SGD with the true gradients, in each variable's dtype."""
    e = self.e0.copy()
    sums = {}
    for i, idx in enumerate(self.ids):
      sums[idx] = ce[i] if idx not in sums else (sums[idx] + ce[i]).astype(
          e.dtype)
    for idx, row in sums.items():
      e[idx] = e[idx] - row * e.dtype.type(lr)
    npd = self.dtype.as_numpy_dtype
    lr = npd(lr)
    return ([self.w0 - cw * lr, self.b0 - cb * lr] +
            [self.s0[i] - cs[i] * lr for i in range(len(self.s0))] + [e])

  def initial(self):
    return [self.w0, self.b0] + list(self.s0) + [self.e0]


def _opt(manager, lr=1.0, **kwargs):
  return mp.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(lr), manager, **kwargs)


def _assert_values(test, got, want):
  test.assertEqual(len(got), len(want))
  for g, w in zip(got, want):
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _assert_bits(got, want, what):
  for i, (g, w) in enumerate(zip(got, want)):
    g, w = np.asarray(g), np.asarray(w)
    if (g.dtype, g.shape, g.tobytes()) != (w.dtype, w.shape, w.tobytes()):
      raise AssertionError("{}, variable {}: package {} != TF 1.15's {}".format(
          what, i, g, w))


def _tf115_twin(model, opt):
  """`model`'s twin and TF 1.15's optimizer with `opt`'s manager and rate.

  Made on the first step of `opt` on `model`, and kept for the next ones.
  """
  twins = model.__dict__.setdefault("tf115_twins", {})
  if id(opt) not in twins:
    twin = _Model(**model.params)
    tf115_opt = harness.Library(harness.ORACLE).LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(opt._opt._learning_rate),  # pylint: disable=protected-access
        opt._loss_scale_manager)  # pylint: disable=protected-access
    twins[id(opt)] = (opt, twin, tf115_opt)
  return twins[id(opt)][1:]


def _run_step(model, opt, coeffs, mode, between=None, judge=True):
  """One compute + apply step in `mode`; `between` may edit grads_and_vars.

  With `judge`, TF 1.15's optimizer takes the same step on a twin of the
  model (`_tf115_twin`), unless the embedding is complex (TF 1.15 crashed
  there); every variable must equal its twin's, to the bit.
  """
  loss = model.loss_fn(*[tf.constant(c) for c in coeffs])

  def run(model, opt, loss):

    def step():
      gv = opt.compute_gradients(loss, var_list=model.variables)
      if between is not None:
        gv = between(gv)
      opt.apply_gradients(gv)
      return [(g.values, g.indices) if isinstance(g, tf.IndexedSlices) else g
              for g, _ in gv]

    if mode == "function":
      out = tf.function(step)()
    elif mode == "jit":
      out = tf.function(step, jit_compile=True)()
    else:
      out = step()
    return tf.nest.map_structure(lambda t: t.numpy(), out)

  out = run(model, opt, loss)
  if judge and not model.emb_dtype.is_complex:
    twin, tf115_opt = _tf115_twin(model, opt)
    run(twin, tf115_opt, twin.loss_fn(*[tf.constant(c) for c in coeffs]))
    _assert_bits(model.values(), twin.values(),
                 "{} mode, after the step".format(mode))
  return out


def _judge(model, opt, coeffs):
  """TF 1.15's step on a twin, in a function: `model` must equal it.

  For a step the probe took its own way (nested functions, a strategy).
  """
  twin, tf115_opt = _tf115_twin(model, opt)
  loss = twin.loss_fn(*[tf.constant(c) for c in coeffs])
  tf.function(lambda: tf115_opt.minimize(loss, var_list=twin.variables)
              and None)()
  _assert_bits(model.values(), twin.values(), "after the step")


def _nan_in(model, kind):
  """The model's coefficients, with a NaN in gradient `kind` (None: none)."""
  if kind is None:
    return model.cw, model.cb, model.cs, model.ce
  return _poison(model, kind, np.nan)


def _poison(model, kind, value):
  cw, cb, cs, ce = (model.cw.copy(), model.cb.copy(), model.cs.copy(),
                    model.ce.copy())
  if kind == "large":
    cw[7, 9] = value
  elif kind == "small":
    cb[3] = value
  elif kind == "scalar":
    cs[-1] = value
  elif kind == "sparse":
    ce[1, 2] = value
  return cw, cb, cs, ce


class ScaleEdgesTest(tf.test.TestCase, parameterized.TestCase):
  """Scales no TF 1.15 manager keeps: the fast path must not trust them."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         scale=(1.0, 2.0**-3, 2.0**-100))
  def test_finite_steps_apply_exactly(self, mode, n, scale):
    model = _Model(n_scalars=n)
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    _run_step(model, _opt(_Scale(scale)), coeffs, mode)
    _assert_values(self, model.values(), model.expected(*coeffs))

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         scale=(3.0, 2.0**-3),
                         kind=("large", "small", "scalar", "sparse"),
                         bad=(np.nan, np.inf, -np.inf))
  def test_a_bad_value_in_each_kind_is_skipped(self, mode, n, scale, kind,
                                              bad):
    model = _Model(n_scalars=n)
    _run_step(model, _opt(_Scale(scale)), _poison(model, kind, bad), mode)
    _assert_values(self, model.values(), model.initial())

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         scale=(0.0, -0.0, np.inf, -np.inf, np.nan))
  def test_degenerate_scales_are_refused(self, mode, n, scale):
    # Scale 0: gradients 0, unscaled 0 * inf = NaN. Inf: Inf/NaN gradients.
    # Either skipped every step without a word; now an error, and nothing
    # is applied.
    model = _Model(n_scalars=n)
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    with self.assertRaisesRegex(ValueError, "_Scale.get_loss_scale"):
      _run_step(model, _opt(_Scale(scale)), coeffs, mode)
    _assert_values(self, model.values(), model.initial())

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         dtype=(tf.float16, tf.float64, tf.bfloat16))
  def test_scale_tensor_of_another_dtype(self, mode, n, dtype):
    model = _Model(n_scalars=n)
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    _run_step(model, _opt(_Scale(1024.0, dtype)), coeffs, mode)
    _assert_values(self, model.values(), model.expected(*coeffs))

  @parameterized.product(mode=("function", "eager"), n=(1, _T))
  def test_subnormal_unscaled_gradients(self, mode, n):
    # Scale 2**20; every gradient subnormal (2**-140): scaled 2**-120 is
    # normal, squares underflow to 0. Applied exactly with lr = 2**100.
    model = _Model(n_scalars=n)
    tiny = np.float32(2.0**-140)
    coeffs = (model.cw * 0 + tiny, model.cb * 0 + tiny, model.cs * 0 + tiny,
              model.ce * 0 + tiny)
    if mode == "function":
      # In a function the check is apply_gradients' own, and Grappler may
      # compute the gradient the function returns and the one its apply
      # reads by different multiplies (a subnormal product may be flushed
      # in one and not the other): TF 1.15's optimizer, in the same
      # function, is the judge.
      _run_step(model, _opt(_Scale(2.0**20), lr=2.0**100), coeffs, mode)
      return
    # Kept sparse: the check of the table's rows is what is probed (with
    # repeated ids: not TF 1.15's update, by design).
    grads = _run_step(model, _opt(_Scale(2.0**20), lr=2.0**100,
                                  keep_sparse_gradients=True), coeffs, mode,
                      judge=False)
    # TF's CPU kernels may flush some subnormal products to zero: the
    # expectation is SGD with exactly the gradients apply_gradients got
    # (eagerly, the tensors it was handed),
    # each either the true 2**-140 or 0; the step is not skipped.
    for g in grads[:-1]:
      self.assertTrue(np.all((g == tiny) | (g == 0)), g)
    self.assertTrue(np.all((grads[-1][0] == tiny) | (grads[-1][0] == 0)))
    dense = [np.asarray(g) for g in grads[:-1]]
    cw, cb = dense[0], dense[1]
    cs = np.array([np.asarray(g).item() for g in dense[2:]], np.float32)
    ce = grads[-1][0]
    self.assertAllEqual(grads[-1][1], model.ids)
    _assert_values(self, model.values(), model.expected(cw, cb, cs, ce,
                                                        lr=2.0**100))

  @parameterized.product(mode=("function", "eager"), n=(1, _T))
  def test_scale_changed_between_compute_and_apply(self, mode, n):
    # The flag is about the tensors computed with scale 4; apply runs
    # after the scale became 2**-120 (which would overflow a re-unscale).
    model = _Model(n_scalars=n)
    scale = tf.Variable(4.0)
    opt = _opt(_Scale(scale))
    coeffs = (model.cw, model.cb, model.cs, model.ce)

    def between(gv):
      with tf.control_dependencies([g.values if isinstance(
          g, tf.IndexedSlices) else g for g, _ in gv]):
        op = scale.assign(2.0**-120)
      with tf.control_dependencies([op]):
        return [(g, v) for g, v in gv]

    # Not judged: TF 1.15's twin would share the scale the probe changes.
    _run_step(model, opt, coeffs, mode, between, judge=False)
    _assert_values(self, model.values(), model.expected(*coeffs))
    self.assertEqual(scale.numpy(), np.float32(2.0**-120))


class SparseOverflowTest(tf.test.TestCase, parameterized.TestCase):
  """Duplicate ids whose rows overflow only when summed, or only unscaled."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         dtype=(tf.float32, tf.float64, tf.complex64,
                                tf.float16, tf.bfloat16))
  def test_per_index_sum_overflows_after_unscale(self, mode, n, dtype):
    # scale 2**-64: scaled rows tiny; unscaled rows each finite (0.75 max),
    # their sum at id 0 past the range: skipped.
    big = 0.75 * dtype.real_dtype.max
    model = _Model(n_scalars=n, emb_dtype=dtype)
    ce = model.ce.copy()
    ce[0, 1] = big
    ce[2, 1] = big
    coeffs = (model.cw, model.cb, model.cs, ce)
    _run_step(model, _opt(_Scale(2.0**-64)), coeffs, mode)
    _assert_values(self, model.values(), model.initial())

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         dtype=(tf.float32, tf.complex64))
  def test_big_rows_at_distinct_ids_apply(self, mode, n, dtype):
    # The same big rows at different ids: no sum overflows; applied.
    big = 0.75 * 3.4028235e38
    model = _Model(n_scalars=n, emb_dtype=dtype, ids=(0, 2, 1, 4))
    ce = model.ce.copy()
    ce[0, 1] = big
    ce[2, 1] = big
    coeffs = (model.cw, model.cb, model.cs, ce)
    _run_step(model, _opt(_Scale(2.0**-64)), coeffs, mode)
    _assert_values(self, model.values(), model.expected(*coeffs))

  @parameterized.product(mode=("function", "eager"), n=(1, _T))
  def test_complex_inf_in_imaginary_part(self, mode, n):
    model = _Model(n_scalars=n, emb_dtype=tf.complex64)
    ce = model.ce.copy()
    ce[3, 0] = complex(0.0, np.inf)
    _run_step(model, _opt(_Scale(8.0)), (model.cw, model.cb, model.cs, ce),
              mode)
    _assert_values(self, model.values(), model.initial())

  @parameterized.product(mode=("function", "eager"), n=(1, _T))
  def test_float16_embedding_sum_overflows(self, mode, n):
    model = _Model(n_scalars=n, emb_dtype=tf.float16)
    ce = model.ce.copy()
    ce[0, 0] = 40000
    ce[2, 0] = 40000
    _run_step(model, _opt(_Scale(1.0)), (model.cw, model.cb, model.cs, ce),
              mode)
    _assert_values(self, model.values(), model.initial())


class FiniteButSumsOverflowTest(tf.test.TestCase, parameterized.TestCase):
  """Every value finite, near the top of the range: the sums and squares
  overflow, the exact check must then say finite (applied)."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         dtype=(tf.float32, tf.float64),
                         scale=(1.0, 2.0**-64, 2.0**10))
  def test_applied(self, mode, n, dtype, scale):
    model = _Model(n_scalars=n, dtype=dtype, ids=(0, 2, 1, 4))
    top = dtype.max * 0.75 / max(scale, 1.0)
    npd = dtype.as_numpy_dtype
    coeffs = (np.full(_LARGE, top, npd), np.full([10], top, npd),
              np.full([n], top, npd), np.full([4, 3], top, npd))
    if dtype == tf.float64:
      # The loss itself must not overflow: each term is summed in the loss.
      pass
    _run_step(model, _opt(_Scale(scale)), coeffs, mode)
    _assert_values(self, model.values(), model.expected(*coeffs))


class MixedDtypesTest(tf.test.TestCase, parameterized.TestCase):
  """Dense float64 gradients beside a float32/float16/bfloat16 embedding."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         emb=(tf.float32, tf.float16, tf.bfloat16),
                         kind=(None, "large", "small", "scalar", "sparse"))
  def test_step(self, mode, n, emb, kind):
    model = _Model(n_scalars=n, dtype=tf.float64, emb_dtype=emb)
    coeffs = (_poison(model, kind, -np.inf) if kind else
              (model.cw, model.cb, model.cs, model.ce))
    _run_step(model, _opt(_Scale(2.0**-3)), coeffs, mode)
    want = model.initial() if kind else model.expected(*coeffs)
    _assert_values(self, model.values(), want)


class ExponentialManagerStepsTest(tf.test.TestCase, parameterized.TestCase):
  """Twelve steps in one traced function; NaN on some; scale simulated."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         kind=("large", "small", "sparse"))
  def test_steps(self, mode, n, kind):
    model = _Model(n_scalars=n)
    manager = mp.ExponentialUpdateLossScaleManager(
        init_loss_scale=2.0**15, incr_every_n_steps=2,
        decr_every_n_nan_or_inf=1, incr_ratio=2.0, decr_ratio=0.5)
    opt = _opt(manager, lr=2.0**-4)
    # TF 1.15's optimizer and manager on a twin, stepped beside it.
    lib = harness.Library(harness.ORACLE)
    twin = _Model(n_scalars=n)
    tf115_manager = lib.ExponentialUpdateLossScaleManager(
        init_loss_scale=2.0**15, incr_every_n_steps=2,
        decr_every_n_nan_or_inf=1, incr_ratio=2.0, decr_ratio=0.5)
    tf115_opt = lib.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(2.0**-4), tf115_manager)
    poison = tf.Variable(False, trainable=False)
    nan_at = {2, 3, 7, 8, 9, 11}
    clean = (model.cw, model.cb, model.cs, model.ce)
    bad = _poison(model, kind, np.nan)

    def loss_of(model):
      def loss():
        cs = [tf.where(poison, tf.constant(b), tf.constant(c))
              for b, c in zip(bad, clean)]
        return model.loss_fn(*cs)()
      return loss

    def step():
      tf115_opt.minimize(loss_of(twin), var_list=twin.variables)
      opt.minimize(loss_of(model), var_list=model.variables)

    if mode == "function":
      step = tf.function(step)
    want = model.initial()
    scale, good = 2.0**15, 0
    for i in range(12):
      poison.assign(i in nan_at)
      step()
      if i in nan_at:
        scale, good = max(1.0, scale * 0.5), 0
      else:
        want = [w - c * np.float32(2.0**-4) if not isinstance(w, np.ndarray)
                or w.shape != model.e0.shape else w for w, c in
                zip(want, [model.cw, model.cb] + list(model.cs) + [0])]
        e = want[-1].copy()
        for j, idx in enumerate(model.ids):
          e[idx] -= model.ce[j] * np.float32(2.0**-4)
        want[-1] = e
        if good + 1 >= 2:
          scale, good = scale * 2.0, 0
        else:
          good += 1
      self.assertEqual(float(manager.get_loss_scale().numpy()), scale, i)
      _assert_values(self, model.values(), want)
      _assert_bits(model.values() + [v.numpy() for v in manager.variables()],
                   twin.values() + [v.numpy()
                                    for v in tf115_manager.variables()],
                   "step {}".format(i))


class HalfAndDoubleVariablesTest(tf.test.TestCase, parameterized.TestCase):
  """Every variable of one dtype; a bad value placed in each kind."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         dtype=(tf.float16, tf.bfloat16, tf.float64),
                         kind=(None, "large", "small", "scalar", "sparse"))
  def test_step(self, mode, n, dtype, kind):
    model = _Model(n_scalars=n, dtype=dtype)
    coeffs = _nan_in(model, kind)
    _run_step(model, _opt(_Scale(64.0)), coeffs, mode)
    want = model.initial() if kind else model.expected(*coeffs)
    _assert_values(self, model.values(), want)


class JitCompileTest(tf.test.TestCase, parameterized.TestCase):
  """The whole step under `tf.function(jit_compile=True)`."""

  @parameterized.product(n=(1, _T), kind=(None, "large", "small", "sparse"))
  def test_step(self, n, kind):
    model = _Model(n_scalars=n)
    coeffs = (_poison(model, kind, np.inf) if kind else
              (model.cw, model.cb, model.cs, model.ce))
    _run_step(model, _opt(_Scale(8.0)), coeffs, "jit")
    want = model.initial() if kind else model.expected(*coeffs)
    _assert_values(self, model.values(), want)

  @parameterized.parameters(1, _T)
  def test_duplicate_sum_overflow(self, n):
    model = _Model(n_scalars=n)
    ce = model.ce.copy()
    ce[0, 1] = ce[2, 1] = 0.75 * 3.4028235e38
    _run_step(model, _opt(_Scale(1.0)), (model.cw, model.cb, model.cs, ce),
              "jit")
    _assert_values(self, model.values(), model.initial())


class RetracingTest(tf.test.TestCase, parameterized.TestCase):
  """`reduce_retracing`: the id count changes; the row count is unknown."""

  @parameterized.parameters(2.0**-64, 4.0)
  def test_row_count_changes(self, scale):
    table0 = np.ones([6, 3], np.float32)
    table = tf.Variable(table0)
    w = tf.Variable(np.ones(_LARGE, np.float32))
    opt = _opt(_Scale(scale))

    @tf.function(reduce_retracing=True)
    def step(ids, ce):
      def loss():
        return (tf.reduce_sum(tf.gather(table, ids) * ce) +
                tf.reduce_sum(w) * 0.5)
      opt.minimize(loss, var_list=[table, w])

    big = np.float32(0.75 * 3.4028235e38)
    want_t, want_w = table0.copy(), np.ones(_LARGE, np.float32)
    cases = [([0, 1], [[1, 1, 1], [1, 1, 1]], True),
             ([0, 1, 2], [[1, 1, 1]] * 3, True),
             ([0, 0, 3, 4], [[big, 0, 0], [big, 0, 0], [1, 1, 1], [1, 1, 1]],
              False),  # id 0's sum overflows: skipped.
             ([5, 5, 5, 5, 5], [[1, 2, 3]] * 5, True),
             ([1, 2, 3, 4, 5, 1], [[1, 1, np.nan]] + [[1, 1, 1]] * 5, False)]
    for ids, ce, applied in cases:
      ce = np.array(ce, np.float32)
      step(tf.constant(ids, tf.int32), tf.constant(ce))
      if applied:
        sums = {}
        for i, idx in enumerate(ids):
          sums[idx] = sums.get(idx, np.zeros(3, np.float32)) + ce[i]
        for idx, row in sums.items():
          want_t[idx] -= row
        want_w -= np.float32(0.5)
      self.assertAllEqual(table.numpy(), want_t)
      self.assertAllEqual(w.numpy(), want_w)


class NestedFunctionsTest(tf.test.TestCase, parameterized.TestCase):
  """Gradients crossing a function boundary are new tensors: checked."""

  @parameterized.product(kind=(None, "large", "small", "sparse"),
                         where=("apply_inside", "compute_inside",
                                "two_functions"))
  def test_step(self, kind, where):
    model = _Model(n_scalars=_T)
    opt = _opt(_Scale(16.0))
    coeffs = _nan_in(model, kind)
    loss = model.loss_fn(*[tf.constant(c) for c in coeffs])

    @tf.function
    def apply(grads):
      opt.apply_gradients(zip(grads, model.variables))

    @tf.function
    def compute():
      return [g for g, _ in opt.compute_gradients(
          loss, var_list=model.variables)]

    @tf.function
    def outer():
      if where == "apply_inside":
        apply([g for g, _ in opt.compute_gradients(
            loss, var_list=model.variables)])
      else:
        opt.apply_gradients(zip(compute(), model.variables))

    if where == "two_functions":
      # compute() called eagerly returns eager tensors; apply() takes them
      # as inputs of another function.
      apply(compute())
    else:
      outer()
    want = model.initial() if kind else model.expected(*coeffs)
    _assert_values(self, model.values(), want)
    _judge(model, opt, coeffs)


class MirroredFunctionTest(tf.test.TestCase, parameterized.TestCase):

  @parameterized.product(kind=(None, "large", "small", "scalar", "sparse"),
                         n=(1, _T))
  def test_one_cpu(self, kind, n):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
      model = _Model(n_scalars=n)
      opt = _opt(_Scale(32.0))
    coeffs = _nan_in(model, kind)
    loss = model.loss_fn(*[tf.constant(c) for c in coeffs])

    @tf.function
    def step():
      def replica():
        opt.apply_gradients(opt.compute_gradients(
            loss, var_list=model.variables))
      strategy.run(replica)

    step()
    want = model.initial() if kind else model.expected(*coeffs)
    _assert_values(self, model.values(), want)
    # TF 1.15 crashed under a strategy (tensorflow#25080): its judge is
    # its step on one replica, without the strategy.
    _judge(model, opt, coeffs)


class SessionCondV2Test(tf.test.TestCase, parameterized.TestCase):
  """A TF1 Session graph, the step inside a v2 `tf.cond` branch / while body.

  The branch and body are function graphs: `apply_gradients` checks there.
  """

  @parameterized.product(kind=(None, "large", "small", "sparse"),
                         construct=("cond", "while"))
  def test_step(self, kind, construct):
    with tf.Graph().as_default():
      model = _Model(n_scalars=2)
      opt = _opt(_Scale(8.0))
      coeffs = _nan_in(model, kind)
      loss = model.loss_fn(*[tf.constant(c) for c in coeffs])

      def step():
        with tf.control_dependencies([opt.minimize(
            loss(), var_list=model.variables)]):
          return tf.constant(1)

      if construct == "cond":
        out = tf.cond(tf.constant(True), step, lambda: tf.constant(0))
      else:
        out = tf.while_loop(lambda i: i < 1, lambda i: i + step(),
                            [tf.constant(0)])
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(out)
        values = sess.run(model.variables)
    want = model.initial() if kind else model.expected(*coeffs)
    _assert_values(self, values, want)


class WrappedSparseFeedTest(tf.test.TestCase, parameterized.TestCase):
  """`wrap_function(...).prune` feeding an unscaled IndexedSlices' values."""

  @parameterized.parameters("nan", "overflow", "finite")
  def test_feed_values(self, what):
    holder = {}

    def build():
      model = _Model(n_scalars=2)
      opt = _opt(_Scale(4.0), keep_sparse_gradients=True)
      gv = opt.compute_gradients(
          model.loss_fn(model.cw, model.cb, model.cs, model.ce)(),
          var_list=model.variables)
      holder["model"] = model
      holder["values"] = gv[-1][0].values
      op = opt.apply_gradients(gv)
      with tf.control_dependencies([op]):
        return tf.constant(0)

    wrapped = tf.compat.v1.wrap_function(build, [])
    model = holder["model"]
    values = wrapped.graph.get_tensor_by_name(holder["values"].name)
    pruned = wrapped.prune(feeds=[values], fetches=wrapped.outputs[0])
    fed = np.full([4, 3], 0.5, np.float32)
    if what == "nan":
      fed[2, 2] = np.nan
    elif what == "overflow":
      fed[0, 0] = fed[2, 0] = 0.75 * 3.4028235e38
    pruned(tf.constant(fed))
    got = [v.numpy() for v in wrapped.variables]
    names = [v.name for v in wrapped.variables]
    by_name = dict(zip(names, got))
    e = by_name[[n for n in names if n.startswith("e")][0]]
    want = model.e0.copy()
    if what == "finite":
      want[0] -= 1.0
      want[2] -= 0.5
      want[4] -= 0.5
    self.assertAllEqual(e, want)


class EagerTableTest(tf.test.TestCase):

  def test_table_returns_to_its_size(self):
    table = known_flags._EAGER_KNOWN_FLAGS  # pylint: disable=protected-access
    gc.collect()
    before = len(table)
    model = _Model(n_scalars=_T)
    opt = _opt(_Scale(2.0))
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    for i in range(30):
      c = _poison(model, "sparse", np.nan) if i % 3 == 0 else coeffs
      _run_step(model, opt, c, "eager",
                between=(lambda gv: gv[::-1]) if i % 2 else None,
                judge=False)
    gc.collect()
    self.assertEqual(len(table), before)


class MomentumSlotsTest(tf.test.TestCase, parameterized.TestCase):
  """Skipped steps leave every slot and global_step; applied ones match."""

  @parameterized.product(mode=("function", "eager"), n=(1, _T),
                         kind=("large", "small", "scalar", "sparse"),
                         scale=(2.0**-5, 2.0**12))
  def test_steps(self, mode, n, kind, scale):
    # TF 1.15's optimizer on a twin, stepped beside it (the embedding's
    # gradient made dense, as TF 1.15 made it: its momentum moves every
    # row's slot; rows of zero gradient hold still here).
    sides = {}
    for which in harness.SIDES:
      model = _Model(n_scalars=n)
      gstep = tf.Variable(0, dtype=tf.int64, trainable=False)
      inner = tf.compat.v1.train.MomentumOptimizer(2.0**-4, 0.5)
      opt = harness.Library(which).LossScaleOptimizer(inner, _Scale(scale))
      sides[which] = model, gstep, inner, opt
    poison = tf.Variable(False, trainable=False)
    clean = (model.cw, model.cb, model.cs, model.ce)
    bad = _poison(model, kind, np.inf)

    def step():
      cs = [tf.where(poison, tf.constant(b), tf.constant(c))
            for b, c in zip(bad, clean)]
      for model, gstep, _, opt in sides.values():
        gv = opt.compute_gradients(model.loss_fn(*cs),
                                   var_list=model.variables)
        opt.apply_gradients(gv, global_step=gstep)

    model, gstep, inner, opt = sides[harness.PACKAGE]

    if mode == "function":
      step = tf.function(step)
    grads = [model.cw, model.cb] + list(model.cs)
    values = [np.array(v) for v in model.initial()]
    accums = [np.zeros_like(v) for v in values]
    applied = 0
    for i in range(6):
      poison.assign(i in (1, 3, 4))
      step()
      if i not in (1, 3, 4):
        applied += 1
        e_grad = np.zeros_like(model.e0)
        for j, idx in enumerate(model.ids):
          e_grad[idx] += model.ce[j]
        for k, g in enumerate(grads + [e_grad]):
          if k == len(grads):
            # Sparse momentum touches only the rows given.
            rows = sorted(set(model.ids.tolist()))
            accums[k][rows] = accums[k][rows] * np.float32(0.5) + g[rows]
            values[k][rows] -= np.float32(2.0**-4) * accums[k][rows]
          else:
            accums[k] = accums[k] * np.float32(0.5) + g
            values[k] = values[k] - np.float32(2.0**-4) * accums[k]
      self.assertEqual(int(gstep.numpy()), applied)
      _assert_values(self, model.values(), values)
      slots = [inner.get_slot(v, "momentum").numpy() for v in model.variables]
      _assert_values(self, slots, accums)
      twin, tf115_gstep, tf115_inner, _ = sides[harness.ORACLE]
      _assert_bits(
          model.values() + slots + [gstep.numpy()],
          twin.values() + [tf115_inner.get_slot(v, "momentum").numpy()
                           for v in twin.variables] + [tf115_gstep.numpy()],
          "step {}".format(i))


_TWO_REPLICAS = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import contrib_mixed_precision as mp
    from contrib_mixed_precision import skip_decision
    n = int(sys.argv[1]); bad_replica = int(sys.argv[2]); kind = sys.argv[3]
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
      w = tf.Variable(np.ones([150, 120], np.float32))
      b = tf.Variable(np.zeros([10], np.float32))
      s = [tf.Variable(1.0) for _ in range(n)]
      e = tf.Variable(np.ones([6, 3], np.float32))
      opt = mp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          mp.FixedLossScaleManager(64.0))
    ids = tf.constant([0, 2, 0])
    variables = [w, b] + s + [e]

    @tf.function
    def step():
      def replica():
        r = tf.distribute.get_replica_context().replica_id_in_sync_group
        bad = tf.equal(r, bad_replica)
        c = tf.where(bad, np.float32(np.nan), np.float32(0.25))
        def loss():
          terms = [tf.reduce_sum(w) * (c if kind == "large" else 0.25),
                   tf.reduce_sum(b) * (c if kind == "small" else 0.25),
                   tf.reduce_sum(tf.gather(e, ids)) *
                   (c if kind == "sparse" else 0.25)]
          terms += [v * (c if kind == "scalar" else 0.25) for v in s]
          return tf.add_n(terms)
        opt.apply_gradients(opt.compute_gradients(loss, var_list=variables))
      strategy.run(replica)

    step()
    print("RESULT", float(w.numpy()[0, 0]), float(b.numpy()[0]),
          float(s[0].numpy()), e.numpy()[:, 0].tolist())
""")


class TwoReplicasTest(tf.test.TestCase, parameterized.TestCase):
  """MirroredStrategy over two logical CPUs (a subprocess), in a function.

  One replica's gradient is NaN: both skip. Else the v1 optimizer applies
  the sum over replicas: each variable moves by 2 * 0.25.
  """

  @parameterized.parameters(
      (1, -1, "large"), (_T, -1, "large"), (1, 0, "sparse"),
      (_T, 1, "small"), (1, 1, "scalar"), (_T, 0, "large"))
  def test_step(self, n, bad_replica, kind):
    out = forkserver.run_python(
        ["-c", _TWO_REPLICAS, str(n), str(bad_replica),
         kind], capture_output=True, text=True, timeout=300, check=False)
    line = [l for l in out.stdout.splitlines() if l.startswith("RESULT")]
    self.assertTrue(line, out.stderr[-3000:])
    _, w, b, s0, e = line[0].split(" ", 4)
    e = ast.literal_eval(e)
    if bad_replica == -1:
      self.assertEqual((float(w), float(b), float(s0)), (0.5, -0.5, 0.5))
      self.assertEqual(e, [0.0, 1.0, 0.5, 1.0, 1.0, 1.0])
    else:
      self.assertEqual((float(w), float(b), float(s0)), (1.0, 0.0, 1.0))
      self.assertEqual(e, [1.0] * 6)


class AutographLoopTest(tf.test.TestCase, parameterized.TestCase):
  """Steps in a `tf.range` loop of one function (a while body graph)."""

  @parameterized.product(n=(1, _T), kind=("large", "small", "scalar",
                                          "sparse"),
                         eagerly=(False, True), exponential=(False, True))
  def test_loop(self, n, kind, eagerly, exponential):
    # TF 1.15's optimizer and manager train a twin in the same loop.
    sides = {}
    for which in harness.SIDES:
      lib = harness.Library(which)
      manager = (lib.ExponentialUpdateLossScaleManager(
          2.0**10, incr_every_n_steps=1, decr_every_n_nan_or_inf=1)
                 if exponential else _Scale(2.0**-2))
      model = _Model(n_scalars=n)
      sides[which] = model, manager, lib.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)
    model, manager, opt = sides[harness.PACKAGE]
    clean = (model.cw, model.cb, model.cs, model.ce)
    bad = _poison(model, kind, np.nan)

    @tf.function
    def train():
      for i in tf.range(4):
        poisoned = tf.logical_or(tf.equal(i, 1), tf.equal(i, 2))

        for model, _, opt in sides.values():

          def loss(model=model):
            cs = [tf.where(poisoned, tf.constant(b), tf.constant(c))  # noqa: B023
                  for b, c in zip(bad, clean)]
            return model.loss_fn(*cs)()

          opt.minimize(loss, var_list=model.variables)

    tf.config.run_functions_eagerly(eagerly)
    try:
      train()
    finally:
      tf.config.run_functions_eagerly(False)
    model, manager, opt = sides[harness.PACKAGE]
    # Two applied steps of exactly representable gradients.
    want = model.expected(*[2 * c for c in clean])
    _assert_values(self, model.values(), want)
    twin, tf115_manager, _ = sides[harness.ORACLE]
    _assert_bits(model.values() + [manager.get_loss_scale().numpy()],
                 twin.values() + [tf115_manager.get_loss_scale().numpy()],
                 "after the loop")
    if exponential:
      # Defaults incr_ratio 2, decr_ratio 0.8, in float32: good, bad, bad,
      # good.
      f = np.float32
      want_scale = f(f(f(f(1024.0) * f(2.0)) * f(0.8)) * f(0.8)) * f(2.0)
      self.assertEqual(manager.get_loss_scale().numpy(), want_scale)


class EagerReadOnlyTest(tf.test.TestCase):
  """The eager flag is kept by tensor identity: the tensors must be
  immutable through every NumPy view a user can get."""

  def test_views_are_read_only_and_a_poisoned_copy_is_checked(self):
    model = _Model(n_scalars=_T)
    opt = _opt(_Scale(4.0))
    gv = opt.compute_gradients(
        model.loss_fn(model.cw, model.cb, model.cs, model.ce),
        var_list=model.variables)
    grad = gv[1][0]
    views = [np.asarray(grad)]
    if hasattr(grad, "__dlpack__"):  # EagerTensor has it from TF 2.17 on.
      views.append(np.from_dlpack(grad))
    for view in views:
      self.assertFalse(view.flags.writeable)
      with self.assertRaises(ValueError):
        view[0] = np.nan
    poisoned = np.array(gv[1][0])
    poisoned[0] = np.nan
    gv[1] = (tf.constant(poisoned), gv[1][1])
    opt.apply_gradients(gv)
    _assert_values(self, model.values(), model.initial())


class WideScaleTest(tf.test.TestCase, parameterized.TestCase):
  """A user's manager returning a scale float32 cannot hold.

  The optimizer scales and unscales in float32, as TF 1.15 did. A float64
  2**200 would become Inf there (and a zero update be applied), 2**-200
  would become 0 (and every step be skipped): either is an error that
  names the value, before anything is applied.
  """

  @parameterized.product(
      mode=("function", "eager"),
      scale=(2.0**200, -(2.0**200), 2.0**-200, 1e-46),
      variable=(False, True))
  def test_float64_scale_out_of_float32_range(self, mode, scale, variable):
    model = _Model(n_scalars=2)
    value = (tf.Variable(scale, dtype=tf.float64) if variable else scale)
    opt = _opt(_Scale(value, tf.float64))
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    # A constant is refused as the step is built; a variable's value when
    # the step runs.
    error = (tf.errors.InvalidArgumentError
             if mode == "function" and variable else ValueError)
    with self.assertRaisesRegex(error, r"(?s)float32.*_Scale\.get_loss_scale"
                                r".*" + "{:g}".format(scale)[:5]):
      _run_step(model, opt, coeffs, mode)
    _assert_values(self, model.values(), model.initial())

  @parameterized.parameters(("graph", "fed"), ("graph", "tape"),
                            ("graph", "changed"), ("function", "tape"),
                            ("function", "changed"))
  def test_gradients_from_elsewhere_are_not_applied(self, mode, source):
    # `apply_gradients` reads the scale again; its check must hold back the
    # apply, not only the manager's update, when the gradients did not come
    # from this step's `compute_gradients` (fed ones, accumulated; a
    # tape's; or computed at a scale the manager has since changed).

    class ChangingScale(_Scale):
      """Returns float32 4 on its first call, float64 2**-200 after."""

      def get_loss_scale(self):
        self.calls = getattr(self, "calls", 0) + 1
        if source == "changed" and self.calls == 1:
          return tf.constant(4.0)
        return bad_scale.read_value()

    graph = tf.Graph() if mode == "graph" else None
    with (graph.as_default() if graph else contextlib.nullcontext()):
      w = tf.compat.v1.Variable(tf.ones([4]), name="w", use_resource=True)
      # A variable: a constant would be refused as the step is built.
      bad_scale = tf.compat.v1.Variable(2.0**-200, dtype=tf.float64,
                                        trainable=False, use_resource=True)
      opt = mp.LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(0.1),
                                  ChangingScale(None))

      def step():
        if source == "tape":
          with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
          grads = [(tape.gradient(loss, w), w)]
        else:
          grads = opt.compute_gradients(lambda: tf.reduce_sum(w * w), [w])
        return grads, opt.apply_gradients(grads)

      if mode == "graph":
        grads, train_op = step()
        with tf.compat.v1.Session(graph=graph) as sess:
          sess.run(tf.compat.v1.global_variables_initializer())
          feed = ({grads[0][0]: np.ones([4], np.float32)}
                  if source == "fed" else None)
          with self.assertRaisesRegex(tf.errors.InvalidArgumentError,
                                      "float32"):
            sess.run(train_op, feed)
          self.assertAllEqual(sess.run(w), np.ones([4]))
      else:
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError,
                                    "float32"):
          tf.function(lambda: step()[1] and None)()
        self.assertAllEqual(w.numpy(), np.ones([4]))

  @parameterized.product(mode=("graph", "function", "eager"),
                         scale=(2.0**-127, 2.0**-149, 2.0**-150))
  def test_below_float32_normals(self, mode, scale):
    # TensorFlow's CPU casts flush float32 subnormals to 0: a float64 scale
    # below 2**-126 became 0, and every step was skipped.
    model = _Model()
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    opt = _opt(_Scale(scale, tf.float64))
    with self.assertRaisesRegex(ValueError, "2\\*\\*-126"):
      if mode == "graph":
        with tf.Graph().as_default():
          w = tf.compat.v1.Variable([1.0, 2.0])
          train_op = opt.minimize(tf.reduce_sum(w * w))
          with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train_op)
      else:
        _run_step(model, opt, coeffs, mode)
    _assert_values(self, model.values(), model.initial())

  @parameterized.product(mode=("graph", "function", "eager"),
                         value=([8.0], [2.0**-200]))
  def test_float64_scale_of_shape_one(self, mode, value):
    # [8.0] trained in a graph before the range check, which must not
    # refuse it; [2**-200] must be refused in every mode.
    bad = value[0] < 1
    error = ValueError  # A constant: refused as the step is built.
    graph = tf.Graph() if mode == "graph" else None
    with (graph.as_default() if graph else contextlib.nullcontext()):
      w = tf.compat.v1.Variable([1.0, 2.0], name="w", use_resource=True)
      opt = _opt(_Scale(value, tf.float64))
      if mode == "graph":
        with tf.compat.v1.Session(graph=graph) as sess:
          with (self.assertRaisesRegex(error, "float32") if bad else
                contextlib.nullcontext()):
            train_op = opt.minimize(tf.reduce_sum(w * w))
          sess.run(tf.compat.v1.global_variables_initializer())
          if not bad:
            sess.run(train_op)
          got = sess.run(w)
      else:
        step = lambda: opt.minimize(lambda: tf.reduce_sum(w * w)) and None
        with (self.assertRaisesRegex(error, "float32") if bad else
              contextlib.nullcontext()):
          (tf.function(step) if mode == "function" else step)()
        got = w.numpy()
    self.assertAllEqual(got, [1.0, 2.0] if bad else [-1.0, -2.0])

  def test_negative_scale_is_refused_as_negative(self):
    model = _Model()
    with self.assertRaisesRegex(ValueError, "negative"):
      _run_step(model, _opt(_Scale(-(2.0**200), tf.float64)),
                (model.cw, model.cb, model.cs, model.ce), "eager")

  @parameterized.parameters(
      (2.0**-200,), (np.float64(2.0**-200),), (10**400,),
      (np.array(2.0**-200),), (np.array([2.0**-200]),))
  def test_python_and_numpy_numbers(self, scale):
    # A Python float 2**-200 used to become a float32 0 without a word; a
    # Python int past float64's range raised TF's conversion error.

    class NumberScale(_Scale):

      def get_loss_scale(self):
        return self.scale

    model = _Model()
    opt = _opt(NumberScale(scale))
    with self.assertRaisesRegex(ValueError,
                                r"(?s)float32.*NumberScale\.get_loss_scale"):
      _run_step(model, opt, (model.cw, model.cb, model.cs, model.ce), "eager")
    _assert_values(self, model.values(), model.initial())

  @parameterized.parameters(2.0**-100, 2.0**100, 3.0)
  def test_float64_scales_float32_holds_still_train(self, scale):
    model = _Model()
    coeffs = (model.cw, model.cb, model.cs, model.ce)
    _run_step(model, _opt(_Scale(scale, tf.float64)), coeffs, "eager")
    _assert_values(self, model.values(), model.expected(*coeffs))

  @parameterized.product(scale=(2.0**200, 2.0**-200), variable=(False, True))
  def test_graph_session(self, scale, variable):
    with tf.Graph().as_default():
      w = tf.compat.v1.Variable([1.0, 2.0], name="w")
      value = (tf.compat.v1.Variable(scale, dtype=tf.float64,
                                     trainable=False) if variable else scale)
      opt = _opt(_Scale(value, tf.float64))
      message = r"(?s)float32.*_Scale\.get_loss_scale"
      if not variable:  # A constant: refused as the step is built.
        with self.assertRaisesRegex(ValueError, message):
          opt.minimize(tf.reduce_sum(w * w))
        return
      train_op = opt.minimize(tf.reduce_sum(w * w))
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        with self.assertRaisesRegex(tf.errors.InvalidArgumentError, message):
          sess.run(train_op)
        self.assertAllEqual(sess.run(w), [1.0, 2.0])
