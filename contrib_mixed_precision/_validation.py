# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""One rule for the numbers, flags and paths the public constructors accept.

A number is accepted only if it can be held, exactly as meant, in the type
it will live in: the exponential policy's step counts are compared with
int32 counters, scales and ratios live in float32, and the hook's counts are
Python ints. A bool is a bool (Python's or NumPy's), never whatever `bool()`
accepts, and never a number. Python and NumPy scalars are equally welcome;
strings, arrays and tensors are not numbers.

Every message has one shape:
"`arg` must be <what>, but got <repr> of type <type>. <what to do>".

This module needs NumPy only: it runs in every constructor.
"""

import numbers
import os
from typing import Optional

import numpy as np

INT32_MAX = int(np.iinfo(np.int32).max)
FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # The smallest normal.


def invalid(error, name: str, what: str, value, hint: str = ""):
  """Returns `error` with the package's message; the caller raises it.

  Args:
    error: The exception class, TypeError or ValueError.
    name: The argument's name, shown in backticks.
    what: What the argument must be, e.g. "an int in [1, 2147483647]".
    value: What was received.
    hint: What to do instead; when empty, a hint for the kind of `value`.
  """
  message = "`{}` must be {}, but got {!r} of type {}.".format(
      name, what, value, type(value).__name__)
  hint = hint or hint_for(value)
  if hint:
    message += " " + hint
  return error(message)


def hint_for(value) -> str:
  """What to do instead of passing `value`, by its kind; "" if no advice."""
  if _is_bool(value):
    return "A bool is not a number here: pass the number itself."
  if isinstance(value, np.ndarray):
    return ("Pass a Python or NumPy scalar (`array.item()` for a "
            "one-element array).")
  # Tensors and variables, recognised without importing TensorFlow.
  if hasattr(value, "dtype") and hasattr(value, "shape") and not isinstance(
      value, np.generic):
    return ("Pass a Python or NumPy number: the value must be known when "
            "the object is built, not computed by a graph.")
  if isinstance(value, (str, bytes)):
    return "Pass the value itself, not a string."
  return ""


def _is_bool(value) -> bool:
  return isinstance(value, (bool, np.bool_))


def check_bool(name: str, value) -> bool:
  """Returns `value` as a Python bool; only True and False are flags.

  Raises:
    TypeError: If `value` is not a Python or NumPy bool (the string "False"
      included, which `bool()` would turn into True).
  """
  if not _is_bool(value):
    hint = "Pass True or False."
    if isinstance(value, str):
      hint += " Any non-empty string, \"False\" included, reads as True."
    raise invalid(TypeError, name, "a bool (True or False)", value, hint)
  return bool(value)


def check_int(name: str, value, minimum: int = 1,
              maximum: Optional[int] = INT32_MAX, allow_none: bool = False,
              hint: str = "") -> Optional[int]:
  """Returns `value` as a Python int in [minimum, maximum].

  Args:
    name: The argument's name.
    value: What was received.
    minimum: The smallest value accepted.
    maximum: The largest value accepted (int32 max by default: a count
      compared with an int32 counter); None for no upper bound (a count kept
      in Python).
    allow_none: Whether None is accepted (and returned).
    hint: What to do when `value` is out of range.

  Raises:
    TypeError: If `value` is not a Python or NumPy integer (bools, floats,
      strings, arrays and tensors included).
    ValueError: If it is outside [minimum, maximum].
  """
  if value is None and allow_none:
    return None
  if maximum is None:
    what = "an int >= {}".format(minimum)
  else:
    what = "an int in [{}, {}]".format(minimum, maximum)
  if allow_none:
    what += " or None"
  if _is_bool(value) or not isinstance(value, numbers.Integral):
    if isinstance(value, numbers.Real) and not _is_bool(value):
      type_hint = ("Pass a Python or NumPy int; a float, even a whole one "
                   "such as 5.0, is not a count.")
    else:
      type_hint = hint_for(value) or "Pass a Python or NumPy int."
    raise invalid(TypeError, name, what, value, type_hint)
  if int(value) < minimum or (maximum is not None and int(value) > maximum):
    raise invalid(ValueError, name, what, value,
                  hint or "Pass a value in that range.")
  return int(value)


def _describe(bound: float) -> str:
  if bound == FLOAT32_MAX:
    return "{:.9g} (float32 max)".format(bound)
  if bound == FLOAT32_TINY:
    return "{:.9g} (the smallest normal float32)".format(bound)
  return str(bound)


def check_float32(name: str, value, minimum: float,
                  maximum: float = FLOAT32_MAX, hint: str = "") -> float:
  """Returns `value` as a Python float whose float32 value is in range.

  The range is checked on the float32 value, since that is the value the
  computation uses: 1e39 overflows to inf, and 1e-50 underflows to 0.
  Bounds are inclusive. A positive quantity that may be small (a starting
  scale, a shrink factor) takes `FLOAT32_TINY` as its minimum: TensorFlow's
  CPU kernels flush subnormal float32 numbers to zero, so a scale of 1e-40
  would become 0 on its first growth.

  Args:
    name: The argument's name.
    value: What was received.
    minimum: The lower bound.
    maximum: The upper bound, float32 max by default.
    hint: What to do when `value` is out of range.

  Raises:
    TypeError: If `value` is not a Python or NumPy real number (bools,
      strings, arrays and tensors included).
    ValueError: If it is NaN, does not fit a finite float32, or its float32
      value is outside [minimum, maximum].
  """
  what = "a number >= {} and <= {}".format(_describe(minimum),
                                           _describe(maximum))
  if _is_bool(value) or not isinstance(value, numbers.Real):
    raise invalid(TypeError, name, what, value,
                  hint_for(value) or "Pass a Python or NumPy number.")
  hint = hint or "Pass a value in that range."
  try:
    as_float = float(value)
  except OverflowError:  # An int such as 10**400.
    raise invalid(ValueError, name, what, value, hint) from None
  with np.errstate(over="ignore", under="ignore"):
    value32 = float(np.float32(as_float))
  # NaN fails both comparisons.
  if not minimum <= value32 <= maximum:
    raise invalid(ValueError, name, what, value, hint)
  return as_float


def check_path(name: str, value, hint: str = "") -> Optional[str]:
  """Returns `value` as a str path, or None for None.

  Args:
    name: The argument's name.
    value: What was received.
    hint: What to do instead of an empty path.

  Raises:
    TypeError: If `value` is neither None, a str nor an `os.PathLike` of a
      str (bytes paths included).
    ValueError: If it is the empty string.
  """
  what = "a directory path (str or os.PathLike) or None"
  if value is None:
    return None
  if not isinstance(value, (str, os.PathLike)):
    raise invalid(TypeError, name, what, value, "Pass a str path, or None.")
  path = os.fspath(value)
  if not isinstance(path, str):
    raise invalid(TypeError, name, what, value, "Decode a bytes path first.")
  if not path:
    raise invalid(ValueError, name, "a non-empty path or None", value,
                  hint or "Pass None for no path.")
  return path
