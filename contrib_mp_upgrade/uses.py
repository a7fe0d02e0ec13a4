# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Use classification: what in a file to rewrite, and what to report.

`Collector` walks a module once and sorts each API-looking expression:
rewrite it, report it as another `tf.contrib` module or `tf.layers`, or
warn that it cannot be resolved. `contrib_objects` decides what happens to
names bound to `tf.contrib` itself. The decisions go into a `Plan`.
"""

from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst import metadata

from contrib_mp_upgrade import resolve
from contrib_mp_upgrade import syntax


class Collector(cst.CSTVisitor):
  """Finds the expressions to rewrite and the other uses to report."""

  def __init__(self, analysis: resolve.Analysis):
    super().__init__()
    self.a = analysis
    # Expressions that reach the API from outside it, and are replaced by a
    # name bound to this package.
    self.replace: List[cst.CSTNode] = []
    self.other: List[Tuple[str, int]] = []
    self.other_nodes: List[cst.CSTNode] = []  # Where each of `other` is.
    self.layers: List[int] = []
    self.bare_layers: List[cst.Attribute] = []
    # Dynamic imports of the API: {call: (module literal, new module)}.
    self.literals: Dict[cst.Call, Tuple[cst.BaseExpression, str]] = {}
    self._literal_nodes: Set[cst.BaseExpression] = set()
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
    if path in (syntax.MP, syntax.MP + ".python"):
      # `...mixed_precision.python` folds into the package too.
      if not syntax.under(base, syntax.MP) or path == syntax.MP + ".python":
        self.replace.append(node)
    elif base == syntax.CONTRIB and syntax.other_contrib(path):
      self.other.append((syntax.other_contrib(path), self.a.line(node)))
      self.other_nodes.append(node)
    elif path == syntax.LAYERS and base == syntax.TF:
      self.layers.append(self.a.line(node))
      if (isinstance(node, cst.Attribute) and
          syntax.normalize(self.a.path(base_node, raw=True) or "") == (
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
    if (syntax.attribute_name(node) != "mixed_precision" or
        syntax.attribute_name(base_node) != "contrib"):
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
            syntax.short(syntax.code(node)),
            syntax.short(syntax.code(contrib)))))

  def _check_string(self, node: cst.CSTNode) -> None:
    value = syntax.string_value(node)
    if (value is None or not syntax.MODULE_NAME.fullmatch(value) or
        node in self._literal_nodes):
      return  # Not a module name, or one `visit_Call` rewrites.
    self.unresolved.append((self.a.line(node), (
        "the string `{}` names TF 1.15's module `{}`, which does not exist "
        "on TensorFlow 2; code that imports it by name fails there. This "
        "command rewrites only `importlib.import_module` and `__import__` "
        "calls it can read, so this is left unchanged: use `{}` instead."
        ).format(syntax.short(syntax.code(node)), value,
                 syntax.map_module(value))))

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
      module = syntax.normalize(module)
      if syntax.under(module, syntax.MP):
        # On TF 2 the import itself would fail: load this package instead,
        # or, where the call returns the root package, TensorFlow itself.
        self.literals[node] = (literal, syntax.map_module(module)
                               if returns_module else syntax.TF)
        self._literal_nodes.add(literal)
      elif syntax.other_contrib(module):
        self.other.append((syntax.other_contrib(module), self.a.line(node)))
        self.other_nodes.append(node)
    self._visit_expression(node)


def inside(node: cst.CSTNode, nodes: Set[cst.CSTNode],
            analysis: resolve.Analysis) -> bool:
  return any(p in nodes for p in analysis.ancestors(node))


def outermost(nodes: Sequence[cst.CSTNode],
               analysis: resolve.Analysis) -> List[cst.CSTNode]:
  chosen = set(nodes)
  return [n for n in nodes if not inside(n, chosen, analysis)]


def classify_contrib_uses(analysis: resolve.Analysis, names) -> Tuple[
    List[int], List[Tuple[str, int]]]:
  """Splits uses of a `tf.contrib` object into mixed_precision and others.

  Args:
    analysis: The file's `resolve.Analysis`.
    names: The `Name` nodes that read the object (`contrib`, `tfc`, ...).

  Returns:
    `(mixed_precision lines, [(module, line)] of every other use)`; the
    module is "" where the object itself is used (passed to a function).
  """
  mp, other = [], []
  for name in names:
    parent = analysis.parents.get(name)
    attr = (syntax.attribute_name(parent) if parent is not None and
            analysis.base_of(parent) is name else None)
    line = analysis.line(name)
    if attr == "mixed_precision":
      mp.append(line)
    elif attr is not None:
      other.append((attr, line))
    else:
      other.append(("", line))  # The object itself, passed on.
  return mp, other


class Plan:
  """Every decision, keyed by the original nodes, before anything changes."""

  def __init__(self):
    self.replace: Dict[cst.CSTNode, str] = {}
    self.literals: Dict[cst.Call, Tuple[cst.BaseExpression, str]] = {}
    self.remove_aliases: Set[cst.ImportAlias] = set()
    self.rename_aliases: Dict[cst.ImportAlias, str] = {}
    # `from` aliases that become imports of another module (`slim.py`):
    # alias -> (module, name), or (module, None) for the module itself.
    self.move_aliases: Dict[cst.ImportAlias,
                            Tuple[str, Optional[str]]] = {}
    self.remove_statements: Set[cst.CSTNode] = set()
    self.warnings: List[Tuple[int, str]] = []
    # TF 2.0-2.8 names (`tf2x_names`): import lines given new statements,
    # and calls rewritten as a whole, each with the TF 2.x name it used.
    self.statements: Dict[cst.CSTNode, List[cst.BaseSmallStatement]] = {}
    self.calls: Dict[cst.Call, Tuple[Callable[[cst.Call],
                                              cst.BaseExpression], str]] = {}


def contrib_objects(analysis: resolve.Analysis, plan: Plan) -> None:
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
              syntax.normalize(assignment.name) == syntax.CONTRIB):
            alias = next((a for a in node.names if a.asname is None and
                          syntax.dotted(a.name) == assignment.name), None)
            if alias is not None:
              _decide_contrib(analysis, plan, assignment.name, references,
                              alias, node, assignment.name.split(".")[0])
        elif analysis.assignment_path(assignment) == syntax.CONTRIB:
          alias = _find_alias(node, assignment.name)
          if alias is not None:
            _decide_contrib(analysis, plan, assignment.name, references,
                            alias, node, None)
      elif (isinstance(assignment, metadata.Assignment) and
            isinstance(node, cst.Name) and
            analysis.assignment_path(assignment) == syntax.CONTRIB):
        statement = analysis.parents.get(analysis.parents.get(node))
        _decide_contrib(analysis, plan, assignment.name, references, None,
                        statement, None)


def _find_alias(node, name) -> Optional[cst.ImportAlias]:
  if isinstance(node.names, cst.ImportStar):
    return None
  for alias in node.names:
    if syntax.binding_name(alias) == name:
      return alias
  return None


def _decide_contrib(analysis, plan, bound, references, alias, statement,
                    root: Optional[str]) -> None:
  """Removes or keeps one binding of `tf.contrib`; see `contrib_objects`.

  Args:
    analysis: The file's `resolve.Analysis`.
    plan: The `Plan` to record the decision in.
    bound: The name bound (`contrib`, `tfc`, `tensorflow.contrib`).
    references: The nodes that read the binding.
    alias: The import alias that binds it, or None for an assignment.
    statement: The binding statement.
    root: For `import tensorflow.contrib`, the root name it also binds.
  """
  mp, other = classify_contrib_uses(analysis, references)
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
                           syntax.lines_text(lines))
      for what, lines in sorted(uses.items(), key=lambda x: (not x[0], x)))
  plan.warnings.append((line, (
      "`{}` is bound to `tf.contrib` here and is still used for {}. Its "
      "`mixed_precision` uses were rewritten, but this line fails on "
      "TensorFlow 2 until those other uses are migrated too.").format(
          bound, listed)))
