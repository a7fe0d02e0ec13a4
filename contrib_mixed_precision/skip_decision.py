# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Where the skip is decided: is every update that would be applied finite?

`all_finite` turns a step's gradients into one scalar bool, exactly; the
optimizer applies the step only when it is True and hands the same flag to
the loss-scale manager. A flag the unscale already computed for the very
same tensors is used as it is (`known_flags`). Under `tf.distribute` the
replicas agree on the flag first (`replica_consensus`).
`single_switch_allowed` says where the step's branches (the check's exact
fallback, the skip, the loss-scale update) may each be one Switch.
"""

import math
from typing import Any, Optional, Sequence

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import known_flags


def _values(grad):
  """The tensor to check: IndexedSlices' values; numbers become tensors.

  Every v1 optimizer accepts gradients that are Python or NumPy numbers or
  lists (it converts them), and so did TF 1.15's `is_finite(g)`.
  """
  if isinstance(grad, tf.IndexedSlices):
    return grad.values
  if tf.is_tensor(grad):
    return grad
  return tf.convert_to_tensor(grad)


def _float_parts(values):
  """The floating tensors whose finiteness is `values`' finiteness.

  A complex number is finite when both of its parts are: NaN or Inf in the
  real or the imaginary part reaches the variable.
  """
  if values.dtype.is_complex:
    return [tf.math.real(values), tf.math.imag(values)]
  return [values]


def _duplicates_possible(slices: tf.IndexedSlices) -> bool:
  """Whether `slices` may hold an index twice: more than one row, or unknown."""
  values = slices.values
  rows = tf.compat.dimension_value(values.shape[0]) if values.shape.rank else (
      None)
  return rows is None or rows > 1


def _duplicate_sums_finite(slices: tf.IndexedSlices) -> tf.Tensor:
  """Exact: whether every per-index sum of `slices` is finite.

  The optimizer applies, per index, the sum of the rows given for it: TF's
  v1 optimizers add duplicates up with `unsorted_segment_sum` in the values'
  dtype before their sparse update. This repeats that sum, whose results
  are all finite exactly when every value is finite and no sum overflows
  (NaN and Inf survive addition).
  """
  unique, positions = tf.unique(slices.indices)
  sums = tf.math.unsorted_segment_sum(slices.values, positions,
                                      tf.shape(unique)[0])
  return tf.reduce_all(
      [tf.reduce_all(tf.math.is_finite(p)) for p in _float_parts(sums)])


def _sparse_squares(slices: tf.IndexedSlices) -> Optional[tf.Tensor]:
  """A float32 sum of squares of the values, if its finiteness settles all.

  When it is finite, every value is finite and no per-index sum can
  overflow (`_sparse_check`'s bound, which for this many rows is exactly
  "the sum of squares is finite": `_finite_squares_suffice`). None when the
  values are half precision (their squares overflow first) or the row
  count is not static or too large; `_sparse_check` decides those.
  """
  part_dtype = slices.values.dtype.real_dtype
  count = slices.indices.shape.num_elements()
  if (part_dtype not in (tf.float32, tf.float64) or count is None or
      count > _finite_squares_suffice(part_dtype)):
    return None
  return _as_float32(
      tf.add_n([tf.nn.l2_loss(p) for p in _float_parts(slices.values)]))


def _sparse_check(slices: tf.IndexedSlices):
  """Whether the per-index sums of `slices` are finite, as the optimizer sums.

  For gradients `_sparse_squares` does not take. Rows that are each finite
  may sum past the dtype's range (two fp16 rows of 40000), so the exact
  check (`_duplicate_sums_finite`) runs only when the rows could overflow
  at all, which a bound decides from the values alone:

  `n` rows whose elements have magnitude at most `m` sum, in any order and
  with rounding to nearest, to at most `3 * n * m`. Each addition grows a
  partial sum's magnitude by at most `3 * m`: `m` from the row, and at most
  `2 * m` from rounding (a row of at least half a unit in the last place of
  the partial sum leaves a result at most twice the larger of the two,
  whose half unit is at most `2 * m`; a smaller row moves the sum by at
  most one unit, on a tie). So `n * m <= max / 4` proves that no partial
  sum reaches the end of the range.

  * float32 and float64 values (complex ones by their parts) take `m` from
    one read: the root of their sum of squares (`l2_loss`), which bounds
    every element, and is itself non-finite when an element is. The bound
    is then `n * m <= max / 8`, a factor of 2 spare for the rounding of the
    sum of squares. The values need no other check.
  * Half-precision values would overflow such a sum; `m` is their largest
    magnitude, and the caller checks the values themselves.

  Args:
    slices: The gradient, which may hold duplicates.

  Returns:
    `(check, covers_values)`: a scalar bool tensor, and whether it also
    decides that every value is finite.
  """
  values = slices.values
  part_dtype = values.dtype.real_dtype
  bound_dtype = tf.float64 if part_dtype == tf.float64 else tf.float32
  covers_values = part_dtype in (tf.float32, tf.float64)
  count = tf.cast(tf.size(slices.indices), bound_dtype)
  if covers_values:
    squares = tf.add_n([tf.nn.l2_loss(p) for p in _float_parts(values)])
    largest = tf.sqrt(2 * squares)
    limit = part_dtype.max / 8
  else:
    # abs() of a complex tensor is its modulus, which bounds both parts.
    largest = tf.cast(tf.reduce_max(tf.abs(values)), bound_dtype)
    limit = part_dtype.max / 4
  # NaN compares False: the exact check decides.
  cannot_overflow = tf.less_equal(count * largest,
                                  tf.constant(limit, bound_dtype))
  check = _true_unless(cannot_overflow,
                       lambda: _duplicate_sums_finite(slices),
                       "duplicate_sums_finite")
  return check, covers_values


def _as_float32(scalar):
  """A float32 or float64 scalar as float32 (a float64 past its range: Inf)."""
  return scalar if scalar.dtype == tf.float32 else tf.cast(scalar, tf.float32)


def _true_unless(pred, false_fn, name):
  """`tf.cond(pred, lambda: True, false_fn)`: a bool computed only if needed.

  In a plain TF1-style graph it is one Switch on `pred`, whose true output
  is the answer when `pred` holds (it carries `pred`'s value, True).
  `false_fn`'s ops take the Switch's false output (through an identity) as
  a control input, so when `pred` holds the executor marks them dead and
  runs none of them, and a Merge takes whichever side is live. A `tf.cond`
  there would route every tensor `false_fn` reads (every large gradient)
  through a Switch of its own, on every step. Eagerly it is a Python `if`;
  where a single Switch is not allowed (`single_switch_allowed`), a
  `tf.cond`.
  """
  if tf.executing_eagerly():
    return tf.constant(True) if bool(pred) else false_fn()
  if not single_switch_allowed():
    return tf.cond(pred, lambda: tf.constant(True), false_fn, name=name)
  with tf.compat.v1.name_scope(name):
    if_false, if_true = tf.raw_ops.Switch(data=pred, pred=pred)
    with tf.control_dependencies([tf.identity(if_false, name="pivot_f")]):
      false_value = false_fn()
    return tf.raw_ops.Merge(inputs=[if_true, false_value]).output


def _finite_squares_suffice(dtype) -> float:
  """Up to how many rows a finite sum of squares passes `_sparse_check`'s bound.

  A finite float32 (float64) sum of squares is at most the dtype's largest
  number `M`, so `largest = sqrt(2 * squares)` is at most `sqrt(2 * M)`, and
  `count * largest <= M / 8` holds for every `count` up to
  `M / (8 * sqrt(2 * M))`. Half of that leaves room for the rounding of the
  bound's own arithmetic: about 8e17 rows in float32, and more than any
  tensor can hold in float64. Within it, the bound's test is exactly
  "the sum of squares is finite".
  """
  largest = float(dtype.max)  # A Python float: 2 * max overflows float32.
  return largest / (8 * math.sqrt(2 * largest)) / 2


# In eager mode, a step's check and unscale each run as one compiled function
# from this many gradients on, and op by op below it. An eager function call
# costs about as much as five eager ops (the benchmark's embedding,
# three gradients, was slower compiled: 1.33 x bare against 1.26; its
# 32-gradient MLP was faster: 1.05 against 1.21).
EAGER_COMPILE_MIN_GRADIENTS = 8

# Gradients with at most this many elements are checked together, in few
# parts (`_small_parts`); each larger one is summed on its own.
_SMALL_GRAD_ELEMENTS = 1 << 14


def _small_parts(tensors):
  """`tensors` (all small, of one dtype) as few tensors: one op per group.

  Tensors that agree in every dimension but the first are concatenated as
  they are (500 small variables make a handful of parts, with no reshape
  each), and scalars are stacked.
  """
  by_tail = {}
  for t in tensors:
    # as_list(): under disable_v2_behavior() a shape's entries are
    # Dimension objects, which cannot be dict keys.
    if t.shape.rank == 0:
      tail = "scalar"
    elif t.shape.rank and t.shape[1:].is_fully_defined():
      tail = tuple(t.shape[1:].as_list())
    else:
      tail = None
    by_tail.setdefault(tail, []).append(t)
  parts = []
  for tail, group in by_tail.items():
    if tail is None or len(group) == 1:
      parts.extend(group)
    elif tail == "scalar":
      parts.append(tf.stack(group))
    else:
      parts.append(tf.concat(group, 0))
  return parts


def _small_sums(tensors):
  """float32 scalars whose finite total proves `tensors` finite.

  `tensors` are small, of one dtype, and of fully defined shapes.

  Tensors of one shape are added up element by element first (one `AddN`),
  and each such sum is summed (one `Sum`): a NaN or Inf in any of them
  reaches its scalar, and a finite scalar proves them all finite. 500 small
  variables of a few shapes give a few small ops, where concatenating them
  (`_small_parts`) copies every element, and a reduction over all of them
  is large enough for TF to split across threads, a thread wake-up per op
  on the critical path (docs/performance.md, "Small gradients: added, not
  concatenated").
  """
  by_shape = {}
  for t in tensors:
    # as_list(): under disable_v2_behavior() a shape's entries are
    # Dimension objects, which cannot be dict keys.
    by_shape.setdefault(tuple(t.shape.as_list()), []).append(t)
  sums = []
  for group in by_shape.values():
    added = group[0] if len(group) == 1 else tf.add_n(group)
    sums.append(_as_float32(added if added.shape.rank == 0 else
                            tf.reduce_sum(added)))
  return sums


def _is_finite_all(tensors) -> tf.Tensor:
  """Exact: one is_finite over the flattened tensors (all of one dtype)."""
  parts = _small_parts(tensors)
  if len(parts) == 1:
    # reduce_all reduces every axis: nothing to flatten.
    return tf.reduce_all(tf.math.is_finite(parts[0]))
  flat = [p if p.shape.rank == 1 else tf.reshape(p, [-1]) for p in parts]
  return tf.reduce_all(tf.math.is_finite(tf.concat(flat, 0)))


def all_finite(grads: Sequence[Any]) -> tf.Tensor:
  """Returns a scalar bool tensor: whether every non-None gradient is finite.

  The answer is always the exact one; how it is computed depends on size:

  * Each float32 or float64 gradient gives one float32 scalar: a large one
    its sum (one read, no full-size temporary), small ones (biases, norms)
    the sums of a few adds, one per shape, where per-tensor ops, not
    bytes, dominate. The scalars are added up: a NaN or Inf anywhere
    makes the total non-finite, so a finite total proves every element
    finite, with one `IsFinite` for the step. Only a non-finite total (a
    real NaN or Inf, or a sum that overflowed) runs the exact elementwise
    check, behind one Switch (`all_finite_ops`).
  * Half-precision gradients would overflow such sums long before their
    elements do, so they are checked exactly.
  * Complex gradients are checked through both parts: NaN or Inf in the
    real or the imaginary part is not finite.
  * An IndexedSlices gradient is checked through its values, and, when it
    may hold duplicate indices whose rows could sum past the dtype's range,
    through the per-index sums the optimizer would apply (for float32 and
    float64 values, the sum of squares of its values bounds them, and is
    one of the scalars above: `_sparse_squares`; else `_sparse_check`).

  A gradient the unscale already checked, handed back as the very tensor
  it returned (`known_flags.remember_finite`), is not checked again: its
  flag is used.
  Any other gradient is checked here. In eager mode, for
  `EAGER_COMPILE_MIN_GRADIENTS` such gradients or more, the check runs as
  one compiled function (traced once per gradient signature, shapes relaxed
  when they change): one call where the same ops run one by one would cost
  a Python dispatch each, and could not run side by side. It computes the
  same flag.

  Args:
    grads: Gradients: tensors, IndexedSlices, or anything
      `tf.convert_to_tensor` accepts (Python or NumPy numbers, lists); None
      and integer entries are ignored.

  Returns:
    A scalar bool tensor (True when there is no gradient at all).

  Raises:
    TypeError: If a gradient is a string tensor.
  """
  to_check = []
  for i, grad in enumerate(grads):
    if grad is None:
      continue
    values = _values(grad)
    if values.dtype == tf.string:
      raise _validation.invalid(
          TypeError, "grads[{}]".format(i), "a numeric gradient", grad,
          "A string tensor is not a gradient: pass the numbers.")
    if not (values.dtype.is_floating or values.dtype.is_complex):
      continue  # Integers cannot be NaN or Inf (and is_finite rejects them).
    to_check.append(grad if tf.is_tensor(grad) or
                    isinstance(grad, tf.IndexedSlices) else values)
  if not to_check:
    return tf.constant(True)
  # Flags the unscale computed with these very tensors (`remember_finite`).
  checks, to_check = known_flags.split_known(to_check)
  if to_check:
    if (tf.executing_eagerly() and
        len(to_check) >= EAGER_COMPILE_MIN_GRADIENTS):
      checks.append(_all_finite_compiled(to_check))
    else:
      checks.append(all_finite_ops(to_check))
  if len(checks) == 1:
    return checks[0]
  return tf.reduce_all(tf.stack(checks))


def all_finite_ops(grads, scaled=None, inverse=None) -> tf.Tensor:
  """`all_finite` of floating or complex gradients, as ops of the graph.

  It never consults remembered flags. Every float32 and float64 gradient
  gives one float32 scalar, and the scalars are added up: a finite total
  proves each of them finite (NaN and Inf survive addition), so on a
  finite step one `IsFinite` decides them all.

  * Small gradients (biases, norms) are added up by shape, and each sum
    summed (`_small_sums`): per-tensor ops, not bytes, dominate there.
    Without any large or sparse gradient, which need the Switch below, a
    few of them are checked exactly instead, with no Switch
    (`_many_small_alone` says when many join the total anyway).
  * A large one gives its sum: one read, no full-size temporary.
  * An `IndexedSlices` that may repeat an index gives the sum of squares
    of its values, which also bounds its per-index sums
    (`_sparse_squares`).

  Only a non-finite total (a real NaN or Inf, or a sum that overflowed
  although every element is finite) runs the exact checks of the same
  tensors, behind one Switch (`_true_unless`). Half-precision gradients,
  whose sums would overflow long before their elements do, and sparse ones
  `_sparse_squares` does not take, are checked exactly on every step.

  With `scaled`, the small gradients' sums and the sparse ones' sums of
  squares are taken over the gradients of the scaled loss instead, which a
  graph can then compute beside the unscale's multiplies rather than after
  them (see `all_finite_scaled`). The answer is the same.

  Args:
    grads: Floating or complex gradients (tensors or IndexedSlices).
    scaled: None, or what each gradient was unscaled from: `grads[i]` is
      `scaled[i]` times `inverse` cast to its dtype (for an IndexedSlices,
      its values, with the same indices).
    inverse: With `scaled`: the float32 scalar it was unscaled by.
  """
  sources = grads if scaled is None else scaled
  terms = []  # float32 scalars whose finite total proves the rest finite.
  large = []  # Large float32/float64 gradients `terms` cover.
  sparse = []  # IndexedSlices whose per-index sums `terms` cover.
  small = {}  # dtype -> [(small float32/float64 gradient, its source)].
  small_half = {}  # dtype -> small half-precision gradients.
  checks = []  # Exact flags, run on every step.
  for grad, source in zip(grads, sources):
    values = _values(grad)
    if isinstance(grad, tf.IndexedSlices) and _duplicates_possible(grad):
      squares = _sparse_squares(source)
      if squares is not None:
        terms.append(squares)
        sparse.append(grad)
        continue
      sums_finite, covers_values = _sparse_check(grad)
      checks.append(sums_finite)
      if covers_values:
        continue
    for g, s in zip(_float_parts(values), _float_parts(_values(source))):
      size = g.shape.num_elements()
      is_small = size is not None and size <= _SMALL_GRAD_ELEMENTS
      if g.dtype in (tf.float32, tf.float64):
        if is_small:
          small.setdefault(g.dtype, []).append((g, s))
        else:
          # Summed after its multiply even with `scaled`: a buffer read by
          # the sum too could not be overwritten in place by the multiply,
          # which cost the 16-layer MLP of the benchmark (`benchmarks/`) more
          # than the sum beside it saved (docs/performance.md).
          terms.append(_as_float32(tf.reduce_sum(g)))
          large.append(g)
      elif is_small:
        small_half.setdefault(g.dtype, []).append(g)
      else:
        checks.append(_is_finite_all([g]))
  eager = tf.executing_eagerly()
  joined = bool(terms) or _many_small_alone(small)
  if joined and not eager:
    # The Switch is built: small gradients join the total.
    for pairs in small.values():
      terms.extend(_small_sums([s for _, s in pairs]))
  elif not joined:
    # A few small gradients alone: checked exactly, with no Switch.
    checks.extend(_is_finite_all([g for g, _ in pairs])
                  for pairs in small.values())
  checks.extend(_is_finite_all(group) for group in small_half.values())
  if joined:

    def exact():
      parts = list(large)
      for pairs in small.values():
        parts.extend(_small_parts([g for g, _ in pairs]))
      flags = [tf.reduce_all(tf.math.is_finite(p)) for p in parts]
      flags.extend(_duplicate_sums_finite(s) for s in sparse)
      return flags[0] if len(flags) == 1 else tf.reduce_all(tf.stack(flags))

    if eager:
      # The step waits for the flag anyway: NumPy adds it up and tests it.
      fast = _total_finite_on_host(
          terms, [s for pairs in small.values() for _, s in pairs]) and (
              scaled is None or abs(float(inverse)) <= 1)
      checks.append(tf.constant(True) if fast else exact())
    else:
      total = terms[0] if len(terms) == 1 else tf.add_n(terms)
      fast = tf.math.is_finite(total)
      if scaled is not None:
        fast = tf.logical_and(fast, tf.abs(inverse) <= 1)
      checks.append(_true_unless(fast, exact, "all_finite_exact"))
  if not checks:
    return tf.constant(True)
  return checks[0] if len(checks) == 1 else tf.reduce_all(tf.stack(checks))


def _total_finite_on_host(scalars, tensors) -> bool:
  """Eagerly: whether `scalars` and the sums of `tensors` add up finite.

  NumPy adds them in float64, with no TF op to dispatch: the small
  gradients' sums (`tensors`, float32 or float64) and the large and sparse
  ones' scalars. A float32 tensor's float64 sum cannot overflow, so it is
  finite exactly when every element is; a float64 one's can, and then, as
  for any non-finite total, the caller runs the exact check.

  Args:
    scalars: float32 scalar tensors (sums, sums of squares).
    tensors: Small float32 or float64 tensors.
  """
  with np.errstate(all="ignore"):  # Even under np.seterr(all="raise").
    total = sum(float(t.numpy()) for t in scalars)
    for t in tensors:
      total += float(np.sum(t.numpy(), dtype=np.float64))
  return math.isfinite(total)


def _many_small_alone(small) -> bool:
  """Whether small gradients with no large or sparse one join a total anyway.

  They do in a plain graph when they hold more than `_SMALL_GRAD_ELEMENTS`
  elements in all (a model of hundreds of small variables): the exact
  check's concatenation and its `IsFinite` and `All` over all of them then
  cost more every step than a few adds (`_small_sums`) and the Switch that
  keeps the exact check for a non-finite total. A few small gradients stay
  exact, with no Switch. So do any number in a `tf.function` or a compiled
  eager step, where the exact check would sit in a `tf.cond` that routes
  every one of them through a Switch of its own, and eagerly op by op,
  where each add would be a dispatch.

  Args:
    small: dtype -> [(small float32/float64 gradient, its source)].
  """
  if tf.executing_eagerly() or not single_switch_allowed():
    return False
  elements = sum(g.shape.num_elements() for pairs in small.values()
                 for g, _ in pairs)
  return elements > _SMALL_GRAD_ELEMENTS


def all_finite_scaled(grads, scaled, inverse) -> tf.Tensor:
  """`all_finite(grads)`, for gradients just unscaled from `scaled`.

  `grads[i]` is `scaled[i]` times `inverse` cast to its dtype (for an
  IndexedSlices, its values, with the same indices); no None among them.
  The fast path's sums (of small gradients) and sums of squares (of sparse
  ones) read `scaled`, so in a graph they run beside the multiplies instead
  of waiting for them (large dense gradients are still summed after theirs:
  `all_finite_ops`); the exact checks behind it read `grads`. The answer
  is `all_finite(grads)`'s:

  When `|inverse| <= 1` (a loss scale of at least 1, as both TF 1.15
  managers keep it) each element of `grads` is at most its scaled
  element in magnitude (rounding is monotonic, and the inverse cast to any
  dtype stays at most 1), so a finite scaled element gives a finite
  unscaled one, and a sparse gradient's scaled sum of squares bounds the
  unscaled per-index sums as well as the values. A NaN or Inf among the
  scaled values makes the total non-finite. Any other scale, and any
  non-finite total, runs the exact checks of `grads`.
  """
  pairs = [(g, s) for g, s in zip(grads, scaled)
           if _values(g).dtype.is_floating or _values(g).dtype.is_complex]
  if not pairs:
    return tf.constant(True)
  return all_finite_ops([g for g, _ in pairs], [s for _, s in pairs],
                        inverse)


# `all_finite_ops` as one function for eager callers. `reduce_retracing`: a
# gradient whose shape changes between steps (an embedding's row count)
# makes one trace with that dimension unknown, not one trace per shape.
_all_finite_compiled = tf.function(all_finite_ops, reduce_retracing=True,
                                   autograph=False)


def single_switch_allowed() -> bool:
  """Whether a branch may be built as one Switch here, not as a `tf.cond`.

  A single Switch whose outputs gate a branch's ops (dead ops run nothing)
  needs a plain TF1-style graph. Not inside a `tf.function` (a function
  graph has no dead-tensor semantics to rely on), under a `tf.distribute`
  strategy (replica threads build ops outside this thread's control
  dependencies), nor, conservatively, inside an outer TF1 cond or while
  loop, whose context bookkeeping a nested `tf.cond` handles by
  construction.
  """
  return not (_tf_compat.is_building_function() or
              _tf_compat.in_control_flow_context() or
              tf.distribute.has_strategy())
