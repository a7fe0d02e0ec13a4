# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""An embedding's dense gradient, checked and applied by its touched rows.

TF 1.15 made an `IndexedSlices` gradient dense when it unscaled it
(`unscale.densified`): `unsorted_segment_sum` of its values into a table of
zeros, times `cast(reciprocal(scale))`. The exact default keeps those
numbers (docs/design.md, contract 15), and they cost a table-sized
gradient, a table-sized check and a table-sized update every step.

Every row a batch did not touch is `0 * reciprocal`, exactly 0 whenever
the reciprocal is finite. So:

* **The check.** TF 1.15's `reduce_all(is_finite(g))` of the dense table
  is the same decision as the check of the touched rows (the same sums, by
  the same kernel, in the same order, times the same reciprocal), and of
  `0 * reciprocal` for the others: a float16 reciprocal overflows to Inf
  for scales under 2**-16, which TF 1.15 saw as NaN in every untouched
  row. Every inner optimizer gets it.
* **The update.** Where a zero gradient leaves a row as it was, bit for
  bit, the dense update is the update of the touched rows alone, computed
  by the dense kernel's own formula (`_EXACT_RULES`). TF's sparse kernels
  are not that formula: Adagrad's evaluates `rsqrt` per row, where the
  dense kernel's vectorized loop rounds some elements differently, and
  its v1 optimizer sums duplicates again. Other inner optimizers (decays,
  Ftrl) move untouched rows, and keep the dense update.

`unscale` notes each dense gradient it returns with its touched rows
(`remember`), by the identity of the tensor; `LossScaleOptimizer`,
handed the very same tensor, uses them (`lookup`). A tensor replaced in
between (clipped, all-reduced) is a new object and is checked and applied
densely, as before. In a TF1-style graph a `Session.run` may feed the
dense tensor a value of the caller's, which its rows never saw, so there
only the gradients of the optimizer's own `minimize` (which nobody else
holds) take this path (`inside_minimize`).
"""

import contextlib
import threading
import weakref
from typing import Any, Optional

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import known_flags

# Called from code AutoGraph converts (a `tf.function`'s), these run as
# they are: AutoGraph's cache of converted functions handed one of them
# another's conversion (the per-step closure of `_patched`), and they hold
# no Python control flow on tensors.
_not_converted = tf.autograph.experimental.do_not_convert

_FORMS_ATTR = "_contrib_mp_sparse_forms"
_FLOATS = (tf.float16, tf.bfloat16, tf.float32, tf.float64)
# The dense kernels evaluate all but the last `size % packet` elements of
# a table in SIMD packets, and those last ones one by one, which rounds
# `rsqrt` differently. A table of a multiple of 64 elements has no such
# tail for any packet width; the rows' own `rsqrt` is padded to one.
_PACKET_MULTIPLE = 64


class SparseForm(object):
  """A dense gradient as TF 1.15 computed it, by its touched rows.

  Attributes:
    dense: A weak reference to the dense gradient `unscale` returned (the
      form lives as long as it, and must not keep it alive).
    shape: Its static shape.
    ids: The distinct indices, in order of first appearance (`tf.unique`).
    rows: The rows of `dense` at `ids`: each index's values summed by
      `unsorted_segment_sum`, in the order the dense conversion sums them,
      then times the reciprocal, as in the dense table.
    reciprocal: The reciprocal the rows were multiplied by, in their dtype
      (every untouched row is 0 times it), or None where it cannot be
      infinite.
    internal: Made inside this package's `minimize`, where nobody else
      holds `dense` (see the module docstring).
  """

  __slots__ = ("dense", "shape", "ids", "rows", "reciprocal", "internal")

  def __init__(self, dense, ids, rows, reciprocal, internal):
    self.dense = weakref.ref(dense)
    self.shape = dense.shape
    self.ids = ids
    self.rows = rows
    self.reciprocal = reciprocal
    self.internal = internal

  def check_tensors(self):
    """What TF 1.15's check of `dense` decides on, touched rows first."""
    if self.reciprocal is None:
      return [self.rows]
    return [self.rows, self.reciprocal]


class _Forms(object):
  """`SparseForm`s by the identity of their dense tensors, weak on them."""

  def __init__(self):
    self._lock = threading.Lock()
    self._entries = {}

  def remember(self, dense, form):
    key = id(dense)
    owner = weakref.ref(self)

    def forget(ref):
      table = owner()
      if table is not None:
        with table._lock:  # pylint: disable=protected-access
          entry = table._entries.get(key)  # pylint: disable=protected-access
          if entry is not None and entry[0] is ref:
            del table._entries[key]  # pylint: disable=protected-access

    with self._lock:
      self._entries[key] = (weakref.ref(dense, forget), form)

  def lookup(self, tensor):
    with self._lock:
      entry = self._entries.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
      return None
    return entry[1]


_EAGER_FORMS = _Forms()
_CREATION = threading.Lock()
_LOCAL = threading.local()


def _forms(tensor, create: bool) -> Optional[_Forms]:
  graph = getattr(tensor, "graph", None)
  if graph is None:
    return _EAGER_FORMS
  table = getattr(graph, _FORMS_ATTR, None)
  if table is None and create:
    with _CREATION:
      table = getattr(graph, _FORMS_ATTR, None)
      if table is None:
        table = _Forms()
        setattr(graph, _FORMS_ATTR, table)
  return table


@contextlib.contextmanager
def inside_minimize():
  """Marks the forms made on this thread meanwhile as the optimizer's own."""
  depth = getattr(_LOCAL, "minimize_depth", 0)
  _LOCAL.minimize_depth = depth + 1
  try:
    yield
  finally:
    _LOCAL.minimize_depth = depth


def _internal() -> bool:
  return getattr(_LOCAL, "minimize_depth", 0) > 0


def _usable(internal: bool) -> bool:
  """Whether a form made now could be used (see the module docstring)."""
  if tf.distribute.has_strategy():
    return False
  if tf.executing_eagerly():
    return True
  graph = tf.compat.v1.get_default_graph()
  return internal or not _tf_compat.can_feed_any_tensor(graph)


@_not_converted
def wanted(grad) -> bool:
  """Whether `remember` takes `grad`: a real floating `IndexedSlices`."""
  return (isinstance(grad, tf.IndexedSlices) and
          grad.values.dtype.base_dtype in _FLOATS and
          grad.dense_shape is not None and
          grad.values.shape.rank is not None and grad.values.shape.rank >= 1
          and _usable(_internal()))


@_not_converted
def remember(dense, slices: tf.IndexedSlices, inverse) -> None:
  """Notes `dense` (`slices` made dense, times `inverse`) by its rows.

  Args:
    dense: The unscaled dense gradient returned to the caller.
    slices: The `IndexedSlices` it was made from (`wanted(slices)`).
    inverse: The reciprocal of the scale, cast to the values' dtype, that
      `dense` was multiplied by.
  """
  ids, positions = tf.unique(slices.indices)
  # The dense conversion's kernel: each segment's rows added in their order.
  summed = tf.math.unsorted_segment_sum(slices.values, positions,
                                        tf.shape(ids)[0])
  rows = summed * inverse
  dtype = slices.values.dtype.base_dtype
  # Only a float16 reciprocal of a valid scale (step_scale) can be Inf.
  rows_in_table = tf.compat.dimension_value(dense.shape[0]) if (
      dense.shape.rank) else None
  reciprocal = inverse if dtype == tf.float16 and rows_in_table != 0 else None
  _forms(dense, create=True).remember(
      dense, SparseForm(dense, ids, rows, reciprocal, _internal()))


@_not_converted
def lookup(grad) -> Optional[SparseForm]:
  """The form of `grad`, if `unscale` made `grad` and it may be used here."""
  if isinstance(grad, tf.IndexedSlices) or not tf.is_tensor(grad):
    return None
  table = _forms(grad, create=False)
  form = None if table is None else table.lookup(grad)
  if form is None or not _usable(form.internal):
    return None
  return form


# -- The exact updates ------------------------------------------------------


def _static_rate(tensor, dtype) -> Optional[np.ndarray]:
  """`tensor` cast to `dtype`, if known now: NumPy's scalar, or None."""
  if tensor is None:
    return None
  value = tf.get_static_value(tensor)
  if value is None:
    return None
  with np.errstate(all="ignore"):
    return np.asarray(value).astype(dtype.as_numpy_dtype)


def _zero_gradient_is_a_no_op(rate) -> bool:
  """Whether `var - 0 * rate` is `var`, bit for bit, for every `var`.

  `0 * rate` is +0 for a finite rate whose sign bit is clear, and
  `var - +0` is `var` (-0 included). A negative rate gives -0, and
  `-0 - -0` is +0; a NaN or infinite one, NaN.
  """
  if rate is None or rate.shape:
    return False
  as_float = np.float64(rate)
  return bool(np.isfinite(as_float) and not np.signbit(as_float))


def _gather(var, ids):
  return tf.gather(var, ids)


def _is_ref(var) -> bool:
  """Whether `var` is a ref variable (its dtype is a reference type)."""
  return var.dtype != var.dtype.base_dtype


def _scatter(var, ids, rows, op, use_locking):
  """`var[ids] op= rows`: a resource or a ref variable."""
  if not _is_ref(var):
    raw = {"update": tf.raw_ops.ResourceScatterUpdate,
           "sub": tf.raw_ops.ResourceScatterSub}[op]
    return raw(resource=var.handle, indices=ids, updates=rows)
  fn = {"update": tf.compat.v1.scatter_update,
        "sub": tf.compat.v1.scatter_sub}[op]
  return fn(var, ids, rows, use_locking=use_locking).op


def _padded_rsqrt(x):
  """`rsqrt(x)`, every element evaluated in SIMD packets.

  The dense kernel evaluates a table of a multiple of 64 elements all in
  packets; `x`, a few rows, may end in elements it would evaluate one by
  one, which `rsqrt` rounds differently. Padded with ones to a multiple
  of 64, it has none.
  """
  size = tf.size(x)
  flat = tf.reshape(x, [-1])
  pad = tf.math.floormod(-size, _PACKET_MULTIPLE)
  padded = tf.concat([flat, tf.ones([pad], x.dtype)], 0)
  return tf.reshape(tf.math.rsqrt(padded)[:size], tf.shape(x))


def _gradient_descent(opt, var, form, dtype):
  """`var -= grad * lr`: `ApplyGradientDescent`'s formula, by rows."""
  lr = tf.cast(_tf_compat.v1_optimizer_tensor(opt, "learning_rate"), dtype)
  if not _zero_gradient_is_a_no_op(_static_rate(lr, dtype)):
    return _DENSE
  # `var - x` in the scatter, as in the dense kernel.
  return _scatter(var, form.ids, form.rows * lr, "sub",
                  _tf_compat.v1_optimizer_use_locking(opt))


def _adagrad(opt, var, form, dtype):
  """`ApplyAdagrad`'s formula, by rows.

  `accum += grad**2; var -= grad * lr * rsqrt(accum)`. An untouched row
  keeps its accumulator (`+ 0`) and its value (`- 0 * lr * rsqrt(accum)`
  is `- +0`) because the accumulator is positive: v1 Adagrad refuses an
  initial value that is not, and only adds squares to it.
  """
  if var.shape.num_elements() % _PACKET_MULTIPLE:
    return _DENSE
  lr = tf.cast(_tf_compat.v1_optimizer_tensor(opt, "learning_rate"), dtype)
  if not _zero_gradient_is_a_no_op(_static_rate(lr, dtype)):
    return _DENSE
  accum = opt.get_slot(var, "accumulator")
  if accum is None:
    return _DENSE
  grad = form.rows
  new_accum = _gather(accum, form.ids) + tf.square(grad)
  new_var = _gather(var, form.ids) - grad * lr * _padded_rsqrt(new_accum)
  locking = _tf_compat.v1_optimizer_use_locking(opt)
  return tf.group(_scatter(accum, form.ids, new_accum, "update", locking),
                  _scatter(var, form.ids, new_var, "update", locking))


def _static_zero(tensor) -> bool:
  """Whether `tensor` is known now to be exactly 0 (either sign)."""
  value = tf.get_static_value(tensor)
  return value is not None and np.shape(value) == () and value == 0


def _proximal_rates(opt):
  """A proximal optimizer's learning rate, l1 and l2 tensors (`_prepare`'s)."""
  return tuple(_tf_compat.v1_optimizer_tensor(opt, name) for name in (
      "learning_rate", "l1_regularization_strength",
      "l2_regularization_strength"))


def _proximal_gradient_descent(opt, var, form, dtype):
  """`ApplyProximalGradientDescent`'s formula, by rows, without l1 or l2.

  `var = (var - grad * lr) / (1 + l2 * lr)`: with l1 = l2 = 0 an untouched
  row is `(var - +0) / 1`, itself. Regularization moves every row.
  """
  lr, l1, l2 = _proximal_rates(opt)
  if not (_zero_gradient_is_a_no_op(_static_rate(lr, dtype)) and
          _static_zero(l1) and _static_zero(l2) and
          lr.dtype.base_dtype == dtype):
    return _DENSE
  grad = form.rows
  new_var = (_gather(var, form.ids) - grad * lr) / (
      tf.ones([], dtype) + l2 * lr)
  return _scatter(var, form.ids, new_var, "update",
                  _tf_compat.v1_optimizer_use_locking(opt))


def _proximal_adagrad(opt, var, form, dtype):
  """`ApplyProximalAdagrad`'s formula, by rows, without l1 or l2.

  `accum += grad**2; rate = lr * rsqrt(accum);
  var = (var - grad * rate) / (1 + l2 * rate)`: an untouched row keeps
  both, as Adagrad's does (`_adagrad`).
  """
  lr, l1, l2 = _proximal_rates(opt)
  if (var.shape.num_elements() % _PACKET_MULTIPLE or
      not (_zero_gradient_is_a_no_op(_static_rate(lr, dtype)) and
           _static_zero(l1) and _static_zero(l2) and
           lr.dtype.base_dtype == dtype)):
    return _DENSE
  accum = opt.get_slot(var, "accumulator")
  if accum is None:
    return _DENSE
  grad = form.rows
  new_accum = _gather(accum, form.ids) + tf.square(grad)
  rate = lr * _padded_rsqrt(new_accum)
  new_var = (_gather(var, form.ids) - grad * rate) / (
      tf.ones([], dtype) + l2 * rate)
  locking = _tf_compat.v1_optimizer_use_locking(opt)
  return tf.group(_scatter(accum, form.ids, new_accum, "update", locking),
                  _scatter(var, form.ids, new_var, "update", locking))


# Inner optimizer class (exactly: a subclass may change the update) -> the
# exact update of the touched rows, or `_DENSE` where it is not exact.
_EXACT_RULES = {
    tf.compat.v1.train.GradientDescentOptimizer: _gradient_descent,
    tf.compat.v1.train.AdagradOptimizer: _adagrad,
    tf.compat.v1.train.ProximalGradientDescentOptimizer:
        _proximal_gradient_descent,
    tf.compat.v1.train.ProximalAdagradOptimizer: _proximal_adagrad,
}


def takes_sparse_updates(opt) -> bool:
  """Whether `opt`'s class has an exact update by rows (`_EXACT_RULES`)."""
  return type(opt) in _EXACT_RULES


def _exact_update(opt, var, form):
  """The exact update of `var` by `form`'s rows, or `_DENSE`."""
  rule = _EXACT_RULES.get(type(opt))
  # A resource handle alone (`_DenseReadResourceVariableProcessor`) has no
  # slots to find: dense.
  if rule is None or not isinstance(var, tf.Variable) or not (
      _is_ref(var) or hasattr(var, "handle")):
    return _DENSE
  dtype = tf.as_dtype(var.dtype).base_dtype
  if (dtype != form.rows.dtype.base_dtype or not var.shape.is_fully_defined()
      or not form.shape.is_fully_defined() or var.shape != form.shape):
    return _DENSE
  return rule(opt, var, form, dtype)


def _dense_from_rows(form, like):
  """`like`, bit for bit, rebuilt from the rows: zeros, and the rows.

  TF 1.15's table-sized sum and multiply leave every untouched row
  `+0 * reciprocal`, which is +0 wherever the step is applied (a step with
  an infinite reciprocal is skipped); the touched rows are `form.rows`
  exactly, signed zeros included (an update, not an add).
  """
  zeros = tf.zeros(tf.shape(like, out_type=form.ids.dtype), like.dtype)
  return tf.tensor_scatter_nd_update(zeros, tf.expand_dims(form.ids, -1),
                                     form.rows)


@_not_converted
def for_inner(grads_and_vars, forms):
  """The pairs to hand the inner optimizer, and their forms by identity.

  In a graph or a function, each dense gradient with a form is replaced by
  the same values rebuilt from its rows (`_dense_from_rows`): the inner
  optimizer's dense update reads what TF 1.15's read, and TF 1.15's
  table-sized multiply of the table-sized sum is never run (nothing else
  reads it there). Eagerly the dense gradient already exists, and stays.

  Args:
    grads_and_vars: `(gradient, variable)` pairs.
    forms: `id(gradient)` -> `SparseForm`, for those with one (`lookup`).

  Returns:
    `(pairs, by_identity)`: the pairs, and `id(tensor) -> (tensor, form)`
    for the tensors in them that have a form (`exact_updates`).
  """
  pairs, by_identity = [], {}
  eager = tf.executing_eagerly()
  for g, v in grads_and_vars:
    form = forms.get(id(g)) if g is not None else None
    if form is not None:
      if not eager:
        g = _dense_from_rows(form, g)
      by_identity[id(g)] = (g, form)
    pairs.append((g, v))
  return pairs, by_identity


@_not_converted
@contextlib.contextmanager
def exact_updates(opt, by_identity):
  """While entered, `opt`'s dense update of these tensors is by rows.

  `by_identity` maps `id(tensor)` to `(tensor, its SparseForm)`
  (`for_inner`). The inner optimizer's `apply_gradients` runs as ever
  (slots, names, `global_step`); only its per-variable dense update
  (`_resource_apply_dense`, `_apply_dense`) of one of these very tensors
  becomes the exact update of its rows, where there is one
  (`_exact_update`).
  """
  if not by_identity or not takes_sparse_updates(opt):
    yield
    return
  with _PATCHING:
    with _patched(opt, by_identity):
      yield


# Held while an inner optimizer's methods are replaced, so that two threads
# applying through one inner optimizer never restore each other's.
_PATCHING = threading.RLock()


def _patched(opt, by_identity):
  """`exact_updates`' replacement of `opt`'s dense updates."""

  def replace(original):

    @_not_converted
    def dense_or_rows(grad, var, *args, **kwargs):
      entry = by_identity.get(id(grad))
      if entry is not None and entry[0] is grad and not args and not kwargs:
        op = _exact_update(opt, var, entry[1])
        if op is not _DENSE:
          return op  # Eagerly, None: it has run.
      return original(grad, var, *args, **kwargs)

    return dense_or_rows

  return _tf_compat.patched_dense_apply(opt, replace)


# What an exact update returns where it is not exact: the dense one runs.
_DENSE = object()


@_not_converted
def substitute_check(grads) -> Any:
  """`grads` with each usable dense gradient's check tensors in its place.

  A gradient whose flag the unscale already computed (`known_flags`) stays:
  its flag costs nothing.
  """
  result = []
  for g in grads:
    form = lookup(g)
    if form is None or known_flags.is_known(g):
      result.append(g)
    else:
      result.extend(form.check_tensors())
  return result
