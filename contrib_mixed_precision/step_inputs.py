# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What callers hand a step, as tensors: gradients and finiteness flags.

A v1 optimizer accepts gradients that are Python or NumPy numbers, arrays
or lists, and TF's own `LossScale.update` tests pass a Python float:
`as_gradient` turns them into tensors once, for both the check and the
apply, and refuses strings, which TensorFlow would parse. The managers'
`update_loss_scale` and the LossScale's `update_from_finite` take a step's
flag as a Python bool or a scalar bool tensor (`finite_flag`). A wrong value
gets a TypeError that says what to pass instead.
"""

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _validation


def _holds_strings(value) -> bool:
  """Whether `value` is a string, or an array or list holding strings."""
  if isinstance(value, (str, bytes)):
    return True
  try:
    array = np.asarray(value)
  except (TypeError, ValueError):  # Ragged lists: TensorFlow will say why.
    return False
  if array.dtype.kind in "SU":
    return True
  return array.dtype.kind == "O" and any(
      isinstance(x, (str, bytes)) for x in array.flat)


def as_gradient(grad, name: str, dtype=None):
  """A gradient that is not a tensor, as a tensor; anything else unchanged.

  Every v1 optimizer accepts gradients that are Python or NumPy numbers,
  arrays or lists (it converts them), and TF's own `LossScale.update` tests
  pass a Python float. None, tensors, variables, IndexedSlices and
  per-replica values are returned as they are.

  Args:
    grad: The gradient.
    name: How to name it in an error, e.g. "grads_and_vars[0][0]".
    dtype: The dtype to convert to (the variable's), or None for the
      value's own: a float64 NumPy array given for a float32 variable
      becomes float32, as the variable will hold it, where TF's optimizer
      kernels would otherwise be handed mismatched dtypes.

  Returns:
    `grad`, or a tensor holding it.

  Raises:
    TypeError: If `grad` holds strings (which TensorFlow would parse), or
      cannot be converted to a numeric tensor (of `dtype`).
  """
  if (grad is None or tf.is_tensor(grad) or
      isinstance(grad, (tf.IndexedSlices, tf.distribute.DistributedValues))):
    return grad
  what = "None, a tensor, IndexedSlices, or numbers (a scalar, array or list)"
  if dtype is not None:
    what += " convertible to {}".format(tf.as_dtype(dtype).name)
  if _holds_strings(grad):
    # TensorFlow would parse "1.5" into a float32 tensor.
    raise _validation.invalid(
        TypeError, name, what, grad,
        "Strings are not gradients, even numeric ones such as \"1.5\": "
        "pass the numbers.")
  try:
    tensor = tf.convert_to_tensor(grad, dtype=dtype)
  except (TypeError, ValueError) as e:
    raise _validation.invalid(
        TypeError, name, what, grad,
        "TensorFlow could not convert it: {}".format(e)) from e
  if not (tensor.dtype.is_floating or tensor.dtype.is_integer or
          tensor.dtype.is_complex):
    raise _validation.invalid(TypeError, name, what, grad,
                              "Pass the gradient's numbers.")
  return tensor


def finite_flag(flag, caller: str, arg: str = "finite_grads") -> tf.Tensor:
  """A step's finiteness flag as a scalar bool tensor, or a clear TypeError.

  Args:
    flag: A Python bool or a scalar bool tensor.
    caller: The public function that received it, for the message.
    arg: The name of its argument, for the message.
  """
  if isinstance(flag, bool):
    return tf.constant(flag)
  try:
    tensor = tf.convert_to_tensor(flag)
  except (TypeError, ValueError) as e:
    raise TypeError(
        "`{}` passed to {} must be a Python bool or a scalar bool tensor, "
        "but got {!r}. Pass whether this step's gradients were all finite, "
        "e.g. `tf.reduce_all(tf.math.is_finite(grad))`.".format(
            arg, caller, flag)) from e
  if tensor.dtype != tf.bool or tensor.shape.rank not in (None, 0):
    raise TypeError(
        "`{}` passed to {} must be a scalar bool tensor, but got a {} tensor "
        "of shape {}. Reduce it first, e.g. with `tf.reduce_all(...)`.".format(
            arg, caller, tensor.dtype.name, tensor.shape))
  return tensor
