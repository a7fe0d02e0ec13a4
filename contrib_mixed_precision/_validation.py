# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""One rule for the numbers and flags the public constructors accept.

A number is accepted only if TensorFlow can hold it, exactly as meant, in the
type it will live in: step counts are compared with int32 counters, scales
and ratios live in float32. A bool is a bool (or NumPy's), never whatever
`bool()` accepts, and never a number. Python and NumPy scalars are equally
welcome; strings, arrays and tensors are not numbers.

Every message has one shape: "`arg` must be <what>, but got <repr> of type
<type>. <what to do>".
"""

import math
import numbers
from typing import Optional

import numpy as np

INT32_MAX = int(np.iinfo(np.int32).max)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _fail(error, name: str, what: str, value, hint: str = ""):
  message = "`{}` must be {}, but got {!r} of type {}.".format(
      name, what, value, type(value).__name__)
  if hint:
    message += " " + hint
  raise error(message)


def _is_bool(value) -> bool:
  return isinstance(value, (bool, np.bool_))


def check_bool(name: str, value) -> bool:
  """Returns `value` as a Python bool; only True and False are flags.

  Raises:
    TypeError: If `value` is not a Python or NumPy bool (the string "False"
      included, which `bool()` would turn into True).
  """
  if not _is_bool(value):
    _fail(TypeError, name, "a bool (True or False)", value)
  return bool(value)


def check_int(name: str, value, minimum: int = 1,
              maximum: int = INT32_MAX, allow_none: bool = False,
              hint: str = "") -> Optional[int]:
  """Returns `value` as a Python int in [minimum, maximum].

  Raises:
    TypeError: If `value` is not a Python or NumPy integer (bools, floats,
      strings, arrays and tensors included).
    ValueError: If it is outside [minimum, maximum].
  """
  if value is None and allow_none:
    return None
  what = "an int in [{}, {}]{}".format(minimum, maximum,
                                       " or None" if allow_none else "")
  if _is_bool(value) or not isinstance(value, numbers.Integral):
    _fail(TypeError, name, what, value, hint)
  if not minimum <= int(value) <= maximum:
    _fail(ValueError, name, what, value, hint)
  return int(value)


def check_float32(name: str, value, minimum: float,
                  inclusive: bool = True, maximum: float = FLOAT32_MAX,
                  hint: str = "") -> float:
  """Returns `value` as a float that float32 holds finite and in range.

  The range is checked on the float32 value, since that is the value the
  computation uses: 1e39 overflows to inf and 1e-50 underflows to 0.

  Raises:
    TypeError: If `value` is not a Python or NumPy real number.
    ValueError: If it is NaN, does not fit a finite float32, or its float32
      value is outside the range.
  """
  what = "a number {} {} and <= {}".format(
      ">=" if inclusive else ">", minimum,
      "{:.9g} (float32 max)".format(maximum) if maximum == FLOAT32_MAX
      else maximum)
  if _is_bool(value) or not isinstance(value, numbers.Real):
    _fail(TypeError, name, what, value, hint)
  try:
    as_float = float(value)
  except OverflowError:  # An int such as 10**400.
    _fail(ValueError, name, what, value, hint)
  with np.errstate(over="ignore"):
    value32 = float(np.float32(as_float))
  if (not math.isfinite(value32) or value32 > maximum or value32 < minimum or
      (not inclusive and value32 == minimum)):
    _fail(ValueError, name, what, value, hint)
  return as_float
