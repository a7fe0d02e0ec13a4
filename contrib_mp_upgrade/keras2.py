# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Keras 2 only: the uses Keras 3 refuses, and how to get Keras 2 back.

TensorFlow 2.16 made Keras 3 its `tf.keras`. Code written for Keras 2
(TensorFlow 2.0 to 2.15) that uses an API Keras 3 dropped stops there, with
an ImportError, AttributeError or NotImplementedError. tf-keras is Keras 2
for TensorFlow 2.16 and later; `TF_USE_LEGACY_KERAS=1` makes `tf.keras` be
it. `find` lists each such use in a converted file (one table, `_PATHS`,
`_METHODS` and `_SHAPE_ATTRIBUTES`, below) so that the report can say which
files need Keras 2, and why, and give the install command once
(docs/design.md, contract 18).

tf-keras requires the `tensorflow` distribution: beside `tensorflow-cpu`
(or a vendor's build) `pip install tf-keras` would install a second
TensorFlow into the same directory, and removing either breaks both. So the
command is always `pip install --no-deps`, with the tf-keras release of the
TensorFlow that will run the program.

This module needs only the standard library.
"""

import ast
import importlib.metadata
import re
from typing import Dict, List, Optional, Tuple

ENV = "TF_USE_LEGACY_KERAS"

# Module paths (after `_keras_path`) that Keras 3 lacks, and why each fails.
_PATHS = (
    ("keras.optimizers.legacy",
     "`tf.keras.optimizers.legacy.X`: Keras 3 raises ImportError when one is "
     "built"),
    ("keras.engine",
     "`keras.engine` (Keras 2's internals): no such module in Keras 3"),
    ("keras.layers.experimental",
     "`tf.keras.layers.experimental`: not in Keras 3 (AttributeError)"),
    ("keras.backend.learning_phase",
     "`tf.keras.backend.learning_phase`: not in Keras 3 (AttributeError)"),
    ("keras.backend.set_learning_phase",
     "`tf.keras.backend.set_learning_phase`: not in Keras 3 "
     "(AttributeError)"),
    ("keras.backend.get_session",
     "`tf.keras.backend.get_session`: not in Keras 3 (AttributeError)"),
)
# Methods of Keras 2's Layer and Model that Keras 3 dropped, looked for as
# `x.name(...)` in files that use Keras.
_METHODS = {
    "add_metric": ("`add_metric`: Keras 3's Layer and Model raise "
                   "NotImplementedError"),
    "add_update": "`Layer.add_update`: not in Keras 3 (AttributeError)",
    "fit_generator": "`Model.fit_generator`: not in Keras 3 (AttributeError)",
    "evaluate_generator": ("`Model.evaluate_generator`: not in Keras 3 "
                           "(AttributeError)"),
    "learning_rate": ("`optimizer.learning_rate(step)`: only TF 2.10 and "
                      "earlier's optimizers (Keras 2's "
                      "`tf.keras.optimizers.legacy.X`) hold the schedule "
                      "there; Keras 3's and tf-keras 2.11+'s hold a value "
                      "(TypeError)"),
    "predict_generator": ("`Model.predict_generator`: not in Keras 3 "
                          "(AttributeError)"),
}
# Keyword arguments only Keras 2 honours: `(keyword, value or None for any,
# whose call it is, why)`.
_ARGUMENT_WHY = {
    "experimental_aggregate_gradients": (
        False, None,
        "`apply_gradients(..., experimental_aggregate_gradients=False)` "
        "(the caller's own all-reduce): Keras 3's LossScaleOptimizer, and "
        "KerasLossScaleOptimizer under Keras 3, raise NotImplementedError"),
    "decay": (
        None, "keras.optimizers.",
        "`decay=` of a `tf.keras.optimizers.X`: Keras 3 warns and ignores "
        "it (other numbers), tf-keras 2.11+ raises; under Keras 2 build "
        "`tf.keras.optimizers.legacy.X` instead"),
}
# `TensorShape` attributes a Keras 2 layer's `build` read from its shape
# argument; Keras 3 passes a tuple (AttributeError).
_SHAPE_ATTRIBUTES = frozenset((
    "as_list", "rank", "ndims", "dims", "is_fully_defined", "with_rank",
    "with_rank_at_least", "merge_with", "concatenate", "num_elements",
    "is_compatible_with"))
_SHAPE_WHY = ("a layer's `build` reads its shape argument `{}` as a "
              "`TensorShape` (`.{}`): Keras 3 passes a tuple "
              "(AttributeError)")
_DIMENSION_WHY = ("a layer's `build` reads `{}[i].value`: Keras 3 passes a "
                  "tuple of ints (AttributeError)")
# The blockers (`blockers.Blocker.what`) that need Keras 2 too.
LAYERS_WHY = "`tf.compat.v1.layers`: Keras 3 raises on every use"

# What `blockers` and the report call this.
WHAT = "Keras 2 API, which Keras 3 (TensorFlow 2.16+'s default) refuses"
SEE = ("run it with Keras 2: TensorFlow 2.15, or tf-keras with {}=1 on "
       "TensorFlow 2.16+ (the report's \"Keras 2\" says how, and why for "
       "each file)").format(ENV)

_KERAS_ROOTS = ("keras", "tf_keras", "tensorflow.keras",
                "tensorflow.compat.v1.keras", "tensorflow.compat.v2.keras",
                "tensorflow.python.keras")


def _keras_path(path: str) -> Optional[str]:
  """`keras.X` for any spelling of Keras' module `X`; None if not Keras."""
  for root in sorted(_KERAS_ROOTS, key=len, reverse=True):
    if path == root or path.startswith(root + "."):
      return "keras" + path[len(root):]
  return None


class Bindings:
  """Names bound by imports (and `x = module.path`) to dotted paths."""

  def __init__(self, tree: ast.AST):
    self.bound: Dict[str, str] = {}
    self.imports: List[Tuple[str, int]] = []
    for node in ast.walk(tree):
      if isinstance(node, ast.Import):
        for alias in node.names:
          self.imports.append((alias.name, node.lineno))
          if alias.asname:
            self.bound[alias.asname] = alias.name
          else:
            root = alias.name.split(".")[0]
            self.bound[root] = root
      elif isinstance(node, ast.ImportFrom) and node.module and (
          not node.level):
        for alias in node.names:
          full = node.module + "." + alias.name
          self.imports.append((full, node.lineno))
          self.bound[alias.asname or alias.name] = full

  def path(self, node: ast.AST) -> Optional[str]:
    rest = ""
    while isinstance(node, ast.Attribute):
      rest = "." + node.attr + rest
      node = node.value
    if not isinstance(node, ast.Name):
      return None
    base = self.bound.get(node.id)
    if base is None:
      return None
    return base + rest


def _match(path: Optional[str]) -> Optional[str]:
  keras = _keras_path(path or "")
  if keras is None:
    return None
  for prefix, why in _PATHS:
    if keras == prefix or keras.startswith(prefix + "."):
      return why
  return None


def _layer_builds(tree: ast.AST) -> List[Tuple[int, str]]:
  """`build(self, shape)` methods that read `shape` as a `TensorShape`."""
  found = []
  for node in ast.walk(tree):
    if not isinstance(node, ast.ClassDef) or not node.bases:
      continue
    for item in node.body:
      if not (isinstance(item, ast.FunctionDef) and item.name == "build" and
              len(item.args.args) == 2):
        continue
      shape = item.args.args[1].arg
      for inner in ast.walk(item):
        if isinstance(inner, ast.Attribute) and isinstance(
            inner.value, ast.Name) and inner.value.id == shape and (
                inner.attr in _SHAPE_ATTRIBUTES):
          found.append((inner.lineno, _SHAPE_WHY.format(shape, inner.attr)))
        elif isinstance(inner, ast.Attribute) and inner.attr == "value" and (
            isinstance(inner.value, ast.Subscript) and
            isinstance(inner.value.value, ast.Name) and
            inner.value.value.id == shape):
          found.append((inner.lineno, _DIMENSION_WHY.format(shape)))
  return found


def _arguments(call: ast.Call, bindings: Bindings) -> List[Tuple[int, str]]:
  """Keyword arguments of `call` that only Keras 2 honours."""
  found = []
  for keyword in call.keywords:
    rule = _ARGUMENT_WHY.get(keyword.arg or "")
    if rule is None:
      continue
    value, callee, why = rule
    if value is not None and not (isinstance(keyword.value, ast.Constant)
                                  and keyword.value.value is value):
      continue
    if callee is not None and not (_keras_path(
        bindings.path(call.func) or "") or "").startswith(callee):
      continue
    found.append((call.lineno, why))
  return found


def find(source: bytes) -> List[Tuple[int, str]]:
  """The uses of Keras 2 API that Keras 3 refuses, in a Python source.

  Args:
    source: A converted Python source.

  Returns:
    `(line, why)` pairs, by line; empty when there are none or it does not
    parse.
  """
  # Keras' module paths, and the method names, which a file may call on a
  # model built elsewhere.
  if not any(marker in source for marker in (
      b"keras", b"Keras", b"add_metric", b"add_update", b"_generator",
      b"def build", b"experimental_aggregate_gradients",
      b"learning_rate(")):
    return []
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return []
  bindings = Bindings(tree)
  found = set()
  for module, line in bindings.imports:
    why = _match(module)
    if why is not None:
      found.add((line, why))
  for node in ast.walk(tree):
    if isinstance(node, ast.Attribute):
      parent_path = bindings.path(node)
      why = _match(parent_path)
      if why is not None:
        found.add((node.lineno, why))
    elif isinstance(node, ast.Call) and isinstance(node.func,
                                                   ast.Attribute):
      why = _METHODS.get(node.func.attr)
      if why is not None:
        found.add((node.lineno, why))
    if isinstance(node, ast.Call):
      found.update(_arguments(node, bindings))
  found.update(_layer_builds(tree))
  # `tf.keras.optimizers.legacy.SGD` is one use, not one per attribute.
  by_line: Dict[int, List[str]] = {}
  for line, why in sorted(found):
    if why not in by_line.setdefault(line, []):
      by_line[line].append(why)
  return [(line, why) for line, whys in sorted(by_line.items())
          for why in whys]


# The distributions that are TensorFlow, as pip names them.
_TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu",
                     "tensorflow-macos", "tensorflow-intel",
                     "intel-tensorflow", "tensorflow-aarch64")


def installed_tensorflow() -> Optional[Tuple[str, str]]:
  """`(distribution, version)` of the TensorFlow beside this command.

  Read from the installed metadata: TensorFlow is never imported.
  """
  for name in _TF_DISTRIBUTIONS:
    try:
      return name, importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      continue
    except Exception:  # pylint: disable=broad-except
      return None  # Broken metadata: say nothing about it.
  return None


# Finds the TensorFlow where it runs; `2.21.0` -> `2.21`.
GENERIC_INSTALL = (
    "python -m pip install --no-deps \"tf-keras==$(python -c 'import "
    "tensorflow as tf; print(tf.__version__.rsplit(\".\", 1)[0])').*\"")


def install_advice(here: Optional[Tuple[str, str]]) -> List[str]:
  """The lines that say how to get Keras 2, once per report.

  Args:
    here: `installed_tensorflow()`.
  """
  lines = []
  release = None
  if here is not None:
    match = re.match(r"(\d+)\.(\d+)", here[1])
    if match is not None:
      release = (int(match.group(1)), int(match.group(2)))
  if release is not None and release >= (2, 16) and (
      re.fullmatch(r"\d+\.\d+\.\d+", here[1])):
    lines.append(
        "  On this machine ({} {}), install tf-keras without a second "
        "TensorFlow:".format(*here))
    lines.append("    python -m pip install --no-deps 'tf-keras=={}.{}.*'"
                 .format(*release))
  elif release is not None and release < (2, 16) and release >= (2, 0):
    lines.append(
        "  On this machine ({} {}) Keras 2 is TensorFlow's own `tf.keras`: "
        "nothing to install. With TensorFlow 2.16 or later:".format(*here))
    lines.append("    " + GENERIC_INSTALL)
  else:
    lines.append(
        "  Where the program runs, with TensorFlow 2.16 or later installed "
        "(any of its distributions, `tensorflow-cpu` included), install the "
        "tf-keras of that TensorFlow:")
    lines.append("    " + GENERIC_INSTALL)
  lines.append(
      "  (`--no-deps`: tf-keras requires the `tensorflow` distribution, and "
      "beside `tensorflow-cpu` pip would install a second TensorFlow.)")
  lines.append(
      "  Then run the program with {0}=1 set before TensorFlow is imported: "
      "`{0}=1 python train.py`, or `os.environ[\"{0}\"] = \"1\"` above "
      "`import tensorflow`. TensorFlow 2.15 and earlier need neither: their "
      "`tf.keras` is Keras 2.".format(ENV))
  return lines
