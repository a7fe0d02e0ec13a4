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
"""Rewrites one Python source: `tf.contrib.mixed_precision` to this package.

The rewrite works on libcst's concrete syntax tree, so comments, line endings
and formatting survive wherever the code is not changed. Every name is
resolved in the scope where it is used (libcst's scope analysis), so an
import inside one function serves only that function, and an import this
rewrite needs is added where the code that uses it can see it.

Besides rewriting, `upgrade_source` records what the report needs: other
`tf.contrib` modules still in use, `tf.layers` uses (which need tf-keras on
TensorFlow 2.16 and later), and rewrites that sit under a TF-version check,
a `try/except ImportError` fallback or an `err_if_tf2`-style guard.

This module needs only the standard library and libcst.
"""

import ast
import codecs
import dataclasses
import io
import re
import tokenize
from typing import Dict, List, Optional, Sequence, Set, Tuple

try:
  import libcst as cst
  from libcst import metadata
except ImportError as e:
  raise ImportError(
      "The contrib-mp-upgrade command needs libcst, which could not be "
      "imported ({}). Install it with `pip install "
      "'contrib_mixed_precision[upgrade]'` (or `pip install libcst`).".format(
          e)) from e

PACKAGE = "contrib_mixed_precision"
_TF = "tensorflow"
_CONTRIB = "tensorflow.contrib"
_MP = "tensorflow.contrib.mixed_precision"
_LAYERS = "tensorflow.layers"

# TF 1.15 module paths, most specific first, and where they live here. The
# TF 1.15 `python` package held the two modules this package has at its top.
_MODULE_MAP = (
    (_MP + ".python.loss_scale_manager", PACKAGE + ".loss_scale_manager"),
    (_MP + ".python.loss_scale_optimizer", PACKAGE + ".loss_scale_optimizer"),
    (_MP + ".python", PACKAGE),
    (_MP, PACKAGE),
)

# What `from <module> import *` brought in on TF 1.15. The package
# __init__ kept exactly four names (`remove_undocumented`); this package
# exports more, and a star import must not start binding those.
STAR_EXPORTS = {
    _MP: ("ExponentialUpdateLossScaleManager", "FixedLossScaleManager",
          "LossScaleManager", "LossScaleOptimizer"),
    _MP + ".python": ("loss_scale_manager", "loss_scale_optimizer"),
    _MP + ".python.loss_scale_manager": (
        "ExponentialUpdateLossScaleManager", "FixedLossScaleManager",
        "LossScaleManager"),
    _MP + ".python.loss_scale_optimizer": ("LossScaleOptimizer",),
}

# A string that names the API's module, as a dynamic import would take it.
_MODULE_NAME = re.compile(
    r"tensorflow(?:_core)?(?:\.compat\.v1)?\.contrib\.mixed_precision"
    r"(?:\.\w+)*")

# A test that decides by TensorFlow version (or by whether contrib exists).
_VERSION_TEST = re.compile(
    r"__version__|\bversion\b|LooseVersion|StrictVersion|parse_version|"
    r"(?<![A-Za-z0-9])(?:is_)?tf_?[12](?![0-9])|\bcontrib\b",
    re.IGNORECASE)
# A call that raises on TF 2, such as tensor2tensor's `err_if_tf2()`.
_TF2_GUARD_CALL = re.compile(
    r"(?:err|raise|fail|error|check|assert|require|guard)\w*tf_?2|"
    r"tf_?2\w*(?:err|raise|fail|error|check|guard)|require\w*tf_?1",
    re.IGNORECASE)
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "AttributeError",
                  "Exception", "BaseException")
# Lines that only Python 2 writes: the likely reason a file does not parse.
_PY2_HINT = re.compile(
    rb"^[ \t]*(?:print[ \t]+[^\s(=]|exec[ \t]+[\"']|except[ \t]+[\w.]+[ \t]*,)"
    rb"|\bur[\"']|^[ \t]*raise[ \t]+\w+[ \t]*,",
    re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Change:
  """One rewritten piece of code: its input-file line, old and new text."""
  line: int
  old: str
  new: str


@dataclasses.dataclass(frozen=True)
class Added:
  """An import line this command added: its line in the *output* file."""
  new_line: int
  text: str


@dataclasses.dataclass
class FileResult:
  """What upgrading one Python source did, and what it found.

  Attributes:
    new_source: The upgraded source, as bytes in the file's own encoding and
      line endings; the original bytes when nothing changed or the file
      could not be read as Python.
    changes: The `Change`s, in input-line order.
    added: The import lines added, with their output-file line numbers.
    warnings: `(line, message)` pairs about rewrites a person must check;
      line is an input-file line, 0 for the whole file.
    other_contrib: `{module: [input lines]}` for other `tf.contrib` modules
      (`layers`, `opt`, ...) the file still uses: imports and references.
    legacy_layers: Input lines that use `tf.layers` or
      `tf.compat.v1.layers`.
    bare_layers: The subset of `legacy_layers` that says `tf.layers`, which
      TensorFlow 2 does not have at all (only `tf.compat.v1.layers`).
    error: Why the file could not be converted (it does not decode or does
      not parse), or None.
    mentions_api: Whether the file's bytes mention contrib's
      `mixed_precision`; used to make `error` loud when it matters.
  """
  new_source: bytes
  changes: List[Change] = dataclasses.field(default_factory=list)
  added: List[Added] = dataclasses.field(default_factory=list)
  warnings: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  other_contrib: Dict[str, List[int]] = dataclasses.field(
      default_factory=dict)
  legacy_layers: List[int] = dataclasses.field(default_factory=list)
  bare_layers: List[int] = dataclasses.field(default_factory=list)
  error: Optional[str] = None
  mentions_api: bool = False

  @property
  def changed(self) -> bool:
    return bool(self.changes or self.added)


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
    path = _TF + path[len("tensorflow_core"):]
  while True:
    for compat in ("tensorflow.compat.v1", "tensorflow.compat.v2"):
      if path == compat:
        return _TF
      if path.startswith(compat + "."):
        path = _TF + path[len(compat):]
        break
    else:
      return path


def _under(path: Optional[str], prefix: str) -> bool:
  return path is not None and (path == prefix or
                               path.startswith(prefix + "."))


def map_module(path: str) -> Optional[str]:
  """This package's dotted path for a TF 1.15 dotted `path`, or None."""
  path = normalize(path)
  for old, new in _MODULE_MAP:
    if _under(path, old):
      return new + path[len(old):]
  return None


def _other_contrib(path: Optional[str]) -> Optional[str]:
  """`name` of `tensorflow.contrib.<name>[...]` for another module."""
  if not _under(path, _CONTRIB):
    return None
  parts = path.split(".")
  if len(parts) >= 3 and parts[2] != "mixed_precision":
    return parts[2]
  return None


def _dotted(node: cst.CSTNode) -> Optional[str]:
  """`a.b.c` for a chain of `Name`/`Attribute` nodes, else None."""
  if isinstance(node, cst.Name):
    return node.value
  if isinstance(node, cst.Attribute):
    base = _dotted(node.value)
    if base is not None:
      return base + "." + node.attr.value
  return None


def _dotted_node(path: str) -> cst.BaseExpression:
  return cst.parse_expression(path)


_EMPTY_MODULE = cst.Module(body=[])


def _code(node: cst.CSTNode) -> str:
  """The source of `node`, on one line for the report."""
  return " ".join(_EMPTY_MODULE.code_for_node(node).split())


def _statement_code(node: cst.SimpleStatementLine) -> str:
  """`_code` of a statement line, without the comment lines above it."""
  return _code(node.with_changes(leading_lines=()))


def _binding_name(alias: cst.ImportAlias) -> str:
  """The name an `import` or `from` alias binds in its scope."""
  if alias.asname is not None:
    return alias.asname.name.value
  return _dotted(alias.name).split(".")[0]


def _getattr_literal(node: cst.CSTNode) -> Optional[Tuple[cst.CSTNode,
                                                          str]]:
  """`(obj, "name")` for `getattr(obj, "name"[, default])`, else None."""
  if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and
          node.func.value == "getattr" and len(node.args) in (2, 3)):
    return None
  if any(a.star or a.keyword for a in node.args):
    return None
  literal = node.args[1].value
  value = (_string_value(literal)
           if isinstance(literal, cst.SimpleString) else None)
  if value is None or not value.isidentifier():
    return None
  return node.args[0].value, value


def _attribute_name(node: cst.CSTNode) -> Optional[str]:
  """`b` of `a.b` or of `getattr(a, "b")`, else None."""
  if isinstance(node, cst.Attribute):
    return node.attr.value
  literal = _getattr_literal(node)
  return None if literal is None else literal[1]


def _string_value(node: cst.CSTNode) -> Optional[str]:
  """The value of a plain (or implicitly concatenated) str literal."""
  if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
    return None
  value = node.evaluated_value
  return value if isinstance(value, str) else None


def _call_argument(call: cst.Call, position: int,
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


def _new_literal(old: cst.BaseExpression, value: str) -> cst.SimpleString:
  """A string literal holding `value`, quoted as `old` (its first part) was."""
  while isinstance(old, cst.ConcatenatedString):
    old = old.left
  return cst.SimpleString(old.prefix + old.quote + value + old.quote)


def _import_target(node: cst.CSTNode, name: str) -> Optional[str]:
  """The dotted path the `import`/`from` statement `node` binds to `name`."""
  if isinstance(node, cst.Import):
    for alias in node.names:
      if _binding_name(alias) != name:
        continue
      full = _dotted(alias.name)
      return full if alias.asname is not None else full.split(".")[0]
  elif isinstance(node, cst.ImportFrom):
    if node.relative or node.module is None or isinstance(
        node.names, cst.ImportStar):
      return None
    for alias in node.names:
      if _binding_name(alias) == name:
        return _dotted(node.module) + "." + _dotted(alias.name)
  return None


class _Analysis:
  """Resolves names and expressions to TensorFlow paths, scope by scope."""

  def __init__(self, wrapper: metadata.MetadataWrapper):
    self.module = wrapper.module
    # One batched pass over the tree computes all three.
    resolved = wrapper.resolve_many([metadata.ScopeProvider,
                                     metadata.ParentNodeProvider,
                                     metadata.PositionProvider])
    self.scopes = resolved[metadata.ScopeProvider]
    self.parents = resolved[metadata.ParentNodeProvider]
    self.positions = resolved[metadata.PositionProvider]
    self._paths: Dict[Tuple[cst.CSTNode, bool], Optional[str]] = {}
    self._active: Set[Tuple[cst.CSTNode, bool]] = set()

  def line(self, node: cst.CSTNode) -> int:
    return self.positions[node].start.line

  def assignment_path(self, assignment, raw: bool = False) -> Optional[str]:
    """The TF path an assignment binds (normalized unless `raw`), or None."""
    node = getattr(assignment, "node", None)  # Builtins have none.
    if isinstance(assignment, metadata.ImportAssignment):
      target = _import_target(node, assignment.name)
      if target is None or not _under(normalize(target), _TF):
        return None
      return target if raw else normalize(target)
    if not isinstance(assignment, metadata.Assignment) or not isinstance(
        node, cst.Name):
      return None
    value = self.assigned_value(node)
    return None if value is None else self.path(value, raw)

  def assigned_value(self, target: cst.Name) -> Optional[cst.CSTNode]:
    """The value of `target = value` (one target), else None."""
    parent = self.parents.get(target)
    if isinstance(parent, cst.AssignTarget):
      statement = self.parents.get(parent)
      if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        return statement.value
    elif isinstance(parent, cst.AnnAssign) and parent.target is target:
      return parent.value
    return None

  def path(self, node: cst.CSTNode, raw: bool = False) -> Optional[str]:
    """The TF dotted path `node` evaluates to, or None.

    Args:
      node: An expression.
      raw: Keep the path as written (`tensorflow.compat.v1.layers`) instead
        of normalizing it (`tensorflow.layers`).

    Returns:
      The path, or None when `node` is not (known to be) TensorFlow.
    """
    key = (node, raw)
    if key in self._paths:
      return self._paths[key]
    if key in self._active:
      return None  # `tf = tf.compat.v1` refers to itself.
    self._active.add(key)
    try:
      result = self._compute_path(node, raw)
    finally:
      self._active.discard(key)
    self._paths[key] = result
    return result

  def imported_path(self, node: cst.CSTNode) -> Optional[str]:
    """What a name or attribute chain is, when it comes only from imports.

    `importlib.import_module` after `import importlib`, `load` after `from
    importlib import import_module as load`, `builtins.__import__` for the
    unshadowed builtin; None for anything a statement other than an import
    could have bound.
    """
    if isinstance(node, cst.Attribute):
      base = self.imported_path(node.value)
      return None if base is None else base + "." + node.attr.value
    scope = self.scopes.get(node) if isinstance(node, cst.Name) else None
    if scope is None:
      return None
    targets = set()
    for assignment in scope[node.value]:
      if isinstance(assignment, metadata.BuiltinAssignment):
        targets.add("builtins." + assignment.name)
      elif isinstance(assignment, metadata.ImportAssignment):
        targets.add(_import_target(assignment.node, assignment.name))
      else:
        return None
    return targets.pop() if len(targets) == 1 else None

  def dynamic_import(self, node: cst.CSTNode) -> Optional[
      Tuple[cst.BaseExpression, str, bool]]:
    """`(literal, module, returns module)` for a dynamic import of a literal.

    `importlib.import_module("a.b")` returns module `a.b`; `__import__("a.b")`
    returns `a` unless it is given a non-empty `fromlist`. None when `node`
    is not such a call, or its module name or result cannot be known.
    """
    if not isinstance(node, cst.Call):
      return None
    function = self.imported_path(node.func)
    if function not in ("importlib.import_module", "builtins.__import__"):
      return None
    known, name = _call_argument(node, 0, "name")
    module = None if name is None else _string_value(name.value)
    if not known or module is None or not all(
        part.isidentifier() for part in module.split(".")):
      return None
    if function == "importlib.import_module":
      # `package` matters only for relative names, which are not literals
      # of TF paths.
      return name.value, module, True
    known, level = _call_argument(node, 4, "level")
    if not known or (level is not None and not (
        isinstance(level.value, cst.Integer) and level.value.value == "0")):
      return None
    known, fromlist = _call_argument(node, 3, "fromlist")
    if not known:
      return None
    if fromlist is None:
      return name.value, module, False
    value = fromlist.value
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
      return name.value, module, bool(value.elements)
    if isinstance(value, cst.Name) and value.value == "None":
      return name.value, module, False
    return None  # A fromlist this command cannot see into.

  def _compute_path(self, node: cst.CSTNode, raw: bool) -> Optional[str]:
    norm = (lambda p: p) if raw else normalize
    dynamic = self.dynamic_import(node)
    if dynamic is not None:
      _, module, returns_module = dynamic
      result = module if returns_module else module.split(".")[0]
      return norm(result) if _under(normalize(result), _TF) else None
    if isinstance(node, cst.Name):
      scope = self.scopes.get(node)
      if scope is None:
        return None
      assignments = scope[node.value]
      if not assignments:
        # `tf` bound by no statement of the file (a star import, an injected
        # global): in `tf.contrib.mixed_precision` it can only be TF.
        return _TF if node.value == "tf" else None
      paths = {self.assignment_path(a, raw) for a in assignments}
      paths.discard(None)
      # A fallback such as `except ImportError: contrib = None` is not a
      # second meaning of the name.
      return paths.pop() if len(paths) == 1 else None
    if isinstance(node, cst.Attribute):
      base = self.path(node.value, raw)
      return None if base is None else norm(base + "." + node.attr.value)
    literal = _getattr_literal(node)
    if literal is not None:
      base = self.path(literal[0], raw)
      return None if base is None else norm(base + "." + literal[1])
    return None

  def base_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The object an attribute or a literal `getattr` is taken from."""
    if isinstance(node, cst.Attribute):
      return node.value
    literal = _getattr_literal(node)
    return None if literal is None else literal[0]

  def ancestors(self, node: cst.CSTNode):
    node = self.parents.get(node)
    while node is not None:
      yield node
      node = self.parents.get(node)


class _Collector(cst.CSTVisitor):
  """Finds the expressions to rewrite and the other uses to report."""

  def __init__(self, analysis: _Analysis):
    super().__init__()
    self.a = analysis
    # Expressions that reach the API from outside it, and are replaced by a
    # name bound to this package.
    self.replace: List[cst.CSTNode] = []
    self.other: List[Tuple[str, int]] = []
    self.layers: List[int] = []
    self.bare_layers: List[cst.Attribute] = []
    # Dynamic imports of the API: {call: (module literal, new module)}.
    self.literals: Dict[cst.Call, Tuple[cst.BaseExpression, str]] = {}
    # `(line, why)` for API-looking code that could not be resolved.
    self.unresolved: List[Tuple[int, str]] = []

  def visit_Import(self, node: cst.Import) -> bool:
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    return False

  def _visit_expression(self, node: cst.CSTNode) -> None:
    base_node = self.a.base_of(node)
    if base_node is None:
      return
    path = self.a.path(node)
    if path is None:
      self._check_unresolved(node, base_node)
      return
    base = self.a.path(base_node)
    if path in (_MP, _MP + ".python"):
      # `...mixed_precision.python` folds into the package too.
      if not _under(base, _MP) or path == _MP + ".python":
        self.replace.append(node)
    elif base == _CONTRIB and _other_contrib(path):
      self.other.append((_other_contrib(path), self.a.line(node)))
    elif path == _LAYERS and base == _TF:
      self.layers.append(self.a.line(node))
      if (isinstance(node, cst.Attribute) and
          normalize(self.a.path(base_node, raw=True) or "") == (
              self.a.path(base_node, raw=True))):
        # Written as `tf.layers`, not through `compat.v1`.
        self.bare_layers.append(node)

  def _check_unresolved(self, node: cst.CSTNode,
                        base_node: cst.CSTNode) -> None:
    """Warns about `<x>.contrib.mixed_precision` where `x` is unknowable.

    A parameter, an attribute (`self.tf`) or a name that some other code
    returned may well be TensorFlow; a name that only imports bind
    (`import numpy as tf`) is known not to be.
    """
    if (_attribute_name(node) != "mixed_precision" or
        _attribute_name(base_node) != "contrib"):
      return
    contrib = self.a.base_of(base_node)
    root = contrib
    while self.a.base_of(root) is not None:
      root = self.a.base_of(root)
    if isinstance(root, cst.Name):
      scope = self.a.scopes.get(root)
      assignments = scope[root.value] if scope is not None else ()
      if assignments and all(
          isinstance(a, (metadata.ImportAssignment,
                         metadata.BuiltinAssignment)) for a in assignments):
        return  # Only imports bind it, and none of them is TensorFlow.
    self.unresolved.append((self.a.line(node), (
        "`{}` looks like TF 1.15's `tf.contrib.mixed_precision`, but this "
        "command cannot tell what `{}` is here (a parameter, an attribute, "
        "or a name bound by other code), so it is left unchanged. If it is "
        "TensorFlow, this fails on TensorFlow 2: use "
        "`contrib_mixed_precision` here, or call "
        "`contrib_mixed_precision.install_alias()` before it runs.").format(
            _short(_code(node)), _short(_code(contrib)))))

  def _check_string(self, node: cst.CSTNode) -> None:
    value = _string_value(node)
    if value is None or not _MODULE_NAME.fullmatch(value) or any(
        node is literal for literal, _ in self.literals.values()):
      return  # Not a module name, or one `visit_Call` rewrites.
    self.unresolved.append((self.a.line(node), (
        "the string `{}` names TF 1.15's module `{}`, which does not exist "
        "on TensorFlow 2; code that imports it by name fails there. This "
        "command rewrites only `importlib.import_module` and `__import__` "
        "calls it can read, so this is left unchanged: use `{}` instead."
        ).format(_short(_code(node)), value, map_module(value))))

  def visit_SimpleString(self, node: cst.SimpleString) -> None:
    self._check_string(node)

  def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
    self._check_string(node)
    return False

  def visit_Attribute(self, node: cst.Attribute) -> None:
    self._visit_expression(node)

  def visit_Call(self, node: cst.Call) -> None:
    dynamic = self.a.dynamic_import(node)
    if dynamic is not None:
      literal, module, returns_module = dynamic
      module = normalize(module)
      if _under(module, _MP):
        # On TF 2 the import itself would fail: load this package instead,
        # or, where the call returns the root package, TensorFlow itself.
        self.literals[node] = (literal, map_module(module)
                               if returns_module else _TF)
      elif _other_contrib(module):
        self.other.append((_other_contrib(module), self.a.line(node)))
    self._visit_expression(node)


def _inside(node: cst.CSTNode, nodes: Set[cst.CSTNode],
            analysis: _Analysis) -> bool:
  return any(p in nodes for p in analysis.ancestors(node))


def _outermost(nodes: Sequence[cst.CSTNode],
               analysis: _Analysis) -> List[cst.CSTNode]:
  chosen = set(nodes)
  return [n for n in nodes if not _inside(n, chosen, analysis)]


def _classify_contrib_uses(analysis: _Analysis, names) -> Tuple[
    List[int], List[Tuple[str, int]]]:
  """Splits uses of a `tf.contrib` object into mixed_precision and others.

  Args:
    analysis: The file's `_Analysis`.
    names: The `Name` nodes that read the object (`contrib`, `tfc`, ...).

  Returns:
    `(mixed_precision lines, [(module, line)] of every other use)`; the
    module is "" where the object itself is used (passed to a function).
  """
  mp, other = [], []
  for name in names:
    parent = analysis.parents.get(name)
    attr = (_attribute_name(parent) if parent is not None and
            analysis.base_of(parent) is name else None)
    line = analysis.line(name)
    if attr == "mixed_precision":
      mp.append(line)
    elif attr is not None:
      other.append((attr, line))
    else:
      other.append(("", line))  # The object itself, passed on.
  return mp, other


def _lines_text(lines: Sequence[int], limit: int = 3) -> str:
  lines = sorted(set(lines))
  shown = ", ".join(str(l) for l in lines[:limit])
  if len(lines) > limit:
    shown += ", ..."
  return ("line " if len(lines) == 1 else "lines ") + shown


class _Plan:
  """Every decision, keyed by the original nodes, before anything changes."""

  def __init__(self):
    self.replace: Dict[cst.CSTNode, str] = {}
    self.literals: Dict[cst.Call, Tuple[cst.BaseExpression, str]] = {}
    self.remove_aliases: Set[cst.ImportAlias] = set()
    self.rename_aliases: Dict[cst.ImportAlias, str] = {}
    self.remove_statements: Set[cst.CSTNode] = set()
    self.warnings: List[Tuple[int, str]] = []


def _contrib_objects(analysis: _Analysis, plan: _Plan) -> None:
  """Decides what happens to names bound to the `tf.contrib` module itself.

  `from tensorflow import contrib`, `import tensorflow.contrib as tfc`,
  `contrib = tf.contrib` and `import tensorflow.contrib` fail on TF 2
  however their uses are rewritten. When `mixed_precision` is all a binding
  is used for, the binding goes (`import tensorflow.contrib` becomes
  `import tensorflow`); otherwise it stays, and the report says which uses
  keep it alive.
  """
  for scope in set(analysis.scopes.values()):
    for assignment in scope.assignments:
      node = getattr(assignment, "node", None)
      references = [r.node for r in assignment.references]
      if isinstance(assignment, metadata.ImportAssignment):
        if "." in assignment.name:
          # libcst binds `import tensorflow.contrib` as the dotted name;
          # its references are the `tensorflow.contrib` attribute nodes.
          if (isinstance(node, cst.Import) and
              normalize(assignment.name) == _CONTRIB):
            alias = next((a for a in node.names if a.asname is None and
                          _dotted(a.name) == assignment.name), None)
            if alias is not None:
              _decide_contrib(analysis, plan, assignment.name, references,
                              alias, node, assignment.name.split(".")[0])
        elif analysis.assignment_path(assignment) == _CONTRIB:
          alias = _find_alias(node, assignment.name)
          if alias is not None:
            _decide_contrib(analysis, plan, assignment.name, references,
                            alias, node, None)
      elif (isinstance(assignment, metadata.Assignment) and
            isinstance(node, cst.Name) and
            analysis.assignment_path(assignment) == _CONTRIB):
        statement = analysis.parents.get(analysis.parents.get(node))
        _decide_contrib(analysis, plan, assignment.name, references, None,
                        statement, None)


def _find_alias(node, name) -> Optional[cst.ImportAlias]:
  if isinstance(node.names, cst.ImportStar):
    return None
  for alias in node.names:
    if _binding_name(alias) == name:
      return alias
  return None


def _decide_contrib(analysis, plan, bound, references, alias, statement,
                    root: Optional[str]) -> None:
  """Removes or keeps one binding of `tf.contrib`; see `_contrib_objects`.

  Args:
    analysis: The file's `_Analysis`.
    plan: The `_Plan` to record the decision in.
    bound: The name bound (`contrib`, `tfc`, `tensorflow.contrib`).
    references: The nodes that read the binding.
    alias: The import alias that binds it, or None for an assignment.
    statement: The binding statement.
    root: For `import tensorflow.contrib`, the root name it also binds.
  """
  mp, other = _classify_contrib_uses(analysis, references)
  if not mp:
    return
  line = analysis.line(statement)
  if not other:
    if root is not None:
      plan.rename_aliases[alias] = root
    elif alias is not None:
      plan.remove_aliases.add(alias)
    elif (isinstance(statement, cst.Assign) and
          isinstance(analysis.parents.get(statement),
                     cst.SimpleStatementLine)):
      plan.remove_statements.add(statement)
    return
  uses = {}
  for what, use_line in other:
    uses.setdefault(what, []).append(use_line)
  listed = "; ".join(
      "`{}`{} ({})".format(what or bound, "" if what else " itself",
                           _lines_text(lines))
      for what, lines in sorted(uses.items(), key=lambda x: (not x[0], x)))
  plan.warnings.append((line, (
      "`{}` is bound to `tf.contrib` here and is still used for {}. Its "
      "`mixed_precision` uses were rewritten, but this line fails on "
      "TensorFlow 2 until those other uses are migrated too.").format(
          bound, listed)))


def _guards(analysis: _Analysis, node: cst.CSTNode) -> List[Tuple[int, str]]:
  """Why a rewrite at `node` may not do what TF 2 users need, if it may not.

  Returns:
    `(line of the guard, message)` pairs, innermost first.
  """
  reasons = []
  child = node
  for parent in analysis.ancestors(node):
    if isinstance(parent, (cst.If, cst.IfExp)):
      test = _code(parent.test)
      if _VERSION_TEST.search(test) and child is not parent.test:
        where = "branch of"
        if isinstance(parent, cst.If):
          where = ("`else` branch of" if child is parent.orelse
                   else "body of")
        reasons.append((analysis.line(parent), (
            "this is in the {} the TF-version check `{}` (line {}): on "
            "TensorFlow 2 the rewritten code may never run, or may switch "
            "which implementation runs. Check which branch TF 2 should "
            "take.").format(where, _short(test), analysis.line(parent))))
    elif isinstance(parent, cst.Try):
      handlers = [h for h in parent.handlers if _catches_import(h)]
      if handlers and child is parent.body:
        reasons.append((analysis.line(parent), (
            "this is in a `try` block (line {}) with an `except {}` "
            "fallback (line {}): on TensorFlow 2 the rewritten code now "
            "succeeds, so the fallback no longer runs. Check that this is "
            "the implementation TF 2 should use.").format(
                analysis.line(parent), _handler_type(handlers[0]),
                analysis.line(handlers[0]))))
    elif isinstance(parent, cst.ExceptHandler) and _catches_import(parent):
      reasons.append((analysis.line(parent), (
          "this is in the `except {}` fallback (line {}): it now runs only "
          "if the `try` block above fails. Check which of the two TF 2 "
          "should use.").format(_handler_type(parent),
                                analysis.line(parent))))
    elif isinstance(parent, cst.FunctionDef):
      guard = _tf2_guard_before(analysis, parent, node)
      if guard is not None:
        reasons.append(guard)
      break  # Guards of enclosing functions do not run at call time.
    child = parent
  return reasons


def _short(text: str, limit: int = 60) -> str:
  return text if len(text) <= limit else text[:limit - 3] + "..."


def _catches_import(handler: cst.ExceptHandler) -> bool:
  if handler.type is None:
    return True
  return any(name in _code(handler.type) for name in _IMPORT_ERRORS)


def _handler_type(handler: cst.ExceptHandler) -> str:
  return "" if handler.type is None else _code(handler.type)


def _tf2_guard_before(analysis, function, node) -> Optional[Tuple[int, str]]:
  """A TF2-raising check that runs in `function` before `node`, if any."""
  node_line = analysis.line(node)
  body = function.body.body if isinstance(function.body,
                                          cst.IndentedBlock) else []
  for statement in body:
    if analysis.line(statement) >= node_line:
      break
    found = _find_guard(statement)
    if found is not None:
      what = found
      return (analysis.line(statement), (
          "this is in `{}()`, which runs `{}` at line {} first: on "
          "TensorFlow 2 that check stops the function before the rewritten "
          "code runs. Remove the check if this code should now run on "
          "TF 2.").format(function.name.value, _short(what),
                          analysis.line(statement)))
  return None


def _find_guard(statement: cst.CSTNode) -> Optional[str]:
  """The code of an `err_if_tf2()` call or `if is_tf2: raise` in it."""
  found = []

  class _Finder(cst.CSTVisitor):

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
      name = _dotted(node.func)
      if name and _TF2_GUARD_CALL.search(name.split(".")[-1]):
        found.append(_code(node))
      return None

    def visit_If(self, node: cst.If) -> Optional[bool]:
      test = _code(node.test)
      if _VERSION_TEST.search(test) and re.search(
          r"\braise\b", _EMPTY_MODULE.code_for_node(node.body)):
        found.append("if {}: raise ...".format(test))
      return None

    def visit_FunctionDef(self, node) -> bool:
      return False

    def visit_ClassDef(self, node) -> bool:
      return False

  statement.visit(_Finder())
  return found[0] if found else None


class _Rewriter(cst.CSTTransformer):
  """Applies a `_Plan`: expressions, import statements, removed bindings."""

  def __init__(self, analysis: _Analysis, plan: _Plan):
    super().__init__()
    self.a = analysis
    self.plan = plan
    self.changes: List[Change] = []
    self.warnings: List[Tuple[int, str]] = []
    self.other: List[Tuple[str, int]] = []
    self.layers: List[int] = []

  def _note(self, node: cst.CSTNode, line: int, old: str, new: str) -> None:
    self.changes.append(Change(line, old, new))
    self.warnings.extend((line, why) for _, why in _guards(self.a, node))

  # -- expressions -----------------------------------------------------------

  def _leave_expression(self, original_node, updated_node):
    name = self.plan.replace.get(original_node)
    if name is None:
      return updated_node
    return cst.Name(name)

  def leave_Attribute(self, original_node, updated_node):
    return self._leave_expression(original_node, updated_node)

  def leave_Call(self, original_node, updated_node):
    if original_node not in self.plan.literals:
      return self._leave_expression(original_node, updated_node)
    literal, module = self.plan.literals[original_node]
    args = list(updated_node.args)
    for i, arg in enumerate(original_node.args):
      if arg.value is literal:
        args[i] = args[i].with_changes(value=_new_literal(literal, module))
    result = updated_node.with_changes(args=args)
    self._note(original_node, self.a.line(original_node),
               _code(original_node), _code(result))
    return result

  def visit_Import(self, node: cst.Import) -> bool:
    return False

  def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
    return False

  # -- import statements -----------------------------------------------------

  def _rewrite_import(self, node: cst.Import) -> List[cst.BaseSmallStatement]:
    line = self.a.line(node)
    names = []
    for alias in node.names:
      full = _dotted(alias.name)
      if alias in self.plan.remove_aliases:
        continue
      if alias in self.plan.rename_aliases:
        names.append(alias.with_changes(
            name=_dotted_node(self.plan.rename_aliases[alias])))
        continue
      new = map_module(full)
      if new is None:
        other = _other_contrib(normalize(full))
        if other is not None:
          self.other.append((other, line))
        elif _under(normalize(full), _LAYERS):
          self.layers.append(line)
        names.append(alias)
        continue
      changes = {"name": _dotted_node(new)}
      if alias.asname is not None and _binding_name(alias) == new:
        changes["asname"] = None  # `import pkg as pkg` says it twice.
      names.append(alias.with_changes(**changes))
    if not names:
      return []
    # `import` takes no parentheses: the last name keeps no comma.
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return [node.with_changes(names=names)]

  def _star(self, node: cst.ImportFrom, module: str, new_module: str):
    names = STAR_EXPORTS.get(normalize(module))
    if names is None:
      # A module below TF 1.15's modules: keep the star, on our module.
      return [node.with_changes(module=_dotted_node(new_module))]
    text = "from {} import {}".format(new_module, ", ".join(names))
    if len(text) > 79:
      text = "from {} import (\n    {})".format(
          new_module, ",\n    ".join(names))
    statement = cst.parse_statement(text + "\n")
    return [statement.body[0]]

  def _rewrite_import_from(self, node: cst.ImportFrom):
    if node.relative or node.module is None:
      return [node]
    line = self.a.line(node)
    module = _dotted(node.module)
    new_module = map_module(module)
    if isinstance(node.names, cst.ImportStar):
      if new_module is not None:
        return self._star(node, module, new_module)
      other = _other_contrib(normalize(module))
      if other is not None:
        self.other.append((other, line))
      elif _under(normalize(module), _LAYERS):
        self.layers.append(line)
      return [node]
    kept, extra = [], []
    for alias in node.names:
      if alias in self.plan.remove_aliases:
        continue
      name = _dotted(alias.name)
      full = module + "." + name
      new_full = map_module(full)
      if new_full is None:
        other = _other_contrib(normalize(full))
        if other is not None:
          self.other.append((other, line))
        elif _under(normalize(full), _LAYERS):
          self.layers.append(line)
        kept.append(alias)
      elif new_module is not None and new_full == new_module + "." + name:
        kept.append(alias)
      else:
        # A module that moved: `from tensorflow.contrib import
        # mixed_precision` or `from ...mixed_precision import python`.
        bound = _binding_name(alias)
        asname = (None if bound == new_full else
                  cst.AsName(name=cst.Name(bound)))
        extra.append(cst.Import(names=[cst.ImportAlias(
            name=_dotted_node(new_full), asname=asname)]))
    statements = []
    if kept:
      if len(kept) < len(node.names) and not node.lpar:
        # Without parentheses the last name must not keep a trailing comma.
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
      changes = {"names": kept}
      if new_module is not None:
        changes["module"] = _dotted_node(new_module)
      statements.append(
          node.with_changes(**changes)
          if (len(kept) < len(node.names) or new_module is not None)
          else node)
    return statements + extra

  def leave_SimpleStatementLine(self, original_node, updated_node):
    body = []
    changed = False
    for original, updated in zip(original_node.body, updated_node.body):
      if original in self.plan.remove_statements:
        changed = True
        continue
      if isinstance(original, cst.Import):
        new = self._rewrite_import(original)
      elif isinstance(original, cst.ImportFrom):
        new = self._rewrite_import_from(original)
      else:
        body.append(updated)
        continue
      if len(new) != 1 or not new[0].deep_equals(original):
        changed = True
      body.extend(new)
    if not changed:
      return updated_node
    line = self.a.line(original_node)
    old = _statement_code(original_node)
    if not body:
      self._note(original_node, line, old, "(removed)")
      return cst.RemoveFromParent()
    if len(body) == 1 or not all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in body):
      result = updated_node.with_changes(body=body)
      self._note(original_node, line, old, _statement_code(result))
      return result
    # Split imports into one line each; the first keeps the line's comments.
    lines = [updated_node.with_changes(body=[body[0]])]
    lines += [cst.SimpleStatementLine(body=[s]) for s in body[1:]]
    self._note(original_node, line, old,
               "; ".join(_statement_code(s) for s in lines))
    return cst.FlattenSentinel(lines)


def _unbound_names(wrapper: metadata.MetadataWrapper) -> Set[str]:
  """Names read somewhere in the module that no visible statement binds."""
  unbound = set()
  for scope in set(wrapper.resolve(metadata.ScopeProvider).values()):
    for access in scope.accesses:
      if not access.referents and isinstance(access.node, cst.Name):
        unbound.add(access.node.value)
  return unbound


def _all_names(analysis: _Analysis) -> Set[str]:
  names = set()
  for scope in set(analysis.scopes.values()):
    names.update(a.name for a in scope.assignments)
    names.update(a.node.value for a in scope.accesses
                 if isinstance(a.node, cst.Name))
  return names


def _insert_imports(module: cst.Module, lines: Sequence[str]) -> cst.Module:
  """Adds import `lines` after the first top-level TF import.

  Without a top-level TF import they go after the docstring and any
  `from __future__` imports.
  """
  new_lines = [cst.parse_statement(l + "\n") for l in lines]
  body = list(module.body)
  position = None
  for i, statement in enumerate(body):
    if not isinstance(statement, cst.SimpleStatementLine):
      continue
    for small in statement.body:
      modules = []
      if isinstance(small, cst.Import):
        modules = [_dotted(a.name) for a in small.names]
      elif isinstance(small, cst.ImportFrom) and small.module is not None:
        modules = [_dotted(small.module)]
      if any(m.split(".")[0] in (_TF, "tensorflow_core", PACKAGE)
             for m in modules):
        position = i + 1
        break
    if position is not None:
      break
  if position is None:
    position = 0
    for i, statement in enumerate(body):
      if not isinstance(statement, cst.SimpleStatementLine):
        break
      small = statement.body[0]
      is_docstring = (i == 0 and isinstance(small, cst.Expr) and
                      isinstance(small.value, (cst.SimpleString,
                                               cst.ConcatenatedString)))
      is_future = (isinstance(small, cst.ImportFrom) and
                   small.module is not None and
                   _dotted(small.module) == "__future__")
      if not (is_docstring or is_future):
        break
      position = i + 1
  body[position:position] = new_lines
  return module.with_changes(body=body)


def decode_error(source: bytes) -> Optional[str]:
  """Why `source` does not decode as Python source text, or None."""
  try:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
  except SyntaxError as e:
    return "a bad coding declaration ({})".format(e)
  try:
    source.decode(encoding)
  except UnicodeDecodeError as e:
    codec = codecs.lookup(encoding).name
    name = "UTF-8" if codec in ("utf-8", "utf-8-sig") else encoding
    return "invalid {} at line {} (byte 0x{:02x})".format(
        name, source.count(b"\n", 0, e.start) + 1, source[e.start])
  return None


_INDENT = re.compile(rb"^[ \t]*(?=\S)", re.MULTILINE)


def _parse_error(source: bytes, error: Exception) -> str:
  line = getattr(error, "raw_line", None)
  try:
    # Python's own parser names the line a person would look at; libcst's
    # may name the next token's.
    ast.parse(source)
  except SyntaxError as e:
    line = e.lineno or line
  except ValueError:
    pass
  else:
    # Valid Python that libcst rejects: in practice, indentation that mixes
    # tabs and spaces in ways CPython resolves (a tab to the next multiple
    # of 8) and libcst's tokenizer does not.
    why = "Python parses it, but libcst, which this command uses, cannot ({})"
    why = why.format(str(getattr(error, "message", "") or "").replace(
        "tokenizer error: ", ""))
    indents = [m for m in _INDENT.finditer(source) if m.group()]
    tabbed = [m for m in indents if b"\t" in m.group()]
    if tabbed and any(b" " in m.group() for m in indents):
      tab_line = source.count(b"\n", 0, tabbed[0].start()) + 1
      return ("{}: its indentation mixes tabs and spaces (the first tab is "
              "at line {}). Re-indent it with spaces only and run "
              "again".format(why, tab_line))
    return why + "; convert it by hand"
  where = " at line {}".format(line) if line else ""
  hint = ""
  if _PY2_HINT.search(source):
    hint = "; it looks like Python 2: port it to Python 3"
  return "it does not parse as Python 3 (syntax error{}{})".format(where,
                                                                   hint)


def upgrade_source(source: bytes) -> FileResult:
  """Upgrades one Python source.

  Args:
    source: The file's bytes. The encoding is detected as Python does (a
      coding cookie, else UTF-8) and kept, as are the line endings.

  Returns:
    A `FileResult`. When the source cannot be decoded or parsed, or does
    not use the API, `new_source` is `source` itself.
  """
  mentions = b"mixed_precision" in source and b"contrib" in source
  error = decode_error(source)
  if error is None:
    try:
      tree = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
      error = _parse_error(source, e)
  if error is not None:
    return FileResult(new_source=source, error=error, mentions_api=mentions)
  if b"contrib" not in source and b"layers" not in source:
    return FileResult(new_source=source)  # Nothing this command reports.
  try:
    return _upgrade_tree(source, tree, mentions)
  except RecursionError:
    # libcst recurses per nesting level; generated code can go deeper
    # than the interpreter allows.
    return FileResult(
        new_source=source, mentions_api=mentions,
        error="it nests too deeply for this command to analyse")


def _upgrade_tree(source: bytes, tree: cst.Module,
                  mentions: bool) -> FileResult:
  """`upgrade_source` for a parsed module."""
  wrapper = metadata.MetadataWrapper(tree, unsafe_skip_copy=True)
  analysis = _Analysis(wrapper)
  collector = _Collector(analysis)
  analysis.module.visit(collector)
  plan = _Plan()
  _contrib_objects(analysis, plan)
  targets = _outermost(collector.replace, analysis)
  alias_name = None
  for node in targets:
    name = PACKAGE
    if not _package_name_is_free(analysis, node):
      if alias_name is None:
        alias_name = _fresh_name(analysis, PACKAGE + "_lib")
      name = alias_name
    plan.replace[node] = name
  # A dynamic import inside a replaced expression goes with it.
  replaced = set(targets)
  plan.literals = {call: change
                   for call, change in collector.literals.items()
                   if not _inside(call, replaced, analysis)}
  rewriter = _Rewriter(analysis, plan)
  new_tree = analysis.module.visit(rewriter)
  for node in targets:
    old_node, new = node, plan.replace[node]
    parent = analysis.parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
      # Name the symbol in the report: `tf.contrib.mixed_precision.X`.
      old_node, new = parent, new + "." + parent.attr.value
    rewriter._note(node, analysis.line(node), _code(old_node), new)  # pylint: disable=protected-access
  result = FileResult(new_source=source, mentions_api=mentions)
  other = collector.other + rewriter.other
  for module, line in sorted(other, key=lambda x: (x[0], x[1])):
    result.other_contrib.setdefault(module, []).append(line)
  result.legacy_layers = sorted(set(collector.layers + rewriter.layers))
  result.bare_layers = sorted({analysis.line(n)
                               for n in collector.bare_layers})
  warnings = (set(plan.warnings) | set(rewriter.warnings) |
              set(collector.unresolved))
  result.warnings = sorted(warnings)
  if not rewriter.changes:
    return result
  # Add the imports that the rewritten code reads and no scope provides.
  missing = _unbound_names(metadata.MetadataWrapper(new_tree)) - (
      _unbound_names(wrapper))
  lines = []
  for name in sorted(missing):
    if name == PACKAGE:
      lines.append("import " + PACKAGE)
    elif name == alias_name:
      lines.append("import {} as {}".format(PACKAGE, name))
    else:
      # A root name that `import tensorflow.contrib.mixed_precision` bound.
      lines.append("import " + name)
  if lines:
    new_tree = _insert_imports(new_tree, lines)
    new_lines = [l.strip() for l in new_tree.code.splitlines()]
    for text in lines:
      result.added.append(Added(new_lines.index(text) + 1, text))
  result.new_source = new_tree.bytes
  result.changes = sorted(rewriter.changes, key=lambda c: c.line)
  return result


def _package_name_is_free(analysis: _Analysis, node: cst.CSTNode) -> bool:
  """Whether `contrib_mixed_precision` at `node` will mean this package.

  True when nothing binds the name where `node` is, or every binding is an
  import of this package (or of the API, which becomes one) that runs
  before `node` or at module level. A local binding that comes later would
  make the rewritten read an UnboundLocalError.
  """
  scope = analysis.scopes.get(node)
  if scope is None:
    return False
  line = analysis.line(node)
  for assignment in scope[PACKAGE]:
    if not isinstance(assignment, metadata.ImportAssignment):
      return False
    target = _import_target(assignment.node, PACKAGE)
    if target is None or (target != PACKAGE and map_module(target) !=
                          PACKAGE):
      return False
    if (not isinstance(assignment.scope, metadata.GlobalScope) and
        analysis.line(assignment.node) >= line):
      return False
  return True


def _fresh_name(analysis: _Analysis, base: str) -> str:
  taken = _all_names(analysis)
  name, i = base, 1
  while name in taken:
    i += 1
    name = "{}{}".format(base, i)
  return name


class _LayersRenamer(cst.CSTTransformer):

  def __init__(self, nodes):
    super().__init__()
    self.nodes = set(nodes)

  def leave_Attribute(self, original_node, updated_node):
    if original_node not in self.nodes:
      return updated_node
    compat = cst.Attribute(value=cst.Attribute(
        value=updated_node.value, attr=cst.Name("compat")),
                           attr=cst.Name("v1"))
    return updated_node.with_changes(value=compat)


def rename_bare_layers(source: bytes) -> Tuple[bytes, List[int]]:
  """Rewrites `tf.layers` as `tf.compat.v1.layers`, as tf_upgrade_v2 did.

  tf_upgrade_v2 up to TensorFlow 2.15 made this rename; later versions
  leave `tf.layers`, which TensorFlow 2 lacks. `--tf_upgrade_v2` applies it
  after TensorFlow's converter, so its result does not depend on which
  TensorFlow ran.

  Args:
    source: A Python source, as bytes.

  Returns:
    `(new source, lines renamed)`; the source itself when nothing changed
    or it does not parse.
  """
  if b"layers" not in source:
    return source, []
  try:
    tree = cst.parse_module(source)
  except cst.ParserSyntaxError:
    return source, []
  analysis = _Analysis(metadata.MetadataWrapper(tree, unsafe_skip_copy=True))
  collector = _Collector(analysis)
  analysis.module.visit(collector)
  if not collector.bare_layers:
    return source, []
  new = analysis.module.visit(_LayersRenamer(collector.bare_layers))
  return new.bytes, sorted({analysis.line(n)
                            for n in collector.bare_layers})
