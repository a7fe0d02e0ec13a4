# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""This step's loss scale: read once, refused if unusable, in its own dtype.

`LossScaleOptimizer` asks its manager for the scale twice a step: to scale
the loss (`compute_gradients`) and to report the scale the step used
(`apply_gradients`). Both go through `read`, which:

* keeps the scale's own floating dtype, as TF 1.15 did: it multiplied the
  loss by `cast(scale, loss dtype)` and the gradients by
  `cast(reciprocal(scale), gradient dtype)`, so a float64 scale's
  reciprocal is taken in float64. (An integer scale is made float32 first:
  TF 1.15 took an integer reciprocal, 0 for any scale above 1, and trained
  on zero gradients without a word.)
* refuses, before anything is applied, a scale that is not a scalar (shape
  `[]` or `[1]`), a bool, or a value that is 0, negative, NaN, infinite,
  or 0 or infinite as float32 (TensorFlow's CPU kernels flush float32
  subnormals to 0). Each would skip every step, or train on zero or
  infinite gradients, without a word. A value known when the step is built
  (a number, an array, an eager tensor, a graph constant) is refused with a
  `ValueError` then; any other graph value by an `Assert` that the step
  waits for. A built-in manager's variables are kept in range by its own
  policy, so their reads cost no check.
* reads a variable once: both uses see the same value even when another
  thread's step moves the scale in between (`Snapshot` in a graph, where a
  ref variable's read aliases its buffer).
* leaves a trainable scale variable to be read inside the gradient tape,
  eagerly and in a `tf.function`, where TF 1.15's eager path read it: the
  variable is then trained, as TF 1.15 trained it.
"""

import numbers
from typing import NamedTuple, Optional

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import loss_scale as loss_scale_lib
from contrib_mixed_precision import loss_scale_manager as manager_lib

_FLOAT32_TINY = _validation.FLOAT32_TINY  # 2**-126

_HEAD = ("LossScaleOptimizer scales the loss and unscales the gradients by "
         "a positive scalar loss scale that float32 can hold, but ")
_FIX = ("Return a positive scalar scale from {}() that float32 can hold: "
        "between 2**-126 (the smallest normal float32: TensorFlow's CPU "
        "kernels flush smaller ones to 0) and the largest float32 (about "
        "3.4e38), e.g. `tf.constant(2.0**15)`.")


class StepScale(NamedTuple):
  """The scale of one step, as `read` returns it.

  Attributes:
    value: The scale, a scalar tensor of its own floating dtype, read once
      and checked. The gradients are unscaled by its reciprocal.
    tape_variable: A trainable scale variable, eagerly and in a
      `tf.function`: the loss is multiplied by it inside the tape, so that
      it gets a gradient, as in TF 1.15. Otherwise None.
    checked_at_run_time: Whether `value` carries an `Assert` that the
      step's apply must wait for.
  """
  value: tf.Tensor
  tape_variable: Optional[tf.Variable]
  checked_at_run_time: bool

  def for_loss(self):
    """What the loss is multiplied by (cast to its dtype)."""
    return self.value if self.tape_variable is None else self.tape_variable


def _adapted(manager):
  """The user's TF2 `LossScale` that `manager` adapts, or None."""
  adapter = manager_lib._LossScaleAdapter  # pylint: disable=protected-access
  if type(manager) is adapter:  # pylint: disable=unidiomatic-typecheck
    return manager.loss_scale
  return None


def _source(manager) -> str:
  """Who returned the scale, named as the user wrote it."""
  loss_scale = _adapted(manager)
  if loss_scale is not None:
    # The adapter is ours: the user wrote the LossScale's `__call__`.
    return ("{}.__call__() (the LossScale given to LossScaleOptimizer or "
            "LossScaleManager.from_loss_scale)".format(
                type(loss_scale).__name__))
  return "{}.get_loss_scale()".format(type(manager).__name__)


def _fix(manager) -> str:
  return _FIX.format("__call__" if _adapted(manager) is not None else
                     "get_loss_scale")


def _error(manager, received, problem) -> ValueError:
  return ValueError("{}{} returned {}: {}. {}".format(
      _HEAD, _source(manager), received, problem, _fix(manager)))


def _shape_error(manager, shape) -> ValueError:
  return ValueError(
      "{}{} returned a tensor of shape {}, not a scalar (shape [] or [1]): "
      "each gradient would be broadcast to another shape. Return "
      "`tf.reshape(scale, [])`, or fix the manager.".format(
          _HEAD, _source(manager), shape))


def _problem(value: float) -> Optional[str]:
  """Why float64 `value` cannot be a scale, or None if it can."""
  if np.isnan(value):
    return "a NaN scale makes every gradient NaN, so every step is skipped"
  if value == 0:
    return ("a zero scale makes every gradient 0 * (1/0) = NaN, so every "
            "step is skipped")
  if value < 0:
    return ("a negative scale flips the sign of the loss it scales; no "
            "manager of TF 1.15 could return one")
  if np.isinf(value):
    return ("an infinite scale makes every gradient Inf or NaN, so every "
            "step is skipped")
  with np.errstate(all="ignore"):
    narrow = np.float32(value)
  if np.isinf(narrow):
    return ("as float32 it would be Inf, and no step would train: each "
            "gradient would be multiplied by 1/Inf = 0")
  if narrow < _FLOAT32_TINY:
    return ("as float32 it would be 0 (below the smallest normal float32), "
            "and every step would be skipped: the loss would be multiplied "
            "by 0 and each gradient by 1/0 = Inf")
  return None


def _describe(value, dtype=None) -> str:
  """`value` as the message shows it: with its type when it is not plain.

  `dtype`: the tensor's dtype, when `value` is a tensor's NumPy value.
  """
  if dtype is not None:
    return "{} ({})".format(np.asarray(value).tolist(), dtype.name)
  if isinstance(value, np.ndarray):
    return "{!r} (a {} array)".format(value.tolist(), value.dtype)
  if isinstance(value, np.number):
    return "{!r} ({})".format(value.item(), value.dtype)
  text = repr(value)
  if len(text) > 40:
    text = "{}... ({} digits)".format(text[:12], len(text))
  return text


def _check_shape(shape, manager) -> None:
  """Refuses a static shape other than [] and [1] (unknown dims pass)."""
  shape = tf.TensorShape(shape)
  if shape.rank is None:
    return
  if shape.rank > 1 or (shape.rank == 1 and shape[0] not in (None, 1)):
    raise _shape_error(manager, shape.as_list())


def _check_host_value(value, manager, dtype=None) -> None:
  """Raises `_error` unless host `value` (shape [] or [1]) can be a scale.

  `dtype`: the tensor's dtype, when `value` is a tensor's NumPy value. The
  message is only built when it is raised: eager steps call this.
  """
  _check_shape(np.shape(value), manager)
  try:
    with np.errstate(all="ignore"):
      wide = np.asarray(value, dtype=np.float64).reshape([])
  except OverflowError:  # A Python int past float64's range.
    wide = np.float64(np.inf) if value > 0 else np.float64(-np.inf)
  problem = _problem(float(wide))
  if problem is not None:
    raise _error(manager, _describe(value, dtype), problem)


def _refuse_bool(value, manager) -> None:
  is_bool = isinstance(value, (bool, np.bool_)) or (
      isinstance(value, np.ndarray) and value.dtype == np.bool_)
  dtype = getattr(value, "dtype", None)
  if not is_bool and (tf.is_tensor(value) or isinstance(value, tf.Variable)):
    is_bool = tf.as_dtype(dtype).base_dtype == tf.bool
  if is_bool:
    raise TypeError(
        "{}{} returned a bool ({!r}). A bool is not a loss scale: False "
        "would skip every step, True would not scale. {}".format(
            _HEAD, _source(manager), value, _fix(manager)))


def _kept_in_range_by_its_policy(manager) -> bool:
  """Whether `manager`'s scale is a built-in policy's, always in range.

  The built-in managers' values are validated when built, and their
  updates stay within [1, float32 max], a TF `DynamicLossScale`'s too. A
  subclass that returns a scale of its own, or an adapted `LossScale` of
  the user's, is checked.
  """
  get = getattr(type(manager), "get_loss_scale", None)
  if get in (manager_lib.FixedLossScaleManager.get_loss_scale,
             manager_lib.ExponentialUpdateLossScaleManager.get_loss_scale):
    return True
  adapter = manager_lib._LossScaleAdapter  # pylint: disable=protected-access
  return (get is adapter.get_loss_scale and
          type(getattr(manager, "loss_scale", None)) in _BUILT_IN_LOSS_SCALES)


_BUILT_IN_LOSS_SCALES = (tf.compat.v1.mixed_precision.DynamicLossScale,
                         tf.compat.v1.mixed_precision.FixedLossScale,
                         loss_scale_lib.ExponentialUpdateLossScale)


def _floating(value) -> tf.Tensor:
  """`value` as a tensor of a floating dtype: its own, or float32."""
  if isinstance(value, (numbers.Real, np.integer)) and not isinstance(
      value, np.floating):
    return tf.constant(float(value), tf.float32)
  tensor = tf.convert_to_tensor(value)
  if not tensor.dtype.base_dtype.is_floating:
    tensor = tf.cast(tensor, tf.float32)
  return tensor


def _run_time_check(scale, manager) -> tf.Tensor:
  """`scale` behind an `Assert` that it is a usable scale (see `_problem`)."""
  wide = tf.cast(scale, tf.float64)
  narrow = tf.cast(scale, tf.float32)
  usable = tf.logical_and(
      tf.logical_and(tf.math.is_finite(wide), wide > 0),
      tf.logical_and(tf.math.is_finite(narrow),
                     tf.cast(narrow, tf.float64) >= _FLOAT32_TINY))
  check = tf.raw_ops.Assert(
      condition=tf.logical_and(tf.equal(tf.size(scale), 1),
                               tf.reduce_all(usable)),
      data=[_HEAD + _source(manager) + " returned", scale,
            "which is not a positive scalar that float32 holds (0, a "
            "negative, NaN, an infinity, or 0 or Inf as float32). " +
            _fix(manager)],
      name="loss_scale_is_usable")
  with tf.control_dependencies([check]):
    return tf.identity(scale)


def _snapshot(scale) -> tf.Tensor:
  """One read that both uses of the scale share (see the module docstring).

  A `ReadVariableOp`'s value is its own (an assignment writes a new buffer
  while it is read); a ref variable's read aliases the variable's buffer.
  TF has no gradient for `Snapshot`; the loss's gradient with respect to a
  trainable scale is an identity's, as in TF 1.15's graph.
  """
  if tf.executing_eagerly() or scale.op.type in ("ReadVariableOp", "Const"):
    return scale
  with scale.graph.gradient_override_map({"Snapshot": "Identity"}):
    return tf.raw_ops.Snapshot(input=scale)


def read(raw, manager) -> StepScale:
  """This step's scale from `raw`, what `manager.get_loss_scale()` returned.

  Args:
    raw: A scalar number, array, tensor or variable.
    manager: Who returned it, named in the messages.

  Returns:
    A `StepScale`.

  Raises:
    TypeError: If `raw` is a bool.
    ValueError: If `raw`'s shape is known and not [] or [1], or its value
      is known and unusable (see the module docstring).
  """
  _refuse_bool(raw, manager)
  if isinstance(raw, (numbers.Real, np.number, np.ndarray)):
    _check_host_value(raw, manager)
    return StepScale(tf.reshape(_floating(raw), []), None, False)
  tape_variable = None
  if (isinstance(raw, tf.Variable) and raw.trainable and
      (tf.executing_eagerly() or _tf_compat.is_building_function())):
    tape_variable = raw
  scale = _floating(raw)
  _check_shape(scale.shape, manager)
  checked = False
  if tf.executing_eagerly():
    if not _kept_in_range_by_its_policy(manager):  # No work per step.
      _check_host_value(scale.numpy(), manager, scale.dtype)
  else:
    static = tf.get_static_value(scale)
    if static is not None:
      # Known now: said now. (Grappler folds a constant's check, and the
      # `Assert`'s control edge with it, so that an apply could run first.)
      _check_host_value(static, manager, scale.dtype)
    elif (not _kept_in_range_by_its_policy(manager) and
          not _tf_compat.in_xla_context()):  # XLA drops an `Assert`.
      scale = _run_time_check(scale, manager)
      checked = True
  if scale.shape.rank != 0:
    scale = tf.reshape(scale, [])
  return StepScale(_snapshot(scale), tape_variable, checked)
