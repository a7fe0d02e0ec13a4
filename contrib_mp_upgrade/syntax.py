# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 1.15 module paths, and the libcst syntax helpers every pass shares.

`normalize` and `map_module` say where a TF 1.15 dotted path lives in
TF 2 and in this package; the rest read names, literals and arguments off
libcst nodes. This module needs only the standard library and libcst.
"""

import re
from typing import Optional, Sequence, Tuple

try:
  import libcst as cst
except ImportError as e:
  raise ImportError(
      "The contrib-mp-upgrade command needs libcst, which could not be "
      "imported ({}). Install it with `pip install "
      "'contrib_mixed_precision[upgrade]'` (or `pip install libcst`).".format(
          e)) from e

PACKAGE = "contrib_mixed_precision"
TF = "tensorflow"
CONTRIB = "tensorflow.contrib"
MP = "tensorflow.contrib.mixed_precision"
LAYERS = "tensorflow.layers"

# TF 1.15 module paths, most specific first, and where they live here. The
# TF 1.15 `python` package held the two modules this package has at its top.
MODULE_MAP = (
    (MP + ".python.loss_scale_manager", PACKAGE + ".loss_scale_manager"),
    (MP + ".python.loss_scale_optimizer", PACKAGE + ".loss_scale_optimizer"),
    (MP + ".python", PACKAGE),
    (MP, PACKAGE),
)

# What `from <module> import *` brought in on TF 1.15. The package
# __init__ kept exactly four names (`remove_undocumented`); this package
# exports more, and a star import must not start binding those.
STAR_EXPORTS = {
    MP: ("ExponentialUpdateLossScaleManager", "FixedLossScaleManager",
          "LossScaleManager", "LossScaleOptimizer"),
    MP + ".python": ("loss_scale_manager", "loss_scale_optimizer"),
    MP + ".python.loss_scale_manager": (
        "ExponentialUpdateLossScaleManager", "FixedLossScaleManager",
        "LossScaleManager"),
    MP + ".python.loss_scale_optimizer": ("LossScaleOptimizer",),
}

# A string that names the API's module, as a dynamic import would take it.
MODULE_NAME = re.compile(
    r"tensorflow(?:_core)?(?:\.compat\.v1)?\.contrib\.mixed_precision"
    r"(?:\.\w+)*")



def normalize(path: str) -> str:
  """Maps TF 1.15's `tensorflow_core` and `compat.v1`/`.v2` to `tensorflow`.

  TF 1.15 installed its code as `tensorflow_core` (with `tensorflow` a thin
  forwarding package), so its real module paths start there.

  Args:
    path: A dotted module or attribute path.

  Returns:
    The same path rooted at `tensorflow`, compat prefixes removed.
  """
  if path == "tensorflow_core" or path.startswith("tensorflow_core."):
    path = TF + path[len("tensorflow_core"):]
  while True:
    for compat in ("tensorflow.compat.v1", "tensorflow.compat.v2"):
      if path == compat:
        return TF
      if path.startswith(compat + "."):
        path = TF + path[len(compat):]
        break
    else:
      return path


def under(path: Optional[str], prefix: str) -> bool:
  return path is not None and (path == prefix or
                               path.startswith(prefix + "."))


def map_module(path: str) -> Optional[str]:
  """This package's dotted path for a TF 1.15 dotted `path`, or None."""
  path = normalize(path)
  for old, new in MODULE_MAP:
    if under(path, old):
      return new + path[len(old):]
  return None


def other_contrib(path: Optional[str]) -> Optional[str]:
  """`name` of `tensorflow.contrib.<name>[...]` for another module."""
  if not under(path, CONTRIB):
    return None
  parts = path.split(".")
  if len(parts) >= 3 and parts[2] != "mixed_precision":
    return parts[2]
  return None


def dotted(node: cst.CSTNode) -> Optional[str]:
  """`a.b.c` for a chain of `Name`/`Attribute` nodes, else None."""
  if isinstance(node, cst.Name):
    return node.value
  if isinstance(node, cst.Attribute):
    base = dotted(node.value)
    if base is not None:
      return base + "." + node.attr.value
  return None


def dotted_node(path: str) -> cst.BaseExpression:
  return cst.parse_expression(path)


EMPTY_MODULE = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
  """The source of `node`, on one line for the report."""
  return " ".join(EMPTY_MODULE.code_for_node(node).split())


def code_raw(node: cst.CSTNode) -> str:
  """The source of `node` exactly as written."""
  return EMPTY_MODULE.code_for_node(node)


def statement_code(node: cst.SimpleStatementLine) -> str:
  """`code` of a statement line, without the comment lines above it."""
  return code(node.with_changes(leading_lines=()))


def binding_name(alias: cst.ImportAlias) -> str:
  """The name an `import` or `from` alias binds in its scope."""
  if alias.asname is not None:
    return alias.asname.name.value
  return dotted(alias.name).split(".")[0]


def getattr_literal(node: cst.CSTNode) -> Optional[Tuple[cst.CSTNode,
                                                          str]]:
  """`(obj, "name")` for `getattr(obj, "name"[, default])`, else None."""
  if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and
          node.func.value == "getattr" and len(node.args) in (2, 3)):
    return None
  if any(a.star or a.keyword for a in node.args):
    return None
  literal = node.args[1].value
  value = (string_value(literal)
           if isinstance(literal, cst.SimpleString) else None)
  if value is None or not value.isidentifier():
    return None
  return node.args[0].value, value


def attribute_name(node: cst.CSTNode) -> Optional[str]:
  """`b` of `a.b` or of `getattr(a, "b")`, else None."""
  if isinstance(node, cst.Attribute):
    return node.attr.value
  literal = getattr_literal(node)
  return None if literal is None else literal[1]


def string_value(node: cst.CSTNode) -> Optional[str]:
  """The value of a plain (or implicitly concatenated) str literal."""
  if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
    return None
  value = node.evaluated_value
  return value if isinstance(value, str) else None


def call_argument(call: cst.Call, position: int,
                   keyword: str) -> Tuple[bool, Optional[cst.Arg]]:
  """`(understood, arg)`: the argument at `position` or named `keyword`.

  Not understood when `*args` or `**kwargs` could hide it.
  """
  for i, arg in enumerate(call.args):
    if arg.star:
      return False, None
    if arg.keyword is None and i == position:
      return True, arg
    if arg.keyword is not None and arg.keyword.value == keyword:
      return True, arg
  return True, None


def new_literal(old: cst.BaseExpression, value: str) -> cst.SimpleString:
  """A string literal holding `value`, quoted as `old` (its first part) was."""
  while isinstance(old, cst.ConcatenatedString):
    old = old.left
  return cst.SimpleString(old.prefix + old.quote + value + old.quote)


def import_target(node: cst.CSTNode, name: str) -> Optional[str]:
  """The dotted path the `import`/`from` statement `node` binds to `name`."""
  if isinstance(node, cst.Import):
    for alias in node.names:
      if binding_name(alias) != name:
        continue
      full = dotted(alias.name)
      return full if alias.asname is not None else full.split(".")[0]
  elif isinstance(node, cst.ImportFrom):
    if node.relative or node.module is None or isinstance(
        node.names, cst.ImportStar):
      return None
    for alias in node.names:
      if binding_name(alias) == name:
        return dotted(node.module) + "." + dotted(alias.name)
  return None



def short(text: str, limit: int = 60) -> str:
  return text if len(text) <= limit else text[:limit - 3] + "..."



def lines_text(lines: Sequence[int], limit: int = 3) -> str:
  lines = sorted(set(lines))
  shown = ", ".join(str(l) for l in lines[:limit])
  if len(lines) > limit:
    shown += ", ..."
  return ("line " if len(lines) == 1 else "lines ") + shown

