# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Prototypes of how LossScaleOptimizer checks, skips and unscales.

Used by `python -m benchmarks --variants` to time each idea side by side
with the package's own optimizer; not part of the package. Some variants are
deliberately wrong (no skip, no unscaling): they measure what a piece costs.
`python -m benchmarks.variants` checks the exact-skip semantics of the
correct ones (a NaN step changes no variable, slot, beta power or step).
"""

import contextlib
import sys

import tensorflow as tf

import contrib_mixed_precision as cmp
from contrib_mixed_precision import loss_scale as loss_scale_lib
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import step_scale
from contrib_mixed_precision import unscale as unscale_lib

# ---------------------------------------------------------------------------
# Finiteness checks: list of dense tensors -> scalar bool.
# ---------------------------------------------------------------------------


def _dense(grads):
  return [g.values if isinstance(g, tf.IndexedSlices) else g
          for g in grads if g is not None]


def check_exact(grads):
  """TF 1.15 contrib: per-grad is_finite + reduce_all (a full bool temp)."""
  return tf.reduce_all(tf.stack(
      [tf.reduce_all(tf.math.is_finite(g)) for g in _dense(grads)]))


def check_sum(grads):
  """The package's current `all_finite` (sum fast path + exact fallback)."""
  return skip_decision.all_finite(grads)


def check_sum_nofallback(grads):
  """Sum only: measures the fallback cond (may skip an overflowing sum)."""
  return tf.math.is_finite(tf.add_n([tf.reduce_sum(g) for g in _dense(grads)]))


def _with_fallback(total, grads):
  return tf.cond(tf.math.is_finite(total), lambda: tf.constant(True),
                 lambda: check_exact(grads), name="all_finite_exact")


def check_concat(grads):
  """One reduce over the concatenation of all flattened grads."""
  dense = _dense(grads)
  total = tf.reduce_sum(tf.concat([tf.reshape(g, [-1]) for g in dense], 0))
  return _with_fallback(total, dense)


def check_hybrid(grads, small=1 << 14):
  """Small grads concatenated into one reduce, large ones reduced alone."""
  dense = _dense(grads)
  small_ones = [g for g in dense
                if g.shape.is_fully_defined()
                and g.shape.num_elements() <= small]
  large_ones = [g for g in dense if not any(g is s for s in small_ones)]
  sums = [tf.reduce_sum(g) for g in large_ones]
  if small_ones:
    sums.append(tf.reduce_sum(
        tf.concat([tf.reshape(g, [-1]) for g in small_ones], 0)))
  total = sums[0] if len(sums) == 1 else tf.add_n(sums)
  return _with_fallback(total, dense)


def check_sum_stack(grads):
  """Sums stacked and reduced, instead of add_n; with the fallback."""
  dense = _dense(grads)
  total = tf.reduce_sum(tf.stack([tf.reduce_sum(g) for g in dense]))
  return _with_fallback(total, dense)


def check_hybrid_exact(grads, small=1 << 14):
  """Small grads: one exact is_finite over their concatenation, no cond.

  Large grads: the sum fast path, whose exact fallback cond now captures
  only the large grads (a cond captures each tensor through its own Switch,
  and on the fast path every op of the untaken branch is still visited as
  dead by the executor).
  """
  dense = _dense(grads)
  small_ones = [g for g in dense
                if g.shape.is_fully_defined()
                and g.shape.num_elements() <= small]
  large_ones = [g for g in dense if not any(g is s for s in small_ones)]
  checks = []
  if small_ones:
    flat = (tf.reshape(small_ones[0], [-1]) if len(small_ones) == 1 else
            tf.concat([tf.reshape(g, [-1]) for g in small_ones], 0))
    checks.append(tf.reduce_all(tf.math.is_finite(flat)))
  if large_ones:
    total = tf.add_n([tf.reduce_sum(g) for g in large_ones])
    checks.append(_with_fallback(total, large_ones))
  return checks[0] if len(checks) == 1 else tf.logical_and(*checks)


def check_tf115_dense(grads):
  """TF 1.15 contrib's check, re-expressed: each gradient whole, dense.

  One `reduce_all(is_finite(g))` per gradient and a `reduce_all` over the
  flags. TF 1.15 handed an `IndexedSlices` gradient straight to `is_finite`,
  which converts it to a dense tensor of the variable's full shape (a
  scatter of its rows into zeros): for a 200k x 128 embedding table, 100 MB
  written and read again on every step to check 4096 rows.
  """
  flags = [tf.reduce_all(tf.math.is_finite(tf.convert_to_tensor(g)))
           for g in grads if g is not None]
  return tf.reduce_all(tf.stack(flags))


def check_flat(grads, small=1 << 14):
  """The package's check before grouping: every small grad reshaped to 1-D.

  Large grads as the package does (sum fast path, exact fallback).
  """
  dense = [g for g in _dense(grads) if g.dtype.is_floating]
  small_ones = [g for g in dense
                if g.shape.is_fully_defined()
                and g.shape.num_elements() <= small]
  large_ones = [g for g in dense if not any(g is s for s in small_ones)]
  checks = []
  if small_ones:
    flat = [tf.reshape(g, [-1]) for g in small_ones]
    checks.append(tf.reduce_all(tf.math.is_finite(
        flat[0] if len(flat) == 1 else tf.concat(flat, 0))))
  if large_ones:
    checks.append(skip_decision.all_finite(large_ones))
  return checks[0] if len(checks) == 1 else tf.reduce_all(tf.stack(checks))


CHECKS = {
    "tf115_dense": check_tf115_dense,
    "flat": check_flat,
    "core": skip_decision.all_finite,
    "hybrid_exact": check_hybrid_exact,
    "exact": check_exact,
    "sum": check_sum,
    "sum_nofallback": check_sum_nofallback,
    "concat": check_concat,
    "hybrid": check_hybrid,
    "sum_stack": check_sum_stack,
}

# ---------------------------------------------------------------------------
# Skips.
# ---------------------------------------------------------------------------


def switch_skip(is_finite, apply_fn, cond_scope):
  """Runs `apply_fn`'s ops only when `is_finite`, with ONE Switch.

  tf.cond (v1, or v2 once lowered to Switch/Merge) puts a Switch on every
  tensor the branch captures: every gradient, variable, slot and
  hyperparameter, a few thousand for 500 variables. Here the apply ops are
  built outside any cond, each with a control input from a pivot that is
  dead when `is_finite` is False. A dead control input makes an op dead, and
  deadness flows along data edges, so on a skipped step none of them runs.
  A Merge turns the result back into a live tensor for the caller.
  Graph mode only (Session); tf.function keeps tf.cond.
  """
  with tf.compat.v1.name_scope(cond_scope):
    switch_false, switch_true = tf.raw_ops.Switch(data=is_finite,
                                                  pred=is_finite)
    pivot_true = tf.identity(switch_true, name="switch_t")
    pivot_false = tf.identity(switch_false, name="switch_f")
    with tf.control_dependencies([pivot_true.op]):
      applied = apply_fn()
    with tf.control_dependencies([applied] if applied is not None else []):
      done_true = tf.identity(pivot_true)
    merged, _ = tf.raw_ops.Merge(inputs=[pivot_false, done_true], name="Merge")
  return merged.op


class VariantLSO(cmp.LossScaleOptimizer):
  """LossScaleOptimizer with a swappable check, skip and unscale.

  `keep_sparse` is the package's `keep_sparse_gradients`: False, the exact
  default, makes an `IndexedSlices` gradient dense in the unscale.
  """

  def __init__(self, opt, manager, check="sum", skip="cond", unscale="mul",
               keep_sparse=False):
    super().__init__(opt, manager, keep_sparse_gradients=keep_sparse)
    self._check = check
    self._skip = skip
    self._unscale = unscale

  def _down_scale(self, grads_vars, loss_scale):
    if self._unscale == "none":
      return list(grads_vars)
    return super()._down_scale(grads_vars, loss_scale)

  def apply_gradients(self, grads_and_vars, global_step=None, name=None):
    grads_and_vars = tuple(grads_and_vars)
    is_finite = CHECKS[self._check]([g for g, _ in grads_and_vars])

    def apply_fn():
      return self._opt.apply_gradients(grads_and_vars, global_step, name)

    in_function = not tf.executing_eagerly() and isinstance(
        tf.compat.v1.get_default_graph(), tf.__internal__.FuncGraph)
    if self._skip == "cond" or tf.executing_eagerly():
      return self._apply_or_skip(is_finite, apply_fn, global_step)
    if self._skip == "v1cond":
      tf.compat.v1.disable_control_flow_v2()
      try:
        return self._apply_or_skip(is_finite, apply_fn, global_step)
      finally:
        tf.compat.v1.enable_control_flow_v2()
    # The apply's scope first, as the package does: `cond/beta1_power`.
    with tf.compat.v1.name_scope(None, default_name="cond") as scope:
      pass
    update = self._loss_scale_manager.update_loss_scale(is_finite)
    if self._skip == "none":
      applied = apply_fn()
    elif self._skip == "ctrl":
      with tf.control_dependencies([is_finite]):
        applied = apply_fn()
    elif self._skip == "tfcond":
      # The package's construction before the single-Switch skip.
      def branch():
        with tf.compat.v1.name_scope(scope):
          return apply_fn()
      applied = tf.cond(is_finite, branch, tf.no_op)
    elif self._skip == "switch1":
      if in_function:
        return self._apply_or_skip(is_finite, apply_fn, global_step)
      applied = switch_skip(is_finite, apply_fn, scope)
    else:
      raise ValueError(self._skip)
    return tf.group(applied, update)


class _UnlockedManager(cmp.ExponentialUpdateLossScaleManager):
  """The exponential manager without the mutex around its update.

  Measurement only: steps run from several threads, or two optimizers
  sharing it in one `session.run`, could lose an update, which the lock
  exists to prevent.
  """

  def update_loss_scale(self, finite_grads):
    saved = loss_scale_lib._update_is_atomic_as_built  # pylint: disable=protected-access
    loss_scale_lib._update_is_atomic_as_built = lambda: True  # pylint: disable=protected-access
    try:
      return super().update_loss_scale(finite_grads)
    finally:
      loss_scale_lib._update_is_atomic_as_built = saved  # pylint: disable=protected-access


class _PatchedLSO(cmp.LossScaleOptimizer):
  """The package, building (and, eagerly, running) each step under `patch`.

  `patch` is a context manager that swaps some of the package's pieces
  for older ones while it is entered.
  """

  def __init__(self, opt, manager, patch):
    super().__init__(opt, manager)
    self._patch = patch

  def compute_gradients(self, *args, **kwargs):
    with self._patch():
      return super().compute_gradients(*args, **kwargs)

  def apply_gradients(self, *args, **kwargs):
    with self._patch():
      return super().apply_gradients(*args, **kwargs)


@contextlib.contextmanager
def _uncompiled():
  """The package's compiled eager unscale and check, swapped for the ops.

  As they ran before each became one compiled function: what compiling
  them saves in eager mode. Graph mode and tf.function are unchanged.
  """
  # pylint: disable=protected-access
  saved = (unscale_lib._unscale_and_check_compiled,
           skip_decision._all_finite_compiled)
  unscale_lib._unscale_and_check_compiled = unscale_lib._unscale_and_check
  skip_decision._all_finite_compiled = skip_decision.all_finite_ops
  try:
    yield
  finally:
    (unscale_lib._unscale_and_check_compiled,
     skip_decision._all_finite_compiled) = saved


# The eager unscale as it was compiled before it also checked.
_UNSCALED_COMPILED = tf.function(unscale_lib.unscaled, reduce_retracing=True,
                                 autograph=False)


class _TwoCallsLSO(cmp.LossScaleOptimizer):
  """The package as it ran an eager step before its unscale also checked.

  From `EAGER_COMPILE_MIN_GRADIENTS` gradients on, one compiled call
  unscaled, and `apply_gradients` checked in a second one. Graph mode and
  tf.function are unchanged.
  """

  def _down_scale(self, grads_vars, loss_scale):
    grads_vars = list(grads_vars)
    grads = [g for g, _ in grads_vars if g is not None]
    if not (tf.executing_eagerly() and
            len(grads) >= skip_decision.EAGER_COMPILE_MIN_GRADIENTS):
      return super()._down_scale(grads_vars, loss_scale)
    unscaled = iter(_UNSCALED_COMPILED(grads, tf.cast(loss_scale,
                                                      tf.float32)))
    return [(None if g is None else next(unscaled), v) for g, v in grads_vars]


@contextlib.contextmanager
def _old_ops():
  """The package's graph as it was built before this round's op cuts.

  The scale's read copied (`Snapshot`) for resource variables too, and the
  sparse check's bound computed in full (`count * sqrt(2 * squares)`)
  whatever the row count. (The count's add before its write, now an add in
  place, is not restored: one op.)
  """
  # pylint: disable=protected-access
  saved = step_scale._snapshot, skip_decision._finite_squares_suffice

  def snapshot(scale):
    if tf.executing_eagerly():
      return scale
    with scale.graph.gradient_override_map({"Snapshot": "Identity"}):
      return tf.raw_ops.Snapshot(input=scale)

  step_scale._snapshot = snapshot
  skip_decision._finite_squares_suffice = lambda dtype: -1
  try:
    yield
  finally:
    step_scale._snapshot, skip_decision._finite_squares_suffice = saved


def _all_finite_ops_before(grads, scaled=None, inverse=None):
  """`skip_decision.all_finite_ops` as it was before one total took all.

  A sparse gradient's sum of squares tested alone, behind a Switch of its
  own; small gradients checked exactly (one `IsFinite` and `All` per
  dtype); large ones summed into a total behind another Switch; and the
  flags stacked and reduced. Always over the unscaled gradients, after the
  multiplies (`scaled` is ignored).
  """
  # pylint: disable=protected-access
  del scaled, inverse
  sd = skip_decision
  small_by_dtype, summable, checks = {}, [], []
  for grad in grads:
    values = sd._values(grad)
    if isinstance(grad, tf.IndexedSlices) and sd._duplicates_possible(grad):
      squares = sd._sparse_squares(grad)
      if squares is not None:
        checks.append(sd._true_unless(
            tf.math.is_finite(squares),
            lambda g=grad: sd._duplicate_sums_finite(g),
            "duplicate_sums_finite"))
        continue
      sums_finite, covers_values = sd._sparse_check(grad)
      checks.append(sums_finite)
      if covers_values:
        continue
    for g in sd._float_parts(values):
      size = g.shape.num_elements()
      if size is not None and size <= sd._SMALL_GRAD_ELEMENTS:
        small_by_dtype.setdefault(g.dtype, []).append(g)
      elif g.dtype in (tf.float32, tf.float64):
        summable.append(g)
      else:
        checks.append(sd._is_finite_all([g]))
  checks.extend(sd._is_finite_all(group) for group in small_by_dtype.values())
  if summable:
    total = tf.add_n([sd._as_float32(tf.reduce_sum(g)) for g in summable])
    checks.append(sd._true_unless(
        tf.math.is_finite(total),
        lambda: tf.reduce_all(
            tf.stack([sd._is_finite_all([g]) for g in summable])),
        "all_finite_exact"))
  if not checks:
    return tf.constant(True)
  return checks[0] if len(checks) == 1 else tf.reduce_all(tf.stack(checks))


def _own_unscale_and_check():
  """A compiled `unscale._unscale_and_check` of a variant's own.

  The package's is traced with the package's check, and a trace is shared
  by every caller: a variant that patches the check needs its own.
  """
  return tf.function(
      lambda grads, scale: unscale_lib._unscale_and_check(grads, scale),  # pylint: disable=protected-access
      reduce_retracing=True, autograph=False)


_OLD_CHECK_COMPILED = tf.function(_all_finite_ops_before,
                                  reduce_retracing=True, autograph=False)
_OLD_UNSCALE_AND_CHECK_COMPILED = _own_unscale_and_check()


@contextlib.contextmanager
def _old_check():
  """The package with `all_finite_ops` as it was before one total took all."""
  # pylint: disable=protected-access
  saved = (skip_decision.all_finite_ops, skip_decision._all_finite_compiled,
           unscale_lib._unscale_and_check_compiled)
  skip_decision.all_finite_ops = _all_finite_ops_before
  skip_decision._all_finite_compiled = _OLD_CHECK_COMPILED
  unscale_lib._unscale_and_check_compiled = _OLD_UNSCALE_AND_CHECK_COMPILED
  try:
    yield
  finally:
    (skip_decision.all_finite_ops, skip_decision._all_finite_compiled,
     unscale_lib._unscale_and_check_compiled) = saved


def _old_check_lso(inner):
  return _PatchedLSO(
      inner, cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9),
      _old_check)


_AFTER_UNSCALE_COMPILED = _own_unscale_and_check()


@contextlib.contextmanager
def _check_after_unscale():
  """The package with its check reading the unscaled gradients.

  As before the check's total read the scaled ones: in a function, and
  in a compiled eager step, it waited for the multiplies.
  """
  # pylint: disable=protected-access
  saved = (skip_decision.all_finite_scaled,
           unscale_lib._unscale_and_check_compiled)
  skip_decision.all_finite_scaled = (
      lambda grads, scaled, inverse: skip_decision.all_finite_ops(grads))
  unscale_lib._unscale_and_check_compiled = _AFTER_UNSCALE_COMPILED
  try:
    yield
  finally:
    (skip_decision.all_finite_scaled,
     unscale_lib._unscale_and_check_compiled) = saved


def _check_after_unscale_lso(inner):
  return _PatchedLSO(
      inner, cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9),
      _check_after_unscale)


_CONCAT_SMALL_CHECK_COMPILED = tf.function(
    lambda grads, scaled=None, inverse=None: skip_decision.all_finite_ops(
        grads, scaled, inverse),
    reduce_retracing=True, autograph=False)
_CONCAT_SMALL_UNSCALE_AND_CHECK_COMPILED = _own_unscale_and_check()


def _squares_of_parts(tensors):
  """The small gradients' terms before they were added by shape."""
  # pylint: disable=protected-access
  return [skip_decision._as_float32(tf.nn.l2_loss(p))
          for p in skip_decision._small_parts(tensors)]


@contextlib.contextmanager
def _concat_small():
  """The package with small gradients concatenated, as before `_small_sums`.

  Their term in the total was the sum of squares of a few concatenated
  parts, and small gradients with no large or sparse one beside them were
  checked exactly (a concatenation, `IsFinite` and `All`), however many.
  Graph and function steps, and compiled eager ones, only: an eager step
  of fewer than 8 gradients adds its total up in NumPy in both (it did not
  when this variant measured the change, at commit 119816e).
  """
  # pylint: disable=protected-access
  saved = (skip_decision._small_sums, skip_decision._many_small_alone,
           skip_decision._all_finite_compiled,
           unscale_lib._unscale_and_check_compiled)
  skip_decision._small_sums = _squares_of_parts
  skip_decision._many_small_alone = lambda small: False
  skip_decision._all_finite_compiled = _CONCAT_SMALL_CHECK_COMPILED
  unscale_lib._unscale_and_check_compiled = (
      _CONCAT_SMALL_UNSCALE_AND_CHECK_COMPILED)
  try:
    yield
  finally:
    (skip_decision._small_sums, skip_decision._many_small_alone,
     skip_decision._all_finite_compiled,
     unscale_lib._unscale_and_check_compiled) = saved


def _concat_small_lso(inner):
  return _PatchedLSO(
      inner, cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9),
      _concat_small)


class _CompileAllLSO(cmp.LossScaleOptimizer):
  """The package with every eager step's unscale and check compiled.

  Below `EAGER_COMPILE_MIN_GRADIENTS` gradients (the embedding's three)
  the package runs them op by op; this measures one compiled call there.
  """

  def compute_gradients(self, *args, **kwargs):
    saved = skip_decision.EAGER_COMPILE_MIN_GRADIENTS
    skip_decision.EAGER_COMPILE_MIN_GRADIENTS = 1
    try:
      return super().compute_gradients(*args, **kwargs)
    finally:
      skip_decision.EAGER_COMPILE_MIN_GRADIENTS = saved


def _compile_all(inner):
  return _CompileAllLSO(inner,
                        cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9))


def _two_calls(inner):
  return _TwoCallsLSO(inner,
                      cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9))


def _old_ops_lso(inner):
  return _PatchedLSO(
      inner, cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9), _old_ops)


def _xla_unscale(inner):
  return cmp.LossScaleOptimizer(
      inner, cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9),
      xla_unscale=True)


def _op_by_op(inner):
  return _PatchedLSO(
      inner, cmp.ExponentialUpdateLossScaleManager(2.0**15, 10**9),
      _uncompiled)


class _WhereUpdateManager(cmp.ExponentialUpdateLossScaleManager):
  """The exponential manager computing the whole policy on every step.

  As it did before a finite step that does not grow became a count only:
  both branches of the update's cond then ran as one (`tf.where` over all
  three values, which is exact on every step). Measures what the cond saves.
  """

  def update_loss_scale(self, finite_grads):
    saved = loss_scale_lib._cond_of_ops  # pylint: disable=protected-access
    loss_scale_lib._cond_of_ops = (  # pylint: disable=protected-access
        lambda pred, true_fn, false_fn: tf.group(false_fn()))
    try:
      return super().update_loss_scale(finite_grads)
    finally:
      loss_scale_lib._cond_of_ops = saved  # pylint: disable=protected-access


def _where_update(inner):
  return cmp.LossScaleOptimizer(inner, _WhereUpdateManager(2.0**15, 10**9))


def _variant(manager=cmp.ExponentialUpdateLossScaleManager, **kwargs):
  return lambda inner: VariantLSO(inner, manager(2.0**15, 10**9), **kwargs)


def _unlocked(inner):
  return cmp.LossScaleOptimizer(inner, _UnlockedManager(2.0**15, 10**9))


VARIANTS = {
    # TF 1.15 contrib's check (sparse gradients densified), with the
    # package's skip and the sparse opt-in's unscale, which leaves the
    # gradients sparse for the check to densify: what the check alone
    # costs on sparse gradients. The benchmark times it on every
    # embedding case.
    "tf115_check": _variant(check="tf115_dense", keep_sparse=True),
    # Checks, with the package's cond skip.
    "chk_exact": _variant(check="exact"),
    "chk_flat": _variant(check="flat"),
    "chk_nofallback": _variant(check="sum_nofallback"),
    "chk_concat": _variant(check="concat"),
    "chk_hybrid": _variant(check="hybrid"),
    # What the pieces cost (unsafe: for measurement only).
    "no_unscale": _variant(unscale="none"),
    "skip_none": _variant(skip="none"),
    "skip_ctrl": _variant(skip="ctrl"),
    # Skip constructions (exact).
    "skip_v1cond": _variant(skip="v1cond"),
    "skip_switch1": _variant(skip="switch1"),
    "hybrid_switch1": _variant(check="hybrid", skip="switch1"),
    "hx_cond": _variant(check="hybrid_exact"),
    "hx_switch1": _variant(check="hybrid_exact", skip="switch1"),
    # The package with its manager update unserialized (unsafe under
    # threads, or when two optimizers share the manager): what the lock
    # costs.
    "no_lock": _unlocked,
    # The package with the exponential update computing the whole policy on
    # every step, as before the common step became a count only.
    "update_where": _where_update,
    # The package with its eager unscale and check op by op, as before they
    # were compiled (eager cases only differ).
    "eager_op_by_op": _op_by_op,
    # The package with `xla_unscale=True`: each dense gradient unscaled and
    # checked in one XLA pass.
    "xla_unscale": _xla_unscale,
    # The package's eager step before its unscale also checked: two
    # compiled calls (eager cases only differ).
    "eager_two_calls": _two_calls,
    # The package with even a few eager gradients unscaled and checked in
    # one compiled call (the embedding's eager case only differs).
    "eager_compile_all": _compile_all,
    # The package's graph before this round's op cuts (graph cases).
    "old_ops": _old_ops_lso,
    # The package's check before every gradient joined one total (each
    # sparse gradient, the small ones and the large ones checked apart).
    "old_check": _old_check_lso,
    # The package with its check reading the unscaled gradients, after the
    # multiplies (function and compiled eager steps differ).
    "check_after_unscale": _check_after_unscale_lso,
    # The package's check before small gradients were added by shape: the
    # sums of squares of their concatenation, and small gradients alone
    # checked exactly however many.
    "concat_small": _concat_small_lso,
    # The package's check with the tf.cond skip it used before.
    "core_tfcond": _variant(check="core", skip="tfcond"),
}


def _check_skip_semantics():
  """A NaN step must leave every variable, slot and step untouched."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  failures = 0
  for name in ("tf115_check", "chk_flat", "chk_exact", "chk_concat",
               "chk_hybrid", "skip_v1cond", "skip_switch1", "hybrid_switch1",
               "hx_cond", "hx_switch1"):
    with tf.Graph().as_default():
      w = tf.compat.v1.Variable(np.ones((3, 3), np.float32), name="w")
      b = tf.compat.v1.Variable(np.ones((3,), np.float32), name="b")
      factor = tf.compat.v1.placeholder_with_default(1.0, [])
      x = tf.constant(np.ones((2, 3), np.float32))
      loss = tf.reduce_sum(tf.matmul(x, w) + b) * factor
      step = tf.compat.v1.train.get_or_create_global_step()
      opt = VARIANTS[name](tf.compat.v1.train.AdamOptimizer(0.1))
      train = opt.minimize(loss, global_step=step)
      names = [v.op.name for v in tf.compat.v1.global_variables()]
      with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        state = lambda: sess.run(tf.compat.v1.global_variables())
        sess.run(train)
        before = state()
        sess.run(train, {factor: float("nan")})
        after = state()
        sess.run(train)
        final = state()
      # The loss-scale state moves on a bad step; nothing else may.
      same = all(np.array_equal(x, y)
                 for n, x, y in zip(names, before, after)
                 if n.split("/")[-1] not in ("loss_scale", "good_steps",
                                             "bad_steps"))
      changed = not np.array_equal(before[names.index("w")],
                                   final[names.index("w")])
      ok = same and changed and "cond/beta1_power" in names
      if not ok:
        print([n for n, x, y in zip(names, before, after)
               if not np.array_equal(x, y)], changed)
      failures += not ok
      print("{:<16} {}  {}".format(name, "ok" if ok else "FAIL",
                                   [n for n in names if "power" in n]))
  return failures


if __name__ == "__main__":
  sys.exit(1 if _check_skip_semantics() else 0)
